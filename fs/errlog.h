/* SPDX-License-Identifier: MIT */
/*
 * errlog.h - a detached daemon's standard error, line by line, into
 * syslog(3) (errlog.c).
 */
#ifndef LFS_ERRLOG_H
#define LFS_ERRLOG_H

/* Once detached: standard error goes to syslog from here on. */
void errlog_to_syslog(void);

/* Before exit: hand on what is left of standard error, and stop. */
void errlog_end(void);

#endif
