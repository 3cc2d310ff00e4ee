/* SPDX-License-Identifier: MIT */
/*
 * doc_yaml.c - YAML documents through libyaml's event parser with an
 * explicit stack, so a hostile document cannot exhaust the C stack, read
 * as PyYAML's safe_load reads it (YAML 1.1 scalars, anchors, aliases and
 * merge keys), with alias expansion bounded (doc.h).
 */
#include "doc_yaml.h"
#include "doc.h"
#include "yaml11.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define TAG_PREFIX "tag:yaml.org,2002:"

/* One open mapping or sequence; c is borrowed (its parent or root owns it). */
struct frame {
	json_t *c;
	char *key;    /* pending mapping key, NULL while a key is expected */
	bool merge;   /* the mapping has a merge key "<<" (YAML 1.1) */
	char *anchor; /* this node's anchor, closed at its end */
};

/* An anchored node: its value (own reference) and its size. */
struct anchor {
	char *name;
	json_t *v;
	bool open; /* still being built: an alias to it is recursive */
};

struct builder {
	json_t *root;
	struct frame st[DOC_MAX_DEPTH + 1];
	int depth;
	size_t nodes;
	int docs;
	struct anchor *anchors;
	size_t nanchors;
	size_t alias_nodes, alias_bytes; /* added by expanding aliases */
};

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

static int add_anchor(struct builder *b, const char *name, json_t *v, bool open,
		      const yaml_mark_t *m, struct lf_why *why);

/* A scalar event: a mapping key or a value. */
static int on_scalar(struct builder *b, const yaml_event_t *e,
		     const char *anchor, struct lf_why *why)
{
	const char *s = (const char *)e->data.scalar.value;
	size_t len = e->data.scalar.length;
	const char *tag = (const char *)e->data.scalar.tag;
	const char *problem = NULL;
	json_t *v;

	/*
	 * The non-specific tag "!": PyYAML resolves the text as a plain
	 * scalar's, quoted or not ("! 12" and '! "12"' are 12).
	 */
	bool bang = tag && !strcmp(tag, "!");

	if (bang)
		tag = NULL;
	if (memchr(s, '\0', len))
		return fail_at(why, &e->start_mark,
			       "NUL characters are not supported", NULL);
	if (tag && strncmp(tag, TAG_PREFIX, strlen(TAG_PREFIX)))
		return fail_at(why, &e->start_mark, "tag not supported", tag);
	if (tag)
		tag += strlen(TAG_PREFIX);
	/*
	 * PyYAML resolves a plain "=" to tag:yaml.org,2002:value and "<<"
	 * to ...:merge, and constructs neither as a value (a key "=" is the
	 * string, "<<" a merge key): the document is refused
	 * (ledgerfs-policy(5) YAML).
	 */
	if (!tag && (bang || e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) &&
	    !expecting_key(b) && (!strcmp(s, "=") || !strcmp(s, "<<")))
		return fail_at(why, &e->start_mark,
			       "could not determine a constructor for the tag",
			       *s == '=' ? "tag:yaml.org,2002:value"
					 : "tag:yaml.org,2002:merge");
	if (expecting_key(b)) {
		struct frame *f = &b->st[b->depth - 1];

		if (tag && strcmp(tag, "str"))
			return fail_at(why, &e->start_mark,
				       "mapping keys must be strings", NULL);
		if (!tag &&
		    (bang || e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE)) {
			v = yaml11_resolve_plain(s, &problem);
			if (!json_is_string(v)) {
				json_decref(v);
				return fail_at(why, &e->start_mark,
					       "mapping keys must be strings",
					       s);
			}
			json_decref(v);
		}
		if (!tag && e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
		    !strcmp(s, "<<")) {
			/* A merge key (YAML 1.1): merged at the mapping's end. */
			if (f->merge)
				return fail_at(why, &e->start_mark,
					       "duplicate key", s);
			f->merge = true;
		} else if (json_object_get(f->c, s)) {
			return fail_at(why, &e->start_mark, "duplicate key", s);
		}
		f->key = strdup(s);
		if (!f->key)
			return fail_at(why, &e->start_mark, "out of memory",
				       NULL);
		if (anchor) {
			json_t *k = json_string(s);
			int rc = k ? add_anchor(b, anchor, k, false,
						&e->start_mark, why)
				   : fail_at(why, &e->start_mark,
					     "out of memory", NULL);

			json_decref(k);
			return rc;
		}
		return 0;
	}
	if (e->data.scalar.style != YAML_PLAIN_SCALAR_STYLE && !tag && !bang)
		v = json_stringn(s, len);
	else if (!tag)
		v = yaml11_resolve_plain(s, &problem);
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
		/* PyYAML's constructors read the text (yaml11.h). */
		if (core[i].type == JSON_NULL)
			v = json_null();
		else if (core[i].type == JSON_REAL)
			v = yaml11_construct_float(s, &problem);
		else if (core[i].type == JSON_TRUE)
			v = yaml11_construct_bool(s);
		else
			v = yaml11_resolve_plain(s, &problem);
		if (!v && core[i].type == JSON_TRUE)
			return fail_at(why, &e->start_mark,
				       "value does not fit its tag", s);
		if (!v && problem &&
		    !strcmp(problem, "value does not fit its tag"))
			return fail_at(why, &e->start_mark, problem, s);
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
	if (anchor && add_anchor(b, anchor, v, false, &e->start_mark, why)) {
		json_decref(v);
		return -1;
	}
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

/* Nodes and text bytes of v, for the alias bounds. */
static void measure(const json_t *v, size_t *nodes, size_t *bytes)
{
	const char *k;
	json_t *e;
	size_t i;

	++*nodes;
	if (json_is_string(v))
		*bytes += json_string_length(v);
	else if (json_is_array(v)) {
		json_array_foreach(v, i, e)
		{
			measure(e, nodes, bytes);
		}
	} else if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, e)
		{
			*bytes += strlen(k);
			measure(e, nodes, bytes);
		}
	}
}

/* Remember v (borrowed; a reference is kept) under name. */
static int add_anchor(struct builder *b, const char *name, json_t *v, bool open,
		      const yaml_mark_t *m, struct lf_why *why)
{
	struct anchor *a;

	a = realloc(b->anchors, (b->nanchors + 1) * sizeof(*a));
	if (!a)
		return fail_at(why, m, "out of memory", NULL);
	b->anchors = a;
	a = &b->anchors[b->nanchors];
	a->name = strdup(name);
	if (!a->name)
		return fail_at(why, m, "out of memory", NULL);
	a->v = json_incref(v);
	a->open = open;
	b->nanchors++;
	return 0;
}

/* The latest anchor of that name (YAML lets a name be reused). */
static struct anchor *find_anchor(struct builder *b, const char *name)
{
	size_t i;

	for (i = b->nanchors; i > 0; i--)
		if (!strcmp(b->anchors[i - 1].name, name))
			return &b->anchors[i - 1];
	return NULL;
}

/*
 * An alias: a copy of its anchor's node, counted against the expansion
 * bounds (ledgerfs-policy(5) DOCUMENT SYNTAX), so a "billion laughs"
 * document is refused long before it grows.
 */
static int on_alias(struct builder *b, const yaml_event_t *e,
		    struct lf_why *why)
{
	const char *name = (const char *)e->data.alias.anchor;
	struct anchor *a = find_anchor(b, name);
	size_t nodes = 0, bytes = 0;
	json_t *copy;

	if (!a)
		return fail_at(why, &e->start_mark, "unknown alias", name);
	if (a->open)
		return fail_at(why, &e->start_mark, "recursive alias", name);
	measure(a->v, &nodes, &bytes);
	b->alias_nodes += nodes;
	b->alias_bytes += bytes;
	if (b->alias_nodes > DOC_MAX_ALIAS_NODES ||
	    b->alias_bytes > DOC_MAX_ALIAS_BYTES)
		return fail_at(why, &e->start_mark,
			       "aliases expand past the bound of "
			       "100000 nodes or 4 MiB",
			       NULL);
	if (expecting_key(b)) {
		struct frame *f = &b->st[b->depth - 1];

		if (!json_is_string(a->v))
			return fail_at(why, &e->start_mark,
				       "mapping keys must be strings", NULL);
		if (json_object_get(f->c, json_string_value(a->v)))
			return fail_at(why, &e->start_mark, "duplicate key",
				       json_string_value(a->v));
		f->key = strdup(json_string_value(a->v));
		return f->key ? 0
			      : fail_at(why, &e->start_mark, "out of memory",
					NULL);
	}
	copy = json_deep_copy(a->v);
	if (!copy)
		return fail_at(why, &e->start_mark, "out of memory", NULL);
	return attach(b, copy, &e->start_mark, why);
}

/*
 * YAML 1.1 merge keys, as PyYAML's flatten_mapping: the merged pairs come
 * first (from a list, the last mapping's first), then the mapping's own;
 * a later pair sets the value, the first one the position.
 */
static int apply_merge(struct frame *f, const yaml_mark_t *m,
		       struct lf_why *why)
{
	json_t *src = json_incref(json_object_get(f->c, "<<")), *out, *e;
	const char *k;
	json_t *v;
	size_t i, n;
	int rc = -1;

	json_object_del(f->c, "<<");
	out = json_object();
	if (!out || !src)
		goto nomem;
	if (json_is_object(src)) {
		json_object_update(out, src);
	} else if (json_is_array(src)) {
		n = json_array_size(src);
		for (i = n; i > 0; i--) {
			e = json_array_get(src, i - 1);
			if (!json_is_object(e))
				goto bad;
			json_object_foreach(e, k, v)
			{
				json_object_set(out, k, v);
			}
		}
	} else {
		goto bad;
	}
	json_object_foreach(f->c, k, v)
	{
		json_object_set(out, k, v);
	}
	json_object_clear(f->c);
	json_object_update(f->c, out);
	rc = 0;
	goto out;
bad:
	fail_at(why, m, "expected a mapping or list of mappings for merging",
		NULL);
	goto out;
nomem:
	fail_at(why, m, "out of memory", NULL);
out:
	json_decref(out);
	json_decref(src);
	return rc;
}

static int on_event(struct builder *b, const yaml_event_t *e,
		    struct lf_why *why)
{
	const yaml_char_t *anchor = NULL;
	struct frame *f;
	int rc;

	switch (e->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (++b->docs > 1)
			return fail_at(why, &e->start_mark,
				       "more than one document", NULL);
		return 0;
	case YAML_ALIAS_EVENT:
		if (++b->nodes > DOC_MAX_NODES)
			return fail_at(why, &e->start_mark,
				       "document has too many nodes", NULL);
		return on_alias(b, e, why);
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
		if (b->depth == 0)
			return 0;
		f = &b->st[b->depth - 1];
		if (f->merge && apply_merge(f, &e->start_mark, why))
			return -1;
		if (f->anchor) {
			struct anchor *a = find_anchor(b, f->anchor);

			if (a)
				a->open = false;
			free(f->anchor);
		}
		f->anchor = NULL;
		f->merge = false;
		b->depth--;
		return 0;
	default:
		return 0;
	}
	if (++b->nodes > DOC_MAX_NODES)
		return fail_at(why, &e->start_mark,
			       "document has too many nodes", NULL);
	if (e->type == YAML_SCALAR_EVENT)
		return on_scalar(b, e, (const char *)anchor, why);
	rc = on_start(b, e, e->type == YAML_MAPPING_START_EVENT, why);
	if (rc || !anchor)
		return rc;
	b->st[b->depth - 1].anchor = strdup((const char *)anchor);
	if (!b->st[b->depth - 1].anchor)
		return fail_at(why, &e->start_mark, "out of memory", NULL);
	return add_anchor(b, (const char *)anchor, b->st[b->depth - 1].c, true,
			  &e->start_mark, why);
}

json_t *doc_parse_yaml(const char *text, size_t len, struct lf_why *why)
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
	for (i = 0; i < DOC_MAX_DEPTH + 1; i++) {
		free(b.st[i].key);
		free(b.st[i].anchor);
	}
	for (i = 0; i < (int)b.nanchors; i++) {
		free(b.anchors[i].name);
		json_decref(b.anchors[i].v);
	}
	free(b.anchors);
	if (rc) {
		json_decref(b.root);
		return NULL;
	}
	/* An empty stream is an empty document: null, refused by the loaders. */
	return b.root ? b.root : json_null();
}
