/*
 * doc.c - policy and mocks documents, YAML or JSON text, as jansson values.
 * JSON goes through jansson; YAML through libyaml's event parser with an
 * explicit stack, so a hostile document cannot exhaust the C stack.
 */
#include "doc.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#define TAG_PREFIX "tag:yaml.org,2002:"

/* One open mapping or sequence; c is borrowed (its parent or root owns it). */
struct frame {
	json_t *c;
	char *key; /* pending mapping key, NULL while a key is expected */
};

struct builder {
	json_t *root;
	struct frame st[DOC_MAX_DEPTH + 1];
	int depth;
	size_t nodes;
	int docs;
};

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

static bool all_of(const char *s, const char *set)
{
	if (!*s)
		return false;
	return s[strspn(s, set)] == '\0';
}

/*
 * YAML 1.2 core schema for a plain scalar.  Returns a new reference, or
 * NULL with *problem set (a value JSON cannot hold).
 */
static json_t *resolve_plain(const char *s, const char **problem)
{
	const char *d = s;
	char *end;

	if (!*s || !strcmp(s, "~") || !strcmp(s, "null") ||
	    !strcmp(s, "Null") || !strcmp(s, "NULL"))
		return json_null();
	if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE"))
		return json_true();
	if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE"))
		return json_false();
	if (!strncmp(s, "0x", 2) && all_of(s + 2, "0123456789abcdefABCDEF")) {
		errno = 0;
		unsigned long long u = strtoull(s + 2, &end, 16);
		if (errno || u > INT64_MAX)
			goto range;
		return json_integer((json_int_t)u);
	}
	if (!strncmp(s, "0o", 2) && all_of(s + 2, "01234567")) {
		errno = 0;
		unsigned long long u = strtoull(s + 2, &end, 8);
		if (errno || u > INT64_MAX)
			goto range;
		return json_integer((json_int_t)u);
	}
	if (*d == '+' || *d == '-')
		d++;
	if (all_of(d, "0123456789")) {
		errno = 0;
		long long i = strtoll(s, &end, 10);
		if (errno)
			goto range;
		return json_integer(i);
	}
	if (!strcmp(d, ".inf") || !strcmp(d, ".Inf") || !strcmp(d, ".INF") ||
	    !strcmp(s, ".nan") || !strcmp(s, ".NaN") || !strcmp(s, ".NAN")) {
		*problem = "infinity and NaN cannot be represented in JSON";
		return NULL;
	}
	/* [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )? */
	{
		const char *p = d;
		size_t n = strspn(p, "0123456789");
		bool digits = n > 0;

		p += n;
		if (*p == '.') {
			p++;
			n = strspn(p, "0123456789");
			digits = digits || n > 0;
			p += n;
		}
		if (digits && (*p == 'e' || *p == 'E')) {
			const char *q = p + 1;
			if (*q == '+' || *q == '-')
				q++;
			n = strspn(q, "0123456789");
			if (n)
				p = q + n;
		}
		if (digits && !*p) {
			errno = 0;
			double f = strtod(s, &end);
			if (errno == ERANGE && (f > 1.0 || f < -1.0))
				goto range;
			return json_real(f);
		}
	}
	return json_string(s);
range:
	*problem = "number out of range";
	return NULL;
}

static int fail_at(struct lf_why *why, const yaml_mark_t *m, const char *what,
		   const char *arg)
{
	if (arg)
		lf_fail(why, LF_EINVAL_DOC, "line %zu column %zu: %s '%.60s'",
			m->line + 1, m->column + 1, what, arg);
	else
		lf_fail(why, LF_EINVAL_DOC, "line %zu column %zu: %s",
			m->line + 1, m->column + 1, what);
	return -1;
}

/* Attach v (stolen) under the current frame, or make it the root. */
static int attach(struct builder *b, json_t *v, const yaml_mark_t *m,
		  struct lf_why *why)
{
	struct frame *f;
	int rc;

	if (b->depth == 0) {
		if (b->root) {
			json_decref(v);
			return fail_at(why, m, "more than one document", NULL);
		}
		b->root = v;
		return 0;
	}
	f = &b->st[b->depth - 1];
	if (json_is_array(f->c))
		return json_array_append_new(f->c, v)
			       ? fail_at(why, m, "out of memory", NULL)
			       : 0;
	rc = json_object_set_new(f->c, f->key, v);
	free(f->key);
	f->key = NULL;
	return rc ? fail_at(why, m, "out of memory", NULL) : 0;
}

static bool expecting_key(const struct builder *b)
{
	return b->depth > 0 && json_is_object(b->st[b->depth - 1].c) &&
	       !b->st[b->depth - 1].key;
}

/* A scalar event: a mapping key or a value. */
static int on_scalar(struct builder *b, const yaml_event_t *e,
		     struct lf_why *why)
{
	const char *s = (const char *)e->data.scalar.value;
	size_t len = e->data.scalar.length;
	const char *tag = (const char *)e->data.scalar.tag;
	const char *problem = NULL;
	json_t *v;

	/* The non-specific tag "!" makes even a plain scalar a string. */
	if (tag && !strcmp(tag, "!"))
		tag = TAG_PREFIX "str";
	if (memchr(s, '\0', len))
		return fail_at(why, &e->start_mark,
			       "NUL characters are not supported", NULL);
	if (tag && strncmp(tag, TAG_PREFIX, strlen(TAG_PREFIX)))
		return fail_at(why, &e->start_mark, "tag not supported", tag);
	if (tag)
		tag += strlen(TAG_PREFIX);
	if (expecting_key(b)) {
		struct frame *f = &b->st[b->depth - 1];

		if (tag && strcmp(tag, "str"))
			return fail_at(why, &e->start_mark,
				       "mapping keys must be strings", NULL);
		if (!tag && e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
			v = resolve_plain(s, &problem);
			if (!json_is_string(v)) {
				json_decref(v);
				return fail_at(why, &e->start_mark,
					       "mapping keys must be strings",
					       s);
			}
			json_decref(v);
		}
		if (json_object_get(f->c, s))
			return fail_at(why, &e->start_mark, "duplicate key", s);
		f->key = strdup(s);
		return f->key ? 0
			      : fail_at(why, &e->start_mark, "out of memory",
					NULL);
	}
	if (e->data.scalar.style != YAML_PLAIN_SCALAR_STYLE && !tag)
		v = json_stringn(s, len);
	else if (!tag)
		v = resolve_plain(s, &problem);
	else if (!strcmp(tag, "str"))
		v = json_stringn(s, len);
	else {
		static const struct {
			const char *tag;
			json_type type;
		} core[] = {
			{"null", JSON_NULL},
			{"bool", JSON_TRUE},
			{"int", JSON_INTEGER},
			{"float", JSON_REAL},
		};
		size_t i;

		for (i = 0; i < sizeof(core) / sizeof(core[0]); i++)
			if (!strcmp(tag, core[i].tag))
				break;
		if (i == sizeof(core) / sizeof(core[0]))
			return fail_at(why, &e->start_mark, "tag not supported",
				       tag - strlen(TAG_PREFIX));
		v = resolve_plain(s, &problem);
		if (v && !(json_typeof(v) == core[i].type ||
			   (core[i].type == JSON_TRUE && json_is_boolean(v)) ||
			   (core[i].type == JSON_REAL && json_is_integer(v)))) {
			json_decref(v);
			return fail_at(why, &e->start_mark,
				       "value does not fit its tag", s);
		}
		if (v && core[i].type == JSON_REAL && json_is_integer(v)) {
			json_t *r = json_real((double)json_integer_value(v));
			json_decref(v);
			v = r;
		}
	}
	if (!v)
		return fail_at(why, &e->start_mark,
			       problem ? problem
				       : "invalid UTF-8 or out of memory",
			       NULL);
	return attach(b, v, &e->start_mark, why);
}

static int on_start(struct builder *b, const yaml_event_t *e, bool map,
		    struct lf_why *why)
{
	const char *tag = (const char *)(map ? e->data.mapping_start.tag
					     : e->data.sequence_start.tag);
	json_t *c;

	if (tag && strcmp(tag, map ? TAG_PREFIX "map" : TAG_PREFIX "seq") &&
	    strcmp(tag, "!"))
		return fail_at(why, &e->start_mark, "tag not supported", tag);
	if (expecting_key(b))
		return fail_at(why, &e->start_mark,
			       "mapping keys must be strings", NULL);
	if (b->depth >= DOC_MAX_DEPTH)
		return fail_at(why, &e->start_mark,
			       "document nested too deeply", NULL);
	c = map ? json_object() : json_array();
	if (!c)
		return fail_at(why, &e->start_mark, "out of memory", NULL);
	/* Attached first and borrowed after, so an error frees one tree. */
	json_incref(c);
	if (attach(b, c, &e->start_mark, why)) {
		json_decref(c);
		return -1;
	}
	json_decref(c);
	b->st[b->depth].c = c;
	b->st[b->depth].key = NULL;
	b->depth++;
	return 0;
}

static int on_event(struct builder *b, const yaml_event_t *e,
		    struct lf_why *why)
{
	const yaml_char_t *anchor = NULL;

	switch (e->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (++b->docs > 1)
			return fail_at(why, &e->start_mark,
				       "more than one document", NULL);
		return 0;
	case YAML_ALIAS_EVENT:
		return fail_at(why, &e->start_mark, "aliases are not supported",
			       NULL);
	case YAML_SCALAR_EVENT:
		anchor = e->data.scalar.anchor;
		break;
	case YAML_MAPPING_START_EVENT:
		anchor = e->data.mapping_start.anchor;
		break;
	case YAML_SEQUENCE_START_EVENT:
		anchor = e->data.sequence_start.anchor;
		break;
	case YAML_MAPPING_END_EVENT:
	case YAML_SEQUENCE_END_EVENT:
		if (b->depth > 0)
			b->depth--;
		return 0;
	default:
		return 0;
	}
	if (anchor)
		return fail_at(
			why, &e->start_mark,
			"anchors are not supported (aliases are not supported)",
			NULL);
	if (++b->nodes > DOC_MAX_NODES)
		return fail_at(why, &e->start_mark,
			       "document has too many nodes", NULL);
	if (e->type == YAML_SCALAR_EVENT)
		return on_scalar(b, e, why);
	return on_start(b, e, e->type == YAML_MAPPING_START_EVENT, why);
}

/* YAML text through libyaml events. New reference or NULL. */
static json_t *parse_yaml(const char *text, size_t len, struct lf_why *why)
{
	yaml_parser_t parser;
	yaml_event_t ev;
	struct builder b;
	bool done = false;
	int rc = 0, i;

	memset(&b, 0, sizeof(b));
	if (!yaml_parser_initialize(&parser)) {
		lf_fail(why, LF_NOMEM, "line 1 column 1: out of memory");
		return NULL;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	while (!done && !rc) {
		if (!yaml_parser_parse(&parser, &ev)) {
			lf_fail(why, LF_EINVAL_DOC,
				"line %zu column %zu: %s%s%s",
				parser.problem_mark.line + 1,
				parser.problem_mark.column + 1,
				parser.problem ? parser.problem
					       : "malformed YAML",
				parser.context ? " " : "",
				parser.context ? parser.context : "");
			rc = -1;
			break;
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		rc = on_event(&b, &ev, why);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	for (i = 0; i < DOC_MAX_DEPTH + 1; i++)
		free(b.st[i].key);
	if (rc) {
		json_decref(b.root);
		return NULL;
	}
	/* An empty stream is an empty document: null, refused by the loaders. */
	return b.root ? b.root : json_null();
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
			v = parse_yaml(text, len, &yaml_why);
		return v;
	}
	return parse_yaml(text, len, why);
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
