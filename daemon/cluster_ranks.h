/*
 * The ranks of distributed jobs through the cluster store: a job whose
 * ranks run on several nodes is seen whole from each of them.  Each node
 * shares the ranks it holds (their rows leave through the ranks' outbox,
 * sql/013, for sql/cluster/002's dlprofd_ranks, keyed by the job's shared
 * identity, its external id, and the rank) and reads back the other nodes'
 * ranks of its own distributed jobs into a cache.  The cluster thread
 * (cluster.c) does all of the database work; requests, the ingest and the
 * diagnosis read the cache and never wait on PostgreSQL.
 */
#ifndef DLPROF_CLUSTER_RANKS_H
#define DLPROF_CLUSTER_RANKS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct cluster_pg;
struct cluster_ranks;
struct rank_row;
struct store;

/* The cache, empty; store_id and node name this node in the shared store.  NULL after logging. */
struct cluster_ranks *cluster_ranks_new(struct store *st, const char *store_id, const char *node);
void cluster_ranks_free(struct cluster_ranks *r);

/*
 * The cluster thread, connected: pushes the ranks' outbox and refreshes
 * the cache when each is due (a failure leaves the rows waiting and the
 * cache as it was); returns the monotonic time it is next due.
 */
double cluster_ranks_serve(struct cluster_ranks *r, struct cluster_pg *pg);
/* The cluster thread, on a new connection: both are due at once. */
void cluster_ranks_link_up(struct cluster_ranks *r);

/*
 * Any thread.  What the ranks' link did, as a new object: {"pushed" (rank
 * rows sent), "read" (rows read back), "jobs" (distributed jobs whose other
 * ranks are cached), "last_read" (wall time; null: none yet)}.
 */
json_t *cluster_ranks_status(struct cluster_ranks *r);
/*
 * Any thread.  Adds to a job's JSON (store_job_get's, or a row of
 * store_jobs_list's: "external_id", "world_size", "ranks") the ranks other
 * nodes shared, each with "shared_by" (the node that shared it), in rank
 * order; "ranks_elsewhere" becomes the count seen nowhere, and
 * "ranks_shared" says {"as_of": wall time of the read, or null when the
 * store was not read yet for this job}.  A job of one node is left as it is.
 */
void cluster_ranks_merge(struct cluster_ranks *r, json_t *job);
/*
 * Any thread (ctx a struct cluster_ranks, so it serves as jobs' and the
 * diagnosis' hook).  The ranks of local job id that other nodes shared and
 * that are not among the n rows of the malloc'd *rows, appended to them (*n
 * grows); 0, or -1 without memory (the rows are left as they were).
 */
int cluster_ranks_append(void *ctx, int64_t id, struct rank_row **rows, size_t *n);

#endif
