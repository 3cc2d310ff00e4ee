/* SPDX-License-Identifier: MIT */
/*
 * tools.c - check a case's tools file and derive one from a policy (see
 * tools.h).  The file comes from the host, but the target reads it back
 * and an MCP client trusts it, so it is checked as strictly as a policy.
 */
#include "tools.h"

#include <stdbool.h>
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

/* An object schema, {"type":"object",..}, as MCP's Tool takes. */
static bool tools_object_schema(const json_t *schema)
{
	return json_is_object(schema) &&
	       !strcmp(json_string_value(json_object_get(schema, "type")) ?: "",
		       "object");
}

/*
 * What MCP's Tool says of its other members, which a client checks
 * (one that fails takes the whole tools/list with it): the reason, or
 * NULL.  Members it does not name are kept as written.
 */
static const char *tools_member_problem(const json_t *t, const char **key)
{
	static const char *const strings[] = {"title", "description"};
	static const char *const hints[] = {"readOnlyHint", "destructiveHint",
					    "idempotentHint", "openWorldHint"};
	const json_t *a = json_object_get(t, "annotations"), *v;
	size_t i;

	for (i = 0; i < sizeof(strings) / sizeof(strings[0]); i++)
		if ((v = json_object_get(t, *key = strings[i])) &&
		    !json_is_string(v))
			return "a string";
	if ((v = json_object_get(t, *key = "inputSchema")) &&
	    !tools_object_schema(v))
		return "an object whose \"type\" is \"object\"";
	if ((v = json_object_get(t, *key = "outputSchema")) &&
	    !tools_object_schema(v))
		return "an object whose \"type\" is \"object\"";
	if ((v = json_object_get(t, *key = "_meta")) && !json_is_object(v))
		return "an object";
	if ((v = json_object_get(t, *key = "icons")) && !json_is_array(v))
		return "an array";
	if (!a)
		return NULL;
	*key = "annotations";
	if (!json_is_object(a))
		return "an object";
	if ((v = json_object_get(a, "title")) && !json_is_string(v))
		return "an object whose title is a string";
	for (i = 0; i < sizeof(hints) / sizeof(hints[0]); i++)
		if ((v = json_object_get(a, hints[i])) && !json_is_boolean(v))
			return "an object whose hints are true or false";
	return NULL;
}

enum lf_err tools_check(const char *text, size_t len, struct lf_why *why)
{
	json_error_t jerr;
	json_t *doc, *list, *t, *seen = NULL;
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
	seen = json_object();
	json_array_foreach(list, i, t)
	{
		const char *name =
			json_string_value(json_object_get(t, "name"));
		const char *problem, *key = NULL;
		const json_t *first;

		if (!json_is_object(t) || !name || !tools_name_ok(name)) {
			e = lf_fail(why, LF_EINVAL_DOC,
				    "tools[%zu].name: required, a tool name",
				    i);
			goto out;
		}
		/* A client keys its tools by name: one name, one tool. */
		first = json_object_get(seen, name);
		if (first) {
			e = lf_fail(
				why, LF_EINVAL_DOC,
				"tools[%zu].name: '%.256s' is tools[%lld]'s "
				"already",
				i, name, (long long)json_integer_value(first));
			goto out;
		}
		if (json_object_set_new(seen, name,
					json_integer((json_int_t)i))) {
			e = lf_fail(why, LF_NOMEM, "out of memory");
			goto out;
		}
		problem = tools_member_problem(t, &key);
		if (problem) {
			e = lf_fail(why, LF_EINVAL_DOC, "tools[%zu].%s: %s", i,
				    key, problem);
			goto out;
		}
	}
out:
	json_decref(seen);
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
