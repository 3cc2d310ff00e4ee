/* SPDX-License-Identifier: MIT */
/*
 * doc_locate.c - the line of a node in a policy or mocks document, by its
 * path ("rules[2].match"), so that an error about a value can point at
 * the line that holds it.  A second pass of libyaml's event parser over
 * the same text (JSON is YAML here), bounded by the same depth.
 */
#include "doc.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* One open container while locating: its path and, for a mapping, the
 * key waiting for its value. */
struct loc_frame {
	char path[256];
	bool map;
	bool want_key;
	size_t index;
	char key[128];
};

/* The path of the next node under f ("" at the root). */
static void child_path(const struct loc_frame *f, char *out, size_t n)
{
	if (!f)
		out[0] = '\0';
	else if (f->map)
		snprintf(out, n, "%.120s%s%.120s", f->path,
			 f->path[0] ? "." : "", f->key);
	else
		snprintf(out, n, "%.120s[%zu]", f->path, f->index);
}

size_t doc_locate(const char *text, size_t len, const char *path)
{
	struct loc_frame *st;
	yaml_parser_t parser;
	yaml_event_t ev;
	char here[256];
	size_t line = 0;
	int depth = 0;
	bool done = false;

	st = calloc(DOC_MAX_DEPTH + 1, sizeof(*st));
	if (!st || !yaml_parser_initialize(&parser)) {
		free(st);
		return 0;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	while (!done && !line && yaml_parser_parse(&parser, &ev)) {
		struct loc_frame *f = depth ? &st[depth - 1] : NULL;

		done = ev.type == YAML_STREAM_END_EVENT;
		switch (ev.type) {
		case YAML_SCALAR_EVENT:
		case YAML_ALIAS_EVENT:
			if (f && f->map && f->want_key) {
				snprintf(f->key, sizeof(f->key), "%s",
					 ev.type == YAML_SCALAR_EVENT
						 ? (const char *)
							   ev.data.scalar.value
						 : "");
				f->want_key = false;
				child_path(f, here, sizeof(here));
				if (!strcmp(here, path))
					line = ev.start_mark.line + 1;
				break;
			}
			child_path(f, here, sizeof(here));
			if (!strcmp(here, path))
				line = ev.start_mark.line + 1;
			if (f && f->map)
				f->want_key = true;
			else if (f)
				f->index++;
			break;
		case YAML_MAPPING_START_EVENT:
		case YAML_SEQUENCE_START_EVENT:
			child_path(f, here, sizeof(here));
			if (!strcmp(here, path) && here[0])
				line = ev.start_mark.line + 1;
			if (depth >= DOC_MAX_DEPTH)
				done = true;
			else {
				struct loc_frame *c = &st[depth++];

				memset(c, 0, sizeof(*c));
				snprintf(c->path, sizeof(c->path), "%s", here);
				c->map = ev.type == YAML_MAPPING_START_EVENT;
				c->want_key = c->map;
			}
			break;
		case YAML_MAPPING_END_EVENT:
		case YAML_SEQUENCE_END_EVENT:
			if (depth)
				depth--;
			f = depth ? &st[depth - 1] : NULL;
			if (f && f->map)
				f->want_key = true;
			else if (f)
				f->index++;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&parser);
	free(st);
	return line;
}
