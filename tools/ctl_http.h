/*
 * dlprofctl's transport: one HTTP request to dlprofd, over its Unix socket
 * or over TCP, through libcurl.  It tells "the daemon answered" (whatever
 * the status) apart from "the daemon could not be reached", because the two
 * have different exit codes.
 */
#ifndef DLPROF_CTL_HTTP_H
#define DLPROF_CTL_HTTP_H

#include <stddef.h>

/* Where the daemon is.  With socket set, url is ignored: the socket carries it. */
struct ctl_target {
	const char *url;        /* base URL, "http://host:port", no trailing slash */
	const char *socket;     /* Unix socket path, or NULL for TCP */
	const char *token;      /* bearer token, or NULL */
	long timeout_ms;        /* whole request */
};

struct ctl_reply {
	long status;            /* HTTP status */
	char *body;             /* NUL-terminated, malloc'd; "" when empty */
	size_t len;
	char *content_type;     /* malloc'd, or NULL */
};

enum ctl_result {
	CTL_ANSWERED = 0,       /* an HTTP answer came, see status */
	CTL_UNREACHABLE = -1,   /* connect/timeout/socket missing: err says why */
	CTL_FAILED = -2,        /* out of memory or a libcurl setup error */
};

/* Call once before any request (libcurl's global init is not thread-safe). */
int ctl_http_init(void);
void ctl_http_cleanup(void);

/*
 * Sends METHOD PATH (path includes the query, already escaped) with an
 * optional JSON body.  On CTL_ANSWERED the caller owns out and frees it with
 * ctl_reply_free(); otherwise err holds a one-line reason.
 */
enum ctl_result ctl_request(const struct ctl_target *t, const char *method, const char *path,
			    const char *json_body, struct ctl_reply *out, char *err, size_t errlen);
void ctl_reply_free(struct ctl_reply *r);

/* Percent-encodes s for a query component; NULL on failure.  free() it. */
char *ctl_escape(const char *s);

#endif
