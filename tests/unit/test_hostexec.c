/* SPDX-License-Identifier: MIT */
/*
 * test_hostexec.c - host executors without a mount: the exec: rule of a
 * policy (YAML 1.1 and JSON, typos refused), the helper's frames (strict,
 * bounded), and the helper itself answering over a socketpair.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "doc.h"
#include "exec_spec.h"
#include "hostexec.h"
#include "policy.h"

static enum lf_err load(const char *text, struct policy **p, char *msg)
{
	struct lf_why why = {{0}};
	json_t *doc = doc_parse(text, strlen(text), &why);
	enum lf_err e;

	cr_assert_not_null(doc, "%s", why.msg);
	e = policy_load(doc, p, &why);
	json_decref(doc);
	if (msg)
		strcpy(msg, why.msg);
	return e;
}

Test(hostexec, exec_rule_reads_the_same_in_yaml_and_json)
{
	static const char *const texts[] = {
		"interactions:\n"
		"  - match: crm_lookup\n"
		"    mode: pass\n"
		"    exec: {argv: [/opt/crm, --json], timeout: 2s, "
		"max_output: 64KiB, env_file: /etc/crm.env, user: tools, "
		"cwd: /tmp}\n",
		"{\"interactions\":[{\"match\":\"crm_lookup\",\"mode\":\"pass\","
		"\"exec\":{\"argv\":[\"/opt/crm\",\"--json\"],\"timeout\":\"2s\","
		"\"max_output\":\"64KiB\",\"env_file\":\"/etc/crm.env\","
		"\"user\":\"tools\",\"cwd\":\"/tmp\"}}]}",
	};
	struct policy_decision d;
	struct policy *p;
	size_t i;

	for (i = 0; i < 2; i++) {
		cr_assert_eq(load(texts[i], &p, NULL), LF_OK);
		policy_decide(p, "crm_lookup", &d);
		cr_assert_eq(d.mode, LF_MODE_PASS);
		cr_assert_not_null(d.exec);
		cr_assert_eq(d.exec->argc, 2);
		cr_assert_str_eq(d.exec->argv[1], "--json");
		cr_assert_eq(d.exec->timeout_ms, 2000);
		cr_assert_eq(d.exec->max_output, 64 * 1024);
		cr_assert_str_eq(d.exec->env_file, "/etc/crm.env");
		cr_assert_str_eq(d.exec->user, "tools");
		cr_assert_str_eq(d.exec->cwd, "/tmp");
		policy_decide(p, "other", &d);
		cr_assert_null(d.exec);
		policy_free(p);
	}
}

Test(hostexec, exec_rule_defaults_need_only_argv)
{
	struct policy_decision d;
	struct policy *p;

	cr_assert_eq(load("interactions:\n  - {match: t, mode: pass, exec: "
			  "{argv: [/bin/true]}}\n",
			  &p, NULL),
		     LF_OK);
	policy_decide(p, "t", &d);
	cr_assert_eq(d.exec->timeout_ms, EXEC_TIMEOUT_DEFAULT_MS);
	cr_assert_eq(d.exec->max_output, EXEC_OUTPUT_DEFAULT);
	cr_assert_null(d.exec->user);
	policy_free(p);
}

Test(hostexec, exec_rule_refuses_typos_and_bad_values)
{
	static const struct {
		const char *exec, *want;
	} t[] = {
		{"{argv: [/bin/true], timout: 2s}",
		 "interactions[0].exec: unknown key 'timout'"},
		{"{timeout: 2s}", "interactions[0].exec.argv: required, a "
				  "non-empty list of strings"},
		{"{argv: []}", "interactions[0].exec.argv: required, a "
			       "non-empty list of strings"},
		{"{argv: [crm]}", "interactions[0].exec.argv[0]: must be an "
				  "absolute path (the host's PATH is not "
				  "searched)"},
		{"{argv: [/bin/true], timeout: 10 s}",
		 "interactions[0].exec.timeout: "},
		{"{argv: [/bin/true], max_output: 1MB}",
		 "interactions[0].exec.max_output: "},
		{"{argv: [/bin/true], max_output: 9MiB}",
		 "interactions[0].exec.max_output: at most 8MiB"},
		{"{argv: [/bin/true], env_file: crm.env}",
		 "interactions[0].exec.env_file: must be an absolute path"},
		{"[/bin/true]", "interactions[0].exec: must be a mapping with "
				"at least argv"},
	};
	char text[512], msg[sizeof(((struct lf_why *)0)->msg)];
	struct policy *p = NULL;
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		snprintf(text, sizeof(text),
			 "interactions:\n  - {match: t, mode: pass, exec: "
			 "%s}\n",
			 t[i].exec);
		cr_assert_eq(load(text, &p, msg), LF_EINVAL_DOC, "accepted %s",
			     t[i].exec);
		cr_assert(strncmp(msg, t[i].want, strlen(t[i].want)) == 0,
			  "%s: got '%s'", t[i].exec, msg);
	}
}

Test(hostexec, exec_is_only_for_a_pass_rule)
{
	char msg[512];
	struct policy *p = NULL;

	cr_assert_eq(load("interactions:\n  - {match: t, mode: mock, exec: "
			  "{argv: [/bin/true]}}\n",
			  &p, msg),
		     LF_EINVAL_DOC);
	cr_assert_str_eq(msg,
			 "interactions[0].exec: only a pass rule runs on the "
			 "host");
}

Test(hostexec, helper_refuses_frames_it_does_not_know)
{
	static const char *const bad[] = {
		"[]",
		"{\"op\":\"run\"}",
		"{\"op\":\"run\",\"id\":1,\"stdin\":\"{}\"}",
		"{\"op\":\"run\",\"id\":1,\"stdin\":\"{}\",\"spec\":"
		"{\"argv\":[\"/bin/true\"]},\"extra\":1}",
		"{\"op\":\"run\",\"id\":1,\"stdin\":\"{}\",\"spec\":"
		"{\"argv\":[\"rel\"]}}",
		"{\"op\":\"format\",\"id\":1}",
		"{\"op\":\"unmount\",\"id\":1,\"path\":\"/\"}",
		"{\"op\":\"cancel\",\"id\":1,\"pid\":1}",
		"{\"op\":\"cancel\"}",
		"{\"op\":\"run\",\"id\":-1}",
	};
	struct hostexec_request rq;
	struct lf_why why;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_neq(hostexec_parse_request(bad[i], strlen(bad[i]),
						     &rq, &why),
			      LF_OK, "accepted %s", bad[i]);
		hostexec_request_clear(&rq);
	}
}

Test(hostexec, a_request_survives_the_wire)
{
	struct exec_spec *spec;
	struct hostexec_request rq = {0}, back;
	struct lf_why why;
	json_t *v = json_pack("{s:[s,s], s:s, s:s}", "argv", "/bin/cat", "-",
			      "timeout", "1500ms", "user", "nobody");
	size_t len;
	char *text;

	cr_assert_eq(exec_spec_parse(v, "t", &spec, &why), LF_OK, "%s",
		     why.msg);
	rq.op = HOSTEXEC_RUN;
	rq.id = 7;
	rq.spec = spec;
	rq.stdin_text = strdup("{\"q\":\"a\\u0000b\"}");
	rq.stdin_len = strlen(rq.stdin_text);
	text = hostexec_request_text(&rq, &len);
	cr_assert_eq(hostexec_parse_request(text, len, &back, &why), LF_OK,
		     "%s", why.msg);
	cr_assert_eq(back.id, 7);
	cr_assert_eq(back.spec->timeout_ms, 1500);
	cr_assert_str_eq(back.spec->user, "nobody");
	cr_assert_str_eq(back.stdin_text, rq.stdin_text);
	hostexec_request_clear(&back);
	hostexec_request_clear(&rq);
	free(text);
	json_decref(v);
}

Test(hostexec, frame_reader_refuses_a_frame_past_the_bound)
{
	struct hostexec_reader rd = {0};
	const char *body;
	size_t len;
	char *room = hostexec_reader_space(&rd, 8);

	memcpy(room, "\x7f\xff\xff\xff{}", 6);
	rd.len = 6;
	cr_assert_eq(hostexec_reader_next(&rd, &body, &len), -1);
	hostexec_reader_free(&rd);
	room = hostexec_reader_space(&rd, 8);
	memcpy(room, "\0\0\0\2{}\0\0", 8);
	rd.len = 8;
	cr_assert_eq(hostexec_reader_next(&rd, &body, &len), 1);
	cr_assert_eq(len, 2);
	cr_assert_eq(hostexec_reader_next(&rd, &body, &len), 0);
	hostexec_reader_free(&rd);
}

/* A real helper on a socketpair, running /bin/cat as this user. */
Test(hostexec, helper_runs_an_executor_and_returns_its_json)
{
	struct hostexec_helper_conf conf = {.default_user = "nobody"};
	struct hostexec_result res;
	struct exec_spec *spec;
	struct hostexec *hx;
	struct lf_why why;
	struct hostexec_slots slots = {0};
	json_t *v, *args;
	int sv[2];
	pid_t pid;

	if (geteuid() != 0)
		cr_skip_test("needs root to run executors as nobody");
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		_exit(hostexec_helper_main(sv[1], &conf));
	}
	close(sv[1]);
	hx = hostexec_client_new(sv[0]);
	v = json_pack("{s:[s]}", "argv", "/bin/cat");
	cr_assert_eq(exec_spec_parse(v, "t", &spec, &why), LF_OK);
	args = json_pack("{s:s}", "q", "acme");
	cr_assert_eq(hostexec_run(hx, &slots, spec, args, &res, &why), LF_OK,
		     "%s", why.msg);
	cr_assert(!res.is_error, "%s", res.reason);
	cr_assert(res.ran);
	cr_assert_eq(res.exit_status, 0);
	cr_assert(json_equal(res.returned, args));
	hostexec_result_clear(&res);
	json_decref(args);
	json_decref(v);
	exec_spec_free(spec);
	hostexec_client_free(hx);
	cr_assert_eq(waitpid(pid, NULL, 0), pid);
}

struct bound_call {
	struct hostexec *hx;
	struct hostexec_slots *slots;
	const struct exec_spec *spec;
	enum lf_err err;
	bool ok;
	char error[32]; /* the result's error kind */
	bool ran;
};

static void *bound_run(void *arg)
{
	struct bound_call *b = arg;
	struct hostexec_result res;
	struct lf_why why;
	json_t *args = json_object();

	b->err = hostexec_run(b->hx, b->slots, b->spec, args, &res, &why);
	b->ok = b->err == LF_OK && !res.is_error;
	if (b->err == LF_OK) {
		strcpy(b->error, res.error);
		b->ran = res.ran;
	}
	hostexec_result_clear(&res);
	json_decref(args);
	return NULL;
}

/*
 * A helper on a socketpair and dir/gate, an executor that leaves a mark
 * dir/run/s.* and waits for dir/run/release.  *pid: the helper's.
 */
static struct hostexec *gate_helper(char *dir, struct exec_spec **spec,
				    json_t **v, pid_t *pid)
{
	struct hostexec_helper_conf conf = {.default_user = "nobody"};
	char path[128], text[512];
	struct lf_why why;
	FILE *f;
	int sv[2];

	cr_assert_not_null(mkdtemp(dir));
	chmod(dir, 0755);
	snprintf(path, sizeof(path), "%s/run", dir);
	mkdir(path, 01777);
	chmod(path, 01777);
	snprintf(path, sizeof(path), "%s/gate", dir);
	snprintf(
		text, sizeof(text),
		"#!/bin/sh\ncat >/dev/null\nmktemp %s/run/s.XXXXXX >/dev/null\n"
		"while [ ! -e %s/run/release ]; do sleep 0.02; done\n"
		"echo '{}'\n",
		dir, dir);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
	chmod(path, 0755);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	*pid = fork();
	if (*pid == 0) {
		close(sv[0]);
		_exit(hostexec_helper_main(sv[1], &conf));
	}
	close(sv[1]);
	*v = json_pack("{s:[s]}", "argv", path);
	cr_assert_eq(exec_spec_parse(*v, "t", spec, &why), LF_OK);
	return hostexec_client_new(sv[0]);
}

/* Until n gates of dir have started (10 s at most): how many have. */
static int wait_started(const char *dir, int n);

static int count_started(const char *dir)
{
	char cmd[256];
	FILE *f;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "ls %s | grep -c '^s\\.'", dir);
	f = popen(cmd, "r");
	if (f) {
		if (fscanf(f, "%d", &n) != 1)
			n = -1;
		pclose(f);
	}
	return n;
}

static int wait_started(const char *dir, int n)
{
	char path[128];
	int i, got = 0;

	snprintf(path, sizeof(path), "%s/run", dir);
	for (i = 0; i < 500 && (got = count_started(path)) < n; i++)
		usleep(20000);
	return got;
}

static void gate_helper_end(struct hostexec *hx, const char *dir,
			    struct exec_spec *spec, json_t *v, pid_t pid)
{
	char text[128];

	json_decref(v);
	exec_spec_free(spec);
	hostexec_client_free(hx);
	waitpid(pid, NULL, 0);
	snprintf(text, sizeof(text), "rm -rf %s", dir);
	cr_assert_eq(system(text), 0);
}

/* Five calls of one case: four executors run, the fifth waits its turn. */
Test(hostexec, executors_per_case_are_bounded_to_four)
{
	char dir[] = "/tmp/hxbound.XXXXXX", path[128];
	struct bound_call calls[5];
	pthread_t t[5];
	struct exec_spec *spec;
	struct hostexec *hx;
	struct hostexec_slots slots = {0};
	json_t *v;
	int i, n;
	pid_t pid;

	if (geteuid() != 0)
		cr_skip_test("needs root to run executors as nobody");
	hx = gate_helper(dir, &spec, &v, &pid);
	for (i = 0; i < 5; i++) {
		calls[i] = (struct bound_call){hx,    &slots, spec, LF_OK,
					       false, "",     false};
		pthread_create(&t[i], NULL, bound_run, &calls[i]);
	}
	n = wait_started(dir, 4);
	cr_assert_eq(n, 4, "%d executors started", n);
	usleep(300000);
	snprintf(path, sizeof(path), "%s/run", dir);
	cr_assert_eq(count_started(path), 4, "a fifth started past the bound");
	snprintf(path, sizeof(path), "%s/run/release", dir);
	close(open(path, O_CREAT | O_WRONLY, 0644));
	for (i = 0; i < 5; i++) {
		pthread_join(t[i], NULL);
		cr_assert(calls[i].ok, "call %d failed", i);
	}
	snprintf(path, sizeof(path), "%s/run", dir);
	cr_assert_eq(count_started(path), 5);
	gate_helper_end(hx, dir, spec, v, pid);
}

/*
 * A cancel of a case (its calls settled): its four running executors are
 * killed and answer "cancelled", the fifth, waiting for a slot, never
 * runs, and a job made before the cancel but started after it neither.
 * Another case's executor runs on.
 */
Test(hostexec, a_cancel_ends_the_cases_executors_running_and_waiting)
{
	char dir[] = "/tmp/hxcancel.XXXXXX", path[128];
	struct bound_call calls[6];
	pthread_t t[6];
	struct exec_spec *spec;
	struct hostexec *hx;
	struct hostexec_slots slots = {0}, other = {0};
	struct hostexec_result res;
	struct hostexec_job *late;
	struct lf_why why;
	json_t *v, *args = json_object();
	int i, n;
	pid_t pid;

	if (geteuid() != 0)
		cr_skip_test("needs root to run executors as nobody");
	hx = gate_helper(dir, &spec, &v, &pid);
	cr_assert_eq(hostexec_job_new(hx, &slots, spec, args, &late, &why),
		     LF_OK);
	for (i = 0; i < 6; i++) {
		calls[i] = (struct bound_call){
			hx,   i == 5 ? &other : &slots, spec, LF_OK, false, "",
			false};
		pthread_create(&t[i], NULL, bound_run, &calls[i]);
	}
	n = wait_started(dir, 5);
	cr_assert_eq(n, 5, "%d executors started", n);
	hostexec_cancel(hx, &slots);
	for (i = 0; i < 5; i++) {
		pthread_join(t[i], NULL);
		if (calls[i].err == LF_OK) {
			cr_assert_str_eq(calls[i].error, "cancelled");
			cr_assert(calls[i].ran);
		} else {
			cr_assert_eq(calls[i].err, LF_IO, "call %d: %s", i,
				     lf_err_name(calls[i].err));
		}
	}
	n = 0;
	for (i = 0; i < 5; i++)
		n += calls[i].err == LF_OK;
	cr_assert_eq(n, 4, "%d of the case's calls ran", n);
	cr_assert_eq(hostexec_job_wait(hx, late, &res, &why), LF_IO);
	snprintf(path, sizeof(path), "%s/run", dir);
	cr_assert_eq(count_started(path), 5, "a cancelled job started");
	cr_assert_eq(slots.running, 0);
	/* The other case's executor was not touched. */
	snprintf(path, sizeof(path), "%s/run/release", dir);
	close(open(path, O_CREAT | O_WRONLY, 0644));
	pthread_join(t[5], NULL);
	cr_assert(calls[5].ok, "the other case's call failed");
	json_decref(args);
	gate_helper_end(hx, dir, spec, v, pid);
}
