/* SPDX-License-Identifier: MIT */
/*
 * seal.c - sealpath's rules: walks a trusted PATH one component at a time
 * by file descriptors, inside an image root when asked, and reports every
 * object that someone other than root could change.  libc only.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "seal.h"
#include "seal_acl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#define SEEN_SLOTS   (1u << 16) /* judged-object cache; full means rejudge */
#define MAX_SCANNED  4096	/* folders whose entries were listed */
#define LINK_TEXT    SEAL_PATH_MAX
#define REM_SIZE     (SEAL_PATH_MAX + (SEAL_MAX_LINKS + 1) * (LINK_TEXT + 1))
#define ACL_BUF_SIZE 65536 /* the largest xattr value Linux stores */

/* One folder of a walk; slot 0 is the root, never closed by the walk. */
struct seal_slot {
	int fd;
	bool owned;
	dev_t dev;
	ino_t ino;
	size_t dlen; /* length of the shown path up to this folder */
};

struct seal_walk {
	struct seal_slot slot[SEAL_MAX_DEPTH + 1];
	int top;
	char disp[SEAL_PATH_MAX]; /* "" is the root, shown as "/" */
};

/* A link followed in the current resolution. */
struct seal_link {
	dev_t dev, pdev;
	ino_t ino, pino;
	int top;
	size_t rest; /* length of the text after this link's own text */
	size_t keylen;
	uint64_t hash; /* of that text without leading slashes */
	char disp[SEAL_PATH_MAX];
};

struct seal_key {
	dev_t dev;
	ino_t ino;
	bool used;
};

struct seal_ctx {
	struct seal_report *rep;
	int rootfd;
	struct seal_key *seen;
	size_t n_seen;
	struct seal_key scanned[MAX_SCANNED];
	size_t n_scanned;
	struct seal_walk fwalk, ewalk; /* a PATH folder; one of its entries */
	struct seal_link hist[SEAL_MAX_LINKS]; /* every link followed */
	int n_hist;
	int stack[SEAL_MAX_LINKS]; /* hist indexes whose text is unread */
	int n_stack;
	char rem[REM_SIZE]; /* the text still to resolve */
	char target[LINK_TEXT + 1];
	char disp[SEAL_PATH_MAX];
	unsigned char acl[ACL_BUF_SIZE];
};

static int seal_error(struct seal_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Record the first error; the audit stops and its verdict is SEAL_ERROR. */
static int seal_error(struct seal_ctx *c, const char *fmt, ...)
{
	char *e = c->rep->error, line[SEAL_PATH_MAX + sizeof(c->rep->error)];
	size_t n, cap = sizeof(c->rep->error), head = 160;
	va_list ap;
	char *p;

	if (c->rep->verdict != SEAL_ERROR) {
		va_start(ap, fmt);
		vsnprintf(line, sizeof(line), fmt, ap);
		va_end(ap);
		/*
		 * A long path would push the reason out of the line: keep its
		 * start, "...", and the end, which holds the reason.
		 */
		n = strlen(line);
		if (n < cap)
			memcpy(e, line, n + 1);
		else
			snprintf(e, cap, "%.*s...%s", (int)head, line,
				 line + n - (cap - head - 4));
		for (p = e; *p; p++)
			if (*p == '\n' || *p == '\r')
				*p = ' ';
		c->rep->verdict = SEAL_ERROR;
	}
	return -1;
}

static const char *shown(const char *disp)
{
	return *disp ? disp : "/";
}

static int seal_add(struct seal_ctx *c, const char *path, dev_t dev, ino_t ino,
		    enum seal_problem problem, unsigned long id)
{
	struct seal_report *rep = c->rep;
	struct seal_finding *f;
	size_t i;

	/* The same object may be reached again (a link to an entry). */
	for (i = 0; i < rep->n_findings; i++) {
		f = &rep->findings[i];
		if (f->problem != problem || f->id != id)
			continue;
		if ((dev || ino) ? (f->dev == dev && f->ino == ino)
				 : !strcmp(f->path, path))
			return 0;
	}
	if (rep->verdict == SEAL_SEALED)
		rep->verdict = SEAL_UNSEALED;
	if (rep->n_findings >= SEAL_MAX_FINDINGS) {
		rep->dropped++;
		return 0;
	}
	if (!rep->findings) {
		rep->findings = calloc(SEAL_MAX_FINDINGS, sizeof(*f));
		if (!rep->findings)
			return seal_error(c, "out of memory");
	}
	f = &rep->findings[rep->n_findings];
	f->path = strdup(path);
	if (!f->path)
		return seal_error(c, "out of memory");
	f->problem = problem;
	f->id = id;
	f->dev = dev;
	f->ino = ino;
	rep->n_findings++;
	return 0;
}

/* A finding that ends a resolution: 1, or -1 if it could not be kept. */
static int seal_stop(struct seal_ctx *c, const char *path,
		     const struct stat *st, enum seal_problem problem)
{
	if (seal_add(c, path, st ? st->st_dev : 0, st ? st->st_ino : 0, problem,
		     0) < 0)
		return -1;
	return 1;
}

/* true when (dev, ino) was judged before; else remember it (if room). */
static bool seal_seen(struct seal_ctx *c, const struct stat *st)
{
	size_t h = ((size_t)st->st_ino * 0x9e3779b97f4a7c15ull) ^
		   (size_t)st->st_dev;
	size_t i, n;

	for (n = 0; n < SEEN_SLOTS; n++) {
		i = (h + n) & (SEEN_SLOTS - 1);
		if (!c->seen[i].used)
			break;
		if (c->seen[i].dev == st->st_dev &&
		    c->seen[i].ino == st->st_ino)
			return true;
	}
	/* Keep the table at most half full so probes stay short. */
	if (n < SEEN_SLOTS && c->n_seen < SEEN_SLOTS / 2) {
		c->seen[i].dev = st->st_dev;
		c->seen[i].ino = st->st_ino;
		c->seen[i].used = true;
		c->n_seen++;
	}
	return false;
}

/*
 * Read fd's access ACL into c->acl.  An O_PATH descriptor has no
 * fgetxattr, so go through its /proc/self/fd link (which names the object
 * itself, never a path string).  Returns its length, 0 when there is none.
 */
static ssize_t seal_read_acl(struct seal_ctx *c, int fd, const char *disp)
{
	char proc[64];
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = getxattr(proc, SEAL_ACL_XATTR, c->acl, sizeof(c->acl));
	if (n >= 0)
		return n;
	if (errno == ENODATA || errno == ENOTSUP)
		return 0;
	if (errno == ENOENT)
		return seal_error(c,
				  "%s: cannot read its ACL: /proc is not "
				  "mounted",
				  shown(disp));
	return seal_error(c, "%s: cannot read its ACL: %s", shown(disp),
			  strerror(errno));
}

/*
 * Judge one object: owner root, and (unless it is a link, whose own mode
 * Linux fixes at 0777) no write for group, others or a named ACL entry.
 * With an ACL mask the group bits of the mode are the mask, so the owning
 * group's write is GROUP_OBJ limited by the mask, as the kernel checks it.
 */
static int seal_judge(struct seal_ctx *c, int fd, const struct stat *st,
		      const char *disp)
{
	struct seal_acl acl;
	unsigned long id;
	bool is_user;
	ssize_t n;
	size_t i;

	if (seal_seen(c, st))
		return 0;
	if (st->st_uid != 0 && seal_add(c, disp, st->st_dev, st->st_ino,
					SEAL_OWNER, st->st_uid) < 0)
		return -1;
	if (S_ISLNK(st->st_mode))
		return 0;
	n = seal_read_acl(c, fd, disp);
	if (n < 0)
		return -1;
	if (seal_acl_parse((const unsigned char *)c->acl, (size_t)n, &acl) < 0)
		return seal_error(c, "%s: ACL in an unknown format",
				  shown(disp));
	if (seal_acl_group_writes(&acl, st->st_mode) &&
	    seal_add(c, disp, st->st_dev, st->st_ino, SEAL_GROUP_WRITE, 0) < 0)
		return -1;
	/* 1777 too: the sticky bit still lets others plant new names. */
	if ((st->st_mode & S_IWOTH) &&
	    seal_add(c, disp, st->st_dev, st->st_ino, SEAL_OTHER_WRITE, 0) < 0)
		return -1;
	for (i = 0; i < acl.n; i++)
		if (seal_acl_named_writer(&acl, i, &is_user, &id) &&
		    seal_add(c, disp, st->st_dev, st->st_ino,
			     is_user ? SEAL_ACL_USER : SEAL_ACL_GROUP, id) < 0)
			return -1;
	return 0;
}

static void walk_pop(struct seal_walk *w)
{
	struct seal_slot *s = &w->slot[w->top];

	if (w->top == 0)
		return; /* ".." at the root stays at the root */
	if (s->owned)
		close(s->fd);
	w->top--;
	w->disp[w->slot[w->top].dlen] = '\0';
}

static void walk_release(struct seal_walk *w)
{
	while (w->top > 0)
		walk_pop(w);
}

static void walk_root(struct seal_ctx *c, struct seal_walk *w,
		      const struct stat *st)
{
	w->top = 0;
	w->slot[0] = (struct seal_slot){
		.fd = c->rootfd, .dev = st->st_dev, .ino = st->st_ino};
	w->disp[0] = '\0';
}

/* w starts where from is, borrowing its descriptors (never closing them). */
static void walk_borrow(struct seal_walk *w, const struct seal_walk *from)
{
	int i;

	for (i = 0; i <= from->top; i++) {
		w->slot[i] = from->slot[i];
		w->slot[i].owned = false;
	}
	w->top = from->top;
	memcpy(w->disp, from->disp, from->slot[from->top].dlen + 1);
}

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

/*
 * Follow the link at fd (shown as disp; rest is the text after it).  A
 * repeat of a link from the same folder with the same text left can only
 * go round again: that is a loop; otherwise more than SEAL_MAX_LINKS is
 * the limit.  Returns 0 to go on, 1 after a finding, -1 on error.
 */
static int seal_follow(struct seal_ctx *c, struct seal_walk *w, int fd,
		       const struct stat *st, const char *disp, char *rest,
		       const char *start)
{
	struct seal_slot *top = &w->slot[w->top];
	/* Slashes before the next name change nothing: leave them out of
	 * the state, or a loop that adds one each round would not repeat. */
	const char *key = rest + strspn(rest, "/");
	size_t restlen = strlen(rest), keylen = strlen(key), tlen;
	uint64_t h = fnv1a(key);
	struct seal_link *l;
	ssize_t n;
	int i;

	for (i = 0; i < c->n_hist; i++) {
		l = &c->hist[i];
		if (l->dev == st->st_dev && l->ino == st->st_ino &&
		    l->pdev == top->dev && l->pino == top->ino &&
		    l->top == w->top && l->keylen == keylen && l->hash == h)
			return seal_stop(c, disp, st, SEAL_LINK_LOOP);
	}
	if (c->n_hist == SEAL_MAX_LINKS)
		return seal_stop(c, start, NULL, SEAL_LINK_LIMIT);
	n = readlinkat(fd, "", c->target, sizeof(c->target));
	if (n < 0)
		return seal_error(c, "%s: cannot read the link: %s", disp,
				  strerror(errno));
	if ((size_t)n >= sizeof(c->target))
		return seal_error(c, "%s: link text too long", disp);
	if (n == 0)
		return seal_stop(c, disp, st, SEAL_DANGLING);
	tlen = (size_t)n;
	l = &c->hist[c->n_hist];
	*l = (struct seal_link){.dev = st->st_dev,
				.ino = st->st_ino,
				.pdev = top->dev,
				.pino = top->ino,
				.top = w->top,
				.rest = restlen,
				.keylen = keylen,
				.hash = h};
	snprintf(l->disp, sizeof(l->disp), "%s", disp);
	c->stack[c->n_stack++] = c->n_hist++;
	/* The link's text goes in front of what is left; rem has room for
	 * SEAL_MAX_LINKS texts, so this cannot overflow. */
	memmove(c->rem + tlen + 1, rest, restlen + 1);
	memcpy(c->rem, c->target, tlen);
	c->rem[tlen] = '/';
	if (c->target[0] == '/')
		walk_release(w);
	return 0;
}

/* The link whose text holds a component with suffix bytes left, or NULL. */
static const char *seal_owner_link(struct seal_ctx *c, size_t suffix)
{
	while (c->n_stack && c->hist[c->stack[c->n_stack - 1]].rest >= suffix)
		c->n_stack--;
	return c->n_stack ? c->hist[c->stack[c->n_stack - 1]].disp : NULL;
}

/*
 * Resolve text from where w stands, judging every object reached.  start
 * names the resolution in "more than 40" findings.  Returns 0 when it ends
 * at a folder (w's top), 1 when it ends elsewhere (a file, a missing name,
 * a finding that stops it), -1 on error.
 */
static int seal_resolve(struct seal_ctx *c, struct seal_walk *w,
			const char *text, const char *start)
{
	char *p = c->rem, *end, save;
	const char *link;
	struct stat st;
	size_t dlen, nlen;
	int fd, rc;

	c->n_hist = c->n_stack = 0;
	snprintf(c->rem, sizeof(c->rem), "%s", text);
	for (;;) {
		while (*p == '/')
			p++;
		if (!*p)
			return 0;
		end = p + strcspn(p, "/");
		link = seal_owner_link(c, strlen(p));
		save = *end;
		*end = '\0';
		nlen = (size_t)(end - p);
		if (!strcmp(p, ".")) {
			*end = save;
			p = end;
			continue;
		}
		if (!strcmp(p, "..")) {
			walk_pop(w);
			*end = save;
			p = end;
			continue;
		}
		dlen = w->slot[w->top].dlen;
		if (dlen + 1 + nlen >= sizeof(c->disp))
			return seal_error(c, "%s/%s: path too long", w->disp,
					  p);
		memcpy(c->disp, w->disp, dlen);
		c->disp[dlen] = '/';
		memcpy(c->disp + dlen + 1, p, nlen + 1);
		fd = openat(w->slot[w->top].fd, p,
			    O_PATH | O_NOFOLLOW | O_CLOEXEC);
		*end = save;
		if (fd < 0 && (errno == ENOENT || errno == ENAMETOOLONG)) {
			/* Missing: only whoever can write the nearest
			 * existing folder (judged already) could add it. */
			if (link)
				return seal_stop(c, link, NULL, SEAL_DANGLING);
			return 1;
		}
		if (fd < 0)
			return seal_error(c, "%s: cannot open: %s", c->disp,
					  strerror(errno));
		if (fstatat(fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW)) {
			rc = seal_error(c, "%s: cannot stat: %s", c->disp,
					strerror(errno));
			goto out_fd;
		}
		if (seal_judge(c, fd, &st, c->disp) < 0) {
			rc = -1;
			goto out_fd;
		}
		p = end;
		if (S_ISLNK(st.st_mode)) {
			rc = seal_follow(c, w, fd, &st, c->disp, p, start);
			close(fd);
			if (rc)
				return rc;
			p = c->rem;
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			/* slot 0 is the root: SEAL_MAX_DEPTH folders below. */
			if (w->top >= SEAL_MAX_DEPTH) {
				rc = seal_error(c,
						"%s: more than %d folders "
						"deep",
						c->disp, SEAL_MAX_DEPTH);
				goto out_fd;
			}
			w->top++;
			w->slot[w->top] =
				(struct seal_slot){.fd = fd,
						   .owned = true,
						   .dev = st.st_dev,
						   .ino = st.st_ino,
						   .dlen = dlen + 1 + nlen};
			memcpy(w->disp, c->disp, dlen + 2 + nlen);
			continue;
		}
		close(fd);
		/*
		 * A "/" after a file that is the link's own text (not the
		 * one put between a link's text and what followed the link):
		 * the kernel says ENOTDIR, so that link leads nowhere.
		 */
		if (*p == '/' && (link = seal_owner_link(c, strlen(p))) &&
		    c->hist[c->stack[c->n_stack - 1]].rest + 1 < strlen(p))
			return seal_stop(c, link, NULL, SEAL_DANGLING);
		p += strspn(p, "/");
		/* A file with more to walk: ENOTDIR too. */
		if (*p && (link = seal_owner_link(c, strlen(p))))
			return seal_stop(c, link, NULL, SEAL_DANGLING);
		return 1;
	}
out_fd:
	close(fd);
	return rc;
}

static bool seal_scanned(struct seal_ctx *c, const struct seal_slot *s)
{
	size_t i;

	for (i = 0; i < c->n_scanned; i++)
		if (c->scanned[i].dev == s->dev && c->scanned[i].ino == s->ino)
			return true;
	if (c->n_scanned < MAX_SCANNED)
		c->scanned[c->n_scanned++] =
			(struct seal_key){.dev = s->dev, .ino = s->ino};
	return false;
}

/* Judge every entry of the folder at fwalk's top, streaming the listing. */
static int seal_scan(struct seal_ctx *c)
{
	struct seal_walk *f = &c->fwalk;
	char start[SEAL_PATH_MAX];
	struct dirent *de;
	DIR *d = NULL;
	int dfd, rc = 0;

	if (seal_scanned(c, &f->slot[f->top]))
		return 0;
	dfd = openat(f->slot[f->top].fd, ".",
		     O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0)
		d = fdopendir(dfd);
	if (!d) {
		rc = seal_error(c, "%s: cannot list: %s", shown(f->disp),
				strerror(errno));
		if (dfd >= 0)
			close(dfd);
		return rc;
	}
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno)
				rc = seal_error(c, "%s: cannot list: %s",
						shown(f->disp),
						strerror(errno));
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if ((size_t)snprintf(start, sizeof(start), "%s/%s", f->disp,
				     de->d_name) >= sizeof(start)) {
			rc = seal_error(c, "%s: path too long", f->disp);
			break;
		}
		walk_borrow(&c->ewalk, f);
		rc = seal_resolve(c, &c->ewalk, de->d_name, start);
		walk_release(&c->ewalk);
		if (rc < 0)
			break;
		rc = 0;
	}
	closedir(d);
	return rc;
}

/* One absolute entry from the root; its entries too with SEAL_ENTRIES. */
static int seal_entry(struct seal_ctx *c, const char *entry, unsigned flags,
		      const struct stat *rootst)
{
	int rc;

	if (!*entry)
		return seal_add(c, "", 0, 0, SEAL_EMPTY_ENTRY, 0);
	if (*entry != '/')
		return seal_add(c, entry, 0, 0, SEAL_RELATIVE_ENTRY, 0);
	walk_root(c, &c->fwalk, rootst);
	rc = seal_resolve(c, &c->fwalk, entry, entry);
	if (rc == 0 && (flags & SEAL_ENTRIES))
		rc = seal_scan(c);
	walk_release(&c->fwalk);
	return rc < 0 ? -1 : 0;
}

static int seal_run(const char *list, bool split, const char *root,
		    unsigned flags, struct seal_report *rep)
{
	char entry[SEAL_PATH_MAX];
	struct seal_ctx *c;
	struct stat st;
	const char *p, *q;
	size_t len;

	memset(rep, 0, sizeof(*rep));
	rep->verdict = SEAL_SEALED;
	c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(rep->error, sizeof(rep->error), "out of memory");
		return rep->verdict = SEAL_ERROR;
	}
	c->rep = rep;
	c->rootfd = -1;
	c->seen = calloc(SEEN_SLOTS, sizeof(*c->seen));
	if (!c->seen) {
		seal_error(c, "out of memory");
		goto out;
	}
	if (!root || !*root)
		root = "/";
	c->rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (c->rootfd < 0) {
		seal_error(c, "%s: %s", root,
			   errno == ENOTDIR ? "not a folder" : strerror(errno));
		goto out;
	}
	if (fstat(c->rootfd, &st)) {
		seal_error(c, "%s: cannot stat: %s", root, strerror(errno));
		goto out;
	}
	/* The image root is "/" inside it and is judged like any folder. */
	if (seal_judge(c, c->rootfd, &st, "/") < 0)
		goto out;
	for (p = list;; p = q + 1) {
		q = split ? strchrnul(p, ':') : p + strlen(p);
		len = (size_t)(q - p);
		if (len >= sizeof(entry)) {
			/* Its first 160 bytes, "...", its end (sealpath(8)). */
			seal_error(c, "%.160s...%.300s: PATH entry too long", p,
				   q - 300);
			goto out;
		}
		memcpy(entry, p, len);
		entry[len] = '\0';
		if (seal_entry(c, entry, flags, &st) < 0)
			goto out;
		if (!*q)
			break;
	}
out:
	if (c->rootfd >= 0)
		close(c->rootfd);
	free(c->seen);
	free(c);
	return rep->verdict;
}

int seal_audit(const char *path_list, const char *root, struct seal_report *rep)
{
	return seal_run(path_list ? path_list : SEAL_DEFAULT_PATH, true, root,
			SEAL_ENTRIES, rep);
}

int seal_audit_path(const char *path, const char *root, unsigned flags,
		    struct seal_report *rep)
{
	return seal_run(path, false, root, flags, rep);
}
