/*
 * Route matching for router.h.  Patterns are compared segment by segment
 * against the path.  Nothing is allocated: captures are copied,
 * NUL-terminated, into the request's own param_buf.  router_handle runs
 * the handler a match found.
 */
#include "router.h"

#include "alloc_watch.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Compares one pattern segment [p, pe) with one path segment [s, se). */
static bool segment_matches(const char *p, size_t plen, const char *s, size_t slen)
{
	if (plen >= 2 && p[0] == '{' && p[plen - 1] == '}')
		return slen > 0;
	return plen == slen && memcmp(p, s, plen) == 0;
}

/*
 * Matches path against pattern.  On success the {name} captures go into
 * req->params, their values written NUL-terminated into buf.
 */
static bool pattern_matches(const char *pattern, const char *path, struct http_request *req,
			    char *buf, size_t buflen)
{
	const char *p = pattern, *s = path;
	size_t used = 0, nparams = 0;

	for (;;) {
		const char *pe, *se;
		size_t plen, slen;

		if (*p != '/' || *s != '/')
			return false;
		p++;
		s++;
		if (strcmp(p, "*") == 0)
			break;                     /* the rest of the path, whatever it is */
		pe = strchr(p, '/');
		se = strchr(s, '/');
		plen = pe ? (size_t)(pe - p) : strlen(p);
		slen = se ? (size_t)(se - s) : strlen(s);
		if (!segment_matches(p, plen, s, slen))
			return false;
		if (p[0] == '{' && plen >= 2 && p[plen - 1] == '}') {
			size_t klen = plen - 2;
			if (nparams == HTTP_MAX_PATH_PARAMS || used + klen + slen + 2 > buflen)
				return false;
			memcpy(buf + used, p + 1, klen);
			buf[used + klen] = '\0';
			req->params[nparams].key = buf + used;
			used += klen + 1;
			memcpy(buf + used, s, slen);
			buf[used + slen] = '\0';
			req->params[nparams].value = buf + used;
			used += slen + 1;
			nparams++;
		}
		p += plen;
		s += slen;
		if (*p == '\0' && *s == '\0')
			break;
		if (*p == '\0' || *s == '\0')
			return false;
	}
	req->nparams = nparams;
	return true;
}

const struct route *router_match(const struct route *table, const char *method, const char *path,
				 struct http_request *req, int *status, char *allow, size_t allow_len)
{
	size_t allow_used = 0;
	bool path_known = false;

	if (allow_len)
		allow[0] = '\0';
	for (const struct route *r = table; r->method; r++) {
		if (!pattern_matches(r->pattern, path, req, req->param_buf, sizeof(req->param_buf)))
			continue;
		if (strcmp(r->method, method) == 0 ||
		    (strcmp(method, "HEAD") == 0 && strcmp(r->method, "GET") == 0))
			return r;
		/* The static catch-all serves GET only; it makes no path "known" for 405. */
		if (strcmp(r->pattern, "/*") == 0)
			continue;
		path_known = true;
		if (allow_len > allow_used && !strstr(allow, r->method))
			allow_used += (size_t)snprintf(allow + allow_used, allow_len - allow_used, "%s%s",
						       allow_used ? ", " : "", r->method);
	}
	req->nparams = 0;
	*status = path_known ? 405 : 404;
	return NULL;
}

void router_handle(const struct route *r, const struct http_request *req, struct http_response *resp)
{
	unsigned long failures = alloc_watch_failures();

	r->handler(req, resp);
	if (alloc_watch_failures() != failures && resp->status != 503)
		http_reply_oom(resp);
	else if (resp->status == 0)
		http_reply_error(resp, 500, "internal", "the handler gave no answer");
}
