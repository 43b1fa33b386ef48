/*
 * One request through the daemon's route table, as server.c runs it after
 * its access checks (router_match, then router_handle), for unit tests that
 * drive handlers without a server: a loopback caller of the test's own uid.
 */
#ifndef DLPROF_TEST_ROUTE_CALL_H
#define DLPROF_TEST_ROUTE_CALL_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "router.h"

struct route_answer {
	int status;
	char *body;        /* the caller frees it */
	size_t len;
	size_t nheaders;
};

/* method target (path?query) with body (JSON, or NULL) against app; the route must exist. */
static inline struct route_answer
route_call(struct app *app, const char *method, const char *target, const char *body)
{
	struct http_request req;
	struct http_response resp = {0};
	struct route_answer a;
	char path[256], query[512], *q, *save = NULL;
	const struct route *r;
	char allow[64];
	int status;

	memset(&req, 0, sizeof(req));
	snprintf(path, sizeof(path), "%s", target);
	query[0] = '\0';
	if ((q = strchr(path, '?'))) {
		*q = '\0';
		snprintf(query, sizeof(query), "%s", q + 1);
	}
	for (char *kv = strtok_r(query, "&", &save); kv && req.nquery < HTTP_MAX_QUERY_ARGS;
	     kv = strtok_r(NULL, "&", &save)) {
		char *eq = strchr(kv, '=');
		if (eq)
			*eq = '\0';
		req.query[req.nquery].key = kv;
		req.query[req.nquery++].value = eq ? eq + 1 : "";
	}
	req.method = method;
	req.path = path;
	req.body = body ? body : "";
	req.body_len = body ? strlen(body) : 0;
	req.content_type = body ? "application/json" : NULL;
	req.peer.loopback = true;
	req.peer.has_uid = true;
	req.peer.uid = getuid();
	req.app = app;
	r = router_match(dlprof_routes, method, path, &req, &status, allow, sizeof(allow));
	assert_non_null(r);
	router_handle(r, &req, &resp);
	a.status = resp.status;
	a.nheaders = resp.nheaders;
	a.len = resp.body_len;
	a.body = resp.body;
	resp.body = NULL;
	http_response_clear(&resp);
	return a;
}

#endif
