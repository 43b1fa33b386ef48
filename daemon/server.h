/*
 * The HTTP server: libmicrohttpd daemons (epoll, a thread pool each) on the
 * configured TCP addresses and on the Unix socket, turning connections into
 * http_request values for the route table and sending the responses.  It
 * also applies the access rules of each route.
 */
#ifndef DLPROF_SERVER_H
#define DLPROF_SERVER_H

#include <stddef.h>

struct app;
struct server;

struct server_options {
	char *const *listen;       /* "ADDR:PORT" */
	int nlisten;
	const char *socket_path;   /* NULL or "": none */
	size_t max_body;
	unsigned threads;          /* per listener */
	unsigned max_connections;
	unsigned connection_timeout_s;
};

/* Binds every address and starts serving; NULL after logging why. */
struct server *server_start(struct app *app, const struct server_options *opt);
/* Access settings that SIGHUP may change; strings are copied. */
void server_set_access(struct server *srv, const char *token, const char *read_access);
/* Stops accepting, lets requests in flight finish (up to a few seconds), stops. */
void server_stop(struct server *srv);

#endif
