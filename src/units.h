/* SPDX-License-Identifier: MIT */
/*
 * units.h - the one grammar for durations and sizes, on command lines and
 * in YAML alike (ledgerfs(8) OPTIONS, ledgerfs-policy(5)).
 *
 *   duration: N (seconds) or N followed by ms, s, m or h
 *   size:     N (bytes) or N followed by K, KiB, M, MiB, G or GiB (binary)
 *
 * N is one or more decimal digits; no sign, no space, no fraction.
 * Anything else is refused with a one-line reason.
 */
#ifndef LF_UNITS_H
#define LF_UNITS_H

#include <stdint.h>

#include "err.h"

/* Parse a duration into milliseconds.  LF_EINVAL_DOC when s is not one. */
enum lf_err units_duration_ms(const char *s, uint64_t *ms, struct lf_why *why);

/* Parse a size into bytes.  LF_EINVAL_DOC when s is not one. */
enum lf_err units_size(const char *s, uint64_t *bytes, struct lf_why *why);

#endif
