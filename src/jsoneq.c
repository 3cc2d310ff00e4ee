/* SPDX-License-Identifier: MIT */
/*
 * jsoneq.c - JSON value equality (see jsoneq.h).  jansson's json_equal
 * tells 2 from 2.0; the evidence gate and result repeats must not.
 */
#include "jsoneq.h"

#include <string.h>

bool json_value_equal(const json_t *a, const json_t *b)
{
	size_t i;
	const char *k;
	json_t *v;

	if (!a || !b)
		return a == b;
	if (json_is_number(a) && json_is_number(b)) {
		if (json_is_integer(a) && json_is_integer(b))
			return json_integer_value(a) == json_integer_value(b);
		return json_number_value(a) == json_number_value(b);
	}
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
			if (!json_value_equal(json_array_get(a, i),
					      json_array_get(b, i)))
				return false;
		return true;
	case JSON_OBJECT:
		if (json_object_size(a) != json_object_size(b))
			return false;
		json_object_foreach(
			(json_t *)a, k,
			v) if (!json_value_equal(v,
						 json_object_get(
							 b, k))) return false;
		return true;
	default:
		return true; /* true, false, null: same type is same value */
	}
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
