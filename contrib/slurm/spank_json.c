/*
 * The SPANK plugin's JSON scanner: validates a text by skipping over it
 * (RFC 8259 grammar, nesting bounded) and then walks objects and arrays by
 * skipping from member to member.  Texts are the daemon's short answers, so
 * re-scanning for each lookup costs nothing that matters.
 */
#include "spank_json.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SJ_MAX_DEPTH 64

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

static int is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Past the closing quote of the string at p (which is '"'); NULL if malformed. */
static const char *skip_string(const char *p, const char *end)
{
	for (p++; p < end; p++) {
		if (*p == '"')
			return p + 1;
		if ((unsigned char)*p < 0x20)
			return NULL;
		if (*p != '\\')
			continue;
		if (++p >= end)
			return NULL;
		if (*p == 'u') {
			if (end - p < 5 || !is_hex(p[1]) || !is_hex(p[2]) || !is_hex(p[3]) || !is_hex(p[4]))
				return NULL;
			p += 4;
		} else if (!strchr("\"\\/bfnrt", *p)) {
			return NULL;
		}
	}
	return NULL;
}

static const char *skip_digits(const char *p, const char *end, int need_one)
{
	const char *start = p;

	while (p < end && *p >= '0' && *p <= '9')
		p++;
	return need_one && p == start ? NULL : p;
}

static const char *skip_number(const char *p, const char *end)
{
	if (p < end && *p == '-')
		p++;
	if (p < end && *p == '0')
		p++;
	else if (!(p = skip_digits(p, end, 1)))
		return NULL;
	if (p < end && *p == '.' && !(p = skip_digits(p + 1, end, 1)))
		return NULL;
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		if (!(p = skip_digits(p, end, 1)))
			return NULL;
	}
	return p;
}

static const char *skip_value(const char *p, const char *end, int depth);

/* Skips an array or object starting at p ('[' or '{'). */
static const char *skip_container(const char *p, const char *end, int depth)
{
	char close = *p == '[' ? ']' : '}';
	int object = *p == '{';

	if (depth > SJ_MAX_DEPTH)
		return NULL;
	p = skip_ws(p + 1, end);
	if (p < end && *p == close)
		return p + 1;
	for (;;) {
		if (object) {
			if (p >= end || *p != '"' || !(p = skip_string(p, end)))
				return NULL;
			p = skip_ws(p, end);
			if (p >= end || *p != ':')
				return NULL;
			p = skip_ws(p + 1, end);
		}
		if (!(p = skip_value(p, end, depth + 1)))
			return NULL;
		p = skip_ws(p, end);
		if (p < end && *p == ',') {
			p = skip_ws(p + 1, end);
			continue;
		}
		return p < end && *p == close ? p + 1 : NULL;
	}
}

static const char *skip_literal(const char *p, const char *end, const char *word)
{
	size_t n = strlen(word);

	return (size_t)(end - p) >= n && memcmp(p, word, n) == 0 ? p + n : NULL;
}

static const char *skip_value(const char *p, const char *end, int depth)
{
	if (p >= end)
		return NULL;
	switch (*p) {
	case '"': return skip_string(p, end);
	case '[':
	case '{': return skip_container(p, end, depth);
	case 't': return skip_literal(p, end, "true");
	case 'f': return skip_literal(p, end, "false");
	case 'n': return skip_literal(p, end, "null");
	default: return skip_number(p, end);
	}
}

int sj_parse(const char *text, struct sj_value *out)
{
	const char *end = text + strlen(text);
	const char *p = skip_ws(text, end), *q;

	q = skip_value(p, end, 0);
	if (!q || skip_ws(q, end) != end)
		return -1;
	out->p = p;
	out->end = q;
	return 0;
}

/* Unescapes the string value at v into buf; -1 if it does not fit. */
static int unescape(const char *p, const char *end, char *buf, size_t len)
{
	size_t n = 0;

	for (p++; p < end && *p != '"'; p++) {
		char c = *p;
		if (c == '\\') {
			static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
			p++;
			if (*p == 'u') {
				char hex[5] = {p[1], p[2], p[3], p[4], 0};
				long code = strtol(hex, NULL, 16);
				c = code > 0 && code < 0x80 ? (char)code : '?';
				p += 4;
			} else {
				c = to[strchr(from, *p) - from];
			}
		}
		if (n + 1 >= len)
			return -1;
		buf[n++] = c;
	}
	if (len == 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

int sj_next(const struct sj_value *c, const char **cursor, char *key, size_t keylen,
	    struct sj_value *out)
{
	int object = c->p < c->end && *c->p == '{';
	const char *p = *cursor ? *cursor : c->p + 1;

	if (c->p >= c->end || (*c->p != '{' && *c->p != '['))
		return -1;
	p = skip_ws(p, c->end);
	if (p < c->end && *p == ',')
		p = skip_ws(p + 1, c->end);
	if (p >= c->end || *p == '}' || *p == ']')
		return 0;
	if (object) {
		const char *k = p;
		if (*p != '"' || !(p = skip_string(p, c->end)))
			return -1;
		if (key && unescape(k, p, key, keylen) < 0)
			key[0] = '\0';   /* too long to match any key we look for */
		p = skip_ws(p, c->end);
		if (p >= c->end || *p != ':')
			return -1;
		p = skip_ws(p + 1, c->end);
	}
	out->p = p;
	out->end = skip_value(p, c->end, 0);
	if (!out->end)
		return -1;
	*cursor = out->end;
	return 1;
}

int sj_get(const struct sj_value *obj, const char *key, struct sj_value *out)
{
	const char *cursor = NULL;
	char k[128];
	int rc;

	if (obj->p >= obj->end || *obj->p != '{')
		return -1;
	while ((rc = sj_next(obj, &cursor, k, sizeof(k), out)) == 1)
		if (strcmp(k, key) == 0)
			return 0;
	return -1;
}

int sj_int(const struct sj_value *v, long long *out)
{
	char buf[32], *end;
	size_t n = (size_t)(v->end - v->p);

	if (n == 0 || n >= sizeof(buf) || !(*v->p == '-' || (*v->p >= '0' && *v->p <= '9')))
		return -1;
	memcpy(buf, v->p, n);
	buf[n] = '\0';
	errno = 0;
	*out = strtoll(buf, &end, 10);
	return errno || *end ? -1 : 0;
}

int sj_text(const struct sj_value *v, char *buf, size_t len)
{
	size_t n = (size_t)(v->end - v->p);

	if (v->p >= v->end || len == 0)
		return -1;
	if (*v->p == '"')
		return unescape(v->p, v->end, buf, len);
	if (*v->p == '{' || *v->p == '[' || *v->p == 'n' || n >= len)
		return -1;
	memcpy(buf, v->p, n);
	buf[n] = '\0';
	return 0;
}
