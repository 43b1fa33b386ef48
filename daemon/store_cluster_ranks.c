/*
 * The ranks' side of the cluster store in the node's own database
 * (sql/013): the outbox of rank rows waiting for the shared store, and the
 * distributed jobs whose other ranks the cluster thread reads back.  Only
 * cluster_ranks.c's thread calls these.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "store_cluster.h"
#include "store_internal.h"

/* A rank whose job or row went (job retention) is skipped by the joins and leaves with the window. */
static const char sql_peek[] =
	"SELECT j.external_id, r.rank, r.node, j.world_size, r.local_rank, r.pid, r.state, r.joined, r.updated, "
	"r.steps, r.step_s, r.comm_s, r.data_s, r.samples_per_s, "
	"iif(r.t > r.t0, (r.cpu_s - r.cpu_s0) / (r.t - r.t0), NULL), "
	"iif(r.t > r.t0, (r.wait_s - r.wait_s0) / (r.t - r.t0), NULL) "
	"FROM cluster_rank_outbox o JOIN job_ranks r ON r.job_id = o.job_id AND r.rank = o.rank "
	"JOIN jobs j ON j.id = o.job_id WHERE j.external_id IS NOT NULL ORDER BY o.id LIMIT ?1";
static const char sql_max[] = "SELECT coalesce(max(id), 0) FROM (SELECT id FROM cluster_rank_outbox ORDER BY id LIMIT ?1)";
static const char sql_done[] = "DELETE FROM cluster_rank_outbox WHERE id <= ?1";
/* The newest distributed jobs with ranks this node does not hold (sql/013's partial index). */
static const char sql_keys[] =
	"SELECT j.id, j.external_id, j.state = 'running', coalesce(j.ended, 0) FROM jobs j "
	"WHERE j.world_size > 1 AND j.external_id IS NOT NULL "
	"AND j.world_size > (SELECT count(*) FROM job_ranks r WHERE r.job_id = j.id) ORDER BY j.id DESC LIMIT ?1";

static void set_real(json_t *o, const char *key, sqlite3_stmt *s, int col)
{
	double v = sqlite3_column_double(s, col);

	json_object_set_new(o, key, sqlite3_column_type(s, col) == SQLITE_NULL || !isfinite(v) ? json_null()
											       : json_real(v));
}

static void set_int(json_t *o, const char *key, sqlite3_stmt *s, int col)
{
	json_object_set_new(o, key, sqlite3_column_type(s, col) == SQLITE_NULL ? json_null()
									       : json_integer(sqlite3_column_int64(s, col)));
}

static json_t *rank_row(sqlite3_stmt *s)
{
	json_t *o = json_object();

	json_object_set_new(o, "job_key", store_col_text(s, 0));
	json_object_set_new(o, "rank", json_integer(sqlite3_column_int(s, 1)));
	json_object_set_new(o, "node", store_col_text(s, 2));
	set_int(o, "world_size", s, 3);
	set_int(o, "local_rank", s, 4);
	set_int(o, "pid", s, 5);
	json_object_set_new(o, "state", store_col_text(s, 6));
	set_real(o, "joined", s, 7);
	set_real(o, "updated", s, 8);
	json_object_set_new(o, "steps", json_integer(sqlite3_column_int64(s, 9)));
	set_real(o, "step_s", s, 10);
	set_real(o, "comm_s", s, 11);
	set_real(o, "data_s", s, 12);
	set_real(o, "samples_per_s", s, 13);
	set_real(o, "cpu_cores", s, 14);
	set_real(o, "wait_cores", s, 15);
	return o;
}

/* Steps s (bound) into rows made by fn; STORE_OK at its end. */
static int read_rows(struct store_conn *c, sqlite3_stmt *s, json_t *rows, json_t *(*fn)(sqlite3_stmt *),
		     const char *what)
{
	int rc;

	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		json_array_append_new(rows, fn(s));
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? STORE_OK : store_fail(c, rc, what);
}

int store_cluster_ranks_peek(struct store *st, int max, json_t **out, int64_t *last)
{
	return store_outbox_peek(st, sql_peek, sql_max, rank_row, "read the ranks' outbox", max, out, last);
}

static int apply_done(struct store_conn *c, void *arg)
{
	return store_run_id(c, sql_done, *(const int64_t *)arg, "trim the ranks' outbox");
}

int store_cluster_ranks_done(struct store *st, int64_t last)
{
	return store_write(st, apply_done, &last);
}

static json_t *key_row(sqlite3_stmt *s)
{
	json_t *o = json_object();

	json_object_set_new(o, "job_id", json_integer(sqlite3_column_int64(s, 0)));
	json_object_set_new(o, "job_key", store_col_text(s, 1));
	json_object_set_new(o, "running", json_boolean(sqlite3_column_int(s, 2)));
	json_object_set_new(o, "ended", json_real(sqlite3_column_double(s, 3)));
	return o;
}

int store_cluster_rank_jobs(struct store *st, int max, json_t **out)
{
	struct store_conn *c = store_reader(st);
	sqlite3_stmt *s = store_stmt(c, sql_keys);
	json_t *rows = json_array();
	int rc = STORE_EIO;

	if (s) {
		sqlite3_bind_int(s, 1, max);
		rc = read_rows(c, s, rows, key_row, "distributed jobs");
	}
	store_reader_done(st, c);
	if (rc != STORE_OK) {
		json_decref(rows);
		return rc;
	}
	*out = rows;
	return STORE_OK;
}
