/* SPDX-License-Identifier: MIT */
/*
 * doc.c - policy and mocks documents, YAML or JSON text, as jansson values:
 * bounded reading of the file, JSON through jansson with our bounds, and
 * anything else through the YAML reader (doc_yaml.c).
 */
#include "doc.h"
#include "doc_yaml.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bounds for a JSON text, which jansson parses without our limits. */
static int json_bounds(const json_t *v, int depth, size_t *nodes)
{
	size_t i;
	const char *k;
	json_t *e;

	if (++*nodes > DOC_MAX_NODES || depth > DOC_MAX_DEPTH)
		return -1;
	if (json_is_array(v)) {
		json_array_foreach(v, i, e)
		{
			if (json_bounds(e, depth + 1, nodes))
				return -1;
		}
	} else if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, e)
		{
			if (json_bounds(e, depth + 1, nodes))
				return -1;
		}
	}
	return 0;
}

/* JSON text through jansson, then our bounds. New reference or NULL. */
static json_t *parse_json(const char *text, size_t len, struct lf_why *why)
{
	json_error_t err;
	json_t *v;
	size_t nodes = 0;

	v = json_loadb(text, len, JSON_REJECT_DUPLICATES, &err);
	if (!v) {
		lf_fail(why, LF_EINVAL_DOC, "line %d column %d: %s", err.line,
			err.column, err.text);
		return NULL;
	}
	if (json_bounds(v, 1, &nodes)) {
		json_decref(v);
		lf_fail(why, LF_EINVAL_DOC,
			"line 1 column 1: document nested deeper than %d or larger than %d nodes",
			DOC_MAX_DEPTH, DOC_MAX_NODES);
		return NULL;
	}
	return v;
}

json_t *doc_parse(const char *text, size_t len, struct lf_why *why)
{
	size_t i;

	if (!text) {
		lf_fail(why, LF_EINVAL_DOC, "line 1 column 1: no document");
		return NULL;
	}
	if (len > DOC_MAX_BYTES) {
		lf_fail(why, LF_EINVAL_DOC,
			"line 1 column 1: document larger than %d bytes",
			DOC_MAX_BYTES);
		return NULL;
	}
	for (i = 0; i < len; i++)
		if (!strchr(" \t\r\n", text[i]) || !text[i])
			break;
	if (i < len && (text[i] == '{' || text[i] == '[')) {
		struct lf_why yaml_why;
		json_t *v = parse_json(text, len, why);

		/*
		 * A YAML flow collection ({a: 1}) starts like JSON too.  When
		 * it is not JSON, YAML may take it; if neither does, the JSON
		 * reason is the one a reader of a '{' document expects.
		 */
		if (!v)
			v = doc_parse_yaml(text, len, &yaml_why);
		return v;
	}
	return doc_parse_yaml(text, len, why);
}

json_t *doc_load_fd(int fd, struct lf_why *why)
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	ssize_t n;
	json_t *v = NULL;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		lf_fail(why, LF_IO, "not a regular file");
		return NULL;
	}
	if (st.st_size > DOC_MAX_BYTES) {
		lf_fail(why, LF_EINVAL_DOC, "document larger than %d bytes",
			DOC_MAX_BYTES);
		return NULL;
	}
	/* One byte over the bound tells a file that grew since fstat. */
	buf = malloc((size_t)st.st_size + 2);
	if (!buf) {
		lf_fail(why, LF_NOMEM, "out of memory");
		return NULL;
	}
	while (len <= (size_t)st.st_size) {
		n = read(fd, buf + len, (size_t)st.st_size + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			lf_fail(why, LF_IO, "cannot read: %s", strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > (size_t)st.st_size) {
		lf_fail(why, LF_IO, "file changed while being read");
		goto out;
	}
	v = doc_parse(buf, len, why);
out:
	free(buf);
	return v;
}

json_t *doc_load_file(const char *path, struct lf_why *why)
{
	json_t *v;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		lf_fail(why, LF_IO, "cannot open: %s", strerror(errno));
		return NULL;
	}
	v = doc_load_fd(fd, why);
	close(fd);
	return v;
}
