/*
 * Route matching.  A route table is an array of rows ending in a row whose
 * method is NULL.  Patterns are literal segments, "{name}" capturing one
 * segment, or a final "*" matching the rest (static files).  Matching is
 * pure: no I/O, no allocation, so it is unit-tested and fuzzed alone.
 */
#ifndef DLPROF_ROUTER_H
#define DLPROF_ROUTER_H

#include "http.h"

/* Who may call a route. */
enum route_access {
	ACCESS_READ,    /* read_access setting decides: any, local or token */
	ACCESS_MUTATE,  /* loopback, Unix socket, or bearer token */
};

typedef void (*route_handler)(const struct http_request *req, struct http_response *resp);

struct route {
	const char *method;
	const char *pattern;
	route_handler handler;
	enum route_access access;
};

/*
 * Finds the row for method and path.  Returns it and fills req->params, or
 * returns NULL with *status 404 (no pattern matched) or 405 (the path exists
 * for another method; allow receives the methods, comma-separated).
 */
const struct route *router_match(const struct route *table, const char *method, const char *path,
				 struct http_request *req, int *status, char *allow, size_t allow_len);

/*
 * Runs r's handler on req: an answer always (500 when the handler gave
 * none), and 503 out_of_memory when an allocation of this thread failed
 * while the handler ran (alloc_watch.h): an answer built then may lack a
 * member it promises, so it is never sent as it stands.
 */
void router_handle(const struct route *r, const struct http_request *req, struct http_response *resp);

/* The daemon's route table. */
extern const struct route dlprof_routes[];

#endif
