/* SPDX-License-Identifier: MIT */
/*
 * tools.c - check a case's tools file and derive one from a policy (see
 * tools.h).  The file comes from the host, but the target reads it back
 * and an MCP client trusts it, so it is checked as strictly as a policy.
 */
#include "tools.h"

#include <stdlib.h>
#include <string.h>

#include "request_int.h"

/*
 * A tool name as a call takes it (request.c): 1-256 bytes without
 * control characters, not only blanks.
 */
static int tools_name_ok(const char *s)
{
	size_t n = strlen(s);

	return n >= 1 && n <= 256 && request_name_chars_ok(s) &&
	       !request_name_blank(s);
}

enum lf_err tools_check(const char *text, size_t len, struct lf_why *why)
{
	json_error_t jerr;
	json_t *doc, *list, *t;
	enum lf_err e = LF_OK;
	size_t i;

	if (len > TOOLS_MAX || memchr(text, 0, len))
		return lf_fail(why, LF_EINVAL_DOC,
			       "tools: too large or holds a NUL byte");
	doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc)
		return lf_fail(why, LF_EINVAL_DOC, "tools: line %d: %s",
			       jerr.line, jerr.text);
	list = json_object_get(doc, "tools");
	if (!json_is_object(doc) || !json_is_array(list)) {
		e = lf_fail(why, LF_EINVAL_DOC,
			    "tools: an object with a \"tools\" array");
		goto out;
	}
	json_array_foreach(list, i, t)
	{
		const char *name =
			json_string_value(json_object_get(t, "name"));
		json_t *schema = json_object_get(t, "inputSchema");

		if (!json_is_object(t) || !name || !tools_name_ok(name)) {
			e = lf_fail(why, LF_EINVAL_DOC,
				    "tools[%zu].name: required, a tool name",
				    i);
			goto out;
		}
		/* MCP's Tool takes an object schema, {"type":"object",..}. */
		if (schema &&
		    (!json_is_object(schema) ||
		     strcmp(json_string_value(json_object_get(schema, "type"))
				    ?: "",
			    "object") != 0)) {
			e = lf_fail(why, LF_EINVAL_DOC,
				    "tools[%zu].inputSchema: an object whose "
				    "\"type\" is \"object\"",
				    i);
			goto out;
		}
	}
out:
	json_decref(doc);
	return e;
}

char *tools_from_policy(const json_t *policy_doc)
{
	json_t *rules = json_object_get(policy_doc, "interactions");
	json_t *list = json_array(), *out = NULL, *r, *t;
	char *text = NULL, *nl;
	size_t i, j;

	if (!list)
		return NULL;
	json_array_foreach(rules, i, r)
	{
		const char *m = json_string_value(json_object_get(r, "match"));
		int seen = 0;

		if (!m || strchr(m, '*') || !tools_name_ok(m))
			continue;
		json_array_foreach(list, j, t)
		{
			seen |= strcmp(json_string_value(
					       json_object_get(t, "name")),
				       m) == 0;
		}
		if (!seen)
			json_array_append_new(
				list,
				json_pack("{s:s, s:{s:s}}", "name", m,
					  "inputSchema", "type", "object"));
	}
	out = json_pack("{s:o}", "tools", list);
	if (!out)
		return NULL;
	text = json_dumps(out, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(out);
	if (!text)
		return NULL;
	nl = realloc(text, strlen(text) + 2);
	if (!nl) {
		free(text);
		return NULL;
	}
	strcat(nl, "\n");
	return nl;
}
