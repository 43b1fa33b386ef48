/*
 * The outbox of the cluster store (see store_cluster.h): sql/008's tables
 * read and trimmed for cluster.c's thread.  Writes go through the writer
 * like every other; reads borrow a reader.
 */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "store_cluster.h"
#include "store_internal.h"

static const char sql_enable[] = "UPDATE cluster_meta SET enabled = ?1, outbox_limit = ?2 WHERE id = 1";
static const char sql_meta[] = "SELECT store_id, dropped FROM cluster_meta WHERE id = 1";
/* A trial whose phase row or workload went (never, today) is skipped by the joins and dropped by done. */
static const char sql_peek[] =
	"SELECT o.trial_id, w.hw_class, w.name, w.params, t.objective, t.phase, t.config, t.job_id, t.n, "
	"t.mean, coalesce(t.m2, 0), t.t_start, t.t_end, tw.declared "
	"FROM cluster_outbox o JOIN trials t ON t.id = o.trial_id JOIN workloads w ON w.id = t.workload_id "
	"LEFT JOIN tuner_workloads tw ON tw.workload_id = t.workload_id AND tw.objective = t.objective "
	"WHERE t.mean IS NOT NULL ORDER BY o.trial_id LIMIT ?1";
static const char sql_max[] = "SELECT coalesce(max(trial_id), 0) FROM "
			      "(SELECT trial_id FROM cluster_outbox ORDER BY trial_id LIMIT ?1)";
static const char sql_done[] = "DELETE FROM cluster_outbox WHERE trial_id <= ?1";
static const char sql_waiting[] = "SELECT count(*) FROM cluster_outbox";

struct enable_arg {
	bool enabled;
	long limit;
};

static int apply_enable(struct store_conn *c, void *arg)
{
	const struct enable_arg *a = arg;
	sqlite3_stmt *s = store_stmt(c, sql_enable);
	int rc;

	if (!s)
		return STORE_EIO;
	sqlite3_bind_int(s, 1, a->enabled ? 1 : 0);
	sqlite3_bind_int64(s, 2, a->limit);
	if ((rc = sqlite3_step(s)) != SQLITE_DONE)
		return store_fail(c, rc, "enable the cluster outbox");
	return STORE_OK;
}

/* Reads cluster_meta: the store's id and the dropped count. */
static int read_meta(struct store *st, char *id, size_t id_len, long *dropped)
{
	struct store_conn *c = store_reader(st);
	sqlite3_stmt *s = store_stmt(c, sql_meta);
	int rc = STORE_EIO;

	if (s) {
		rc = sqlite3_step(s);
		if (rc == SQLITE_ROW) {
			if (id)
				snprintf(id, id_len, "%s", store_col_str(s, 0));
			if (dropped)
				*dropped = (long)sqlite3_column_int64(s, 1);
			rc = STORE_OK;
		} else {
			rc = store_fail(c, rc == SQLITE_DONE ? SQLITE_CORRUPT : rc, "read cluster_meta");
		}
	}
	store_reader_done(st, c);
	return rc;
}

int store_cluster_enable(struct store *st, bool enabled, long limit, char *store_id, size_t id_len)
{
	struct enable_arg a = {enabled, limit};
	int rc = store_write(st, apply_enable, &a);

	if (rc != STORE_OK)
		return rc;
	return read_meta(st, store_id, id_len, NULL);
}

static json_t *peek_row(sqlite3_stmt *s)
{
	json_t *o = json_object();
	static const char *const text_keys[] = {"hw_class", "workload", "params", "objective", "phase", "config"};
	int i;

	json_object_set_new(o, "trial_id", json_integer(sqlite3_column_int64(s, 0)));
	for (i = 0; i < 6; i++)
		json_object_set_new(o, text_keys[i], store_col_text(s, i + 1));
	json_object_set_new(o, "job_id", sqlite3_column_type(s, 7) == SQLITE_NULL ? json_null()
										  : json_integer(sqlite3_column_int64(s, 7)));
	json_object_set_new(o, "n", json_integer(sqlite3_column_int64(s, 8)));
	json_object_set_new(o, "mean", json_real(sqlite3_column_double(s, 9)));
	json_object_set_new(o, "m2", json_real(sqlite3_column_double(s, 10)));
	json_object_set_new(o, "t_start", json_real(sqlite3_column_double(s, 11)));
	json_object_set_new(o, "t_end", store_col_real(s, 12));
	json_object_set_new(o, "declared", store_col_text(s, 13));
	return o;
}

int store_outbox_peek(struct store *st, const char *peek_sql, const char *max_sql, store_row_fn *row,
		      const char *what, int max, json_t **out, int64_t *last)
{
	struct store_conn *c = store_reader(st);
	sqlite3_stmt *s = store_stmt(c, peek_sql);
	json_t *rows = json_array();
	int rc = STORE_EIO;

	*last = 0;
	if (!s || !rows)
		goto done;
	sqlite3_bind_int(s, 1, max);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		json_array_append_new(rows, row(s));
	sqlite3_reset(s);
	if (rc != SQLITE_DONE) {
		rc = store_fail(c, rc, what);
		goto done;
	}
	rc = STORE_EIO;
	if (!(s = store_stmt(c, max_sql)))
		goto done;
	sqlite3_bind_int(s, 1, max);
	if ((rc = sqlite3_step(s)) != SQLITE_ROW) {
		rc = store_fail(c, rc, what);
		goto done;
	}
	*last = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	rc = STORE_OK;
done:
	store_reader_done(st, c);
	if (rc != STORE_OK) {
		json_decref(rows);
		return rc;
	}
	*out = rows;
	return STORE_OK;
}

int store_cluster_outbox_peek(struct store *st, int max, json_t **out, int64_t *last)
{
	return store_outbox_peek(st, sql_peek, sql_max, peek_row, "read the cluster outbox", max, out, last);
}

static int apply_done(struct store_conn *c, void *arg)
{
	return store_run_id(c, sql_done, *(const int64_t *)arg, "trim the cluster outbox");
}

int store_cluster_outbox_done(struct store *st, int64_t last)
{
	return store_write(st, apply_done, &last);
}

int store_cluster_outbox_stats(struct store *st, long *waiting, long *dropped)
{
	struct store_conn *c;
	sqlite3_stmt *s;
	int rc;

	if ((rc = read_meta(st, NULL, 0, dropped)) != STORE_OK)
		return rc;
	c = store_reader(st);
	rc = STORE_EIO;
	if ((s = store_stmt(c, sql_waiting))) {
		rc = sqlite3_step(s);
		if (rc == SQLITE_ROW) {
			*waiting = (long)sqlite3_column_int64(s, 0);
			rc = STORE_OK;
		} else {
			rc = store_fail(c, rc, "count the cluster outbox");
		}
	}
	store_reader_done(st, c);
	return rc;
}
