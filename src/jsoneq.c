/* SPDX-License-Identifier: MIT */
/*
 * jsoneq.c - JSON value equality (see jsoneq.h).  jansson's json_equal
 * tells 2 from 2.0; the evidence gate and result repeats must not.
 */
#include "jsoneq.h"

#include <string.h>

/* JSON's own numbers: integers and reals, never booleans. */
static bool json_number(const json_t *v, double *d, json_int_t *i, bool *is_int)
{
	if (json_is_integer(v)) {
		*i = json_integer_value(v);
		*d = (double)*i;
		*is_int = true;
		return true;
	}
	if (json_is_real(v)) {
		*d = json_real_value(v);
		*is_int = false;
		return true;
	}
	return false;
}

bool json_equal_with(const json_t *a, const json_t *b, json_as_number num)
{
	double da, db;
	json_int_t ia = 0, ib = 0;
	bool inta, intb;
	size_t i;
	const char *k;
	json_t *v;

	if (!a || !b)
		return a == b;
	if (num(a, &da, &ia, &inta) && num(b, &db, &ib, &intb))
		return inta && intb ? ia == ib : da == db;
	if (json_typeof(a) != json_typeof(b))
		return false;
	switch (json_typeof(a)) {
	case JSON_STRING:
		return json_string_length(a) == json_string_length(b) &&
		       !memcmp(json_string_value(a), json_string_value(b),
			       json_string_length(a));
	case JSON_ARRAY:
		if (json_array_size(a) != json_array_size(b))
			return false;
		for (i = 0; i < json_array_size(a); i++)
			if (!json_equal_with(json_array_get(a, i),
					     json_array_get(b, i), num))
				return false;
		return true;
	case JSON_OBJECT:
		if (json_object_size(a) != json_object_size(b))
			return false;
		json_object_foreach((json_t *)a, k, v)
		{
			if (!json_equal_with(v, json_object_get(b, k), num))
				return false;
		}
		return true;
	default:
		return true; /* true, false, null: same type is same value */
	}
}

bool json_value_equal(const json_t *a, const json_t *b)
{
	return json_equal_with(a, b, json_number);
}

void json_copy_keys(json_t *dst, const json_t *src, const char *const *keys,
		    size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		json_t *v = json_object_get(src, keys[i]);

		if (v)
			json_object_set(dst, keys[i], v);
	}
}
