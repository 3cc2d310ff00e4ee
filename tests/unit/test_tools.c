/* SPDX-License-Identifier: MIT */
/*
 * test_tools.c - the tools file (tools.h): which documents are taken,
 * as a table, and the file a policy implies when none is given.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "tools.h"

struct tools_case {
	const char *text;
	int ok;
	const char *why; /* a part of the reason when refused */
};

Test(tools, a_tools_file_is_an_object_with_a_tools_array_of_named_objects)
{
	static const struct tools_case tab[] = {
		{"{\"tools\":[]}", 1, NULL},
		{"{\"tools\":[{\"name\":\"a\"}]}", 1, NULL},
		{"{\"tools\":[{\"name\":\"a\",\"inputSchema\":{\"type\":"
		 "\"object\"},\"description\":\"d\",\"annotations\":{}}],"
		 "\"nextCursor\":null}",
		 1, NULL},
		{"", 0, "tools: line"},
		{"tools: []", 0, "tools: line"},
		{"[]", 0, "a \"tools\" array"},
		{"{\"tools\":{}}", 0, "a \"tools\" array"},
		{"{\"tool\":[]}", 0, "a \"tools\" array"},
		{"{\"tools\":[1]}", 0, "tools[0].name"},
		{"{\"tools\":[{}]}", 0, "tools[0].name"},
		{"{\"tools\":[{\"name\":\"a\"},{\"name\":\"\"}]}", 0,
		 "tools[1].name"},
		{"{\"tools\":[{\"name\":\"a\\nb\"}]}", 0, "tools[0].name"},
		{"{\"tools\":[{\"name\":7}]}", 0, "tools[0].name"},
		{"{\"tools\":[{\"name\":\"a\",\"inputSchema\":[]}]}", 0,
		 "tools[0].inputSchema"},
		{"{\"tools\":[{\"name\":\"a\",\"inputSchema\":{}}]}", 0,
		 "tools[0].inputSchema"},
		{"{\"tools\":[{\"name\":\"a\",\"inputSchema\":{\"type\":"
		 "\"string\"}}]}",
		 0, "tools[0].inputSchema"},
		{"{\"tools\":[],\"tools\":[]}", 0, "duplicate"},
		/* MCP's Tool, as a client checks it. */
		{"{\"tools\":[{\"name\":\"a\",\"title\":\"A\",\"outputSchema\":"
		 "{\"type\":\"object\"},\"annotations\":{\"title\":\"A\","
		 "\"readOnlyHint\":true,\"openWorldHint\":false},\"icons\":[],"
		 "\"_meta\":{},\"x-own\":1}]}",
		 1, NULL},
		{"{\"tools\":[{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":"
		 "\"a\"}]}",
		 0, "tools[2].name: 'a' is tools[0]'s already"},
		{"{\"tools\":[{\"name\":\"a\",\"outputSchema\":{\"type\":"
		 "\"string\"}}]}",
		 0, "tools[0].outputSchema: an object whose"},
		{"{\"tools\":[{\"name\":\"a\",\"annotations\":\"oops\"}]}", 0,
		 "tools[0].annotations: an object"},
		{"{\"tools\":[{\"name\":\"a\",\"annotations\":{\"readOnlyHint\":"
		 "1}}]}",
		 0, "tools[0].annotations: an object whose hints"},
		{"{\"tools\":[{\"name\":\"a\",\"description\":5}]}", 0,
		 "tools[0].description: a string"},
		{"{\"tools\":[{\"name\":\"a\",\"title\":null}]}", 0,
		 "tools[0].title: a string"},
		{"{\"tools\":[{\"name\":\"a\",\"icons\":{}}]}", 0,
		 "tools[0].icons: an array"},
		{"{\"tools\":[{\"name\":\"a\",\"_meta\":[]}]}", 0,
		 "tools[0]._meta: an object"},
	};
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		struct lf_why why = {{0}};
		enum lf_err rc =
			tools_check(tab[i].text, strlen(tab[i].text), &why);

		cr_expect_eq(rc == LF_OK, tab[i].ok, "[%s]: %s", tab[i].text,
			     why.msg);
		if (!tab[i].ok)
			cr_expect(strstr(why.msg, tab[i].why), "[%s]: %s",
				  tab[i].text, why.msg);
	}
}

Test(tools, a_name_is_at_most_256_bytes)
{
	char text[600], name[300];
	struct lf_why why = {{0}};

	memset(name, 'a', 256);
	name[256] = '\0';
	snprintf(text, sizeof(text), "{\"tools\":[{\"name\":\"%s\"}]}", name);
	cr_expect_eq(tools_check(text, strlen(text), &why), LF_OK);
	name[256] = 'a';
	name[257] = '\0';
	snprintf(text, sizeof(text), "{\"tools\":[{\"name\":\"%s\"}]}", name);
	cr_expect_eq(tools_check(text, strlen(text), &why), LF_EINVAL_DOC);
}

/* As a call takes a name: one of blanks alone, or a C1 control, is none. */
Test(tools, a_name_a_call_could_not_use_is_refused)
{
	static const char *const bad[] = {
		"{\"tools\":[{\"name\":\"   \"}]}",
		"{\"tools\":[{\"name\":\"a\\u0085b\"}]}",
		"{\"tools\":[{\"name\":\"a\\tb\"}]}",
	};
	const char *ok = "{\"tools\":[{\"name\":\" a \"}]}";
	struct lf_why why = {{0}};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(tools_check(bad[i], strlen(bad[i]), &why),
			     LF_EINVAL_DOC, "%s", bad[i]);
	cr_expect_eq(tools_check(ok, strlen(ok), &why), LF_OK, "%s", why.msg);
}

Test(tools, a_file_past_the_bound_or_with_a_nul_is_refused)
{
	struct lf_why why = {{0}};
	static const char nul[] = "{\"tools\":[]}\0";

	cr_expect_eq(tools_check(nul, sizeof(nul) - 1, &why), LF_EINVAL_DOC);
	cr_expect_eq(tools_check("{}", TOOLS_MAX + 1, &why), LF_EINVAL_DOC);
}

Test(tools, a_policy_implies_its_exact_names_once_in_rule_order)
{
	json_t *doc = json_loads(
		"{\"interactions\":[{\"match\":\"b_tool\"},{\"match\":\"x_*\"},"
		"{\"match\":\"*\"},{\"match\":\"*_y\"},{\"match\":\"a_tool\"},"
		"{\"match\":\"b_tool\"}],\"default\":{\"mode\":\"block\"}}",
		0, NULL);
	char *text = tools_from_policy(doc);

	cr_assert(text);
	cr_expect_str_eq(text,
			 "{\"tools\":[{\"name\":\"b_tool\",\"inputSchema\":{"
			 "\"type\":\"object\"}},{\"name\":\"a_tool\","
			 "\"inputSchema\":{\"type\":\"object\"}}]}\n");
	free(text);
	json_decref(doc);
}

Test(tools, a_policy_without_interactions_implies_no_tools)
{
	json_t *doc = json_loads("{\"default\":{\"mode\":\"pass\"}}", 0, NULL);
	char *text = tools_from_policy(doc);

	cr_expect_str_eq(text, "{\"tools\":[]}\n");
	free(text);
	json_decref(doc);
}
