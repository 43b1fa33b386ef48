/*
 * The store's rows of the ranks of distributed jobs (sql/009_ranks.sql): a
 * rank joining (written in the transaction that finds or registers its job,
 * store_jobs.c), what each batch of a rank adds, a rank's end (the job's
 * when it was the last rank here), and the rows read back for the job's
 * view and its diagnosis.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "store_internal.h"

/* A rank joining again (a restarted process of the same rank) starts its figures afresh. */
static const char sql_rank_insert[] =
	"INSERT INTO job_ranks (job_id, rank, local_rank, node, pid, joined) VALUES (?1, ?2, ?3, ?4, ?5, ?6) "
	"ON CONFLICT(job_id, rank) DO UPDATE SET local_rank = ?3, node = ?4, pid = ?5, joined = ?6, "
	"state = 'running', exit_status = NULL, updated = NULL, steps = 0, step_s = 0, comm_s = 0, data_s = 0, "
	"samples_per_s = NULL, cpu_s0 = NULL, wait_s0 = NULL, t0 = NULL, cpu_s = NULL, wait_s = NULL, t = NULL";
static const char sql_job_world[] = "UPDATE jobs SET world_size = ?2, nodes = coalesce(?3, nodes) WHERE id = ?1";
/*
 * A rank's first batch is its warm-up (the rendezvous, first connections,
 * ranks still starting): its steps are left out of the sums, and the CPU
 * readings start there, so the means cover the same steady span.
 */
static const char sql_rank_report[] =
	"UPDATE job_ranks SET steps = steps + iif(updated IS NULL, 0, ?4), "
	"step_s = step_s + iif(updated IS NULL, 0, ?5), comm_s = comm_s + iif(updated IS NULL, 0, ?6), "
	"data_s = data_s + iif(updated IS NULL, 0, ?7), updated = ?3, "
	"samples_per_s = coalesce(?8, samples_per_s), cpu_s0 = coalesce(cpu_s0, ?9), "
	"wait_s0 = coalesce(wait_s0, ?10), t0 = coalesce(t0, ?11), cpu_s = coalesce(?9, cpu_s), "
	"wait_s = coalesce(?10, wait_s), t = coalesce(?11, t) WHERE job_id = ?1 AND rank = ?2";
static const char sql_rank_end[] =
	"UPDATE job_ranks SET state = 'ended', exit_status = coalesce(exit_status, ?3) "
	"WHERE job_id = ?1 AND rank = ?2";
static const char sql_ranks_running[] =
	"SELECT count(*) FROM job_ranks WHERE job_id = ?1 AND state = 'running'";
static const char sql_ranks_failed[] =
	"SELECT exit_status FROM job_ranks WHERE job_id = ?1 AND exit_status != 0 ORDER BY rank LIMIT 1";
static const char sql_job_end_ranks[] =
	"UPDATE jobs SET state = 'ended', ended = coalesce(ended, ?2), exit_status = coalesce(exit_status, ?3) "
	"WHERE id = ?1";
static const char sql_ranks_of[] =
	"SELECT rank, local_rank, node, pid, state, joined, steps, step_s, comm_s, data_s, samples_per_s, "
	"cpu_s - cpu_s0, wait_s - wait_s0, t - t0 FROM job_ranks WHERE job_id = ?1 ORDER BY rank";

static const char sql_ranks_running_pids[] =
	"SELECT r.job_id, r.pid, r.joined FROM job_ranks r JOIN jobs j ON j.id = r.job_id "
	"WHERE r.state = 'running' AND j.state = 'running' AND r.pid IS NOT NULL ORDER BY r.job_id, r.rank";

static void
bind_real_or_null(sqlite3_stmt *s, int i, bool has, double v)
{
	if (has && isfinite(v))
		sqlite3_bind_double(s, i, v);
	else
		sqlite3_bind_null(s, i);
}

int
store_rank_insert(struct store_conn *c, int64_t id, const struct job_spec *spec)
{
	const struct job_rank_spec *rk = spec->rank;
	sqlite3_stmt *s = store_stmt_id(c, sql_rank_insert, id);
	int r;

	if (s == NULL)
		return STORE_EIO;
	sqlite3_bind_int(s, 2, rk->rank);
	if (rk->local_rank >= 0)
		sqlite3_bind_int(s, 3, rk->local_rank);
	sqlite3_bind_text(s, 4, rk->node, -1, SQLITE_STATIC);
	if (spec->pid > 0)
		sqlite3_bind_int64(s, 5, spec->pid);
	sqlite3_bind_double(s, 6, spec->started);
	if ((r = store_step(c, s, "insert rank")) != STORE_OK)
		return r;
	if ((s = store_stmt_id(c, sql_job_world, id)) == NULL)
		return STORE_EIO;
	sqlite3_bind_int(s, 2, rk->world_size);
	if (rk->nodes > 0)
		sqlite3_bind_int(s, 3, rk->nodes);
	return store_step(c, s, "job world size");
}

static int
apply_rank_report(struct store_conn *c, void *arg)
{
	const struct rank_report *r = arg;
	sqlite3_stmt *s = store_stmt_id(c, sql_rank_report, r->job_id);

	if (s == NULL)
		return STORE_EIO;
	sqlite3_bind_int(s, 2, r->rank);
	sqlite3_bind_double(s, 3, r->t);
	sqlite3_bind_int(s, 4, r->steps);
	sqlite3_bind_double(s, 5, r->step_s);
	sqlite3_bind_double(s, 6, r->comm_s);
	sqlite3_bind_double(s, 7, r->data_s);
	bind_real_or_null(s, 8, true, r->samples_per_s);
	bind_real_or_null(s, 9, r->has_cpu, r->cpu_s);
	bind_real_or_null(s, 10, r->has_cpu, r->wait_s);
	bind_real_or_null(s, 11, r->has_cpu, r->t_mono);
	return store_step(c, s, "rank report");
}

int
store_rank_report(struct store *st, const struct rank_report *r)
{
	return store_write(st, apply_rank_report, (void *)r);
}

struct rank_end {
	int64_t id;
	int rank;
	double ended;
	bool has_exit;
	int exit_status;
	bool job_ended;
};

/* The job's ending status: its first failing rank's, else 0. */
static int
first_failure(struct store_conn *c, int64_t id, int *status)
{
	sqlite3_stmt *s = store_stmt_id(c, sql_ranks_failed, id);
	int rc;

	if (s == NULL)
		return STORE_EIO;
	rc = sqlite3_step(s);
	*status = rc == SQLITE_ROW ? sqlite3_column_int(s, 0) : 0;
	sqlite3_reset(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? STORE_OK : store_fail(c, rc, "failed ranks");
}

static int
apply_rank_end(struct store_conn *c, void *arg)
{
	struct rank_end *e = arg;
	sqlite3_stmt *s = store_stmt_id(c, sql_rank_end, e->id);
	int r, left, status;

	if (s == NULL)
		return STORE_EIO;
	sqlite3_bind_int(s, 2, e->rank);
	if (e->has_exit)
		sqlite3_bind_int(s, 3, e->exit_status);
	if ((r = store_step(c, s, "end rank")) != STORE_OK)
		return r;
	if (sqlite3_changes(c->db) == 0)
		return STORE_ENOTFOUND;
	if ((s = store_stmt_id(c, sql_ranks_running, e->id)) == NULL)
		return STORE_EIO;
	if ((r = sqlite3_step(s)) != SQLITE_ROW)
		return store_fail(c, r, "running ranks");
	left = sqlite3_column_int(s, 0);
	sqlite3_reset(s);
	if (left > 0)
		return STORE_OK;
	if ((r = first_failure(c, e->id, &status)) != STORE_OK || (s = store_stmt(c, sql_job_end_ranks)) == NULL)
		return r != STORE_OK ? r : STORE_EIO;
	sqlite3_bind_int64(s, 1, e->id);
	sqlite3_bind_double(s, 2, e->ended);
	sqlite3_bind_int(s, 3, status);
	e->job_ended = true;
	return store_step(c, s, "end job of ranks");
}

int
store_rank_end(struct store *st, int64_t id, int rank, double ended, bool has_exit, int exit_status,
	       bool *job_ended)
{
	struct rank_end e = {id, rank, ended, has_exit, exit_status, false};
	int r = store_write(st, apply_rank_end, &e);

	*job_ended = r == STORE_OK && e.job_ended;
	if (*job_ended)
		store_jobs_changed(st);
	return r;
}

static double
col_real_or_nan(sqlite3_stmt *s, int col)
{
	return sqlite3_column_type(s, col) == SQLITE_NULL ? NAN : sqlite3_column_double(s, col);
}

/* One row of sql_ranks_of into a struct rank_row (elem); a store_row_into_fn. */
static void
rank_from_row(sqlite3_stmt *s, void *elem)
{
	struct rank_row *k = elem;
	double span = col_real_or_nan(s, 13);

	memset(k, 0, sizeof(*k));
	k->rank = sqlite3_column_int(s, 0);
	k->local_rank = sqlite3_column_type(s, 1) == SQLITE_NULL ? -1 : sqlite3_column_int(s, 1);
	snprintf(k->node, sizeof(k->node), "%s", store_col_str(s, 2));
	k->pid = sqlite3_column_int64(s, 3);
	k->running = config_enum_value(config_job_state_names, store_col_str(s, 4)) == JOB_STATE_RUNNING;
	k->joined = sqlite3_column_double(s, 5);
	k->steps = sqlite3_column_int64(s, 6);
	k->step_s = sqlite3_column_double(s, 7);
	k->comm_s = sqlite3_column_double(s, 8);
	k->data_s = sqlite3_column_double(s, 9);
	k->samples_per_s = col_real_or_nan(s, 10);
	k->cpu_cores = span > 0 ? col_real_or_nan(s, 11) / span : NAN;
	k->wait_cores = span > 0 ? col_real_or_nan(s, 12) / span : NAN;
}

int
store_job_ranks(struct store *st, int64_t id, struct rank_row **out, size_t *n)
{
	struct store_conn *c = store_reader(st);
	void *rows;
	int r = store_rows_read(c, store_stmt_id(c, sql_ranks_of, id), sizeof(**out), rank_from_row, "job ranks", &rows,
				n);

	store_reader_done(st, c);
	if (r == STORE_OK)
		*out = rows;
	return r;
}

json_t *
store_rank_row_json(const struct rank_row *k)
{
	double steps = (double)k->steps;
	json_t *o = json_pack("{s:i,s:s,s:s}", "rank", k->rank, "node", k->node, "state",
			      config_enum_name(config_job_state_names, k->running ? JOB_STATE_RUNNING : JOB_STATE_ENDED));

	json_object_set_new(o, "local_rank", k->local_rank >= 0 ? json_integer(k->local_rank) : json_null());
	json_object_set_new(o, "pid", k->pid > 0 ? json_integer(k->pid) : json_null());
	json_object_set_new(o, "joined", k->joined > 0 ? json_real(k->joined) : json_null());
	json_object_set_new(o, "steps", json_integer(k->steps));
	json_object_set_new(o, "step_time_s", steps > 0 ? json_real(k->step_s / steps) : json_null());
	json_object_set_new(o, "comm_wait_s", steps > 0 ? json_real(k->comm_s / steps) : json_null());
	json_object_set_new(o, "comm_share", k->step_s > 0 ? json_real(k->comm_s / k->step_s) : json_null());
	json_object_set_new(o, "data_time_s", steps > 0 ? json_real(k->data_s / steps) : json_null());
	json_object_set_new(o, "samples_per_s", isfinite(k->samples_per_s) ? json_real(k->samples_per_s) : json_null());
	json_object_set_new(o, "cpu_cores", isfinite(k->cpu_cores) ? json_real(k->cpu_cores) : json_null());
	json_object_set_new(o, "cpu_wait_cores", isfinite(k->wait_cores) ? json_real(k->wait_cores) : json_null());
	return o;
}

int
store_ranks_json(struct store_conn *c, int64_t id, json_t *job)
{
	sqlite3_stmt *s = store_stmt_id(c, sql_ranks_of, id);
	json_t *ranks = json_array();
	json_int_t world = json_integer_value(json_object_get(job, "world_size")), seen;
	struct rank_row k;
	int rc = SQLITE_DONE;

	while (s != NULL && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		rank_from_row(s, &k);
		json_array_append_new(ranks, store_rank_row_json(&k));
	}
	if (s != NULL)
		sqlite3_reset(s);
	/* Set last: a set that fails (out of memory) frees the array. */
	seen = (json_int_t)json_array_size(ranks);
	json_object_set_new(job, "ranks", ranks);
	if (s == NULL)
		return STORE_EIO;
	if (rc != SQLITE_DONE)
		return store_fail(c, rc, "job ranks");
	/* Without a view of the other nodes, a node says how many ranks it does not see. */
	json_object_set_new(job, "ranks_elsewhere", json_integer(world > seen ? world - seen : 0));
	return STORE_OK;
}

static void
rank_pid_from_row(sqlite3_stmt *s, void *elem)
{
	*(struct store_rank_pid *)elem = (struct store_rank_pid){sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1),
								  sqlite3_column_double(s, 2)};
}

int
store_ranks_running(struct store *st, struct store_rank_pid **out, size_t *n)
{
	struct store_conn *c = store_reader(st);
	void *rows;
	int r = store_rows_read(c, store_stmt(c, sql_ranks_running_pids), sizeof(**out), rank_pid_from_row,
				"running ranks", &rows, n);

	store_reader_done(st, c);
	if (r == STORE_OK)
		*out = rows;
	return r;
}
