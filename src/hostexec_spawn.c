/* SPDX-License-Identifier: MIT */
/*
 * hostexec_spawn.c - start one executor as ledgerfs(8) HOST EXECUTORS
 * says (trusted file, its own user, session and process group, no
 * terminal, rlimits, an environment of its own plus the env file), and
 * judge how it ended.  Reasons name files and users, never the values
 * of the env file: they reach the ledger and the target.
 */
#include "hostexec_int.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backing.h"

#define ENV_FILE_MAX  (64 * 1024)
#define ENV_VARS_MAX  256
#define GROUPS_MAX    64
#define EXEC_NOFILE   256
#define EXEC_FSIZE    (64ULL << 20)
#define EXEC_PATH_ENV "PATH=/usr/local/bin:/usr/bin:/bin"

uint64_t hx_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void hx_error(struct hostexec_result *res, const char *kind, const char *fmt,
	      ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(res->reason, sizeof(res->reason), fmt, ap);
	va_end(ap);
	snprintf(res->error, sizeof(res->error), "%s", kind);
	res->is_error = true;
	json_decref(res->returned);
	res->returned = json_pack("{s:s, s:s, s:s}", "status", "error", "error",
				  kind, "message", res->reason);
}

/* The executor file: present, a trusted regular file, executable. */
static int spawn_check_executor(const char *path, struct hostexec_result *res)
{
	struct lf_why why;
	struct stat st;

	switch (backing_check_trusted_file(path, "executor", &why)) {
	case LF_OK:
		break;
	case LF_NOT_FOUND:
		hx_error(res, "executor_missing", "%s", why.msg);
		return -1;
	case LF_BAD_NAME:
		hx_error(res, "executor_not_executable", "%s", why.msg);
		return -1;
	case LF_VERIFY:
		hx_error(res, "executor_unsafe", "%s", why.msg);
		return -1;
	default:
		hx_error(res, "executor_missing", "%s", why.msg);
		return -1;
	}
	if (stat(path, &st) < 0 || !(st.st_mode & 0111)) {
		hx_error(res, "executor_not_executable",
			 "executor %s is not executable", path);
		return -1;
	}
	return 0;
}

/* envp grows by one "KEY=VALUE" (taken); -1 past ENV_VARS_MAX. */
static int env_put(char **envp, size_t *n, char *kv)
{
	size_t klen = strcspn(kv, "="), i;

	if (!kv)
		return -1;
	for (i = 0; i < *n; i++) {
		if (!strncmp(envp[i], kv, klen) && envp[i][klen] == '=') {
			free(envp[i]);
			envp[i] = kv;
			return 0;
		}
	}
	if (*n >= ENV_VARS_MAX) {
		free(kv);
		return -1;
	}
	envp[(*n)++] = kv;
	return 0;
}

static bool env_key_ok(const char *k, size_t n)
{
	size_t i;

	if (!n || (k[0] >= '0' && k[0] <= '9'))
		return false;
	for (i = 0; i < n; i++)
		if (!(k[i] == '_' || (k[i] >= 'A' && k[i] <= 'Z') ||
		      (k[i] >= 'a' && k[i] <= 'z') ||
		      (k[i] >= '0' && k[i] <= '9')))
			return false;
	return true;
}

/*
 * The env file's lines, KEY=VALUE (blank lines and # comments skipped,
 * an optional `export `, one pair of surrounding quotes taken off).
 */
static int env_parse(char *text, char **envp, size_t *n,
		     struct hostexec_result *res, const char *path)
{
	char *line = text, *next, *eq, *v;
	unsigned lineno = 0;
	size_t vl;

	for (; line && *line; line = next) {
		lineno++;
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		while (*line == ' ' || *line == '\t')
			line++;
		if (!*line || *line == '#')
			continue;
		if (!strncmp(line, "export ", 7))
			line += 7;
		eq = strchr(line, '=');
		if (!eq || !env_key_ok(line, (size_t)(eq - line))) {
			hx_error(res, "env_file",
				 "env file %s line %u: not KEY=VALUE", path,
				 lineno);
			return -1;
		}
		v = eq + 1;
		vl = strlen(v);
		if (vl >= 2 && (v[0] == '"' || v[0] == '\'') &&
		    v[vl - 1] == v[0]) {
			v[vl - 1] = '\0';
			memmove(v, v + 1, vl - 1);
		}
		*eq = '\0';
		{
			char *kv = NULL;

			if (asprintf(&kv, "%s=%s", line, v) < 0 ||
			    env_put(envp, n, kv) < 0) {
				hx_error(res, "env_file",
					 "env file %s: more than %d variables",
					 path, ENV_VARS_MAX);
				return -1;
			}
		}
	}
	return 0;
}

/* Read the env file (by the helper alone) into envp. */
static int env_load(const char *path, char **envp, size_t *n,
		    struct hostexec_result *res)
{
	struct lf_why why;
	struct stat st;
	char *text = NULL;
	ssize_t got;
	int fd, rc = -1;

	if (backing_check_trusted_file(path, "env file", &why) != LF_OK) {
		hx_error(res, "env_file", "%s", why.msg);
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 || fstat(fd, &st) < 0) {
		hx_error(res, "env_file", "env file %s: %s", path,
			 strerror(errno));
		goto out;
	}
	if (st.st_mode & S_IROTH) {
		hx_error(res, "env_file",
			 "env file %s has mode %04o: others may read it", path,
			 (unsigned)(st.st_mode & 07777));
		goto out;
	}
	if (st.st_size > ENV_FILE_MAX) {
		hx_error(res, "env_file", "env file %s is over %d bytes", path,
			 ENV_FILE_MAX);
		goto out;
	}
	text = calloc(1, (size_t)st.st_size + 1);
	if (!text) {
		hx_error(res, "env_file", "out of memory");
		goto out;
	}
	got = read(fd, text, (size_t)st.st_size);
	if (got < 0) {
		hx_error(res, "env_file", "env file %s: %s", path,
			 strerror(errno));
		goto out;
	}
	text[got] = '\0';
	if (memchr(text, '\0', (size_t)got)) {
		hx_error(res, "env_file", "env file %s holds a NUL byte", path);
		goto out;
	}
	rc = env_parse(text, envp, n, res, path);
out:
	if (text) {
		explicit_bzero(text, (size_t)st.st_size);
		free(text);
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

static void env_free(char **envp, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		explicit_bzero(envp[i], strlen(envp[i]));
		free(envp[i]);
	}
}

/* What the child reports when it cannot exec: the step and errno. */
struct spawn_fail {
	int step;
	int err;
};
static const char *const spawn_steps[] = {
	"setting up",	    "changing to cwd", "setting groups",
	"setting the user", "executing",
};

/* In the child: never returns. */
static void spawn_child(const struct hostexec_request *rq,
			const struct passwd *pw, gid_t *groups, int ngroups,
			char **envp, int in_fd, int out_fd, int status_fd)
{
	struct spawn_fail f = {0, 0};
	struct rlimit rl;
	sigset_t all;
	int sig, devnull;

	for (sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	/* Its own session: no terminal, its own process group. */
	if (setsid() < 0)
		goto fail;
	devnull = open("/dev/null", O_WRONLY);
	if (devnull < 0 || dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 ||
	    dup2(devnull, 2) < 0)
		goto fail;
	/* Nothing else of the helper's crosses the exec. */
	if (syscall(SYS_close_range, 3U, ~0U, 4U /* CLOSE_RANGE_CLOEXEC */) < 0)
		goto fail;
	rl.rlim_cur = rl.rlim_max = 0;
	setrlimit(RLIMIT_CORE, &rl);
	rl.rlim_cur = rl.rlim_max = EXEC_NOFILE;
	setrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = rl.rlim_max = EXEC_FSIZE;
	setrlimit(RLIMIT_FSIZE, &rl);
	rl.rlim_cur = rl.rlim_max = rq->spec->timeout_ms / 1000 + 2;
	setrlimit(RLIMIT_CPU, &rl);
	f.step = 1;
	if (chdir(rq->spec->cwd ? rq->spec->cwd : "/") < 0)
		goto fail;
	if (geteuid() == 0) {
		f.step = 2;
		if (setgroups((size_t)ngroups, groups) < 0)
			goto fail;
		f.step = 3;
		if (setgid(pw->pw_gid) < 0 || setuid(pw->pw_uid) < 0)
			goto fail;
	}
	f.step = 0;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		goto fail;
	f.step = 4;
	execve(rq->spec->argv[0], rq->spec->argv, envp);
fail:
	f.err = errno;
	if (write(status_fd, &f, sizeof(f)) < 0)
		_exit(126);
	_exit(127);
}

/* The executor's user: exec.user or the default; never root. */
static int spawn_user(const char *name, struct passwd *pw, char **strbuf,
		      gid_t *groups, int *ngroups, struct hostexec_result *res)
{
	struct passwd *found = NULL;
	long size = sysconf(_SC_GETPW_R_SIZE_MAX);

	*strbuf = malloc(size > 0 ? (size_t)size : 16384);
	if (!*strbuf ||
	    getpwnam_r(name, pw, *strbuf, size > 0 ? (size_t)size : 16384,
		       &found) != 0 ||
	    !found) {
		hx_error(res, "user", "executor user '%s' does not exist",
			 name);
		return -1;
	}
	if (pw->pw_uid == 0) {
		hx_error(res, "user",
			 "executor user '%s' is root: executors never run "
			 "as root",
			 name);
		return -1;
	}
	if (geteuid() != 0 && pw->pw_uid != geteuid()) {
		hx_error(res, "user",
			 "the executor helper runs as uid %u and cannot run "
			 "executors as '%s'",
			 (unsigned)geteuid(), name);
		return -1;
	}
	*ngroups = GROUPS_MAX;
	if (getgrouplist(name, pw->pw_gid, groups, ngroups) < 0) {
		groups[0] = pw->pw_gid;
		*ngroups = 1;
	}
	return 0;
}

static int spawn_env(const struct hostexec_request *rq, const struct passwd *pw,
		     char **envp, size_t *n, struct hostexec_result *res)
{
	char *kv;

	if (env_put(envp, n, strdup(EXEC_PATH_ENV)) < 0 ||
	    asprintf(&kv, "HOME=%s", pw->pw_dir) < 0 ||
	    env_put(envp, n, kv) < 0 ||
	    asprintf(&kv, "USER=%s", pw->pw_name) < 0 ||
	    env_put(envp, n, kv) < 0 ||
	    asprintf(&kv, "LOGNAME=%s", pw->pw_name) < 0 ||
	    env_put(envp, n, kv) < 0 ||
	    env_put(envp, n, strdup("LANG=C.UTF-8")) < 0) {
		hx_error(res, "spawn_failed", "out of memory");
		return -1;
	}
	return rq->spec->env_file ? env_load(rq->spec->env_file, envp, n, res)
				  : 0;
}

int hx_spawn(const struct hostexec_request *rq, const char *default_user,
	     struct hx_job *job, struct hostexec_result *res)
{
	const char *name = rq->spec->user ? rq->spec->user : default_user;
	char *envp[ENV_VARS_MAX + 1] = {0}, *pwbuf = NULL;
	size_t nenv = 0;
	struct passwd pw;
	gid_t groups[GROUPS_MAX];
	int ngroups = 0, in[2] = {-1, -1}, out[2] = {-1, -1}, st[2] = {-1, -1},
	    rc = -1;
	struct spawn_fail f;
	ssize_t got;

	memset(job, 0, sizeof(*job));
	job->pidfd = job->in_fd = job->out_fd = -1;
	job->id = rq->id;
	job->start_ms = hx_now_ms();
	job->timeout_ms = rq->spec->timeout_ms;
	job->deadline_ms = job->start_ms + rq->spec->timeout_ms;
	job->max_output = rq->spec->max_output;
	if (spawn_check_executor(rq->spec->argv[0], res) < 0 ||
	    spawn_user(name, &pw, &pwbuf, groups, &ngroups, res) < 0 ||
	    spawn_env(rq, &pw, envp, &nenv, res) < 0)
		goto out;
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0 ||
	    pipe2(st, O_CLOEXEC) < 0) {
		hx_error(res, "spawn_failed", "pipe: %s", strerror(errno));
		goto out;
	}
	job->pid = fork();
	if (job->pid < 0) {
		hx_error(res, "spawn_failed", "fork: %s", strerror(errno));
		goto out;
	}
	if (job->pid == 0)
		spawn_child(rq, &pw, groups, ngroups, envp, in[0], out[1],
			    st[1]);
	close(st[1]);
	st[1] = -1;
	do
		got = read(st[0], &f, sizeof(f));
	while (got < 0 && errno == EINTR);
	if (got == (ssize_t)sizeof(f)) {
		waitpid(job->pid, NULL, 0);
		hx_error(res,
			 f.err == EACCES || f.err == ENOEXEC
				 ? "executor_not_executable"
				 : "spawn_failed",
			 "executor %s could not start: %s: %s",
			 rq->spec->argv[0],
			 spawn_steps[f.step < 5 && f.step >= 0 ? f.step : 0],
			 strerror(f.err));
		goto out;
	}
	job->pidfd = (int)syscall(SYS_pidfd_open, job->pid, 0);
	if (job->pidfd < 0) {
		kill(job->pid, SIGKILL);
		waitpid(job->pid, NULL, 0);
		hx_error(res, "spawn_failed", "pidfd_open: %s",
			 strerror(errno));
		goto out;
	}
	job->in_fd = in[1];
	job->out_fd = out[0];
	in[1] = out[0] = -1;
	fcntl(job->in_fd, F_SETFL, O_NONBLOCK);
	fcntl(job->out_fd, F_SETFL, O_NONBLOCK);
	job->out = malloc(job->max_output + 1);
	if (!job->out) {
		hx_kill(job);
		waitpid(job->pid, NULL, 0);
		hx_error(res, "spawn_failed", "out of memory");
		goto out;
	}
	job->in = rq->stdin_text;
	job->in_len = rq->stdin_len;
	res->ran = true;
	rc = 0;
out:
	if (rc < 0) {
		res->duration_ms = hx_now_ms() - job->start_ms;
		res->exit_status = -1;
		if (job->pidfd >= 0)
			close(job->pidfd);
		job->pidfd = -1;
	}
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0)
			close(in[i]);
		if (out[i] >= 0)
			close(out[i]);
		if (st[i] >= 0)
			close(st[i]);
	}
	env_free(envp, nenv);
	free(pwbuf);
	return rc;
}

void hx_kill(struct hx_job *job)
{
	if (job->pid > 0) {
		kill(-job->pid, SIGKILL);
		kill(job->pid, SIGKILL);
	}
}

void hx_job_clear(struct hx_job *job)
{
	if (job->pidfd >= 0)
		close(job->pidfd);
	if (job->in_fd >= 0)
		close(job->in_fd);
	if (job->out_fd >= 0)
		close(job->out_fd);
	free(job->out);
	job->pidfd = job->in_fd = job->out_fd = -1;
	job->out = NULL;
	free(job->in);
	job->in = NULL;
}

void hx_finish(struct hx_job *job, struct hostexec_result *res)
{
	json_error_t jerr;
	json_t *v;

	res->ran = true;
	res->duration_ms = hx_now_ms() - job->start_ms;
	res->exit_status =
		WIFEXITED(job->wstatus) ? WEXITSTATUS(job->wstatus) : -1;
	res->signal = WIFSIGNALED(job->wstatus) ? WTERMSIG(job->wstatus) : 0;
	if (job->cancelled) {
		hx_error(
			res, "cancelled",
			"its call was settled (the case's turn, close or fail) "
			"while it ran; its process group was killed");
		return;
	}
	if (job->timed_out) {
		hx_error(res, "timeout",
			 "executor passed its timeout of %llu ms; its "
			 "process group was killed",
			 (unsigned long long)job->timeout_ms);
		return;
	}
	if (job->over_cap) {
		hx_error(res, "output_too_large",
			 "executor wrote more than max_output (%llu bytes); "
			 "its process group was killed",
			 (unsigned long long)job->max_output);
		return;
	}
	if (res->signal) {
		hx_error(res, "killed_by_signal",
			 "executor was killed by signal %d", res->signal);
		return;
	}
	if (res->exit_status != 0) {
		hx_error(res, "exit_status", "executor exited with status %d",
			 res->exit_status);
		return;
	}
	/* jansson's error text may quote the output: only the position. */
	v = json_loadb(job->out ? job->out : "", job->out_len, JSON_DECODE_ANY,
		       &jerr);
	if (!v) {
		hx_error(res, "output_not_json",
			 job->out_len ? "executor output is not one JSON value "
					"(at byte %d)"
				      : "executor wrote no output%.0d",
			 jerr.position);
		return;
	}
	json_decref(res->returned);
	res->returned = v;
	res->is_error = false;
}
