/*
 * The HTTP server: libmicrohttpd daemons (epoll, a thread pool each) on the
 * configured TCP addresses and on the Unix socket, turning connections into
 * http_request values for the route table and sending the responses.  It
 * also applies the access rules of each route and the limits that keep one
 * client from starving the others: connections per remote address, a rate
 * of mutating requests per client (429), and a budget of request bodies
 * held in memory at once (503).
 */
#ifndef DLPROF_SERVER_H
#define DLPROF_SERVER_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "router.h"

struct app;
struct server;

struct server_options {
	char *const *listen;            /* "ADDR:PORT" */
	int nlisten;
	const char *socket_path;        /* NULL or "": none */
	bool socket_optional;           /* the default path: TCP alone where it cannot be made */
	size_t max_body;
	unsigned threads;               /* per listener */
	unsigned max_connections;       /* per listener */
	unsigned connection_timeout_s;  /* idle connections are closed after this */
	unsigned max_connections_per_ip;/* per non-loopback address; 0: no limit */
	double ingest_rate;             /* mutating requests per second per client; 0: no limit */
	double ingest_burst;            /* requests a client may send at once; 0: max(1, rate) */
};

/* Binds every address and starts serving; NULL after logging why. */
struct server *server_start(struct app *app, const struct server_options *opt);
/* Access settings that SIGHUP may change; strings are copied. */
void server_set_access(struct server *srv, const char *token, enum read_access read_access);
/* Stops accepting, lets requests in flight finish (up to a few seconds), stops. */
void server_stop(struct server *srv);

/*
 * The access rule, pure for tests: whether peer may call a route of the
 * given access under read_access.  Mutations
 * need loopback, the Unix socket or the bearer token; reads what
 * read_access says.  Fills resp with a 403 when not.
 */
bool server_access_check(enum route_access access, const struct http_peer *peer, enum read_access read_access,
			 struct http_response *resp);
/* Compares a presented token with the secret in time independent of where they differ. */
bool server_token_equal(const char *given, const char *secret);

#endif
