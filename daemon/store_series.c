/*
 * Reads for sampling and time series, and the retention rollup.  Series
 * queries downsample in SQL (GROUP BY bucket), over the raw samples and the
 * per-minute rollups together, so an answer never holds more than about
 * STORE_SERIES_MAX_POINTS points whatever the range.
 */

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "clock.h"
#include "log.h"
#include "store_internal.h"
#include "store_series.h"

static const char sql_running[] =
	"SELECT j.id, j.pid, j.started, j.external_id, w.name, j.source FROM jobs j "
	"JOIN workloads w ON w.id = j.workload_id WHERE j.state = 'running' ORDER BY j.id DESC";
static const char sql_find_external[] =
	"SELECT id FROM jobs WHERE external_id = ?1 AND state = 'running' ORDER BY id DESC LIMIT 1";
static const char sql_job_span[] = "SELECT started, ended FROM jobs WHERE id = ?1";
static const char sql_series[] =
	"WITH pts(t, v) AS ("
	" SELECT t, value FROM samples WHERE job_id = ?1 AND name = ?2 AND t >= ?3 AND t <= ?4"
	"  AND (?6 IS NULL OR phase = ?6)"
	" UNION ALL"
	" SELECT t, mean FROM samples_rollup WHERE job_id = ?1 AND name = ?2 AND t >= ?3 AND t <= ?4"
	"  AND (?6 IS NULL OR phase = ?6))"
	" SELECT avg(t), avg(v) FROM pts GROUP BY CAST((t - ?3) / ?5 AS INTEGER) ORDER BY 1";
static const char sql_series_count[] =
	"SELECT (SELECT count(*) FROM samples WHERE job_id = ?1 AND name = ?2 AND t >= ?3 AND t <= ?4"
	"  AND (?5 IS NULL OR phase = ?5))"
	" + (SELECT count(*) FROM samples_rollup WHERE job_id = ?1 AND name = ?2 AND t >= ?3 AND t <= ?4"
	"  AND (?5 IS NULL OR phase = ?5))";
/* A job's samples of every name and phase in buckets of ?4 seconds from ?2: mean, sum and count. */
static const char sql_buckets[] =
	"WITH pts(name, phase, t, v, n) AS ("
	" SELECT name, coalesce(phase, ''), t, value, 1 FROM samples WHERE job_id = ?1 AND t >= ?2 AND t < ?3"
	" UNION ALL"
	" SELECT name, phase, t, mean, n FROM samples_rollup WHERE job_id = ?1 AND t >= ?2 AND t < ?3)"
	" SELECT name, phase, CAST((t - ?2) / ?4 AS INTEGER) AS b, sum(v * n) / sum(n), sum(v * n), sum(n)"
	" FROM pts GROUP BY name, phase, b";
static const char sql_rollup_insert[] =
	"INSERT INTO samples_rollup (job_id, t, name, phase, n, mean, min, max)"
	" SELECT job_id, CAST(t / 60 AS INTEGER) * 60.0, name, coalesce(phase, ''), count(*), avg(value),"
	" min(value), max(value) FROM samples WHERE t < ?1 GROUP BY 1, 2, 3, 4 ORDER BY 1"
	" ON CONFLICT(job_id, name, phase, t) DO UPDATE SET"
	" mean = (mean * n + excluded.mean * excluded.n) / (n + excluded.n), n = n + excluded.n,"
	" min = min(min, excluded.min), max = max(max, excluded.max)";
static const char sql_rollup_delete[] = "DELETE FROM samples WHERE t < ?1";

static void
copy_col(sqlite3_stmt *s, int col, char *buf, size_t len)
{
	const unsigned char *v = sqlite3_column_text(s, col);

	snprintf(buf, len, "%s", v != NULL ? (const char *)v : "");
}

int
store_jobs_running(struct store *st, struct store_running_job **out, size_t *n)
{
	struct store_conn *c = store_reader(st);
	sqlite3_stmt *s = store_stmt(c, sql_running);
	struct store_running_job *v = NULL, *nv, *j;
	size_t cap = 0, cnt = 0;
	int rc = SQLITE_DONE, r = STORE_OK;

	if (s == NULL)
		r = STORE_EIO;
	while (r == STORE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (cnt == cap) {
			nv = array_grow(v, &cap, cnt + 1, sizeof(*v));
			if (nv == NULL) {
				r = STORE_EIO;
				break;
			}
			v = nv;
		}
		j = &v[cnt++];
		j->id = sqlite3_column_int64(s, 0);
		j->pid = sqlite3_column_int64(s, 1);
		j->started = sqlite3_column_double(s, 2);
		copy_col(s, 3, j->external_id, sizeof(j->external_id));
		copy_col(s, 4, j->workload, sizeof(j->workload));
		copy_col(s, 5, j->source, sizeof(j->source));
	}
	if (r == STORE_OK && rc != SQLITE_DONE)
		r = store_fail(c, rc, "running jobs");
	if (s != NULL)
		sqlite3_reset(s);
	store_reader_done(st, c);
	if (r != STORE_OK) {
		free(v);
		return r;
	}
	*out = v;
	*n = cnt;
	return STORE_OK;
}

int
store_job_find_external(struct store *st, const char *external_id, int64_t *id)
{
	struct store_conn *c = store_reader(st);
	sqlite3_stmt *s = store_stmt(c, sql_find_external);
	int rc, r;

	if (s == NULL) {
		store_reader_done(st, c);
		return STORE_EIO;
	}
	sqlite3_bind_text(s, 1, external_id, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		*id = sqlite3_column_int64(s, 0);
		r = STORE_OK;
	} else {
		r = rc == SQLITE_DONE ? STORE_ENOTFOUND : store_fail(c, rc, "find job by external id");
	}
	sqlite3_reset(s);
	store_reader_done(st, c);
	return r;
}

/* Fills the range a query covers by default: the job's life, or the node's last hour. */
static int
series_range(struct store_conn *c, const struct store_series_query *q, double *from, double *to)
{
	sqlite3_stmt *s;
	double now = clock_now_s();
	int rc;

	*from = now - 3600;
	*to = now;
	if (q->job_id != 0) {
		if ((s = store_stmt(c, sql_job_span)) == NULL)
			return STORE_EIO;
		sqlite3_bind_int64(s, 1, q->job_id);
		rc = sqlite3_step(s);
		if (rc != SQLITE_ROW) {
			sqlite3_reset(s);
			return rc == SQLITE_DONE ? STORE_ENOTFOUND : store_fail(c, rc, "job span");
		}
		*from = sqlite3_column_double(s, 0);
		if (sqlite3_column_type(s, 1) != SQLITE_NULL)
			*to = sqlite3_column_double(s, 1) + 1;
		sqlite3_reset(s);
	}
	if (q->has_from)
		*from = q->from;
	if (q->has_to)
		*to = q->to;
	return STORE_OK;
}

/* Points in the range, raw and rolled up; a large number on error (then buckets apply). */
static long long
series_count(struct store_conn *c, const struct store_series_query *q, double from, double to)
{
	sqlite3_stmt *s = store_stmt(c, sql_series_count);
	long long n = LLONG_MAX;

	if (s == NULL)
		return n;
	sqlite3_bind_int64(s, 1, q->job_id);
	sqlite3_bind_text(s, 2, q->name, -1, SQLITE_STATIC);
	sqlite3_bind_double(s, 3, from);
	sqlite3_bind_double(s, 4, to);
	if (q->phase != NULL)
		sqlite3_bind_text(s, 5, q->phase, -1, SQLITE_STATIC);
	if (sqlite3_step(s) == SQLITE_ROW)
		n = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	return n;
}

int
store_series(struct store *st, const struct store_series_query *q, json_t **points, double *from_out,
	     double *to_out)
{
	struct store_conn *c = store_reader(st);
	sqlite3_stmt *s = NULL;
	json_t *arr = json_array();
	double from, to, step;
	int rc = SQLITE_DONE, r;

	r = arr != NULL ? series_range(c, q, &from, &to) : STORE_EIO;
	if (r == STORE_OK && (s = store_stmt(c, sql_series)) == NULL)
		r = STORE_EIO;
	if (r == STORE_OK) {
		step = (to - from) / STORE_SERIES_MAX_POINTS;
		/* Under the budget, points stay raw: buckets would merge close ones. */
		if (series_count(c, q, from, to) <= STORE_SERIES_MAX_POINTS)
			step = 1e-6;
		if (q->has_step && q->step > step)
			step = q->step;
		if (!(step > 0))
			step = 1e-3;
		sqlite3_bind_int64(s, 1, q->job_id);
		sqlite3_bind_text(s, 2, q->name, -1, SQLITE_STATIC);
		sqlite3_bind_double(s, 3, from);
		sqlite3_bind_double(s, 4, to);
		sqlite3_bind_double(s, 5, step);
		if (q->phase != NULL)
			sqlite3_bind_text(s, 6, q->phase, -1, SQLITE_STATIC);
		while ((rc = sqlite3_step(s)) == SQLITE_ROW)
			json_array_append_new(arr, json_pack("[f,f]", sqlite3_column_double(s, 0),
							     sqlite3_column_double(s, 1)));
		if (rc != SQLITE_DONE)
			r = store_fail(c, rc, "series");
		sqlite3_reset(s);
	}
	store_reader_done(st, c);
	if (r != STORE_OK) {
		json_decref(arr);
		return r;
	}
	*points = arr;
	*from_out = from;
	*to_out = to;
	return STORE_OK;
}

int
store_series_buckets(struct store *st, int64_t job_id, double from, double to, double width, store_bucket_fn fn,
		     void *arg)
{
	struct store_conn *c = store_reader(st);
	sqlite3_stmt *s = store_stmt(c, sql_buckets);
	struct store_bucket b;
	int rc, r = STORE_OK;

	if (s == NULL) {
		store_reader_done(st, c);
		return STORE_EIO;
	}
	sqlite3_bind_int64(s, 1, job_id);
	sqlite3_bind_double(s, 2, from);
	sqlite3_bind_double(s, 3, to);
	sqlite3_bind_double(s, 4, width);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		b.name = (const char *)sqlite3_column_text(s, 0);
		b.phase = (const char *)sqlite3_column_text(s, 1);
		b.bucket = sqlite3_column_int64(s, 2);
		b.mean = sqlite3_column_double(s, 3);
		b.sum = sqlite3_column_double(s, 4);
		b.count = sqlite3_column_double(s, 5);
		if (b.name != NULL && b.phase != NULL)
			fn(&b, arg);
	}
	if (rc != SQLITE_DONE)
		r = store_fail(c, rc, "job buckets");
	sqlite3_reset(s);
	store_reader_done(st, c);
	return r;
}

static int
apply_rollup(struct store_conn *c, void *arg)
{
	double cutoff = *(double *)arg;
	sqlite3_stmt *ins = store_stmt(c, sql_rollup_insert), *del;
	int rc, rolled;

	if (ins == NULL)
		return STORE_EIO;
	sqlite3_bind_double(ins, 1, cutoff);
	if ((rc = sqlite3_step(ins)) != SQLITE_DONE)
		return store_fail(c, rc, "roll up samples");
	rolled = sqlite3_changes(c->db);
	if ((del = store_stmt(c, sql_rollup_delete)) == NULL)
		return STORE_EIO;
	sqlite3_bind_double(del, 1, cutoff);
	if ((rc = sqlite3_step(del)) != SQLITE_DONE)
		return store_fail(c, rc, "delete rolled-up samples");
	if (rolled > 0)
		log_info("%s: %d samples before %.0f rolled up into %d minute rows", __func__, sqlite3_changes(c->db),
			 cutoff, rolled);
	return STORE_OK;
}

int
store_samples_rollup(struct store *st, double cutoff)
{
	double *arg = malloc(sizeof(*arg));

	if (arg == NULL)
		return STORE_EBUSY;
	/* Whole minutes only, so a minute is never split between two rollups. */
	*arg = floor(cutoff / 60.0) * 60.0;
	return store_post(st, apply_rollup, arg, free);
}
