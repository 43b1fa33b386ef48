/*
 * dlprofctl's HTTP transport over libcurl: builds the URL (the configured
 * base, or http://localhost through the Unix socket with
 * CURLOPT_UNIX_SOCKET_PATH), sends the request, collects the body, and
 * classifies failures as "unreachable" so the caller can exit with the
 * daemon-down code.
 */
#include "ctl_http.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Growing buffer that libcurl's write callback appends to. */
struct buf {
	char *data;
	size_t len;
	size_t cap;
	int oom;
};

/* Bodies larger than this are a broken daemon, not something to print. */
#define CTL_MAX_BODY (64u << 20)

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *user)
{
	struct buf *b = user;
	size_t n = size * nmemb;

	if (b->len + n + 1 > CTL_MAX_BODY) {
		b->oom = 1;
		return 0;
	}
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *p;
		while (cap < b->len + n + 1)
			cap *= 2;
		p = realloc(b->data, cap);
		if (!p) {
			b->oom = 1;
			return 0;
		}
		b->data = p;
		b->cap = cap;
	}
	memcpy(b->data + b->len, ptr, n);
	b->len += n;
	b->data[b->len] = '\0';
	return n;
}

int ctl_http_init(void)
{
	return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -1;
}

void ctl_http_cleanup(void)
{
	curl_global_cleanup();
}

/* Errors that mean "nobody answered", as opposed to a misuse of libcurl. */
static int curl_unreachable(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_GOT_NOTHING:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PARTIAL_FILE:
		return 1;
	default:
		return 0;
	}
}

static struct curl_slist *build_headers(const struct ctl_target *t, const char *json_body)
{
	struct curl_slist *h = NULL, *next;
	char auth[1024];

	next = curl_slist_append(h, "Accept: application/json, text/plain");
	if (!next)
		return NULL;
	h = next;
	if (json_body) {
		next = curl_slist_append(h, "Content-Type: application/json");
		if (!next)
			goto fail;
		h = next;
	}
	if (t->token && t->token[0]) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", t->token);
		next = curl_slist_append(h, auth);
		if (!next)
			goto fail;
		h = next;
	}
	return h;
fail:
	curl_slist_free_all(h);
	return NULL;
}

/* Sets every option of one request; returns the first libcurl error. */
static CURLcode set_options(CURL *c, const struct ctl_target *t, const char *method,
			    const char *url, const char *json_body, struct curl_slist *headers,
			    struct buf *body, char *errbuf)
{
	CURLcode rc[16];
	size_t n = 0;

	rc[n++] = curl_easy_setopt(c, CURLOPT_URL, url);
	rc[n++] = curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	rc[n++] = curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	rc[n++] = curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, t->timeout_ms);
	rc[n++] = curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, t->timeout_ms);
	rc[n++] = curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
	rc[n++] = curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	rc[n++] = curl_easy_setopt(c, CURLOPT_WRITEDATA, body);
	rc[n++] = curl_easy_setopt(c, CURLOPT_USERAGENT, "dlprofctl/" PACKAGE_VERSION);
	if (t->socket)
		rc[n++] = curl_easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, t->socket);
	if (json_body || strcmp(method, "POST") == 0) {
		/* A POST without a body still sends Content-Length: 0. */
		rc[n++] = curl_easy_setopt(c, CURLOPT_POSTFIELDS, json_body ? json_body : "");
		rc[n++] = curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, json_body ? (long)strlen(json_body) : 0L);
	}
	if (strcmp(method, "GET") != 0 && strcmp(method, "POST") != 0)
		rc[n++] = curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	for (size_t i = 0; i < n; i++)
		if (rc[i] != CURLE_OK)
			return rc[i];
	return CURLE_OK;
}

static int fill_reply(CURL *c, struct buf *body, struct ctl_reply *out)
{
	char *ct = NULL;

	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
	if (curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct) {
		out->content_type = strdup(ct);
		if (!out->content_type)
			return -1;
	}
	if (!body->data) {
		body->data = strdup("");
		if (!body->data)
			return -1;
	}
	out->body = body->data;
	out->len = body->len;
	body->data = NULL;
	return 0;
}

enum ctl_result ctl_request(const struct ctl_target *t, const char *method, const char *path,
			    const char *json_body, struct ctl_reply *out, char *err, size_t errlen)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	struct buf body = {0};
	struct curl_slist *headers = NULL;
	enum ctl_result result = CTL_FAILED;
	const char *base;
	char *url = NULL;
	CURL *c = NULL;
	CURLcode rc;

	memset(out, 0, sizeof(*out));
	snprintf(err, errlen, "out of memory");
	base = t->socket ? "http://localhost" : t->url;
	url = malloc(strlen(base) + strlen(path) + 1);
	if (!url)
		goto fail;
	strcpy(url, base);
	strcat(url, path);
	c = curl_easy_init();
	headers = build_headers(t, json_body);
	if (!c || !headers)
		goto fail;
	rc = set_options(c, t, method, url, json_body, headers, &body, errbuf);
	if (rc == CURLE_OK)
		rc = curl_easy_perform(c);
	if (rc != CURLE_OK) {
		long os_errno = 0;
		curl_easy_getinfo(c, CURLINFO_OS_ERRNO, &os_errno);
		/* Over the socket curl names "localhost port 80": the errno says more. */
		if (t->socket && os_errno)
			snprintf(err, errlen, "%s", strerror((int)os_errno));
		else
			snprintf(err, errlen, "%s", body.oom ? "answer too large" :
				 errbuf[0] ? errbuf : curl_easy_strerror(rc));
		if (curl_unreachable(rc))
			result = CTL_UNREACHABLE;
		goto fail;
	}
	if (fill_reply(c, &body, out) < 0) {
		ctl_reply_free(out);
		goto fail;
	}
	result = CTL_ANSWERED;
fail:
	free(body.data);
	curl_slist_free_all(headers);
	if (c)
		curl_easy_cleanup(c);
	free(url);
	return result;
}

void ctl_reply_free(struct ctl_reply *r)
{
	free(r->body);
	free(r->content_type);
	memset(r, 0, sizeof(*r));
}

char *ctl_escape(const char *s)
{
	char *e = curl_easy_escape(NULL, s, 0);
	char *copy;

	if (!e)
		return NULL;
	/* curl's memory must go back to curl_free; callers use free(). */
	copy = strdup(e);
	curl_free(e);
	return copy;
}
