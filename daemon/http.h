/*
 * The request and response that route handlers see.  They carry no
 * libmicrohttpd types, so handlers, the router and their tests run without a
 * server; server.c fills a request from a connection and sends the response.
 */
#ifndef DLPROF_HTTP_H
#define DLPROF_HTTP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct app;

#define HTTP_MAX_QUERY_ARGS 32
#define HTTP_MAX_PATH_PARAMS 4

struct http_kv {
	const char *key;
	const char *value;
};

/*
 * Who sent a request.  uid is known for the Unix socket (SO_PEERCRED) and,
 * on routes that change something, for loopback TCP (the kernel's socket
 * table, peer_uid.c).
 */
struct http_peer {
	bool loopback;      /* TCP from 127.0.0.0/8 or ::1 */
	bool unix_socket;   /* came through the Unix socket listener */
	bool has_uid;       /* uid below is valid */
	uid_t uid;          /* peer's uid */
	bool token_ok;      /* presented the configured bearer token */
	char addr[64];      /* printable address, for logs */
};

struct http_request {
	const char *method;                           /* "GET", "POST", ... */
	const char *path;                             /* decoded, without the query */
	const char *content_type;                     /* NULL when absent */
	const char *body;                             /* NUL-terminated; "" when none */
	size_t body_len;
	struct http_kv query[HTTP_MAX_QUERY_ARGS];    /* decoded query arguments */
	size_t nquery;
	struct http_kv params[HTTP_MAX_PATH_PARAMS];  /* {name} captures of the route */
	size_t nparams;
	char param_buf[256];                          /* storage of the captures */
	struct http_peer peer;
	struct app *app;                              /* the daemon's state */
};

#define HTTP_MAX_HEADERS 4

/*
 * A body produced while it is sent (live.h's event streams): start gives
 * server.c the libmicrohttpd response for the connection and takes arg
 * over; cancel frees an arg that was never started.
 */
struct http_stream {
	void *(*start)(void *arg, void *conn);
	void (*cancel)(void *arg);
	void *arg;                                    /* NULL: no stream */
};

/* A response owns its body (malloc'd) until server.c sends it. */
struct http_response {
	int status;
	const char *content_type;                     /* static string */
	char *body;
	size_t body_len;
	struct http_kv headers[HTTP_MAX_HEADERS];     /* static names, owned values */
	size_t nheaders;
	struct http_stream stream;                    /* instead of body, when arg is set */
};

/* The query argument named key, or NULL. */
const char *http_query(const struct http_request *req, const char *key);
/* The route's {key} capture, or NULL. */
const char *http_param(const struct http_request *req, const char *key);

/* Replies: each replaces what the response held before. */
void http_reply_json(struct http_response *resp, int status, json_t *body_stolen);
/* The text http_reply_json sends for body (taken), malloc'd, its length in *len; NULL when memory ran out. */
char *http_json_text(json_t *body_stolen, size_t *len);
void http_reply_error(struct http_response *resp, int status, const char *error,
		      const char *detail_fmt, ...) __attribute__((format(printf, 4, 5)));
/* A NULL body of nonzero length is an allocation that failed: the answer becomes http_reply_oom's. */
void http_reply_text(struct http_response *resp, int status, const char *content_type,
		     char *body_stolen, size_t len);
/* 503 out_of_memory with Retry-After, replacing everything the response held. */
void http_reply_oom(struct http_response *resp);
/* Adds a header; value is copied. */
void http_add_header(struct http_response *resp, const char *name_static, const char *value);
void http_response_clear(struct http_response *resp);

/*
 * Parses a JSON object body.  On failure replies 415 (not JSON) or 400 (bad
 * JSON, not an object) and returns NULL.
 */
json_t *http_parse_json_body(const struct http_request *req, struct http_response *resp);

#endif
