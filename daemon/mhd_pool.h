/*
 * One listening socket served by several libmicrohttpd daemons of one
 * thread each, fed by an accepting thread that hands every new connection
 * to the daemon holding the fewest.  Used in place of MHD's own thread
 * pool, whose workers all accept from the shared socket and so share
 * connections unevenly (mhd_pool.c says how, and what it cost).
 */
#ifndef DLPROF_MHD_POOL_H
#define DLPROF_MHD_POOL_H

#include <microhttpd.h>
#include <stddef.h>

struct mhd_pool;

struct mhd_pool_options {
	unsigned workers;                /* daemons, one thread each; 0: 4 */
	unsigned max_connections;        /* all workers together; more wait in the listen backlog */
	unsigned connection_timeout_s;   /* idle connections are closed after this; 0: 30 */
	size_t connection_memory;        /* MHD's memory pool per connection */
	/* MHD's callbacks, passed on to every worker as they are. */
	MHD_AcceptPolicyCallback accept_policy;
	void *accept_cls;
	MHD_AccessHandlerCallback on_request;
	void *request_cls;
	MHD_RequestCompletedCallback on_completed;
	void *completed_cls;
	MHD_NotifyConnectionCallback on_connection;
	void *connection_cls;
	MHD_LogCallback logger;           /* NULL: MHD's messages are dropped */
};

/*
 * Starts the workers and the accepting thread on listen_fd (non-blocking,
 * listening; it stays the caller's to close, after mhd_pool_stop).  NULL
 * after logging why; name is for logs.
 */
struct mhd_pool *mhd_pool_start(int listen_fd, const char *name, const struct mhd_pool_options *opt);
/* Stops accepting; connections already handed over go on being served. */
void mhd_pool_quiesce(struct mhd_pool *pool);
/* Connections open in the workers. */
unsigned mhd_pool_connections(struct mhd_pool *pool);
/* Quiesces, closes every connection, joins the threads, frees; NULL is fine. */
void mhd_pool_stop(struct mhd_pool *pool);

#endif
