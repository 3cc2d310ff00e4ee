/* SPDX-License-Identifier: MIT */
/*
 * seal_report.c - sealpath's findings as people read them: one line a
 * finding, the path with control bytes escaped, then the problem
 * (sealpath(8) OUTPUT).  libc only.
 */
#include "seal.h"

#include <stdio.h>
#include <stdlib.h>

void seal_report_free(struct seal_report *rep)
{
	size_t i;

	if (!rep)
		return;
	for (i = 0; i < rep->n_findings; i++)
		free(rep->findings[i].path);
	free(rep->findings);
	rep->findings = NULL;
	rep->n_findings = 0;
}

int seal_problem_text(const struct seal_finding *f, char *buf, size_t len)
{
	switch (f->problem) {
	case SEAL_OWNER:
		return snprintf(buf, len, "owned by uid %lu", f->id);
	case SEAL_GROUP_WRITE:
		return snprintf(buf, len, "writable by group");
	case SEAL_OTHER_WRITE:
		return snprintf(buf, len, "writable by others");
	case SEAL_ACL_USER:
		return snprintf(buf, len, "ACL grants write to uid %lu", f->id);
	case SEAL_ACL_GROUP:
		return snprintf(buf, len, "ACL grants write to gid %lu", f->id);
	case SEAL_LINK_LOOP:
		return snprintf(buf, len, "symbolic link loop");
	case SEAL_LINK_LIMIT:
		return snprintf(buf, len, "more than %d symbolic links",
				SEAL_MAX_LINKS);
	case SEAL_DANGLING:
		return snprintf(buf, len, "dangling symbolic link");
	case SEAL_EMPTY_ENTRY:
		return snprintf(buf, len, "empty entry in PATH");
	case SEAL_RELATIVE_ENTRY:
		return snprintf(buf, len, "relative entry in PATH");
	}
	return snprintf(buf, len, "unknown problem");
}

int seal_finding_line(const struct seal_finding *f, char *buf, size_t len)
{
	char problem[64];
	const unsigned char *s;
	size_t n = 0;
	int r;

#define PUT(...)                                                               \
	do {                                                                   \
		r = snprintf(buf + (n < len ? n : len), n < len ? len - n : 0, \
			     __VA_ARGS__);                                     \
		n += (size_t)r;                                                \
	} while (0)
	if (len)
		buf[0] = '\0';
	for (s = (const unsigned char *)f->path; *s; s++) {
		if (*s == '\\')
			PUT("\\\\");
		else if (*s < 0x20 || *s == 0x7f)
			PUT("\\x%02x", *s);
		else
			PUT("%c", *s);
	}
	seal_problem_text(f, problem, sizeof(problem));
	PUT(": %s", problem);
#undef PUT
	return (int)n;
}
