/*
 * The cluster store: what one node learns, every node of its hardware
 * class knows.  Trials completed here leave through the node's outbox
 * (store_cluster.h) for a shared PostgreSQL database; the trials other
 * nodes of the same class sent there are pulled and taught to the tuner.
 * All of it runs in one thread of its own: libpq is never called from a
 * request or the sampler, and a database that is down, slow, unreachable
 * or read-only only delays what is shared.
 *
 * Updates are pulled on LISTEN/NOTIFY, with a poll every few seconds as a
 * safety net (a notification sent while the connection was down is lost);
 * or, on sites too large for every node to listen, by a jittered poll only.
 */
#ifndef DLPROF_CLUSTER_H
#define DLPROF_CLUSTER_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "config.h"

struct cluster;
struct cluster_ranks;
struct store;
struct tuner;

struct cluster_options {
	const char *conninfo;      /* libpq conninfo string or postgresql:// URI */
	const char *node;          /* this node's name in the shared store */
	const char *hw_class;      /* node_info.hw_class: whose trials this node learns from */
	long outbox_limit;         /* trials kept waiting while the database is away */
	bool listen;               /* LISTEN for other nodes' pushes; false: poll only */
	double poll_interval_s;    /* between pulls when nothing is notified (> 0) */
};

/*
 * Turns the outbox on and starts the thread; connecting is the thread's
 * job, so an unreachable database does not fail the start.  NULL after
 * logging why (no thread, no memory).
 */
struct cluster *cluster_start(struct store *st, struct tuner *t, const struct cluster_options *opt);
/* Stops the thread (promptly, even mid-connect or mid-query) and frees c; NULL is fine. */
void cluster_stop(struct cluster *c);

/*
 * The state of the link, as a new JSON object: {"configured","connected",
 * "updates","poll_interval","node","hw_class","store_id","schema_version","error","pushed","pulled",
 * "outbox":{"waiting","dropped"},"last_pull","other_classes":{"asked",
 * "answered","dropped"},"ranks":{"pushed","read","jobs","last_read"}}
 * (ranks: cluster_ranks_status).  Never waits on the database.
 */
json_t *cluster_status(struct cluster *c);

/*
 * The tuner's other_ask (tuner_set_other_ask, ctx the cluster): queues a
 * question about what other hardware classes measured of a workload
 * variant for the thread, and returns at once; the thread gives the answer
 * to tuner_learn_other_class.  Bounded and rate-limited (cluster.c).
 */
void cluster_ask_other_classes(void *ctx, const char *workload, const json_t *params, enum objective objective);

/* The distributed jobs' ranks shared through the store (cluster_ranks.h); NULL when c is NULL. */
struct cluster_ranks *cluster_ranks_of(struct cluster *c);

/* The link's figures for GET /metrics (dlprofd_cluster_*), in Prometheus text. */
void cluster_prometheus(struct cluster *c, FILE *out);

/*
 * What the shared store knows, as last read by the thread (a new JSON
 * object): {"as_of","workloads":[{"name","trials","nodes","jobs","classes",
 * "variants":[{"params","objective","hw_class","trials","nodes","jobs",
 * "updated","best":{"config","value","trials"}|null}]}]}; only the workload
 * called name when name is not NULL (NULL when none).  The thread reads the
 * view only when asked: this asks for a fresh one when the view is older
 * than 2 s and answers the one there is ("as_of" null: none yet); it never
 * waits for the database.
 */
json_t *cluster_workloads(struct cluster *c, const char *name);

#endif
