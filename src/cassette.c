/* SPDX-License-Identifier: MIT */
/*
 * cassette.c - read a cassette folder on the host and hand its recordings
 * to the daemon inside the document.  Files are opened through the
 * folder's descriptor with O_NOFOLLOW, so a link cannot make ledgerctl
 * read outside the folder (ASSERT's replay refuses links the same way).
 */
#include "cassette.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doc.h"
#include "mocks.h"
#include "pyval.h"

/* The folder of path, malloc'd ("." when it has none). */
static char *folder_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

char *cassette_dir_of(const json_t *doc, const char *doc_path)
{
	const json_t *cd = json_object_get(doc, "cassette_dir");
	const char *d = json_string_value(cd);
	char *base, *out;
	size_t n;

	if (!d || !*d)
		return NULL;
	if (d[0] == '/' || !doc_path)
		return strdup(d);
	base = folder_of(doc_path);
	if (!base)
		return NULL;
	n = strlen(base) + strlen(d) + 2;
	out = malloc(n);
	if (out)
		snprintf(out, n, "%s/%s", base, d);
	free(base);
	return out;
}

/* One recording, parsed as JSON (ASSERT reads them with json.load). */
static json_t *read_one(int dirfd, const char *file, struct lf_why *why)
{
	json_error_t jerr;
	struct stat st;
	json_t *v = NULL;
	char *buf = NULL;
	ssize_t got;
	size_t len = 0;
	int fd;

	fd = openat(dirfd, file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		lf_fail(why, LF_IO, "cassette '%.80s': %s", file,
			strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    st.st_size > DOC_MAX_BYTES) {
		lf_fail(why, LF_EINVAL_DOC,
			"cassette '%.80s': not a regular file under %d bytes",
			file, DOC_MAX_BYTES);
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		lf_fail(why, LF_NOMEM, "out of memory");
		goto out;
	}
	while (len < (size_t)st.st_size &&
	       (got = read(fd, buf + len, (size_t)st.st_size - len)) > 0)
		len += (size_t)got;
	v = json_loadb(buf, len, JSON_DECODE_ANY, &jerr);
	if (!v)
		lf_fail(why, LF_EINVAL_DOC, "cassette '%.80s': line %d: %s",
			file, jerr.line, jerr.text);
out:
	free(buf);
	close(fd);
	return v;
}

/*
 * A NAME.json that is a symbolic link or not a regular file: the call
 * that needs it is refused as ASSERT refuses it (its CassettePathError),
 * so its reason is kept under CASSETTE_REFUSED NAME, a key no recording's
 * NAME can be (cassette.h).  0, or -1 when out of memory.
 */
static int refuse_entry(json_t *map, const char *stem, const char *file,
			bool link)
{
	char *r = pyval_repr_text(file), *key = NULL, *why = NULL;
	int rc = -1;

	if (r && asprintf(&key, "%s%s", CASSETTE_REFUSED, stem) >= 0 &&
	    (link ? asprintf(&why,
			     "cassette %s is a symlink; replay cassettes must "
			     "be regular files",
			     r)
		  : asprintf(&why, "cassette is not a regular file: %s",
			     file)) >= 0)
		rc = json_object_set_new(map, key, json_string(why)) ? -1 : 0;
	free(r);
	free(key);
	free(why);
	return rc;
}

/*
 * Every top-level regular NAME.json with a safe NAME, by NAME; the other
 * NAME.json entries under CASSETTE_REFUSED NAME (refuse_entry).
 */
static json_t *read_folder(const char *dir, struct lf_why *why)
{
	struct lf_why skip;
	struct dirent *de;
	json_t *map = json_object(), *v;
	char *stem;
	DIR *d;
	int fd;
	size_t n;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/*
	 * A folder that is not there holds no recording, as ASSERT finds
	 * it (it reads one only when a call needs it): a rule that names
	 * one is refused below, as "not found".
	 */
	if (fd < 0 && errno == ENOENT && map)
		return map;
	if (fd < 0 || !map) {
		lf_fail(why, LF_IO, "cassette folder '%.120s': %s", dir,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		json_decref(map);
		return NULL;
	}
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		json_decref(map);
		lf_fail(why, LF_IO, "cassette folder '%.120s': %s", dir,
			strerror(errno));
		return NULL;
	}
	while ((de = readdir(d))) {
		struct stat st;

		n = strlen(de->d_name);
		if (n <= 5 || strcmp(de->d_name + n - 5, ".json"))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		stem = strndup(de->d_name, n - 5);
		if (!stem)
			goto nomem;
		{
			char *safe = mocks_cassette_stem(stem, &skip);

			/* ASSERT skips a name its stem rule would change. */
			if (!safe || strcmp(safe, stem)) {
				free(safe);
				free(stem);
				continue;
			}
			free(safe);
		}
		/* Links and folders are not recordings: marked (CASSETTE_REFUSED). */
		if (!S_ISREG(st.st_mode)) {
			int rc = refuse_entry(map, stem, de->d_name,
					      S_ISLNK(st.st_mode));

			free(stem);
			if (rc)
				goto nomem;
			continue;
		}
		v = read_one(dirfd(d), de->d_name, why);
		if (!v) {
			free(stem);
			goto fail;
		}
		if (json_object_set_new(map, stem, v)) {
			free(stem);
			goto nomem;
		}
		free(stem);
	}
	closedir(d);
	return map;
nomem:
	lf_fail(why, LF_NOMEM, "out of memory");
fail:
	closedir(d);
	json_decref(map);
	return NULL;
}

/* A policy rule's cassette_file (a ledgerfs extension) -> cassette. */
static int inline_rule(json_t *rule, const json_t *map, const char *at,
		       struct lf_why *why)
{
	const json_t *f = json_object_get(rule, "cassette_file"), *v;
	char *name;
	size_t n;

	if (!json_is_object(rule) || !f)
		return 0;
	if (!json_is_string(f))
		return lf_fail(why, LF_EINVAL_DOC,
			       "%s.cassette_file: must be a string", at),
		       -1;
	if (json_object_get(rule, "cassette"))
		return lf_fail(why, LF_EINVAL_DOC,
			       "%s: both cassette and cassette_file", at),
		       -1;
	if (!map)
		return lf_fail(why, LF_EINVAL_DOC,
			       "%s.cassette_file: no cassette folder", at),
		       -1;
	name = mocks_cassette_stem(json_string_value(f), why);
	if (!name)
		return lf_fail(why, LF_EINVAL_DOC, "%s.cassette_file: %s", at,
			       why->msg),
		       -1;
	v = json_object_get(map, name);
	n = strlen(name);
	if (!v && n > 5 && !strcmp(name + n - 5, ".json")) {
		name[n - 5] = '\0';
		v = json_object_get(map, name);
		if (!v && !mocks_cassette_refused(map, name))
			name[n - 5] = '.';
	}
	if (!v && mocks_cassette_refused(map, name)) {
		lf_fail(why, LF_EINVAL_DOC, "%s.cassette_file: %s", at,
			mocks_cassette_refused(map, name));
		free(name);
		return -1;
	}
	free(name);
	if (!v)
		return lf_fail(why, LF_EINVAL_DOC,
			       "%s.cassette_file: '%.80s' not found", at,
			       json_string_value(f)),
		       -1;
	if (json_object_set(rule, "cassette", (json_t *)v) ||
	    json_object_del(rule, "cassette_file"))
		return lf_fail(why, LF_NOMEM, "out of memory"), -1;
	return 0;
}

json_t *cassette_inline(const json_t *doc, const char *doc_path,
			const char *dir, struct lf_why *why)
{
	char *own = NULL, at[48];
	json_t *out, *map = NULL, *rule;
	size_t i;

	out = json_deep_copy(doc);
	if (!out) {
		lf_fail(why, LF_NOMEM, "out of memory");
		return NULL;
	}
	if (!json_is_object(doc))
		return out; /* the loaders refuse it with a better reason */
	if (!dir) {
		const json_t *cd = json_object_get(doc, "cassette_dir");

		if (cd && !json_is_null(cd) && !json_is_string(cd)) {
			lf_fail(why, LF_EINVAL_DOC,
				"cassette_dir: must be a string");
			goto fail;
		}
		dir = own = cassette_dir_of(doc, doc_path);
	}
	if (dir) {
		map = read_folder(dir, why);
		if (!map)
			goto fail;
	}
	json_array_foreach(json_object_get(out, "interactions"), i, rule)
	{
		snprintf(at, sizeof(at), "interactions[%zu]", i);
		if (inline_rule(rule, map, at, why))
			goto fail;
	}
	json_object_del(out, "cassette_dir");
	if (map && json_object_set(out, "cassettes", map)) {
		lf_fail(why, LF_NOMEM, "out of memory");
		goto fail;
	}
	json_decref(map);
	free(own);
	return out;
fail:
	json_decref(map);
	free(own);
	json_decref(out);
	return NULL;
}

json_t *cassette_load_file(const char *path, const char *dir,
			   struct lf_why *why)
{
	json_t *raw = doc_load_file(path, why), *doc;

	if (!raw)
		return NULL;
	doc = cassette_inline(raw, path, dir, why);
	json_decref(raw);
	return doc;
}

char *cassette_policy_dir(const char *given, const char *mocks_path)
{
	struct lf_why why;
	json_t *m;
	char *d;

	if (given)
		return strdup(given);
	if (!mocks_path)
		return NULL;
	m = doc_load_file(mocks_path, &why);
	d = m ? cassette_dir_of(m, mocks_path) : NULL;
	json_decref(m);
	return d;
}

void cassette_where(const char *file, const char *reason, char *out, size_t n)
{
	char path[256], key[128];
	const char *q;
	size_t len = strcspn(reason, ": "), line = 0;
	char *text = NULL;
	FILE *f;

	snprintf(out, n, "%s", file);
	if (!strncmp(reason, "line ", 5))
		return;
	/* "unknown top-level key 'K'" and "`K:` must be ..." name K. */
	if (sscanf(reason, "unknown top-level key '%127[^']'", key) == 1 ||
	    sscanf(reason, "`%127[^:`]:`", key) == 1) {
		snprintf(path, sizeof(path), "%s", key);
	} else {
		if (len >= sizeof(path) || !len)
			return;
		snprintf(path, sizeof(path), "%.*s", (int)len, reason);
		/* "X: unknown key 'K'" names K inside X. */
		q = strstr(reason, "unknown key '");
		if (q && sscanf(q, "unknown key '%127[^']'", key) == 1 &&
		    strlen(path) + strlen(key) + 2 < sizeof(path)) {
			strcat(path, ".");
			strcat(path, key);
		}
	}
	f = fopen(file, "re");
	if (f) {
		text = malloc(DOC_MAX_BYTES + 1);
		if (text) {
			len = fread(text, 1, DOC_MAX_BYTES, f);
			/*
			 * A key that is missing ("X.match: required") is
			 * placed at the nearest enclosing one that is there.
			 */
			while (!(line = doc_locate(text, len, path)) &&
			       (q = strrchr(path, '.')))
				path[q - path] = '\0';
		}
		fclose(f);
	}
	free(text);
	if (line)
		snprintf(out, n, "%s:%zu", file, line);
}
