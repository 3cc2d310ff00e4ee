/* SPDX-License-Identifier: MIT */
/*
 * cassette_yaml.c - JSON values written as YAML flow values that read
 * back the same in PyYAML (ASSERT loads mocks with yaml.safe_load), in
 * doc_parse and in a JSON parser: the written mocks file must mean one
 * thing to all three (ledgerctl(1) CASSETTES).
 */
#include <stdint.h>
#include <string.h>

#include "cassette_write.h"

/* The code point starting at s (valid UTF-8: jansson checked it). */
static uint32_t utf8_at(const unsigned char *s, size_t *len)
{
	if (s[0] < 0x80) {
		*len = 1;
		return s[0];
	}
	if ((s[0] & 0xE0) == 0xC0) {
		*len = 2;
		return ((uint32_t)(s[0] & 0x1F) << 6) | (s[1] & 0x3F);
	}
	if ((s[0] & 0xF0) == 0xE0) {
		*len = 3;
		return ((uint32_t)(s[0] & 0x0F) << 12) |
		       ((uint32_t)(s[1] & 0x3F) << 6) | (s[2] & 0x3F);
	}
	*len = 4;
	return ((uint32_t)(s[0] & 0x07) << 18) |
	       ((uint32_t)(s[1] & 0x3F) << 12) |
	       ((uint32_t)(s[2] & 0x3F) << 6) | (s[3] & 0x3F);
}

/*
 * Written as \uXXXX: what a YAML reader refuses as unprintable (C0 and
 * C1 controls, DEL, U+FFFE, U+FFFF), folds as a line break (NEL, U+2028,
 * U+2029) or takes for a byte order mark (U+FEFF).  Every other
 * character goes as it is, so both readers see the same string.
 */
static bool must_escape(uint32_t c)
{
	return c < 0x20 || (c >= 0x7F && c <= 0x9F) || c == 0x2028 ||
	       c == 0x2029 || c == 0xFEFF || c == 0xFFFE || c == 0xFFFF;
}

static int yaml_string(FILE *f, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, len;

	if (fputc('"', f) == EOF)
		return -1;
	while (i < n) {
		uint32_t c = utf8_at(p + i, &len);

		if (c == '"' || c == '\\') {
			if (fputc('\\', f) == EOF || fputc((int)c, f) == EOF)
				return -1;
		} else if (must_escape(c)) {
			if (fprintf(f, "\\u%04x", (unsigned)c) < 0)
				return -1;
		} else if (fwrite(p + i, 1, len, f) != len) {
			return -1;
		}
		i += len;
	}
	return fputc('"', f) == EOF ? -1 : 0;
}

/*
 * A float as %.17g (it reads back as the same double) with a dot before
 * any exponent: YAML 1.1 reads 1e+22 as a string, 1.0e+22 as a float.
 */
static int yaml_real(FILE *f, double d)
{
	char buf[64], out[72], *e;

	snprintf(buf, sizeof(buf), "%.17g", d);
	if (strchr(buf, '.'))
		return fputs(buf, f) == EOF ? -1 : 0;
	e = strchr(buf, 'e');
	if (e)
		snprintf(out, sizeof(out), "%.*s.0%s", (int)(e - buf), buf, e);
	else
		snprintf(out, sizeof(out), "%s.0", buf);
	return fputs(out, f) == EOF ? -1 : 0;
}

int cassette_yaml_value(FILE *f, const json_t *v)
{
	const char *k;
	json_t *e;
	size_t i;
	bool first = true;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		if (fputc('{', f) == EOF)
			return -1;
		json_object_foreach((json_t *)v, k, e)
		{
			if ((!first && fputs(", ", f) == EOF) ||
			    yaml_string(f, k, strlen(k)) ||
			    fputs(": ", f) == EOF || cassette_yaml_value(f, e))
				return -1;
			first = false;
		}
		return fputc('}', f) == EOF ? -1 : 0;
	case JSON_ARRAY:
		if (fputc('[', f) == EOF)
			return -1;
		json_array_foreach(v, i, e)
		{
			if ((i && fputs(", ", f) == EOF) ||
			    cassette_yaml_value(f, e))
				return -1;
		}
		return fputc(']', f) == EOF ? -1 : 0;
	case JSON_STRING:
		return yaml_string(f, json_string_value(v),
				   json_string_length(v));
	case JSON_INTEGER:
		return fprintf(f, "%" JSON_INTEGER_FORMAT,
			       json_integer_value(v)) < 0
			       ? -1
			       : 0;
	case JSON_REAL:
		return yaml_real(f, json_real_value(v));
	case JSON_TRUE:
		return fputs("true", f) == EOF ? -1 : 0;
	case JSON_FALSE:
		return fputs("false", f) == EOF ? -1 : 0;
	default:
		return fputs("null", f) == EOF ? -1 : 0;
	}
}
