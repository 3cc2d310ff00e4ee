/* SPDX-License-Identifier: MIT */
/*
 * pattern_probe.c - re.search for the shell: each stdin line is a JSON
 * array [pattern, subject]; each output line is 1 (match), 0 (no match),
 * E (refused at compile) or L (a limit).  Used by python_re_parity.sh to
 * compare the pattern module with CPython's re.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pattern.h"

int main(void)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	while ((n = getline(&line, &cap, stdin)) > 0) {
		json_t *v = json_loadb(line, (size_t)n, JSON_ALLOW_NUL, NULL);
		json_t *re = json_array_get(v, 0), *s = json_array_get(v, 1);
		struct pattern *p = NULL;
		struct pattern_budget b;
		struct lf_why why;
		bool found = false;
		char out = 'E';

		if (json_is_string(re) && json_is_string(s) &&
		    pattern_compile(json_string_value(re),
				    json_string_length(re), &p,
				    &why) == LF_OK) {
			pattern_budget_init(&b, PATTERN_CALL_MS);
			out = pattern_search(p, json_string_value(s),
					     json_string_length(s), &b, &found,
					     &why) == LF_OK
				      ? (found ? '1' : '0')
				      : 'L';
		}
		printf("%c\n", out);
		pattern_free(p);
		json_decref(v);
	}
	free(line);
	return 0;
}
