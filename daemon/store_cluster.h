/*
 * The cluster store's rows in the node's own database (sql/008): the
 * outbox of trials waiting for the shared PostgreSQL store, and this
 * database's name there.  Only cluster.c's thread calls these; the outbox
 * itself is filled by a trigger in the transaction that stores a trial.
 */
#ifndef DLPROF_STORE_CLUSTER_H
#define DLPROF_STORE_CLUSTER_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "store.h"

#define STORE_CLUSTER_ID_MAX 64

/*
 * Turns the outbox on (trials enter it from now on) or off, bounded to
 * limit trials, and gives this database's name in the shared store
 * (id_len >= STORE_CLUSTER_ID_MAX).
 */
int store_cluster_enable(struct store *st, bool enabled, long limit, char *store_id, size_t id_len);

/*
 * Up to max of the oldest trials waiting, as a JSON array of objects with
 * the columns of sql/cluster's dlprofd_push() (trial_id, hw_class,
 * workload, params, objective, phase, config, job_id, n, mean, m2, t_start,
 * t_end, declared), oldest first; *last the largest trial_id (0: none).
 */
int store_cluster_outbox_peek(struct store *st, int max, json_t **out, int64_t *last);
/* The trials up to last were committed by the shared store: they leave the outbox. */
int store_cluster_outbox_done(struct store *st, int64_t last);

/* Trials waiting, and trials ever dropped from a full outbox. */
int store_cluster_outbox_stats(struct store *st, long *waiting, long *dropped);

/*
 * The ranks' outbox (sql/013, store_cluster_ranks.c): up to max ranks of
 * distributed jobs whose rows changed, oldest change first, as a JSON array
 * of objects with the columns of sql/cluster's dlprofd_push_ranks() less
 * the node's own (job_key, rank, node, world_size, local_rank, pid, state,
 * joined, updated, steps, step_s, comm_s, data_s, samples_per_s, cpu_cores,
 * wait_cores); *last the largest outbox id the window covers (0: none).
 */
int store_cluster_ranks_peek(struct store *st, int max, json_t **out, int64_t *last);
/* The ranks up to last were committed by the shared store: they leave the outbox. */
int store_cluster_ranks_done(struct store *st, int64_t last);
/*
 * The newest max distributed jobs of this node that have ranks elsewhere,
 * newest first: [{"job_id","job_key","running","ended"}] ("ended" 0 while
 * running).
 */
int store_cluster_rank_jobs(struct store *st, int max, json_t **out);

#endif
