/*
 * The series' flush in the writer (sql/007, 016, 018): the points in memory
 * and the staged sample rows of closed spans become one compressed
 * block per series and span (series_codec.h), and are added to the hour
 * tier.  A series-span with more than one point in some second (a job
 * that reports every step) is dense: its points as sent go to series_raw,
 * for the raw window, and its per-second summaries to series_seconds; the
 * others' blocks are their per-second data already (series_blocks).  The
 * dense series of one job and span share their steps' times: when two or
 * more are flushed together, the times are written once (series_times)
 * and their blocks count points over them.  The upkeep that runs the
 * flush then runs the tiers' retention and the budget (store_tiers.c);
 * the sampler posts it once a minute.
 *
 * The sampler's and the jobs' points come from the writer's memory
 * (store_pending.c): a span of the sampler's is encoded as soon as it
 * closes, a span of the jobs' a span later (flush_range says why), their
 * kind's flushed mark moves past it in the same savepoint (with the jobs'
 * batches wholly before it deleted, store_batches.c), and the points leave
 * memory at the next upkeep, when no reader's snapshot can still predate
 * the mark.
 *
 * Staged rows are the points that arrived behind their mark (a batch late
 * by more than a span, a clock stepped back) and those older releases
 * staged.  A flush takes at most FLUSH_MAX_S of staged time, oldest first,
 * a span at a time, so the first flushes after a migration (days of rows
 * staged) keep each writer transaction short and catch up over a few
 * minutes.  Points that arrive for a span already flushed are merged into
 * its blocks, with their own times; into its per-second summaries alone
 * once its raw points have gone.
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "log.h"
#include "series_codec.h"
#include "series_summary.h"
#include "store_internal.h"
#include "store_series.h"

#define FLUSH_MAX_S (6 * 3600.0)
/*
 * A span is dense, kept as sent for the raw window and per second after,
 * when it holds more than this many points for each second that has any:
 * below, a second's summary (five columns) would cost as much as its
 * points, and a 1 Hz series with a late point stays as it is.
 */
#define DENSE_PER_SECOND 2
/* Spans below 2^31 (until the year ~42,800): span x STORE_BLOCK_KEY_SPAN + id stays an int64. */
#define SPAN_MAX 2147483647.0

static const char sql_staged_oldest[] = "SELECT min(t) FROM samples";
static const char sql_staged_span[] =
	"SELECT job_id, name, coalesce(phase, ''), t, value FROM samples WHERE t >= ?1 AND t < ?2"
	" ORDER BY job_id, name, coalesce(phase, ''), t";
static const char sql_staged_delete[] = "DELETE FROM samples WHERE t < ?1";
static const char sql_series_insert[] =
	"INSERT INTO series (job_id, name, phase) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING";
static const char sql_series_id[] = "SELECT id FROM series WHERE job_id = ?1 AND name = ?2 AND phase = ?3";
static const char sql_block_get[] = "SELECT data FROM series_blocks WHERE key = ?1";
static const char sql_raw_get[] = "SELECT data FROM series_raw WHERE key = ?1";
static const char sql_seconds_get[] = "SELECT data FROM series_seconds WHERE key = ?1";
static const char sql_block_put[] =
	"INSERT OR REPLACE INTO series_blocks (key, n, sum, min, max, data) VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
static const char sql_raw_put[] = "INSERT OR REPLACE INTO series_raw (key, data) VALUES (?1, ?2)";
static const char sql_seconds_put[] =
	"INSERT OR REPLACE INTO series_seconds (key, n, sum, min, max, data) VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
static const char sql_block_delete[] = "DELETE FROM series_blocks WHERE key = ?1";
static const char sql_job_dense[] = "SELECT id, name, phase FROM series WHERE job_id = ?1 AND dense = 1";
static const char sql_times_exist[] = "SELECT 1 FROM series_times WHERE key = ?1";
static const char sql_series_dense[] = "UPDATE series SET dense = 1 WHERE id = ?1 AND dense = 0";
static const char sql_hour_add[] =
	"INSERT INTO series_hour (series_id, t, n, sum, min, max) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
	" ON CONFLICT(series_id, t) DO UPDATE SET n = n + excluded.n, sum = sum + excluded.sum,"
	" min = min(min, excluded.min), max = max(max, excluded.max)";
static const char sql_mark_set[] = "UPDATE sampler_flushed SET t = ?1";

struct maintain {
	struct store *st;
	double now;
};

/* One series' points of one span, as a flush gathers them. */
struct group {
	int64_t job_id, t0, series_id, key;
	char name[128], phase[128];
	int has_series;                 /* series_id is this key's */
	struct series_point *p;         /* the new points, then with the stored ones merged in */
	size_t n, cap, nfresh;          /* nfresh: the new ones, for the hour tier */
	int seconds_only;               /* the span's raw points have gone: only its seconds are kept */
	int was_dense;                  /* the span is stored dense already: it stays so */
	struct series_summary *sec;     /* the span's per-second summaries (dense) */
	size_t nsec;
};

/* sql bound to key: a copy of the row's blob into *buf (NULL, 0 when there is none). */
static int
blob_get(struct store_conn *c, const char *sql, int64_t key, unsigned char **buf, size_t *len)
{
	sqlite3_stmt *s = store_stmt_id(c, sql, key);
	int rc, r = STORE_OK;

	*buf = NULL;
	*len = 0;
	if (s == NULL)
		return STORE_EIO;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		*len = (size_t)sqlite3_column_bytes(s, 0);
		if ((*buf = malloc(*len ? *len : 1)) == NULL)
			r = STORE_EIO;
		else
			memcpy(*buf, sqlite3_column_blob(s, 0), *len);
	} else if (rc != SQLITE_DONE) {
		r = store_fail(c, rc, "read a block");
	}
	sqlite3_reset(s);
	return r;
}

/* Adds the points to the hour row (series, t) of their hour. */
static int
hour_add(struct store_conn *c, int64_t series_id, int64_t t, const struct series_point *p, size_t n)
{
	sqlite3_stmt *st = store_stmt(c, sql_hour_add);
	struct summary_acc a;
	struct series_summary s;
	int rc;

	if (st == NULL)
		return STORE_EIO;
	summary_acc_start(&a, (double)t);
	for (size_t i = 0; i < n; i++)
		summary_acc_add(&a, 1, p[i].v, p[i].v, p[i].v, p[i].v, p[i].t);
	s = summary_acc_get(&a);
	sqlite3_bind_int64(st, 1, series_id);
	sqlite3_bind_int64(st, 2, t);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)s.n);
	sqlite3_bind_double(st, 4, s.sum);
	sqlite3_bind_double(st, 5, s.min);
	sqlite3_bind_double(st, 6, s.max);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? STORE_OK : store_fail(c, rc, "add to the hour tier");
}

/* The id of the group's series, created on first sight. */
static int
group_series(struct store_conn *c, struct group *g)
{
	sqlite3_stmt *ins = store_stmt(c, sql_series_insert), *sel;
	int rc;

	if (g->has_series)
		return STORE_OK;
	if (ins == NULL)
		return STORE_EIO;
	sqlite3_bind_int64(ins, 1, g->job_id);
	sqlite3_bind_text(ins, 2, g->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(ins, 3, g->phase, -1, SQLITE_STATIC);
	rc = sqlite3_step(ins);
	sqlite3_reset(ins);
	if (rc != SQLITE_DONE)
		return store_fail(c, rc, "add a series");
	if ((sel = store_stmt(c, sql_series_id)) == NULL)
		return STORE_EIO;
	sqlite3_bind_int64(sel, 1, g->job_id);
	sqlite3_bind_text(sel, 2, g->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(sel, 3, g->phase, -1, SQLITE_STATIC);
	rc = sqlite3_step(sel);
	if (rc == SQLITE_ROW)
		g->series_id = sqlite3_column_int64(sel, 0);
	sqlite3_reset(sel);
	if (rc != SQLITE_ROW)
		return store_fail(c, rc == SQLITE_DONE ? SQLITE_INTERNAL : rc, "find a series");
	g->has_series = 1;
	return STORE_OK;
}

static int
cmp_point_t(const void *a, const void *b)
{
	double x = ((const struct series_point *)a)->t, y = ((const struct series_point *)b)->t;

	return (x > y) - (x < y);
}

/* Appends n points, times t and values v, to the group. */
static int
group_append(struct group *g, const double *t, const double *v, size_t n)
{
	struct series_point *np;

	if (n == 0)
		return STORE_OK;
	if ((np = array_grow(g->p, &g->cap, g->n + n, sizeof(*np))) == NULL)
		return STORE_EIO;
	g->p = np;
	for (size_t i = 0; i < n; i++)
		g->p[g->n++] = (struct series_point){t[i], v[i]};
	return STORE_OK;
}

/* Whether the group's span is dense (its points and per-second summaries known: group_prepare). */
static int
group_dense(const struct group *g)
{
	return g->was_dense || g->n > DENSE_PER_SECOND * g->nsec;
}

/* Whether the group's raw points are coded over its job's time table: dense, kept as sent, in one block. */
static int
shares_times(const struct group *g)
{
	return !g->seconds_only && g->n > 0 && g->n <= SERIES_CODEC_MAX_POINTS && group_dense(g);
}

/* Decodes buf (a block of g's series and span) into the group's points; a block that does not decode is replaced. */
static int
group_add_block(struct store_conn *c, struct group *g, const unsigned char *buf, size_t len)
{
	struct series_cols cols;
	int r = store_raw_decode(c, g->job_id, g->t0, buf, len, &cols);

	if (r == STORE_ENOTFOUND || (r == STORE_OK && cols.ncols != 1)) {
		/* Keeping the new points beats failing every flush from now on. */
		log_warnx("%s: series %lld: block at %lld does not decode; replaced", __func__, (long long)g->series_id,
			  (long long)g->t0);
		if (r == STORE_OK)
			series_cols_free(&cols);
		return STORE_OK;
	}
	if (r != STORE_OK)
		return r;
	r = group_append(g, cols.t, cols.v[0], cols.n);
	series_cols_free(&cols);
	return r;
}

/*
 * Merges what the group's span already holds (late points for a flushed
 * span): its raw block (series_blocks or series_raw) into the points; with
 * only per-second summaries left, those, into g->sec (seconds_only).
 */
static int
group_merge_stored(struct store_conn *c, struct group *g)
{
	static const char *const raw_sql[] = {sql_block_get, sql_raw_get};
	struct series_cols cols;
	unsigned char *buf;
	size_t len;
	int r;

	for (int raw = 0; raw <= 1; raw++) {
		if ((r = blob_get(c, raw_sql[raw], g->key, &buf, &len)) != STORE_OK)
			return r;
		if (buf != NULL) {
			g->was_dense = raw;
			r = group_add_block(c, g, buf, len);
			free(buf);
			return r;
		}
	}
	if ((r = blob_get(c, sql_seconds_get, g->key, &buf, &len)) != STORE_OK || buf == NULL)
		return r;
	g->seconds_only = g->was_dense = 1;
	if (series_decode_block(buf, len, NULL, 0, NULL, 0, &cols) == 0 && cols.ncols == SUMMARY_COLS) {
		if ((g->sec = malloc(cols.n * sizeof(*g->sec))) == NULL)
			r = STORE_EIO;
		else
			series_summary_join(cols.t, (const double *const *)cols.v, cols.n, g->sec);
		g->nsec = g->sec != NULL ? cols.n : 0;
		series_cols_free(&cols);
	} else {
		log_warnx("%s: series %lld: summaries at %lld do not decode; replaced", __func__, (long long)g->series_id,
			  (long long)g->t0);
	}
	free(buf);
	return r;
}

/* Merges per-second summaries b (sorted) into a (sorted), into a new *out. */
static int
seconds_merge(const struct series_summary *a, size_t na, const struct series_summary *b, size_t nb,
	      struct series_summary **out, size_t *nout)
{
	struct series_summary *m = malloc((na + nb ? na + nb : 1) * sizeof(*m));
	struct summary_acc acc;
	size_t i = 0, j = 0, k = 0;

	if (m == NULL)
		return STORE_EIO;
	while (i < na || j < nb) {
		double t = j >= nb || (i < na && a[i].t <= b[j].t) ? a[i].t : b[j].t;

		summary_acc_start(&acc, t);
		/* The stored summary's last stands: late points are older than what was there. */
		for (; j < nb && b[j].t == t; j++)
			summary_acc_add(&acc, b[j].n, b[j].sum, b[j].min, b[j].max, b[j].last, 1);
		for (; i < na && a[i].t == t; i++)
			summary_acc_add(&acc, a[i].n, a[i].sum, a[i].min, a[i].max, a[i].last, 0);
		m[k++] = summary_acc_get(&acc);
	}
	*out = m;
	*nout = k;
	return STORE_OK;
}

/* Binds and steps a block row's put: key, then n, sum, min, max of s when given, then the blob (taken). */
static int
block_put(struct store_conn *c, const char *sql, int64_t key, const struct series_summary *s, unsigned char *buf,
	  size_t len)
{
	sqlite3_stmt *put = store_stmt(c, sql);
	int rc, col = 2;

	if (put == NULL) {
		free(buf);
		return STORE_EIO;
	}
	sqlite3_bind_int64(put, 1, key);
	if (s != NULL) {
		sqlite3_bind_int64(put, col++, (sqlite3_int64)s->n);
		sqlite3_bind_double(put, col++, s->sum);
		sqlite3_bind_double(put, col++, s->min);
		sqlite3_bind_double(put, col++, s->max);
	}
	sqlite3_bind_blob(put, col, buf, (int)len, free);
	rc = sqlite3_step(put);
	sqlite3_reset(put);
	return rc == SQLITE_DONE ? STORE_OK : store_fail(c, rc, "write a block");
}

/* The summary of the whole of s[0..n-1]: a block row's n, sum, min, max. */
static struct series_summary
summary_of(const struct series_summary *s, size_t n, double t0)
{
	struct summary_acc a;

	summary_acc_start(&a, t0);
	for (size_t i = 0; i < n; i++)
		summary_acc_add(&a, s[i].n, s[i].sum, s[i].min, s[i].max, s[i].last, s[i].t);
	return summary_acc_get(&a);
}

/* Writes the group's per-second summaries (series_seconds). */
static int
seconds_put(struct store_conn *c, const struct group *g)
{
	double *mem = malloc((1 + SUMMARY_COLS) * g->nsec * sizeof(*mem)), *cols[SUMMARY_COLS];
	struct series_summary all = summary_of(g->sec, g->nsec, (double)g->t0);
	unsigned char *buf;
	size_t len;
	int r;

	if (mem == NULL)
		return STORE_EIO;
	for (int k = 0; k < SUMMARY_COLS; k++)
		cols[k] = mem + (size_t)(1 + k) * g->nsec;
	series_summary_split(g->sec, g->nsec, mem, cols);
	r = series_encode_block(mem, g->nsec, (const double *const *)cols, SUMMARY_COLS, NULL, 0, NULL, &buf, &len);
	free(mem);
	if (r < 0)
		return STORE_EIO;
	return block_put(c, sql_seconds_put, g->key, &all, buf, len);
}

/*
 * Encodes the group's points (sorted) as one column, over the table when
 * one is given, their values predicted from its reference where that is
 * smaller (never the reference's own).
 */
static int
raw_encode(const struct group *g, size_t n, const struct store_times *tt, unsigned char **buf, size_t *len)
{
	double *tv = malloc(2 * n * sizeof(*tv));
	const double *col;
	int r;

	if (tv == NULL)
		return -1;
	for (size_t i = 0; i < n; i++) {
		tv[i] = g->p[i].t;
		tv[n + i] = g->p[i].v;
	}
	col = tv + n;
	r = series_encode_block(tv, n, &col, 1, tt != NULL ? tt->t : NULL, tt != NULL ? tt->n : 0,
				tt != NULL && tt->ref_id != g->series_id ? tt->ref : NULL, buf, len);
	free(tv);
	return r;
}

/*
 * Writes a group whose stored state is merged and whose points are sorted:
 * dense, its raw points (over tt, when given) and per-second summaries;
 * otherwise its block; then the new points to the hour tier.
 */
static int
group_write(struct store_conn *c, struct group *g, const struct store_times *tt)
{
	struct series_summary sum;
	unsigned char *buf;
	size_t len, n = g->n;
	int r = STORE_OK, dense = group_dense(g);

	/* A span holds 600 s of points: more than a block's maximum only above ~100 Hz. */
	if (n > SERIES_CODEC_MAX_POINTS) {
		log_warnx("%s: series %lld: %zu points in the span at %lld, above %d; the newest are kept per second only",
			  __func__, (long long)g->series_id, n, (long long)g->t0, SERIES_CODEC_MAX_POINTS);
		n = SERIES_CODEC_MAX_POINTS;
	}
	if (dense) {
		if (!g->seconds_only && n > 0 && (raw_encode(g, n, tt, &buf, &len) < 0 ||
						  (r = block_put(c, sql_raw_put, g->key, NULL, buf, len)) != STORE_OK))
			return r != STORE_OK ? r : STORE_EIO;
		if ((r = seconds_put(c, g)) != STORE_OK || (r = store_run_id(c, sql_block_delete, g->key, "write a series' block")) != STORE_OK ||
		    (r = store_run_id(c, sql_series_dense, g->series_id, "write a series' block")) != STORE_OK)
			return r;
	} else if (n > 0) {
		sum = summary_of(g->sec, g->nsec, (double)g->t0);
		if (raw_encode(g, n, NULL, &buf, &len) < 0 ||
		    (r = block_put(c, sql_block_put, g->key, &sum, buf, len)) != STORE_OK)
			return r != STORE_OK ? r : STORE_EIO;
	}
	return r;
}

/*
 * Prepares a group for writing: its series id and key, the stored state
 * merged in, its points sorted and summarized per second.  A group whose
 * span has no key (before 1970, the 2^32nd series) is emptied, logged.
 */
static int
group_prepare(struct store_conn *c, struct group *g)
{
	struct series_summary *fresh = NULL, *merged;
	size_t nfresh = 0, nmerged;
	int r;

	g->nfresh = g->n;
	g->seconds_only = g->was_dense = 0;
	g->nsec = 0;
	if ((r = group_series(c, g)) != STORE_OK)
		return r;
	if (!store_tier_key(g->series_id, g->t0, STORE_BLOCK_S, &g->key)) {
		log_warnx("%s: series %lld: %zu points in the span at %lld have no block; dropped", __func__,
			  (long long)g->series_id, g->n, (long long)g->t0);
		g->n = g->nfresh = 0;
		return STORE_OK;
	}
	/* The hour tier takes the new points only: the first nfresh, before the stored ones join them. */
	if ((r = hour_add(c, g->series_id, g->t0 / 3600 * 3600, g->p, g->n)) != STORE_OK ||
	    (r = group_merge_stored(c, g)) != STORE_OK)
		return r;
	qsort(g->p, g->n, sizeof(*g->p), cmp_point_t);
	{
		double *tv = malloc(2 * (g->n ? g->n : 1) * sizeof(*tv));

		if (tv == NULL)
			return STORE_EIO;
		for (size_t i = 0; i < g->n; i++) {
			tv[i] = g->p[i].t;
			tv[g->n + i] = g->p[i].v;
		}
		r = series_per_second(tv, tv + g->n, g->n, &fresh, &nfresh) < 0 ? STORE_EIO : STORE_OK;
		free(tv);
	}
	if (r != STORE_OK)
		return r;
	if (!g->seconds_only) {
		free(g->sec);
		g->sec = fresh;
		g->nsec = nfresh;
		return STORE_OK;
	}
	/* Only summaries were left: the new points' join them, and the points themselves go. */
	r = seconds_merge(fresh, nfresh, g->sec, g->nsec, &merged, &nmerged);
	free(fresh);
	if (r != STORE_OK)
		return r;
	free(g->sec);
	g->sec = merged;
	g->nsec = nmerged;
	g->n = 0;
	return STORE_OK;
}

static void
group_free(struct group *g)
{
	free(g->p);
	free(g->sec);
	g->p = NULL;
	g->sec = NULL;
	g->n = g->cap = g->nsec = 0;
}


/* Whether the job's span has a time table. */
static bool
times_exist(struct store_conn *c, int64_t job_id, int64_t t0)
{
	sqlite3_stmt *s = store_stmt(c, sql_times_exist);
	int64_t key;
	bool yes;

	if (s == NULL || !store_tier_key(job_id, t0, STORE_BLOCK_S, &key))
		return false;
	sqlite3_bind_int64(s, 1, key);
	yes = sqlite3_step(s) == SQLITE_ROW;
	sqlite3_reset(s);
	return yes;
}

/*
 * The span's dense series already written over its time table, but not
 * among the groups, join them as groups without new points: the table and
 * its reference are about to be written again, and every block over them
 * with them.
 */
static int
jobspan_reload(struct store_conn *c, struct group **gs, size_t *ng, size_t *cap)
{
	int64_t job = (*gs)[0].job_id, t0 = (*gs)[0].t0, key;
	sqlite3_stmt *s = store_stmt_id(c, sql_job_dense, job);
	struct group *ng_;
	unsigned char *buf;
	size_t len, i;
	int rc, r = STORE_OK;

	if (s == NULL)
		return STORE_EIO;
	while (r == STORE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(s, 0);

		for (i = 0; i < *ng && (*gs)[i].series_id != id; i++)
			;
		if (i < *ng || !store_tier_key(id, t0, STORE_BLOCK_S, &key))
			continue;
		/* The statement stays open: blob_get's is another. */
		if ((r = blob_get(c, sql_raw_get, key, &buf, &len)) != STORE_OK || buf == NULL)
			continue;
		if (series_block_shared(buf, len)) {
			if ((ng_ = array_grow(*gs, cap, *ng + 1, sizeof(**gs))) == NULL) {
				r = STORE_EIO;
			} else {
				*gs = ng_;
				ng_ = &(*gs)[(*ng)++];
				memset(ng_, 0, sizeof(*ng_));
				*ng_ = (struct group){.job_id = job, .t0 = t0, .series_id = id, .has_series = 1};
				snprintf(ng_->name, sizeof(ng_->name), "%s", (const char *)sqlite3_column_text(s, 1));
				snprintf(ng_->phase, sizeof(ng_->phase), "%s", (const char *)sqlite3_column_text(s, 2));
			}
		}
		free(buf);
	}
	if (r == STORE_OK && rc != SQLITE_DONE)
		r = store_fail(c, rc, "a job's dense series");
	sqlite3_reset(s);
	return r;
}

/*
 * The table of the span's dense groups (two or more) and its reference,
 * written; tt->n 0 when there is none, and an old one deleted.
 */
static int
times_build(struct store_conn *c, struct group *gs, size_t ng, struct store_times *tt)
{
	struct store_times_member *m = calloc(ng ? ng : 1, sizeof(*m));
	double *mem = NULL;
	size_t nm = 0, total = 0, off = 0;
	int r;

	memset(tt, 0, sizeof(*tt));
	tt->ref_id = -1;
	if (m == NULL)
		return STORE_EIO;
	for (size_t i = 0; i < ng; i++)
		total += shares_times(&gs[i]) ? gs[i].n : 0;
	if ((mem = malloc(2 * (total ? total : 1) * sizeof(*mem))) == NULL) {
		free(m);
		return STORE_EIO;
	}
	for (size_t i = 0; i < ng; i++) {
		if (!shares_times(&gs[i]))
			continue;
		m[nm] = (struct store_times_member){gs[i].series_id, mem + off, mem + total + off, gs[i].n};
		for (size_t k = 0; k < gs[i].n; k++) {
			mem[off + k] = gs[i].p[k].t;
			mem[total + off + k] = gs[i].p[k].v;
		}
		off += gs[i].n;
		nm++;
	}
	r = nm > 0 ? store_times_build(m, nm, tt) : STORE_OK;
	free(m);
	free(mem);
	/* One dense series left alone (the others were all reloaded): it keeps its own times, the table goes. */
	if (r == STORE_ENOTFOUND)
		return store_times_delete(c, gs[0].job_id, gs[0].t0);
	return r != STORE_OK || nm == 0 ? r : store_times_write(c, gs[0].job_id, gs[0].t0, tt);
}

/*
 * Writes one job's groups of one span (each with new points or none),
 * sharing their times where two or more are dense; the span's blocks
 * already over its table are rewritten with them.
 */
static int
jobspan_flush(struct store_conn *c, struct group **gs, size_t *ng, size_t *cap)
{
	struct store_times tt;
	int r = STORE_OK;

	if (*ng == 0)
		return STORE_OK;
	for (size_t i = 0; i < *ng && r == STORE_OK; i++)
		r = group_series(c, &(*gs)[i]);
	if (r == STORE_OK && times_exist(c, (*gs)[0].job_id, (*gs)[0].t0))
		r = jobspan_reload(c, gs, ng, cap);
	for (size_t i = 0; i < *ng && r == STORE_OK; i++)
		r = group_prepare(c, &(*gs)[i]);
	if (r != STORE_OK || (r = times_build(c, *gs, *ng, &tt)) != STORE_OK)
		return r;
	for (size_t i = 0; i < *ng && r == STORE_OK; i++)
		r = group_write(c, &(*gs)[i], tt.n > 0 && shares_times(&(*gs)[i]) ? &tt : NULL);
	store_times_free(&tt);
	return r;
}

/* Whether the row at s (job, name, phase) is outside g's series. */
static int
group_other(const struct group *g, sqlite3_stmt *s)
{
	const char *name = (const char *)sqlite3_column_text(s, 1), *phase = (const char *)sqlite3_column_text(s, 2);

	return sqlite3_column_int64(s, 0) != g->job_id || strcmp(name != NULL ? name : "", g->name) != 0 ||
	       strcmp(phase != NULL ? phase : "", g->phase) != 0;
}

/* A new group at the end of *gs for the row's series in the span t0; NULL when out of memory. */
static struct group *
group_new(struct group **gs, size_t *ng, size_t *cap, sqlite3_stmt *s, int64_t t0)
{
	const char *name = (const char *)sqlite3_column_text(s, 1), *phase = (const char *)sqlite3_column_text(s, 2);
	struct group *ng_, *g;

	if ((ng_ = array_grow(*gs, cap, *ng + 1, sizeof(**gs))) == NULL)
		return NULL;
	*gs = ng_;
	g = &(*gs)[(*ng)++];
	memset(g, 0, sizeof(*g));
	g->job_id = sqlite3_column_int64(s, 0);
	g->t0 = t0;
	snprintf(g->name, sizeof(g->name), "%s", name != NULL ? name : "");
	snprintf(g->phase, sizeof(g->phase), "%s", phase != NULL ? phase : "");
	return g;
}

static void
groups_free(struct group *gs, size_t ng)
{
	for (size_t i = 0; i < ng; i++)
		group_free(&gs[i]);
}

/* Encodes the staged rows of the span at t0, one job at a time. */
static int
flush_staged_span(struct store_conn *c, int64_t t0, size_t *rows)
{
	sqlite3_stmt *s = store_stmt(c, sql_staged_span);
	struct group *gs = NULL, *g = NULL;
	size_t ng = 0, cap = 0;
	int rc = SQLITE_DONE, r = STORE_OK;
	double t, v;

	if (s == NULL)
		return STORE_EIO;
	sqlite3_bind_double(s, 1, (double)t0);
	sqlite3_bind_double(s, 2, (double)t0 + STORE_BLOCK_S);
	while (r == STORE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (g != NULL && sqlite3_column_int64(s, 0) != g->job_id) {
			/* The job's series of the span are all here: write them, and start the next job's. */
			r = jobspan_flush(c, &gs, &ng, &cap);
			groups_free(gs, ng);
			ng = 0;
			g = NULL;
			if (r != STORE_OK)
				break;
		}
		if ((g == NULL || group_other(g, s)) && (g = group_new(&gs, &ng, &cap, s, t0)) == NULL) {
			r = STORE_EIO;
			break;
		}
		t = sqlite3_column_double(s, 3);
		v = sqlite3_column_double(s, 4);
		if ((r = group_append(g, &t, &v, 1)) != STORE_OK)
			break;
		(*rows)++;
	}
	if (r == STORE_OK && rc != SQLITE_DONE)
		r = store_fail(c, rc, "read staged samples");
	sqlite3_reset(s);
	if (r == STORE_OK)
		r = jobspan_flush(c, &gs, &ng, &cap);
	groups_free(gs, ng);
	free(gs);
	return r;
}


/*
 * The staged time this flush takes, [*first, *cutoff): spans closed for a
 * whole span at least, at most FLUSH_MAX_S past the oldest.  The jobs'
 * points in memory wait as long (apply_maintain): their batches arrive
 * late by seconds to minutes (a client's last batch, its resend after the
 * daemon was away), and while their span is in memory they join it there,
 * not blocks decoded and encoded again.
 */
static int
flush_range(struct store_conn *c, double now, double *first, double *cutoff)
{
	sqlite3_stmt *s = store_stmt(c, sql_staged_oldest);
	double oldest = NAN, cap;
	int rc;

	if (s == NULL)
		return STORE_EIO;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL)
		oldest = sqlite3_column_double(s, 0);
	sqlite3_reset(s);
	if (rc != SQLITE_ROW)
		return store_fail(c, rc, "oldest staged sample");
	*cutoff = floor(now / STORE_BLOCK_S) * STORE_BLOCK_S - STORE_BLOCK_S;
	*first = *cutoff;
	if (!isnan(oldest)) {
		*first = floor(oldest / STORE_BLOCK_S) * STORE_BLOCK_S;
		cap = *first + STORE_BLOCK_S + FLUSH_MAX_S;
		if (cap < *cutoff)
			*cutoff = cap;
	}
	return STORE_OK;
}

/* Encodes the staged rows before the flush's cutoff into blocks, a span at a time, and deletes them. */
static int
flush_staged(struct store_conn *c, double now, size_t *rows)
{
	double first = 0, cutoff = 0;
	int r;

	*rows = 0;
	if ((r = flush_range(c, now, &first, &cutoff)) != STORE_OK)
		return r;
	for (double t0 = first; t0 < cutoff && r == STORE_OK; t0 += STORE_BLOCK_S)
		r = flush_staged_span(c, (int64_t)t0, rows);
	if (r != STORE_OK || !(cutoff > first))
		return r;
	return store_run_double(c, sql_staged_delete, cutoff, "delete flushed samples");
}

bool
store_tier_key(int64_t id, int64_t t0, int64_t span_s, int64_t *key)
{
	if (id < 0 || id >= STORE_BLOCK_KEY_SPAN || t0 < 0 || span_s <= 0 || t0 % span_s != 0 ||
	    (double)(t0 / span_s) > SPAN_MAX)
		return false;
	*key = t0 / span_s * STORE_BLOCK_KEY_SPAN + id;
	/* What readers and retention rely on: the key orders by span, then series, and gives both back. */
	assert(*key >= 0 && *key / STORE_BLOCK_KEY_SPAN == t0 / span_s && *key % STORE_BLOCK_KEY_SPAN == id);
	return true;
}

bool
store_block_key(int64_t series_id, int64_t t0, int64_t *key)
{
	return store_tier_key(series_id, t0, STORE_BLOCK_S, key);
}

bool
store_block_keys(int64_t series_id, double lo, double hi, int64_t *first, int64_t *last)
{
	double a = fmax(floor(lo / STORE_BLOCK_S) + 1, 0), b = fmin(floor(hi / STORE_BLOCK_S), SPAN_MAX);
	bool any = !isnan(lo) && !isnan(hi) && a <= b &&
		   store_block_key(series_id, (int64_t)a * STORE_BLOCK_S, first) &&
		   store_block_key(series_id, (int64_t)b * STORE_BLOCK_S, last);

	/* One series' spans from a to b are the keys first, first + 2^32, ... last: a range a step apart. */
	assert(!any || (*first <= *last && (*last - *first) % STORE_BLOCK_KEY_SPAN == 0));
	return any;
}

static int
cmp_run_job(const void *a, const void *b)
{
	int64_t x = ((const struct pending_run *)a)->job_id, y = ((const struct pending_run *)b)->job_id;

	return (x > y) - (x < y);
}

/* The start of the span of the run's next point (at *at), or INT64_MAX when the run is spent. */
static int64_t
run_span(const struct pending_run *run, size_t at)
{
	return at < run->n ? (int64_t)floor(run->p[at].t / STORE_BLOCK_S) * STORE_BLOCK_S : INT64_MAX;
}

/*
 * Encodes one job's series' points from memory (any order) into their
 * spans' blocks: a span's series together, as flush_staged_span does, so
 * that its dense series share their times.
 */
static int
flush_job_runs(struct store_conn *c, struct pending_run *runs, size_t nruns)
{
	size_t *at = calloc(nruns ? nruns : 1, sizeof(*at)), ng = 0, cap = 0;
	struct group *gs = NULL, *g, *ngs;
	int r = STORE_OK;

	if (at == NULL)
		return STORE_EIO;
	for (size_t i = 0; i < nruns; i++)
		if (runs[i].n > 0)
			qsort(runs[i].p, runs[i].n, sizeof(*runs[i].p), cmp_point_t);
	while (r == STORE_OK) {
		int64_t t0 = INT64_MAX;

		for (size_t i = 0; i < nruns; i++)
			if (run_span(&runs[i], at[i]) < t0)
				t0 = run_span(&runs[i], at[i]);
		if (t0 == INT64_MAX)
			break;
		for (size_t i = 0; i < nruns && r == STORE_OK; i++) {
			if (run_span(&runs[i], at[i]) != t0)
				continue;
			if ((ngs = array_grow(gs, &cap, ng + 1, sizeof(*gs))) == NULL) {
				r = STORE_EIO;
				break;
			}
			gs = ngs;
			g = &gs[ng++];
			*g = (struct group){.job_id = runs[i].job_id, .t0 = t0};
			snprintf(g->name, sizeof(g->name), "%s", runs[i].name);
			snprintf(g->phase, sizeof(g->phase), "%s", runs[i].phase);
			/* Merging may add a stored block's points: the group owns a copy. */
			for (; r == STORE_OK && run_span(&runs[i], at[i]) == t0; at[i]++)
				r = group_append(g, &runs[i].p[at[i]].t, &runs[i].p[at[i]].v, 1);
		}
		if (r == STORE_OK)
			r = jobspan_flush(c, &gs, &ng, &cap);
		groups_free(gs, ng);
		ng = 0;
	}
	free(gs);
	free(at);
	return r;
}

/*
 * The points of one kind in memory of the spans before cutoff into blocks,
 * a job at a time; the points flushed at an earlier upkeep (committed a
 * minute ago at least) leave memory.  *points: how many were encoded.
 */
static int
flush_pending(struct store *st, struct store_conn *c, enum pending_kind kind, double cutoff, size_t *points)
{
	struct store_pending *p = store_pending_of(st, kind);
	double mark = *store_pending_mark(st, kind);
	struct pending_run *runs = NULL;
	size_t nruns = 0, j;
	int r = STORE_OK;

	*points = 0;
	pending_prune(p, mark);
	if (!(cutoff > mark))
		return STORE_OK;
	if (pending_take(p, mark, cutoff, &runs, &nruns) < 0)
		return STORE_EIO;
	if (nruns > 0)
		qsort(runs, nruns, sizeof(*runs), cmp_run_job);
	for (size_t i = 0; i < nruns && r == STORE_OK; i = j) {
		for (j = i; j < nruns && runs[j].job_id == runs[i].job_id; j++)
			*points += runs[j].n;
		r = flush_job_runs(c, runs + i, j - i);
	}
	pending_runs_free(runs, nruns);
	if (r != STORE_OK)
		return r;
	return kind == PENDING_SAMPLER ? store_run_double(c, sql_mark_set, cutoff, "move the sampler's flushed mark")
				       : store_batches_flushed(c, cutoff);
}

/*
 * The upkeep: the staged rows and the points in memory of closed spans
 * into blocks, then the tiers.  The sampler's spans are encoded as soon as
 * they close; the jobs' a span later, for the reason flush_range gives.
 * The marks in memory move only once the whole upkeep has succeeded: a
 * failure rolls its savepoint back, and the points stay where they were.
 */
static int
apply_maintain(struct store_conn *c, void *arg)
{
	const struct maintain *m = arg;
	double cutoff[PENDING_KINDS];
	size_t rows = 0, points[PENDING_KINDS] = {0};
	int64_t live = 0;
	int r;

	cutoff[PENDING_SAMPLER] = floor(m->now / STORE_BLOCK_S) * STORE_BLOCK_S;
	cutoff[PENDING_REPORTED] = cutoff[PENDING_SAMPLER] - STORE_BLOCK_S;
	if ((r = store_tiers_live(c, &live)) != STORE_OK || (r = flush_staged(c, m->now, &rows)) != STORE_OK)
		return r;
	for (int k = 0; k < PENDING_KINDS; k++)
		if ((r = flush_pending(m->st, c, (enum pending_kind)k, cutoff[k], &points[k])) != STORE_OK)
			return r;
	if (rows > 0 || points[PENDING_SAMPLER] > 0 || points[PENDING_REPORTED] > 0)
		log_debug("%s: %zu staged samples, %zu of the sampler's and %zu reported encoded", __func__, rows,
			  points[PENDING_SAMPLER], points[PENDING_REPORTED]);
	if ((r = store_tiers_upkeep(m->st, c, m->now, live)) != STORE_OK)
		return r;
	for (int k = 0; k < PENDING_KINDS; k++)
		if (cutoff[k] > *store_pending_mark(m->st, (enum pending_kind)k))
			*store_pending_mark(m->st, (enum pending_kind)k) = cutoff[k];
	return STORE_OK;
}

int
store_series_maintain(struct store *st, double now, bool wait)
{
	struct maintain *m;

	if (wait)
		return store_write(st, apply_maintain, &(struct maintain){st, now});
	if ((m = malloc(sizeof(*m))) == NULL)
		return STORE_EBUSY;
	*m = (struct maintain){st, now};
	return store_post(st, apply_maintain, m, free);
}
