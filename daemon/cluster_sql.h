/*
 * The statements the cluster thread sends (defined in cluster_sql.c), shared
 * with bench/peers/cluster_load.c so the benchmark measures exactly them.
 * push: $1 a JSON array of trials.  pull: $1 hardware class, $2 cursor
 * (seq), $3 own store_id, $4 batch size; answers (JSON array, new cursor).
 * view: no parameters; answers the cluster view's JSON array.
 * other_classes: $1 workload, $2 objective, $3 this node's class, $4 most
 * rows; answers a JSON array (tuner_other_answer's rows).
 * push_ranks: $1 a JSON array of rank rows.  pull_ranks: $1 a JSON array
 * of job keys, $2 own store_id; answers the other nodes' rank rows.
 */
#ifndef DLPROF_CLUSTER_SQL_H
#define DLPROF_CLUSTER_SQL_H

extern const char cluster_sql_push[];
extern const char cluster_sql_pull[];
extern const char cluster_sql_view[];
extern const char cluster_sql_other_classes[];
extern const char cluster_sql_push_ranks[];
extern const char cluster_sql_pull_ranks[];

#endif
