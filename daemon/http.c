/*
 * Request accessors and response builders shared by every handler.  Pure:
 * no server types, so handlers run the same under tests and fuzzers.
 */
#include "http.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_watch.h"

const char *http_query(const struct http_request *req, const char *key)
{
	for (size_t i = 0; i < req->nquery; i++)
		if (strcmp(req->query[i].key, key) == 0)
			return req->query[i].value ? req->query[i].value : "";
	return NULL;
}

const char *http_param(const struct http_request *req, const char *key)
{
	for (size_t i = 0; i < req->nparams; i++)
		if (strcmp(req->params[i].key, key) == 0)
			return req->params[i].value;
	return NULL;
}

void http_response_clear(struct http_response *resp)
{
	free(resp->body);
	if (resp->stream.arg != NULL)
		resp->stream.cancel(resp->stream.arg);
	for (size_t i = 0; i < resp->nheaders; i++)
		free((char *)resp->headers[i].value);
	memset(resp, 0, sizeof(*resp));
}

void http_reply_oom(struct http_response *resp)
{
	static const char text[] = "{\"error\":\"out_of_memory\",\"detail\":"
				   "\"the daemon ran out of memory building the answer; retry shortly\"}\n";

	/* Whatever the handler had set (its headers too) belongs to the answer that failed. */
	http_response_clear(resp);
	resp->status = 503;
	resp->content_type = "application/json";
	if ((resp->body = strdup(text)))
		resp->body_len = sizeof(text) - 1;
	http_add_header(resp, "Retry-After", "1");
}

void http_reply_text(struct http_response *resp, int status, const char *content_type,
		     char *body_stolen, size_t len)
{
	if (!body_stolen && len > 0) {
		http_reply_oom(resp);   /* the caller's allocation of the body failed */
		return;
	}
	free(resp->body);
	resp->status = status;
	resp->content_type = content_type;
	resp->body = body_stolen;
	resp->body_len = len;
}

char *http_json_text(json_t *body_stolen, size_t *len)
{
	/*
	 * JSON_ENSURE_ASCII: every string escaped, safe in any context.  16
	 * digits keep unix timestamps to the microsecond.
	 */
	char *text = json_dumps(body_stolen, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(16)), *nl;

	json_decref(body_stolen);
	if (!text)
		return NULL;
	*len = strlen(text);
	/* A trailing newline makes curl output readable. */
	if ((nl = realloc(text, *len + 2)) != NULL) {
		text = nl;
		text[(*len)++] = '\n';
		text[*len] = '\0';
	}
	return text;
}

void http_reply_json(struct http_response *resp, int status, json_t *body_stolen)
{
	size_t len;
	char *text = http_json_text(body_stolen, &len);

	if (!text) {
		/* body_stolen NULL (its json_pack failed) or json_dumps failed: memory ran out. */
		http_reply_oom(resp);
		return;
	}
	http_reply_text(resp, status, "application/json", text, len);
}

/* Length of the valid UTF-8 sequence at s (RFC 3629: no overlongs, surrogates or > U+10FFFF), or 0. */
static size_t utf8_sequence(const unsigned char *s)
{
	size_t n;
	unsigned long cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	cp = s[0] & (0x7fu >> n);
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/*
 * Replaces each byte that is not part of valid UTF-8 with '?'.  Details
 * quote what clients sent (a path, a JSON parser's message) and may have cut
 * a character in two; jansson refuses such strings, which would turn a 4xx
 * into a 500.
 */
static void utf8_scrub(char *text)
{
	unsigned char *s = (unsigned char *)text;

	while (*s) {
		size_t n = utf8_sequence(s);
		if (n == 0) {
			*s++ = '?';
			continue;
		}
		s += n;
	}
}

void http_reply_error(struct http_response *resp, int status, const char *error, const char *detail_fmt, ...)
{
	char detail[512];
	va_list ap;

	va_start(ap, detail_fmt);
	vsnprintf(detail, sizeof(detail), detail_fmt, ap);
	va_end(ap);
	utf8_scrub(detail);
	http_reply_json(resp, status, json_pack("{s:s, s:s}", "error", error, "detail", detail));
}

void http_add_header(struct http_response *resp, const char *name_static, const char *value)
{
	if (resp->nheaders == HTTP_MAX_HEADERS)
		return;
	resp->headers[resp->nheaders].key = name_static;
	resp->headers[resp->nheaders].value = strdup(value);
	if (resp->headers[resp->nheaders].value)
		resp->nheaders++;
	else
		alloc_watch_note();   /* an answer without its header is not sent (router_handle) */
}

json_t *http_parse_json_body(const struct http_request *req, struct http_response *resp)
{
	json_error_t err;
	json_t *v;

	if (req->content_type && strncmp(req->content_type, "application/json", 16) != 0) {
		http_reply_error(resp, 415, "unsupported_media_type",
				 "the body must be application/json, not %s", req->content_type);
		return NULL;
	}
	if (req->body_len == 0) {
		http_reply_error(resp, 400, "bad_request", "the body is empty; a JSON object was expected");
		return NULL;
	}
	v = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, &err);
	if (!v) {
		http_reply_error(resp, 400, "bad_json", "line %d column %d: %s", err.line, err.column, err.text);
		return NULL;
	}
	if (!json_is_object(v)) {
		json_decref(v);
		http_reply_error(resp, 400, "bad_request", "the body must be a JSON object");
		return NULL;
	}
	return v;
}
