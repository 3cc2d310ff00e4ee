/* SPDX-License-Identifier: MIT */
/*
 * ctl_check_target.c - `ledgerctl check-target PID`: prove from the
 * target's own mount table that it sees one case's target/ folder of the
 * view and neither the backing folder nor the host key (ledgerfs(8) THE
 * VIEW, ledgerfs-ledger(5) DESCRIPTION and KEYS).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "ctl.h"
#include "optarg.h"

#define CT_USAGE                                                               \
	"usage: ledgerctl check-target PID [--mount DIR] [--backing DIR] [--key FILE]\n"
#define CT_DEFAULT_BACKING CTL_DEFAULT_BACKING
#define CT_MAX_ANCESTORS   64

/* One line of a mountinfo table (paths unescaped). */
struct ct_mount {
	dev_t dev;
	char *root, *point, *fstype, *source;
	char *opts; /* the super options ("" when absent) */
};

struct ct_table {
	struct ct_mount *m;
	size_t n;
};

/*
 * Something the target must not see: a host path, where it lies within
 * its filesystem (rel), the devices that filesystem shows, and the
 * (dev, ino) of it and its ancestors for the walk through /proc/PID/root.
 */
struct ct_secret {
	const char *what; /* "the backing folder", "the host key" */
	char path[PATH_MAX];
	char rel[PATH_MAX];
	dev_t devs[2];
	struct {
		dev_t dev;
		ino_t ino;
	} tops[CT_MAX_ANCESTORS];
	size_t ntops;
};

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static char *unescape(const char *s)
{
	char *out = malloc(strlen(s) + 1), *o = out;

	if (!out)
		return NULL;
	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
		    s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
				      (s[3] - '0'));
			s += 4;
		} else {
			*o++ = *s++;
		}
	}
	*o = '\0';
	return out;
}

static void table_free(struct ct_table *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		free(t->m[i].root);
		free(t->m[i].point);
		free(t->m[i].fstype);
		free(t->m[i].source);
		free(t->m[i].opts);
	}
	free(t->m);
	t->m = NULL;
	t->n = 0;
}

/* Parse one mountinfo line into m.  0, or -1 for a line of another shape. */
static int parse_line(char *line, struct ct_mount *m)
{
	char *f[8] = {0}, *save = NULL, *tok;
	char none[] = "";
	unsigned int maj, min;
	int n = 0;
	bool dash = false;

	for (tok = strtok_r(line, " \n", &save); tok;
	     tok = strtok_r(NULL, " \n", &save)) {
		if (n < 5) {
			f[n++] = tok;
		} else if (!dash) {
			dash = !strcmp(tok, "-"); /* options, optional fields */
		} else if (n < 8) {
			f[n++] = tok; /* fstype, source, super options */
		}
	}
	if (n < 7 || sscanf(f[2], "%u:%u", &maj, &min) != 2)
		return -1;
	m->dev = makedev(maj, min);
	m->root = unescape(f[3]);
	m->point = unescape(f[4]);
	m->fstype = unescape(f[5]);
	m->source = unescape(f[6]);
	m->opts = unescape(n > 7 ? f[7] : none);
	return m->root && m->point && m->fstype && m->source && m->opts ? 0
									: -1;
}

static int table_read(const char *path, struct ct_table *t)
{
	FILE *fp = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	struct ct_mount *nm;
	int rc = -1;

	t->m = NULL;
	t->n = 0;
	if (!fp)
		return -1;
	while (getline(&line, &cap, fp) > 0) {
		nm = realloc(t->m, (t->n + 1) * sizeof(*nm));
		if (!nm)
			goto out;
		t->m = nm;
		memset(&t->m[t->n], 0, sizeof(*nm));
		if (parse_line(line, &t->m[t->n++]) < 0) {
			errno = EINVAL;
			goto out;
		}
	}
	rc = ferror(fp) ? -1 : 0;
out:
	free(line);
	fclose(fp);
	if (rc < 0)
		table_free(t);
	return rc;
}

/* Is path at or below dir?  Both absolute, without trailing slashes. */
static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (!strcmp(dir, "/"))
		return true;
	return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

/*
 * Where host path real (resolved) lies within its filesystem: the root of
 * the host mount holding it joined with the rest of the path.
 */
static int locate(const struct ct_table *host, const char *real,
		  struct ct_secret *s)
{
	const struct ct_mount *best = NULL;
	size_t i, blen = 0;

	for (i = 0; i < host->n; i++) {
		size_t n = strlen(host->m[i].point);

		if (under(real, host->m[i].point) && (!best || n >= blen)) {
			best = &host->m[i];
			blen = n;
		}
	}
	if (!best)
		return -1;
	s->devs[1] = best->dev;
	if (!strcmp(best->point, "/"))
		blen = 0;
	snprintf(s->rel, sizeof(s->rel), "%s%s",
		 strcmp(best->root, "/") ? best->root : "", real + blen);
	if (!s->rel[0])
		strcpy(s->rel, "/");
	return 0;
}

/* Fill a secret from host path p.  0, or -1 with the reason said. */
static int secret_init(struct ct_secret *s, const char *what, const char *p,
		       const struct ct_table *host)
{
	char walk[PATH_MAX], *slash;
	struct stat st;

	s->what = what;
	if (!realpath(p, s->path) || stat(s->path, &st) < 0) {
		fprintf(stderr, "ledgerctl check-target: %s %s: %s\n", what, p,
			strerror(errno));
		return -1;
	}
	s->devs[0] = st.st_dev;
	if (locate(host, s->path, s) < 0) {
		fprintf(stderr,
			"ledgerctl check-target: %s %s is on no mount of this host\n",
			what, p);
		return -1;
	}
	/* It and every folder above it: seeing any of them sees it. */
	snprintf(walk, sizeof(walk), "%s", s->path);
	for (s->ntops = 0; s->ntops < CT_MAX_ANCESTORS;) {
		if (stat(walk[0] ? walk : "/", &st) == 0) {
			s->tops[s->ntops].dev = st.st_dev;
			s->tops[s->ntops].ino = st.st_ino;
			s->ntops++;
		}
		if (!walk[0])
			break;
		slash = strrchr(walk, '/');
		if (!slash)
			break;
		*slash = '\0';
	}
	return 0;
}

static void say_mount(const char *pid, const struct ct_mount *m)
{
	printf("%s: mount %s (root %s, %s %s)", pid, m->point, m->root,
	       m->fstype, m->source);
}

/*
 * The view: shown only as one case's target/ folder, and only one case,
 * of one daemon: the same name on another view's device is another case.
 */
static int check_view(const char *pid, const struct ct_mount *m,
		      char *case_seen, size_t cap, dev_t *case_dev)
{
	const char *name, *end;
	size_t n;

	if (strncmp(m->root, "/cases/", 7) == 0) {
		name = m->root + 7;
		end = strchr(name, '/');
		n = end ? (size_t)(end - name) : 0;
		if (n && n < cap && under(end, "/target")) {
			if (!case_seen[0]) {
				memcpy(case_seen, name, n);
				case_seen[n] = '\0';
				*case_dev = m->dev;
				return 0;
			}
			if (strlen(case_seen) == n &&
			    !strncmp(case_seen, name, n) && m->dev == *case_dev)
				return 0;
		}
	}
	say_mount(pid, m);
	printf(" exposes more of the view than one case's target/ folder\n");
	return 1;
}

/* Open path inside the target's root, never leaving it. */
static int open_in_root(int rootfd, const char *path)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | O_NOFOLLOW,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, rootfd, path[1] ? path + 1 : ".", &how,
			  sizeof(how));

	return (int)fd;
}

/* Does the top of m, seen from inside the target, equal a secret's path? */
static const struct ct_secret *walk_hit(int rootfd, const struct ct_mount *m,
					struct ct_secret *sec, size_t nsec)
{
	struct stat st;
	size_t i, j;
	int fd = open_in_root(rootfd, m->point);

	if (fd < 0)
		return NULL; /* hidden under another mount, or gone */
	if (fstat(fd, &st) < 0) {
		close(fd);
		return NULL;
	}
	close(fd);
	for (i = 0; i < nsec; i++)
		for (j = 0; j < sec[i].ntops; j++)
			if (sec[i].tops[j].dev == st.st_dev &&
			    sec[i].tops[j].ino == st.st_ino)
				return &sec[i];
	return NULL;
}

/*
 * The target's root folder, which mountinfo leaves out when it is a plain
 * folder (chroot): at or above a secret, or inside one.  Walked upwards
 * through "..", one folder at a time, in this host's view.
 */
static const struct ct_secret *root_hit(int rootfd, struct ct_secret *sec,
					size_t nsec)
{
	struct stat st, up;
	int fd = openat(rootfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	size_t depth, i, j;

	for (depth = 0; fd >= 0 && depth < 4096; depth++) {
		int parent;

		if (fstat(fd, &st) < 0)
			break;
		for (i = 0; i < nsec; i++)
			for (j = 0; j < (depth ? 1 : sec[i].ntops); j++)
				if (sec[i].tops[j].dev == st.st_dev &&
				    sec[i].tops[j].ino == st.st_ino) {
					close(fd);
					return &sec[i];
				}
		parent = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		close(fd);
		fd = parent;
		if (fd >= 0 && fstat(fd, &up) == 0 && up.st_dev == st.st_dev &&
		    up.st_ino == st.st_ino)
			break;
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

/*
 * An overlay shows its layers, host folders that device and root do not
 * name: each lowerdir and upperdir at, above or inside a secret exposes
 * it.  true when one does (said).
 */
static bool check_overlay(const char *pid, const struct ct_mount *m,
			  const struct ct_secret *sec, size_t nsec)
{
	char *opts = strdup(m->opts), *save = NULL, *o, *d, *dsave;
	char real[PATH_MAX];
	bool hit = false;
	size_t k;

	for (o = opts ? strtok_r(opts, ",", &save) : NULL; o && !hit;
	     o = strtok_r(NULL, ",", &save)) {
		if (strncmp(o, "lowerdir=", 9) && strncmp(o, "upperdir=", 9) &&
		    strncmp(o, "lowerdir+=", 10) && strncmp(o, "datadir+=", 9))
			continue;
		for (d = strtok_r(strchr(o, '=') + 1, ":", &dsave); d && !hit;
		     d = strtok_r(NULL, ":", &dsave)) {
			/* Fail closed: a layer not found from here cannot be
			 * shown to hold no secret. */
			if (!realpath(d, real)) {
				say_mount(pid, m);
				printf(" is an overlay whose layer %s is not found from here: it cannot be shown not to expose the backing folder or the host key\n",
				       d);
				hit = true;
				continue;
			}
			for (k = 0; k < nsec && !hit; k++) {
				if (!under(real, sec[k].path) &&
				    !under(sec[k].path, real))
					continue;
				say_mount(pid, m);
				printf(" exposes %s %s (its layer %s)\n",
				       sec[k].what, sec[k].path, real);
				hit = true;
			}
		}
	}
	free(opts);
	return hit;
}

static int check_mounts(const char *pid, const struct ct_table *tt,
			struct ct_secret *sec, size_t nsec, dev_t view_dev,
			bool have_view, int rootfd, dev_t host_proc,
			char *case_seen, size_t cap)
{
	const struct ct_secret *hit;
	dev_t case_dev = 0;
	size_t i, k;
	int bad = 0;

	for (i = 0; i < tt->n; i++) {
		const struct ct_mount *m = &tt->m[i];
		bool flagged = false;

		if (!strcmp(m->fstype, "fuse.ledgerfs") ||
		    (have_view && m->dev == view_dev))
			bad += check_view(pid, m, case_seen, cap, &case_dev);
		for (k = 0; k < nsec; k++) {
			if (m->dev != sec[k].devs[0] &&
			    m->dev != sec[k].devs[1])
				continue;
			/* At or above the secret, or a folder inside it. */
			if (!under(sec[k].rel, m->root) &&
			    !under(m->root, sec[k].rel))
				continue;
			say_mount(pid, m);
			printf(" exposes %s %s\n", sec[k].what, sec[k].path);
			flagged = true;
			bad++;
		}
		if (!flagged && !strcmp(m->fstype, "overlay") &&
		    check_overlay(pid, m, sec, nsec)) {
			flagged = true;
			bad++;
		}
		if (!strcmp(m->fstype, "proc") && host_proc &&
		    m->dev == host_proc) {
			say_mount(pid, m);
			printf(" is the host's /proc: it shows the host's processes, and the environment of those of the target's user\n");
			bad++;
		}
		if (flagged || rootfd < 0)
			continue;
		hit = walk_hit(rootfd, m, sec, nsec);
		if (hit) {
			say_mount(pid, m);
			printf(" has a host folder on the way to %s %s at its top\n",
			       hit->what, hit->path);
			bad++;
		}
	}
	return bad;
}

/*
 * The view's device, from this host's mount of it.  Only a ledgerfs mount
 * counts: a plain folder would make every mount of its disk "the view".
 */
static bool view_device(const struct ct_table *host, const char *mount,
			dev_t *dev)
{
	char real[PATH_MAX];
	size_t i;
	bool found = false;

	if (!realpath(mount, real))
		return false;
	for (i = 0; i < host->n; i++)
		if (!strcmp(host->m[i].point, real)) {
			found = !strcmp(host->m[i].fstype, "fuse.ledgerfs");
			*dev = host->m[i].dev;
		}
	return found;
}

/* The device of this host's /proc (0 when it has none). */
static dev_t host_proc_device(const struct ct_table *host)
{
	size_t i;

	for (i = 0; i < host->n; i++)
		if (!strcmp(host->m[i].fstype, "proc") &&
		    !strcmp(host->m[i].point, "/proc"))
			return host->m[i].dev;
	return 0;
}

/*
 * A target in the host's PID namespace sees the host's processes, and
 * reads the environment of any that run as its own user: an executor's
 * credentials (ledgerfs-policy(5) HOST EXECUTORS).  1 when it does.
 */
static int check_pid_namespace(const char *pid)
{
	char path[64];
	struct stat self, target;

	snprintf(path, sizeof(path), "/proc/%s/ns/pid", pid);
	if (stat("/proc/self/ns/pid", &self) < 0 || stat(path, &target) < 0)
		return 0; /* no namespaces here: nothing to compare */
	if (self.st_dev != target.st_dev || self.st_ino != target.st_ino)
		return 0;
	printf("%s: shares the host's PID namespace: it sees the host's processes and can read the environment of those of its user, an executor's credentials among them (give it one of its own: bwrap --unshare-pid)\n",
	       pid);
	return 1;
}

int ctl_check_target_main(int argc, char **argv)
{
	const char *pid = NULL, *mount = CTL_DEFAULT_MOUNT;
	const char *backing = CT_DEFAULT_BACKING, *key = CTL_DEFAULT_KEY;
	struct ct_table host = {0}, tt = {0};
	struct ct_secret *sec = NULL;
	const struct ct_secret *hit;
	char path[64], case_seen[130] = "";
	dev_t view_dev = 0;
	bool have_view;
	int i, bad, rootfd = -1, rc = 2;

	if (getenv("LEDGERFS_MOUNT") && *getenv("LEDGERFS_MOUNT"))
		mount = getenv("LEDGERFS_MOUNT");
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(CT_USAGE, stdout);
			return 0;
		}
		if (opt_value(argc, argv, &i, "--mount", &mount) ||
		    opt_value(argc, argv, &i, "--backing", &backing) ||
		    opt_value(argc, argv, &i, "--key", &key))
			continue;
		if ((a[0] == '-' && a[1]) || pid) {
			fprintf(stderr,
				"ledgerctl check-target: bad argument %s\n%s",
				a, CT_USAGE);
			return 2;
		} else {
			pid = a;
		}
	}
	if (!pid || strspn(pid, "0123456789") != strlen(pid) || !pid[0] ||
	    strlen(pid) > 10) {
		fputs(CT_USAGE, stderr);
		return 2;
	}
	sec = calloc(2, sizeof(*sec));
	if (!sec || table_read("/proc/self/mountinfo", &host) < 0) {
		fprintf(stderr,
			"ledgerctl check-target: cannot read this host's mount table: %s\n",
			strerror(errno));
		goto out;
	}
	if (secret_init(&sec[0], "the backing folder", backing, &host) < 0 ||
	    secret_init(&sec[1], "the host key", key, &host) < 0)
		goto out;
	snprintf(path, sizeof(path), "/proc/%s/mountinfo", pid);
	if (table_read(path, &tt) < 0) {
		fprintf(stderr, "ledgerctl check-target: cannot read %s: %s\n",
			path, strerror(errno));
		goto out;
	}
	have_view = view_device(&host, mount, &view_dev);
	if (!have_view)
		fprintf(stderr,
			"ledgerctl check-target: %s is not a ledgerfs mount here; the view is recognised by its type alone\n",
			mount);
	snprintf(path, sizeof(path), "/proc/%s/root", pid);
	rootfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		fprintf(stderr, "ledgerctl check-target: cannot open %s: %s\n",
			path, strerror(errno));
		goto out;
	}
	bad = check_mounts(pid, &tt, sec, 2, view_dev, have_view, rootfd,
			   host_proc_device(&host), case_seen,
			   sizeof(case_seen));
	hit = root_hit(rootfd, sec, 2);
	if (hit) {
		printf("%s: its root folder is at, above or inside %s %s\n",
		       pid, hit->what, hit->path);
		bad++;
	}
	bad += check_pid_namespace(pid);
	if (bad) {
		rc = 1;
		goto out;
	}
	if (case_seen[0])
		printf("ok: %s sees only /cases/%s/target of the view\n", pid,
		       case_seen);
	else
		printf("ok: %s sees nothing of the view, the backing folder or the host key\n",
		       pid);
	rc = 0;
out:
	if (rootfd >= 0)
		close(rootfd);
	table_free(&host);
	table_free(&tt);
	free(sec);
	return rc;
}
