/* SPDX-License-Identifier: MIT */
/*
 * test_cassette.c - cassette_file resolution on the host (names confined
 * to the cassette folder, no symbolic links) and `ledgerctl validate`.
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cassette.h"
#include "ctl.h"
#include "doc.h"
#include "mocks.h"
#include "policy.h"

static char tmp[64];

/* A scratch folder: doc.yaml's home, with cassettes/ts.json and a link. */
static void scratch(void)
{
	char p[128];
	FILE *f;

	strcpy(tmp, "/tmp/lf-cassette-XXXXXX");
	cr_assert_not_null(mkdtemp(tmp));
	snprintf(p, sizeof(p), "%s/cassettes", tmp);
	cr_assert_eq(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/cassettes/ts.json", tmp);
	f = fopen(p, "w");
	cr_assert_not_null(f);
	fputs("{\"t\": [1, 2]}\n", f);
	fclose(f);
	snprintf(p, sizeof(p), "%s/secret.json", tmp);
	f = fopen(p, "w");
	fputs("{\"secret\": 1}\n", f);
	fclose(f);
	snprintf(p, sizeof(p), "%s/cassettes/link.json", tmp);
	cr_assert_eq(symlink("../secret.json", p), 0);
	snprintf(p, sizeof(p), "%s/linkdir", tmp);
	cr_assert_eq(symlink("cassettes", p), 0);
}

static void cleanup(void)
{
	char cmd[128];

	if (tmp[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
		cr_assert_eq(system(cmd), 0);
	}
}

static json_t *inline_text(const char *text, struct lf_why *why)
{
	char path[128];
	json_t *doc = doc_parse(text, strlen(text), why), *out;

	cr_assert_not_null(doc, "%s", why->msg);
	snprintf(path, sizeof(path), "%s/doc.yaml", tmp);
	out = cassette_inline(doc, path, NULL, why);
	json_decref(doc);
	return out;
}

Test(cassette, cassette_file_is_inlined_from_the_document_folder)
{
	struct lf_why why = {{0}};
	json_t *doc =
		doc_load_file(TEST_DATA "/policy/with_file.policy.yaml", &why);
	json_t *want =
		doc_load_file(TEST_DATA "/policy/cassettes/invoice.json", &why);
	json_t *out, *rule;
	struct policy *p = NULL;

	cr_assert_not_null(doc, "%s", why.msg);
	out = cassette_inline(doc, TEST_DATA "/policy/with_file.policy.yaml",
			      NULL, &why);
	cr_assert_not_null(out, "%s", why.msg);
	cr_assert_null(json_object_get(out, "cassette_dir"));
	rule = json_array_get(json_object_get(out, "interactions"), 4);
	cr_assert_null(json_object_get(rule, "cassette_file"));
	cr_assert(json_equal(json_object_get(rule, "cassette"), want));
	/* The input is left as it was. */
	cr_assert_not_null(json_object_get(doc, "cassette_dir"));
	cr_assert_eq(policy_load(out, &p, &why), LF_OK, "%s", why.msg);
	policy_free(p);
	json_decref(out);
	json_decref(doc);
	json_decref(want);
}

/* Inline text, then load it as mocks; NULL with why when refused. */
static struct mocks *mocks_of(const char *text, struct lf_why *why)
{
	json_t *out = inline_text(text, why);
	struct mocks *m = NULL;

	if (out && mocks_load(out, &m, why) != LF_OK)
		m = NULL;
	json_decref(out);
	return m;
}

Test(cassette, the_folder_is_added_whole_and_names_take_no_json,
     .init = scratch, .fini = cleanup)
{
	struct lf_why why = {{0}};
	json_t *out = inline_text(
		"cassette_dir: ./cassettes\nversion: 1\nmocks:\n"
		"  - {tool: a, cassette_file: ts, overrides: [{path: t.1, value: 9}]}\n"
		"  - {tool: ts, backend: replay}\n",
		&why);
	struct mocks *m = NULL;
	struct mock_result r;
	char *s;

	cr_assert_not_null(out, "%s", why.msg);
	s = json_dumps(json_object_get(out, "cassettes"),
		       JSON_COMPACT | JSON_SORT_KEYS);
	/* link.json is a symbolic link: not a recording, ASSERT's reason kept. */
	cr_assert_str_eq(s, "{\"/refused/link\":\"cassette 'link.json' is a "
			    "symlink; replay cassettes must be regular "
			    "files\",\"ts\":{\"t\":[1,2]}}");
	free(s);
	cr_assert_null(json_object_get(out, "cassette_dir"));
	cr_assert_eq(mocks_load(out, &m, &why), LF_OK, "%s", why.msg);
	cr_assert_eq(
		mocks_resolve(m, NULL, "c", "a", NULL, NULL, NULL, &r, &why),
		LF_OK, "%s", why.msg);
	cr_assert_str_eq(r.source, "override");
	s = json_dumps(r.returned, JSON_COMPACT);
	cr_assert_str_eq(s, "{\"t\":[1,9]}");
	free(s);
	mocks_result_clear(&r);
	/* Only overrides or a backend: the recording named after the tool. */
	cr_assert_eq(
		mocks_resolve(m, NULL, "c", "ts", NULL, NULL, NULL, &r, &why),
		LF_OK, "%s", why.msg);
	cr_assert_str_eq(r.source, "replay");
	mocks_result_clear(&r);
	mocks_free(m);
	json_decref(out);
}

Test(cassette, unsafe_names_are_refused_naming_the_rule, .init = scratch,
     .fini = cleanup)
{
	static const char *const names[] = {"../secret", "a/b", "a\\\\b", "..",
					    " "};
	char text[256];
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct lf_why why = {{0}};

		snprintf(text, sizeof(text),
			 "cassette_dir: cassettes\nmocks:\n"
			 "  - {tool: a, cassette_file: \"%s\"}\n",
			 names[i]);
		cr_assert_null(mocks_of(text, &why), "accepted '%s'", names[i]);
		cr_assert(!strncmp(why.msg,
				   "mocks[0].cassette_file: cassette "
				   "name must be a single safe filename "
				   "stem, got ",
				   strlen("mocks[0].cassette_file: cassette "
					  "name must be a single safe filename "
					  "stem, got ")),
			  "%s", why.msg);
		snprintf(text, sizeof(text),
			 "cassette_dir: cassettes\ninteractions:\n"
			 "  - {match: b, mode: mock, cassette_file: \"%s\"}\n",
			 names[i]);
		cr_assert_null(inline_text(text, &why), "accepted '%s'",
			       names[i]);
		cr_assert(!strncmp(why.msg,
				   "interactions[0].cassette_file: ", 31),
			  "%s", why.msg);
	}
}

Test(cassette, missing_or_malformed_cassettes_are_refused, .init = scratch,
     .fini = cleanup)
{
	struct lf_why why = {{0}};
	char p[128];
	FILE *f;

	cr_assert_null(mocks_of("cassette_dir: cassettes\nmocks:\n"
				"  - {tool: a, cassette_file: nope}\n",
				&why));
	cr_assert_str_eq(why.msg, "mocks[0]: replay cassette file not found "
				  "for 'a': 'nope'");
	cr_assert_null(mocks_of("cassette_dir: cassettes\nmocks:\n"
				"  - {tool: a, cassette_file: link}\n",
				&why));
	cr_assert_str_eq(why.msg, "mocks[0]: cassette 'link.json' is a "
				  "symlink; replay cassettes must be regular "
				  "files");
	cr_assert_null(
		mocks_of("mocks:\n  - {tool: a, cassette_file: ts}\n", &why));
	cr_assert_str_eq(why.msg, "mocks[0]: replay mock for 'a' needs a "
				  "cassette dir or an inline `cassette:`");
	snprintf(p, sizeof(p), "%s/cassettes/bad.json", tmp);
	f = fopen(p, "w");
	cr_assert_not_null(f);
	fputs("{\"open\": \n", f);
	fclose(f);
	cr_assert_null(
		inline_text("cassette_dir: cassettes\nmocks: []\n", &why));
	cr_assert(!strncmp(why.msg, "cassette 'bad.json': line ", 26), "%s",
		  why.msg);
}

Test(cassette, a_cassette_folder_that_is_not_there_holds_no_recording,
     .init = scratch, .fini = cleanup)
{
	struct lf_why why = {{0}};
	json_t *out;

	/* As ASSERT: nothing reads it until a rule needs a recording. */
	out = inline_text("cassette_dir: nocass\nmocks:\n"
			  "  - {tool: a, response: {ok: true}}\n",
			  &why);
	cr_assert_not_null(out, "%s", why.msg);
	json_decref(out);
	cr_assert_null(mocks_of("cassette_dir: nocass\nmocks:\n"
				"  - {tool: a, cassette_file: x}\n",
				&why));
	cr_assert_str_eq(why.msg, "mocks[0]: replay cassette file not found "
				  "for 'a': 'x'");
}

/* ledgerctl validate, its output captured. */
static int validate(const char *policy, const char *mocks)
{
	char *argv[] = {"validate", (char *)policy, (char *)mocks, NULL};
	int rc = ctl_validate_main(mocks ? 3 : 2, argv);

	fflush(stdout);
	fflush(stderr);
	return rc;
}

Test(validate, valid_documents_report_ok_and_uncovered_rules,
     .init = cr_redirect_stdout)
{
	cr_assert_eq(validate(TEST_DATA "/policy/with_file.policy.yaml",
			      TEST_DATA "/policy/telecom.mocks.yaml"),
		     0);
	cr_assert_stdout_eq_str(
		TEST_DATA
		"/policy/with_file.policy.yaml: ok, 9 rules\n" TEST_DATA
		"/policy/telecom.mocks.yaml: ok, 7 rules\n" TEST_DATA
		"/policy/with_file.policy.yaml: interactions[7] 'reset_password' (mode mock): no mock rule covers every call; the others get the placeholder\n");
}

Test(validate, invalid_document_exits_1_naming_file_line_and_key,
     .init = cr_redirect_stderr, .fini = cleanup)
{
	char path[128], want[256];
	FILE *f;

	scratch();
	snprintf(path, sizeof(path), "%s/bad.yaml", tmp);
	f = fopen(path, "w");
	fputs("interactions:\n  - {match: a, mode: maybe}\n", f);
	fclose(f);
	cr_assert_eq(validate(path, NULL), 1);
	snprintf(want, sizeof(want),
		 "%s:2: interactions[0].mode: unknown mode 'maybe'\n", path);
	cr_assert_stderr_eq_str(want);
}

Test(validate, an_unknown_key_is_named_at_its_own_line,
     .init = cr_redirect_stderr, .fini = cleanup)
{
	char path[128], want[256];
	FILE *f;

	scratch();
	snprintf(path, sizeof(path), "%s/bad.yaml", tmp);
	f = fopen(path, "w");
	fputs("interactions:\n  - match: a\n    mode: pass\n"
	      "  - match: b\n    mode: pass\n    mdoe: pass\n",
	      f);
	fclose(f);
	cr_assert_eq(validate(path, NULL), 1);
	snprintf(want, sizeof(want),
		 "%s:6: interactions[1]: unknown key 'mdoe'\n", path);
	cr_assert_stderr_eq_str(want);
}

Test(validate, every_refusal_names_a_line, .init = cr_redirect_stderr,
     .fini = cleanup)
{
	static const struct {
		const char *policy, *mocks, *want; /* want: after "FILE:" */
	} t[] = {
		{"interactions: []\n", "version: 1\nmocks: {a: 1}\n",
		 "2: `mocks:` must be a list"},
		{"interactions: []\n", "version: 1\ncase: x\nmocks: []\n",
		 "2: unknown top-level key 'case'"},
		{"interactions:\n  - match: a\n    mode: pass\n"
		 "  - mode: pass\n    note: x\n",
		 NULL, "4: interactions[1].match: required, a non-empty string"},
	};
	char ppath[128], mpath[128], want[600];
	size_t i;
	FILE *f;

	scratch();
	snprintf(ppath, sizeof(ppath), "%s/p.yaml", tmp);
	snprintf(mpath, sizeof(mpath), "%s/m.yaml", tmp);
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		f = fopen(ppath, "w");
		fputs(t[i].policy, f);
		fclose(f);
		if (t[i].mocks) {
			f = fopen(mpath, "w");
			fputs(t[i].mocks, f);
			fclose(f);
		}
		cr_assert_eq(validate(ppath, t[i].mocks ? mpath : NULL), 1);
	}
	snprintf(want, sizeof(want), "%s:%s\n%s:%s\n%s:%s\n", mpath, t[0].want,
		 mpath, t[1].want, ppath, t[2].want);
	cr_assert_stderr_eq_str(want);
}

Test(validate, usage_and_unreadable_files_exit_2, .init = cr_redirect_stderr)
{
	char *argv[] = {"validate", NULL};

	cr_assert_eq(ctl_validate_main(1, argv), 2);
	cr_assert_eq(validate("/nonexistent/policy.yaml", NULL), 2);
	cr_assert_eq(validate(TEST_DATA "/policy/telecom.policy.yaml",
			      "/nonexistent/mocks.yaml"),
		     2);
}
