/*
 * The statements of the cluster store (see cluster_sql.h), in a file of
 * their own so the benchmark links them without the daemon.
 */
#include "cluster_sql.h"

const char cluster_sql_push[] = "SELECT dlprofd_push($1::json)";
/* Other nodes' trials of this class after the cursor, in commit order (see sql/cluster/001). */
const char cluster_sql_pull[] =
	"SELECT coalesce(json_agg(x ORDER BY x.seq), '[]'), coalesce(max(x.seq), $2::bigint) FROM "
	"(SELECT seq, workload, params, objective, phase, config, n, mean, m2, t_start, declared "
	"FROM dlprofd_trials WHERE hw_class = $1 AND seq > $2::bigint AND store_id <> $3 "
	"ORDER BY seq LIMIT $4::integer) x";
/* The ranks of jobs spanning nodes (cluster_ranks.c): $1 a JSON array of rank rows. */
const char cluster_sql_push_ranks[] = "SELECT dlprofd_push_ranks($1::json)";
/* The other nodes' ranks of jobs: $1 a JSON array of job keys, $2 this node's store_id. */
const char cluster_sql_pull_ranks[] =
	"SELECT coalesce(json_agg(x ORDER BY x.job_key, x.rank), '[]') FROM "
	"(SELECT job_key, rank, shared_by, node, world_size, local_rank, pid, state, updated, steps, step_s, "
	"comm_s, data_s, samples_per_s, cpu_cores, wait_cores FROM dlprofd_ranks "
	"WHERE job_key IN (SELECT json_array_elements_text($1::json)) AND store_id <> $2) x";
/*
 * Per workload: its trials, nodes and jobs, its classes, and per variant
 * (params, objective, class) the config of the best mean whole-job value.
 */
const char cluster_sql_view[] =
	"WITH v AS (SELECT workload, params, objective, hw_class, count(*) AS trials, "
	"count(DISTINCT store_id) AS nodes, count(DISTINCT (store_id, job_id)) AS jobs, "
	"extract(epoch FROM max(received)) AS updated FROM dlprofd_trials GROUP BY 1, 2, 3, 4), "
	"b AS (SELECT DISTINCT ON (workload, params, objective, hw_class) workload, params, objective, hw_class, "
	"config, avg(mean) AS value, count(*) AS trials FROM dlprofd_trials WHERE phase = '' "
	"GROUP BY workload, params, objective, hw_class, config "
	"ORDER BY workload, params, objective, hw_class, avg(mean) DESC), "
	"w AS (SELECT workload, count(*) AS trials, count(DISTINCT store_id) AS nodes, "
	"count(DISTINCT (store_id, job_id)) AS jobs, json_agg(DISTINCT hw_class) AS classes "
	"FROM dlprofd_trials GROUP BY workload), "
	"vv AS (SELECT v.workload, json_agg(json_build_object('params', v.params::json, 'objective', v.objective, "
	"'hw_class', v.hw_class, 'trials', v.trials, 'nodes', v.nodes, 'jobs', v.jobs, 'updated', v.updated, "
	"'best', CASE WHEN b.config IS NULL THEN NULL ELSE json_build_object('config', b.config::json, "
	"'value', b.value, 'trials', b.trials) END) ORDER BY v.trials DESC) AS variants "
	"FROM v LEFT JOIN b USING (workload, params, objective, hw_class) GROUP BY v.workload) "
	"SELECT coalesce(json_agg(json_build_object('name', w.workload, 'trials', w.trials, 'nodes', w.nodes, "
	"'jobs', w.jobs, 'classes', w.classes, 'variants', vv.variants) ORDER BY w.workload), '[]') "
	"FROM w JOIN vv USING (workload)";
/*
 * What other classes measured of one workload ($1, objective $2, not class
 * $3): its whole-job trials pooled per variant, class and config, most
 * trialled first, at most $4 rows.  An index lookup (dlprofd_trials_workload)
 * and an aggregate over that workload's rows alone.
 */
const char cluster_sql_other_classes[] =
	"SELECT coalesce(json_agg(x), '[]') FROM "
	"(SELECT params, hw_class, config, count(*) AS trials, sum(n) AS steps, sum(mean) AS sum, "
	"sum(mean * mean) AS sumsq, sum(m2 / (n - 1) / n) AS sum_var, count(DISTINCT store_id) AS nodes, "
	"(array_agg(declared ORDER BY seq DESC))[1] AS declared "
	"FROM dlprofd_trials WHERE workload = $1 AND objective = $2 AND hw_class <> $3 AND phase = '' "
	"AND n >= 2 AND abs(mean) < 1e150 AND abs(m2) < 1e300 "
	"GROUP BY params, hw_class, config ORDER BY count(*) DESC, params, hw_class, config "
	"LIMIT $4::integer) x";
