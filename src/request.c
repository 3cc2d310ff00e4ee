/* SPDX-License-Identifier: MIT */
/*
 * request.c - strict parsing of the lines a target writes: calls, results
 * and registrations (ledgerfs(8) THE VIEW and PROTOCOL).  One linear scan
 * bounds size, NUL bytes, UTF-8 and nesting before jansson builds anything.
 *
 * Tool names are what ASSERT takes (ledgerfs(8) PROTOCOL): 1-256 bytes of
 * UTF-8 without control characters, not only blanks.  They never name a
 * file; policy patterns match them as text.
 */
#include "request.h"
#include "request_int.h"

#include <string.h>

/* Longest piece of a key quoted in a reason; keeps reasons one short line. */
#define REASON_KEY_MAX 64

static const char *const call_keys[] = {"call_id", "tool", "args", NULL};
static const char *const result_keys[] = {"call_id", "returned", "is_error",
					  "real_executed", NULL};
static const char *const register_keys[] = {"case_id", "token", NULL};

/*
 * Keys the host writes into replies, ledger rows, status or evidence.  A
 * target that sends one is trying to speak for the host, so the reason
 * says so rather than only "unknown".
 */
static const char *const host_owned_keys[] = {
	"sequence",
	"mode",
	"matched",
	"reason",
	"result_source",
	"result_authoritative",
	"decision_source",
	"decision_authoritative",
	"attempt_authoritative",
	"row",
	"phase",
	"prev",
	"mac",
	"time",
	"case_id",
	"completion_status",
	"execution_status",
	"mock_source",
	"mock_rule",
	"scenario_state",
	"policy_note",
	"state",
	"rows",
	"head",
	NULL,
};

/* Fields of a result line; in a call they point the writer to `result`. */
static const char *const result_only_keys[] = {"returned", "is_error",
					       "real_executed", NULL};

static bool in_list(const char *key, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(key, *list) == 0)
			return true;
	return false;
}

static bool is_json_ws(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/*
 * Length (1-4) of the well-formed UTF-8 sequence at p, or 0 when it is
 * not one (RFC 3629: no overlong forms, no surrogates, nothing above
 * U+10FFFF, no truncated sequence).
 */
static size_t utf8_seq(const unsigned char *p, size_t left)
{
	unsigned char c = p[0];
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (c < 0x80)
		return 1;
	if (c < 0xc2) /* a continuation byte or an overlong 2-byte lead */
		return 0;
	if (c < 0xe0) {
		n = 2;
	} else if (c < 0xf0) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0; /* overlong */
		else if (c == 0xed)
			hi = 0x9f; /* UTF-16 surrogates */
	} else if (c < 0xf5) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90; /* overlong */
		else if (c == 0xf4)
			hi = 0x8f; /* above U+10FFFF */
	} else {
		return 0;
	}
	if (left < n)
		return 0;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	return n;
}

/*
 * The checks made on raw bytes, in one pass: size, emptiness, NUL, UTF-8,
 * nesting depth (brackets inside strings do not count, so strings and
 * their escapes are tracked) and that the text starts as an object.
 * After this, jansson never sees more than REQUEST_MAX_DEPTH levels.
 */
static enum lf_err scan_line(const char *line, size_t len, size_t max_line,
			     struct lf_why *why)
{
	const unsigned char *p = (const unsigned char *)line;
	size_t i, n, first = len;
	unsigned int depth = 0;
	bool in_str = false, esc = false;

	if (!max_line)
		max_line = REQUEST_MAX_LINE_DEFAULT;
	if (len > max_line)
		return lf_fail(
			why, LF_TOO_BIG,
			"line of %zu bytes is over the limit of %zu bytes", len,
			max_line);
	if (!line && len)
		return lf_fail(why, LF_EINVAL_JSON, "no line");
	for (i = 0; i < len; i += n) {
		unsigned char c = p[i];

		n = 1;
		if (c == 0)
			return lf_fail(why, LF_EINVAL_JSON,
				       "NUL byte at byte %zu", i);
		if (first == len && !is_json_ws(c))
			first = i;
		if (c >= 0x80) {
			n = utf8_seq(p + i, len - i);
			if (!n)
				return lf_fail(why, LF_EINVAL_JSON,
					       "invalid UTF-8 at byte %zu", i);
			continue;
		}
		if (in_str) {
			if (esc)
				esc = false;
			else if (c == '\\')
				esc = true;
			else if (c == '"')
				in_str = false;
			continue;
		}
		switch (c) {
		case '"':
			in_str = true;
			break;
		case '[':
		case '{':
			if (++depth > REQUEST_MAX_DEPTH)
				return lf_fail(
					why, LF_EINVAL_JSON,
					"nesting deeper than %d at byte %zu",
					REQUEST_MAX_DEPTH, i);
			break;
		case ']':
		case '}':
			/* Unbalanced closers are jansson's to report. */
			if (depth)
				depth--;
			break;
		default:
			break;
		}
	}
	if (first == len)
		return lf_fail(why, LF_EINVAL_JSON, "empty line");
	if (p[first] != '{')
		return lf_fail(why, LF_EINVAL_JSON, "not a JSON object");
	return LF_OK;
}

/* Turn a jansson error into one of our reasons. */
static enum lf_err json_reason(const json_error_t *jerr, struct lf_why *why)
{
	const char *near;

	switch (json_error_code(jerr)) {
	case json_error_end_of_input_expected:
		return lf_fail(why, LF_EINVAL_JSON,
			       "trailing data after the object near byte %d",
			       jerr->position);
	case json_error_duplicate_key:
		/* jansson's text ends "near '<the key as written>'". */
		near = strstr(jerr->text, "near '");
		return lf_fail(why, LF_EINVAL_JSON,
			       "duplicate key %s near byte %d",
			       near ? near + 5 : "", jerr->position);
	case json_error_null_character:
		return lf_fail(why, LF_EINVAL_JSON,
			       "\\u0000 escape near byte %d is not allowed",
			       jerr->position);
	default:
		return lf_fail(why, LF_EINVAL_JSON,
			       "malformed JSON near byte %d: %s",
			       jerr->position, jerr->text);
	}
}

/*
 * Scan and decode one line into an object.  *obj is a new reference on
 * success and NULL on error.
 */
static enum lf_err load_object(const char *line, size_t len, size_t max_line,
			       json_t **obj, struct lf_why *why)
{
	json_error_t jerr;
	json_t *root;
	enum lf_err rc;

	*obj = NULL;
	rc = scan_line(line, len, max_line, why);
	if (rc)
		return rc;
	/* Without JSON_DECODE_ANY (objects and arrays only) and without
	 * JSON_ALLOW_NUL (\u0000 refused); duplicates are an error. */
	root = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return json_reason(&jerr, why);
	if (!json_is_object(root)) {
		json_decref(root);
		return lf_fail(why, LF_EINVAL_JSON, "not a JSON object");
	}
	*obj = root;
	return LF_OK;
}

/*
 * Copy at most REASON_KEY_MAX bytes of key into buf, with anything but
 * printable ASCII (and the quote) replaced, so reasons stay one line of
 * valid UTF-8 whatever the target sent.
 */
static void quote_key(const char *key, char *buf, size_t size)
{
	size_t i;

	for (i = 0; key[i] && i < REASON_KEY_MAX && i + 1 < size; i++) {
		unsigned char c = (unsigned char)key[i];

		buf[i] = (c < 0x20 || c > 0x7e || c == '\'') ? '?' : (char)c;
	}
	buf[i] = '\0';
	if (key[i] && i + 3 < size)
		strcpy(buf + i, "...");
}

/* Refuse the first key (in line order) that is not in allowed. */
static enum lf_err check_keys(json_t *obj, const char *const *allowed,
			      const char *what, struct lf_why *why)
{
	const char *key;
	json_t *val;
	char q[REASON_KEY_MAX + 4];

	json_object_foreach(obj, key, val)
	{
		if (in_list(key, allowed))
			continue;
		quote_key(key, q, sizeof(q));
		if (in_list(key, host_owned_keys))
			return lf_fail(why, LF_EINVAL_JSON,
				       "unknown key '%s' (host-owned)", q);
		if (allowed == call_keys && in_list(key, result_only_keys))
			return lf_fail(
				why, LF_EINVAL_JSON,
				"unknown key '%s' in a call (results go to the result file)",
				q);
		return lf_fail(why, LF_EINVAL_JSON,
			       "unknown key '%s' in a %s line", q, what);
	}
	return LF_OK;
}

static bool tool_char(unsigned char c)
{
	return c >= 0x20 && c != 0x7f;
}

static bool hex_char(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/*
 * Copy the string member key (required) into out (size max + 1) when it
 * is 1..max bytes that all pass ok(); otherwise refuse with
 * "KEY must be DESC".
 */
static enum lf_err get_word(json_t *obj, const char *key, size_t max,
			    bool (*ok)(unsigned char), const char *desc,
			    char *out, struct lf_why *why)
{
	json_t *v = json_object_get(obj, key);
	const char *s;
	size_t n, i;

	if (!v)
		return lf_fail(why, LF_EINVAL_JSON, "missing %s", key);
	if (!json_is_string(v))
		return lf_fail(why, LF_EINVAL_JSON, "%s must be a string", key);
	s = json_string_value(v);
	n = json_string_length(v);
	if (n < 1 || n > max)
		return lf_fail(why, LF_EINVAL_JSON, "%s must be %s", key, desc);
	for (i = 0; i < n; i++)
		if (!ok((unsigned char)s[i]))
			return lf_fail(why, LF_EINVAL_JSON, "%s must be %s",
				       key, desc);
	memcpy(out, s, n);
	out[n] = '\0';
	return LF_OK;
}

/* A call id or case name: get_word plus the "." and ".." rule. */
static enum lf_err get_id(json_t *obj, const char *key, char *out,
			  struct lf_why *why)
{
	static const char desc[] =
		"1-128 characters of [A-Za-z0-9._:-], not '.' or '..'";
	enum lf_err rc;

	rc = get_word(obj, key, REQUEST_ID_MAX, request_id_char, desc, out,
		      why);
	if (rc)
		return rc;
	if (!request_valid_id(out, strlen(out))) {
		out[0] = '\0';
		return lf_fail(why, LF_EINVAL_JSON, "%s must be %s", key, desc);
	}
	return LF_OK;
}

static enum lf_err get_name(json_t *obj, const char *key, size_t max, char *out,
			    struct lf_why *why)
{
	enum lf_err rc;

	rc = get_word(obj, key, max, tool_char,
		      "1-256 bytes without control characters", out, why);
	if (!rc && !request_name_chars_ok(out))
		rc = lf_fail(why, LF_EINVAL_JSON,
			     "%s must be 1-256 bytes without control "
			     "characters",
			     key);
	if (!rc && request_name_blank(out))
		rc = lf_fail(why, LF_EINVAL_JSON, "%s must not be only blanks",
			     key);
	if (rc)
		out[0] = '\0';
	return rc;
}

/* An optional boolean member: *out keeps its default when absent. */
static enum lf_err get_bool(json_t *obj, const char *key, bool *out,
			    struct lf_why *why)
{
	json_t *v = json_object_get(obj, key);

	if (!v)
		return LF_OK;
	if (!json_is_boolean(v))
		return lf_fail(why, LF_EINVAL_JSON, "%s must be a boolean",
			       key);
	*out = json_is_true(v);
	return LF_OK;
}

/*
 * Reasons may quote jansson's text, which quotes the target's bytes (and
 * may cut a UTF-8 sequence); keep them printable ASCII so they are safe
 * in the `error` file and as a JSON string in a ledger row.
 */
static void clean_reason(struct lf_why *why)
{
	char *p;

	if (!why)
		return;
	for (p = why->msg; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
			*p = '?';
}

enum lf_err request_parse_call(const char *line, size_t len, size_t max_line,
			       struct request_call *out, struct lf_why *why)
{
	json_t *obj = NULL, *args;
	enum lf_err rc;

	memset(out, 0, sizeof(*out));
	rc = load_object(line, len, max_line, &obj, why);
	if (rc)
		goto out;
	rc = check_keys(obj, call_keys, "call", why);
	if (rc)
		goto out;
	rc = get_name(obj, "call_id", REQUEST_CALL_ID_MAX, out->call_id, why);
	if (rc)
		goto out;
	rc = get_name(obj, "tool", REQUEST_TOOL_MAX, out->tool, why);
	if (rc)
		goto out;
	args = json_object_get(obj, "args");
	if (!args) {
		out->args = json_object();
		if (!out->args)
			rc = lf_fail(why, LF_NOMEM, "out of memory");
	} else if (!json_is_object(args)) {
		rc = lf_fail(why, LF_EINVAL_JSON, "args must be an object");
	} else {
		out->args = json_incref(args);
	}
out:
	json_decref(obj);
	if (rc) {
		request_call_clear(out);
		clean_reason(why);
	}
	return rc;
}

enum lf_err request_parse_result(const char *line, size_t len, size_t max_line,
				 struct request_result *out, struct lf_why *why)
{
	json_t *obj = NULL, *ret;
	enum lf_err rc;

	memset(out, 0, sizeof(*out));
	/* ASSERT: a completion that does not claim execution did not execute. */
	out->real_executed = false;
	rc = load_object(line, len, max_line, &obj, why);
	if (rc)
		goto out;
	rc = check_keys(obj, result_keys, "result", why);
	if (rc)
		goto out;
	rc = get_name(obj, "call_id", REQUEST_CALL_ID_MAX, out->call_id, why);
	if (rc)
		goto out;
	rc = get_bool(obj, "is_error", &out->is_error, why);
	if (rc)
		goto out;
	rc = get_bool(obj, "real_executed", &out->real_executed, why);
	if (rc)
		goto out;
	ret = json_object_get(obj, "returned");
	/* json_null() is a singleton: a new reference all the same. */
	out->returned = ret ? json_incref(ret) : json_null();
out:
	json_decref(obj);
	if (rc) {
		request_result_clear(out);
		clean_reason(why);
	}
	return rc;
}

enum lf_err request_parse_register(const char *line, size_t len,
				   size_t max_line,
				   struct request_register *out,
				   struct lf_why *why)
{
	json_t *obj = NULL;
	enum lf_err rc;

	memset(out, 0, sizeof(*out));
	rc = load_object(line, len, max_line, &obj, why);
	if (rc)
		goto out;
	rc = check_keys(obj, register_keys, "registration", why);
	if (rc)
		goto out;
	rc = get_id(obj, "case_id", out->case_id, why);
	if (rc)
		goto out;
	rc = get_word(obj, "token", sizeof(out->token) - 1, hex_char,
		      "1-128 characters of [0-9a-f]", out->token, why);
out:
	json_decref(obj);
	if (rc) {
		memset(out, 0, sizeof(*out));
		clean_reason(why);
	}
	return rc;
}

/* Releases args and zeroes the struct; safe on a zeroed or cleared one. */
void request_call_clear(struct request_call *c)
{
	if (!c)
		return;
	json_decref(c->args);
	memset(c, 0, sizeof(*c));
}

/* Releases returned and zeroes the struct; safe on a zeroed or cleared one. */
void request_result_clear(struct request_result *r)
{
	if (!r)
		return;
	json_decref(r->returned);
	memset(r, 0, sizeof(*r));
}
