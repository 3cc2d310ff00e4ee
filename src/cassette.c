/*
 * cassette.c - inline `cassette_file` references on the host.  Names are
 * plain file names opened through a directory fd with O_NOFOLLOW, so a
 * document cannot make ledgerctl read outside its cassette folder.
 */
#include "cassette.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doc.h"

struct cctx {
	const json_t *doc;
	const char *doc_path;
	int dirfd; /* opened on first use, -1 before */
};

static int open_dir(struct cctx *c, struct lf_why *why)
{
	const json_t *cd = json_object_get(c->doc, "cassette_dir");
	const char *slash = strrchr(c->doc_path, '/');
	char *base;
	struct stat st;
	int bfd, fd;

	if (c->dirfd >= 0)
		return 0;
	if (slash == c->doc_path)
		base = strdup("/");
	else if (slash)
		base = strndup(c->doc_path, (size_t)(slash - c->doc_path));
	else
		base = strdup(".");
	if (!base)
		return lf_fail(why, LF_NOMEM, "out of memory"), -1;
	bfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(base);
	if (bfd < 0)
		return lf_fail(why, LF_IO,
			       "cannot open the document's folder: %s",
			       strerror(errno)),
		       -1;
	if (!cd) {
		c->dirfd = bfd;
		return 0;
	}
	if (fstatat(bfd, json_string_value(cd), &st, AT_SYMLINK_NOFOLLOW) ==
		    0 &&
	    S_ISLNK(st.st_mode)) {
		close(bfd);
		return lf_fail(why, LF_EINVAL_DOC,
			       "cassette_dir: '%.80s' is a symbolic link",
			       json_string_value(cd)),
		       -1;
	}
	fd = openat(bfd, json_string_value(cd),
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(bfd);
	if (fd < 0)
		return lf_fail(why, LF_IO,
			       "cassette_dir: cannot open '%.80s': %s",
			       json_string_value(cd), strerror(errno)),
		       -1;
	c->dirfd = fd;
	return 0;
}

/* Replace obj's cassette_file (obj is the result's own copy). */
static int inline_one(struct cctx *c, json_t *obj, const char *at,
		      struct lf_why *why)
{
	const json_t *f = json_object_get(obj, "cassette_file");
	const char *name;
	struct lf_why inner;
	struct stat st;
	json_t *v;
	int fd;

	if (!json_is_object(obj) || !f)
		return 0;
	if (!json_is_string(f))
		return lf_fail(why, LF_EINVAL_DOC,
			       "%s.cassette_file: must be a string", at),
		       -1;
	name = json_string_value(f);
	if (json_object_get(obj, "cassette"))
		return lf_fail(why, LF_EINVAL_DOC,
			       "%s: both cassette and cassette_file", at),
		       -1;
	if (!*name || strlen(name) != json_string_length(f) ||
	    strchr(name, '/') || strstr(name, ".."))
		return lf_fail(why, LF_EINVAL_DOC,
			       "%s.cassette_file: '%.80s' must be a plain file name (no '/', '..' or NUL)",
			       at, name),
		       -1;
	if (open_dir(c, why))
		return -1;
	if (fstatat(c->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(st.st_mode))
		return lf_fail(why, LF_EINVAL_DOC,
			       "%s.cassette_file: '%.80s' is a symbolic link",
			       at, name),
		       -1;
	fd = openat(c->dirfd, name,
		    O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return lf_fail(why, errno == ELOOP ? LF_EINVAL_DOC : LF_IO,
			       "%s.cassette_file: cannot open '%.80s': %s", at,
			       name,
			       errno == ELOOP ? "it is a symbolic link"
					      : strerror(errno)),
		       -1;
	v = doc_load_fd(fd, &inner);
	close(fd);
	if (!v)
		return lf_fail(why, LF_EINVAL_DOC,
			       "%s.cassette_file: '%.60s': %s", at, name,
			       inner.msg),
		       -1;
	if (json_object_set_new(obj, "cassette", v) ||
	    json_object_del(obj, "cassette_file"))
		return lf_fail(why, LF_NOMEM, "out of memory"), -1;
	return 0;
}

static int inline_list(struct cctx *c, json_t *doc, const char *key,
		       struct lf_why *why)
{
	char at[80], sat[120];
	json_t *rule, *step;
	size_t i, j;

	json_array_foreach(json_object_get(doc, key), i, rule)
	{
		snprintf(at, sizeof(at), "%s[%zu]", key, i);
		if (inline_one(c, rule, at, why))
			return -1;
		json_array_foreach(json_object_get(rule, "responses"), j, step)
		{
			snprintf(sat, sizeof(sat), "%s.responses[%zu]", at, j);
			if (inline_one(c, step, sat, why))
				return -1;
		}
	}
	return 0;
}

json_t *cassette_inline(const json_t *doc, const char *doc_path,
			struct lf_why *why)
{
	struct cctx c = {.doc = doc, .doc_path = "./document", .dirfd = -1};
	const json_t *cd;
	json_t *out;

	out = json_deep_copy(doc);
	if (!out) {
		lf_fail(why, LF_NOMEM, "out of memory");
		return NULL;
	}
	if (!json_is_object(doc))
		return out; /* the loaders refuse it with a better reason */
	cd = json_object_get(doc, "cassette_dir");
	if (cd && (!json_is_string(cd) || !json_string_length(cd) ||
		   strlen(json_string_value(cd)) != json_string_length(cd) ||
		   strchr(json_string_value(cd), '/') ||
		   strstr(json_string_value(cd), ".."))) {
		/* One name: a link among several components would escape. */
		lf_fail(why, LF_EINVAL_DOC,
			"cassette_dir: must be a folder name without '/', '..' "
			"or NUL");
		goto fail;
	}
	if (doc_path)
		c.doc_path = doc_path;
	if (inline_list(&c, out, "interactions", why) ||
	    inline_one(&c, json_object_get(out, "default"), "default", why) ||
	    inline_list(&c, out, "mocks", why))
		goto fail;
	json_object_del(out, "cassette_dir");
	if (c.dirfd >= 0)
		close(c.dirfd);
	return out;
fail:
	if (c.dirfd >= 0)
		close(c.dirfd);
	json_decref(out);
	return NULL;
}

json_t *cassette_load_file(const char *path, struct lf_why *why)
{
	json_t *raw = doc_load_file(path, why), *doc;

	if (!raw)
		return NULL;
	doc = cassette_inline(raw, path, why);
	json_decref(raw);
	return doc;
}
