/*
 * Text forms of JSON values for dlprofctl's human-readable output.  Every
 * function writes into a caller's buffer and never fails: text that does
 * not fit is cut and marked with "...".
 */
#include "ctl_format.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Appends text at *off, marking a cut with "..."; keeps buf terminated. */
static void append(char *buf, size_t len, size_t *off, const char *text)
{
	size_t n = strlen(text);

	if (*off >= len)
		return;
	if (*off + n + 1 > len) {
		snprintf(buf + *off, len - *off, "%s", text);
		if (len >= 4)
			memcpy(buf + len - 4, "...", 4);
		*off = len;
		return;
	}
	memcpy(buf + *off, text, n + 1);
	*off += n;
}

const char *ctl_fmt_scalar(const json_t *v, char *buf, size_t len)
{
	if (!v || json_is_null(v))
		snprintf(buf, len, "-");
	else if (json_is_string(v))
		snprintf(buf, len, "%s", json_string_value(v));
	else if (json_is_integer(v))
		snprintf(buf, len, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, len, "%.4g", json_real_value(v));
	else if (json_is_boolean(v))
		snprintf(buf, len, "%s", json_is_true(v) ? "true" : "false");
	else {
		char *text = json_dumps(v, JSON_COMPACT);
		snprintf(buf, len, "%s", text ? text : "?");
		free(text);
	}
	return buf;
}

static void fmt_members(const json_t *obj, const char *prefix, char *buf, size_t len, size_t *off)
{
	const char *key;
	json_t *v;
	char val[256];

	json_object_foreach((json_t *)obj, key, v) {
		if (json_is_object(v)) {
			/* {"phases": {"lstm": {...}}} prints as lstm:knob=value. */
			const char *sub_key;
			json_t *sub;
			json_object_foreach(v, sub_key, sub) {
				char pfx[160];
				if (!json_is_object(sub))
					continue;
				snprintf(pfx, sizeof(pfx), "%s:", sub_key);
				fmt_members(sub, pfx, buf, len, off);
			}
			continue;
		}
		if (*off > 0)
			append(buf, len, off, " ");
		append(buf, len, off, prefix);
		append(buf, len, off, key);
		append(buf, len, off, "=");
		append(buf, len, off, ctl_fmt_scalar(v, val, sizeof(val)));
	}
}

const char *ctl_fmt_object(const json_t *obj, char *buf, size_t len)
{
	size_t off = 0;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	if (!json_is_object(obj) || json_object_size(obj) == 0) {
		snprintf(buf, len, "-");
		return buf;
	}
	fmt_members(obj, "", buf, len, &off);
	if (buf[0] == '\0')
		snprintf(buf, len, "-");
	return buf;
}

const char *ctl_fmt_time(const json_t *v, char *buf, size_t len)
{
	struct tm tm;
	time_t t;

	if (!json_is_number(v)) {
		snprintf(buf, len, "-");
		return buf;
	}
	t = (time_t)json_number_value(v);
	if (!localtime_r(&t, &tm) || strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm) == 0)
		snprintf(buf, len, "%lld", (long long)t);
	return buf;
}

json_t *ctl_list(json_t *answer, const char *key)
{
	json_t *list;

	if (json_is_array(answer))
		return answer;
	list = json_object_get(answer, key);
	return json_is_array(list) ? list : NULL;
}

json_t *ctl_get_any(const json_t *obj, const char *const *names)
{
	for (; *names; names++) {
		json_t *v = json_object_get(obj, *names);
		if (v && !json_is_null(v))
			return v;
	}
	return NULL;
}

void ctl_print_field(const char *name, const char *value, int width)
{
	printf("%-*s  %s\n", width, name, value);
}
