/* SPDX-License-Identifier: MIT */
/*
 * seal.h - sealpath's rules (sealpath(8) RULES): may anyone but root change
 * what a trusted PATH runs?  libc only, so sealpath links static into any
 * image.
 */
#ifndef LF_SEAL_H
#define LF_SEAL_H

#include <stddef.h>
#include <sys/types.h>

#define SEAL_DEFAULT_PATH                                                      \
	"/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

#define SEAL_MAX_LINKS	  40   /* links followed per resolution (as Linux) */
#define SEAL_MAX_FINDINGS 1000 /* kept in a report; the rest are counted */
#define SEAL_PATH_MAX	  4096 /* a path as shown, and a PATH entry */
#define SEAL_MAX_DEPTH	  256  /* folders deep during one resolution */

enum seal_verdict {
	SEAL_SEALED = 0,   /* every rule holds */
	SEAL_UNSEALED = 1, /* at least one finding */
	SEAL_ERROR = 2,	   /* the check could not be completed */
};

enum seal_problem {
	SEAL_OWNER,	     /* "owned by uid N" */
	SEAL_GROUP_WRITE,    /* "writable by group" */
	SEAL_OTHER_WRITE,    /* "writable by others" (sticky or not) */
	SEAL_ACL_USER,	     /* "ACL grants write to uid N" */
	SEAL_ACL_GROUP,	     /* "ACL grants write to gid N" */
	SEAL_LINK_LOOP,	     /* "symbolic link loop" */
	SEAL_LINK_LIMIT,     /* "more than 40 symbolic links" */
	SEAL_DANGLING,	     /* "dangling symbolic link" */
	SEAL_EMPTY_ENTRY,    /* "empty entry in PATH" */
	SEAL_RELATIVE_ENTRY, /* "relative entry in PATH" (also ".") */
};

struct seal_finding {
	char *path; /* as the walk reached it, inside the image; "" for an
		       empty PATH entry */
	enum seal_problem problem;
	unsigned long id; /* uid or gid for SEAL_OWNER / SEAL_ACL_* */
	dev_t dev;	  /* the object judged (0/0 for PATH entry findings) */
	ino_t ino;
};

struct seal_report {
	enum seal_verdict verdict;
	struct seal_finding *findings; /* in the order the walk met them */
	size_t n_findings;
	size_t dropped;	 /* findings past SEAL_MAX_FINDINGS (counted only) */
	char error[512]; /* one line when verdict is SEAL_ERROR, else "" */
};

/* seal_audit_path flags */
#define SEAL_ENTRIES 0x1 /* also judge every entry of the folder */

/*
 * Audit a colon-separated PATH list (NULL: SEAL_DEFAULT_PATH) inside root
 * (NULL or "/": the running system).  rep is (re)initialised here and must
 * be released with seal_report_free.  Returns rep->verdict.  Every entry,
 * every folder above it, every entry of it and every component a link
 * among them leads through must be owned by uid 0 and writable by nobody
 * else; empty, "." and relative entries are findings.
 */
int seal_audit(const char *path_list, const char *root,
	       struct seal_report *rep);

/*
 * The same rules for one absolute path (no ':' splitting): the path, the
 * folders above it and the links it goes through; with SEAL_ENTRIES also
 * every entry of the folder it names.  A missing path passes when its
 * nearest existing ancestor passes.  Returns rep->verdict.
 */
int seal_audit_path(const char *path, const char *root, unsigned flags,
		    struct seal_report *rep);

void seal_report_free(struct seal_report *rep);

/*
 * Write "PATH: problem" for f into buf (no newline), control bytes and
 * backslashes in PATH escaped as \xHH and \\ so a name cannot forge a line.
 * Returns the length snprintf would have written.
 */
int seal_finding_line(const struct seal_finding *f, char *buf, size_t len);

/* The problem part alone, e.g. "owned by uid 1000".  Same return. */
int seal_problem_text(const struct seal_finding *f, char *buf, size_t len);

#endif
