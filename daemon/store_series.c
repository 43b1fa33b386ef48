/*
 * Reads for sampling and time series.  A series answer is read from the
 * tier that fits its bucket width (sql/007, 016): under a second, a dense
 * series' points as sent while its raw window keeps them (series_raw);
 * under STORE_BLOCK_S, decoded blocks or a dense series' per-second
 * summaries; the blocks' and summaries' own totals up to an hour; the
 * hour tier beyond.  Spans past the per-second retention come from the
 * minute tier (series_minutes, and series_minute rows of older databases),
 * and the staged samples not yet in blocks are always added, and the
 * sampler's and the jobs' points still in the writer's memory
 * (store_pending.c) from the flushed marks the reader's snapshot shows, so
 * an answer is as new as the last tick or step and never holds more than
 * about STORE_SERIES_MAX_POINTS points whatever the range.
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
#include "series_codec.h"
#include "series_summary.h"
#include "store_series.h"

static const char sql_running[] =
	"SELECT j.id, j.pid, j.started, j.external_id, w.name, j.source FROM jobs j "
	"JOIN workloads w ON w.id = j.workload_id WHERE j.state = 'running' ORDER BY j.id DESC";
static const char sql_find_external[] =
	"SELECT id FROM jobs WHERE external_id = ?1 AND state = 'running' ORDER BY id DESC LIMIT 1";
static const char sql_job_span[] = "SELECT started, ended FROM jobs WHERE id = ?1";
/* The series of a name (one phase, or all with ?3 NULL); phase '' is the samples without one. */
static const char sql_series_ids[] =
	"SELECT id, dense FROM series WHERE job_id = ?1 AND name = ?2 AND (?3 IS NULL OR phase = ?3)";
/* The staged (unflushed) points: the newest, not yet in blocks. */
static const char sql_staged_pts[] =
	"SELECT t, value FROM samples WHERE job_id = ?1 AND name = ?2 AND t >= ?3 AND t <= ?4"
	" AND (?5 IS NULL OR coalesce(phase, '') = ?5)";
/*
 * One series' blocks from the key ?1 to ?2 (store_block_keys): a key a span,
 * each looked up by rowid.  A series that lived an hour of a 14-day range
 * costs 2,016 lookups that find nothing, about a millisecond.
 */
#define SQL_SPAN_KEYS \
	"WITH RECURSIVE k(key) AS (SELECT ?1 UNION ALL SELECT key + 4294967296 FROM k WHERE key < ?2) "
_Static_assert(STORE_BLOCK_KEY_SPAN == 4294967296LL && STORE_BLOCK_S == 600, "the block keys' SQL spells them out");
static const char sql_blocks_raw[] =
	SQL_SPAN_KEYS "SELECT k.key, 0, b.data FROM k JOIN series_blocks b ON b.key = k.key";
/*
 * One series' (?3) span totals from the key ?1 to ?2, from the indexes that
 * cluster them by series (sql/019): a span lookup each would visit a table
 * page a span.
 */
#define SQL_SERIES_SUMS(table) \
	"SELECT key / 4294967296 * 600, n, sum, min, max FROM " table \
	" WHERE key % 4294967296 = ?3 AND key BETWEEN ?1 AND ?2"
static const char sql_blocks_sum[] = SQL_SERIES_SUMS("series_blocks");
/*
 * A dense series' spans: each its raw points (with ?3, while kept), or its
 * per-second summaries, or (a span of one point a second at most, or one
 * written before sql/016) its block; what the second column says.
 */
static const char sql_dense_raw[] =
	SQL_SPAN_KEYS "SELECT k.key, CASE WHEN ?3 AND r.key IS NOT NULL THEN 2 WHEN s.key IS NOT NULL THEN 1 ELSE 0 END,"
	" CASE WHEN ?3 AND r.key IS NOT NULL THEN r.data WHEN s.key IS NOT NULL THEN s.data ELSE b.data END FROM k"
	" LEFT JOIN series_raw r ON ?3 AND r.key = k.key LEFT JOIN series_seconds s ON s.key = k.key"
	" LEFT JOIN series_blocks b ON b.key = k.key WHERE r.key IS NOT NULL OR s.key IS NOT NULL OR b.key IS NOT NULL";
/* A dense series' spans are summaries, or a block where a span has none (see above). */
static const char sql_dense_sum[] =
	SQL_SERIES_SUMS("series_seconds") " UNION ALL " SQL_SERIES_SUMS("series_blocks b")
	" AND NOT EXISTS (SELECT 1 FROM series_seconds s WHERE s.key = b.key)";
/* One series' minute blocks of the hours from key ?1 to ?2. */
static const char sql_minute_blocks[] =
	"WITH RECURSIVE k(key) AS (SELECT ?1 UNION ALL SELECT key + 4294967296 FROM k WHERE key < ?2) "
	"SELECT b.key / 4294967296 * 3600, b.data FROM k JOIN series_minutes b ON b.key = k.key";
/* The newest hour any series has minutes of: a series' hours after it need no lookup. */
static const char sql_minutes_newest[] = "SELECT max(key) / 4294967296 * 3600 FROM series_minutes";
static const char sql_minutes[] =
	"SELECT t, n, sum, min, max FROM series_minute WHERE series_id = ?1 AND t > ?2 AND t <= ?3";
static const char sql_hours[] =
	"SELECT t, n, sum, min, max FROM series_hour WHERE series_id = ?1 AND t > ?2 AND t <= ?3";
static const char sql_marks[] = "SELECT (SELECT t FROM sampler_flushed), (SELECT t FROM reported_flushed)";
/* Every name and phase a job has, flushed or staged (those in memory are added). */
static const char sql_job_names[] =
	"SELECT name, phase FROM series WHERE job_id = ?1"
	" UNION SELECT DISTINCT name, coalesce(phase, '') FROM samples WHERE job_id = ?1";

static void
copy_col(sqlite3_stmt *s, int col, char *buf, size_t len)
{
	const unsigned char *v = sqlite3_column_text(s, col);

	snprintf(buf, len, "%s", v != NULL ? (const char *)v : "");
}

/* One row of sql_running into a struct store_running_job (elem). */
static void
running_from_row(sqlite3_stmt *s, void *elem)
{
	struct store_running_job *j = elem;

	j->id = sqlite3_column_int64(s, 0);
	j->pid = sqlite3_column_int64(s, 1);
	j->started = sqlite3_column_double(s, 2);
	copy_col(s, 3, j->external_id, sizeof(j->external_id));
	copy_col(s, 4, j->workload, sizeof(j->workload));
	copy_col(s, 5, j->source, sizeof(j->source));
}

int
store_jobs_running(struct store *st, struct store_running_job **out, size_t *n)
{
	struct store_conn *c = store_reader(st);
	void *rows;
	int r = store_rows_read(c, store_stmt(c, sql_running), sizeof(**out), running_from_row, "running jobs", &rows, n);

	store_reader_done(st, c);
	if (r != STORE_OK)
		return r;
	*out = rows;
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
		if ((s = store_stmt_id(c, sql_job_span, q->job_id)) == NULL)
			return STORE_EIO;
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

enum tier { TIER_RAW, TIER_BLOCK, TIER_HOUR };
static const char *const tier_names[] = {"raw", "block", "hour"};

/* One bucket, or one point while a raw answer is small enough to keep its points. */
struct acc {
	double n, sum, min, max, tsum;  /* tsum: the sum of the points' times */
	double tlast, last;             /* the latest addition's time and last value */
};

/*
 * A series read into buckets of width seconds from from.  A raw read keeps
 * its points themselves (pts) while they fit the answer, so a short series
 * is shown as sampled; past STORE_SERIES_MAX_POINTS they go into buckets.
 */
struct reader {
	struct store_conn *c;
	struct store *st;               /* its points in memory */
	double mark[PENDING_KINDS];     /* the snapshot's flushed marks: those before them are in blocks */
	double minutes_newest;          /* the newest hour with minutes of any series; NAN: none */
	double from, to, width;
	bool to_open;                   /* to itself excluded (buckets), or included (series) */
	enum tier tier;
	struct acc *b;                  /* nb buckets, allocated on first use */
	size_t nb;
	struct acc *pts;                /* raw points kept; NULL once bucketed */
	size_t npts, cap;
	bool keep_points;
	int r;                          /* STORE_OK or the first failure */
};

static void
acc_add(struct acc *a, double t, const struct series_summary *x)
{
	if (a->n == 0) {
		a->min = x->min;
		a->max = x->max;
	} else {
		a->min = fmin(a->min, x->min);
		a->max = fmax(a->max, x->max);
	}
	if (a->n == 0 || t >= a->tlast) {
		a->tlast = t;
		a->last = x->last;
	}
	a->n += x->n;
	a->sum += x->sum;
	a->tsum += t * x->n;
}

static void
bucket_add(struct reader *rd, double t, const struct series_summary *x)
{
	double i = floor((t - rd->from) / rd->width);

	if (rd->b == NULL && rd->r == STORE_OK && (rd->b = calloc(rd->nb, sizeof(*rd->b))) == NULL)
		rd->r = STORE_EIO;
	if (rd->b != NULL && i >= 0 && i < (double)rd->nb)
		acc_add(&rd->b[(size_t)i], t, x);
}

/* Adds x (n values: a point has n 1) at mean time t to the read, if inside its range. */
static void
reader_add(struct reader *rd, double t, const struct series_summary *x)
{
	struct acc *np;

	if (t < rd->from || t > rd->to || (rd->to_open && t >= rd->to) || x->n <= 0)
		return;
	if (rd->keep_points && rd->npts < STORE_SERIES_MAX_POINTS) {
		if (rd->npts == rd->cap) {
			if ((np = array_grow(rd->pts, &rd->cap, rd->npts + 1, sizeof(*np))) == NULL) {
				rd->r = STORE_EIO;
				return;
			}
			rd->pts = np;
		}
		rd->pts[rd->npts++] = (struct acc){x->n, x->sum, x->min, x->max, t * x->n, t, x->last};
		return;
	}
	if (rd->keep_points) {
		/* One point too many: the kept ones go into buckets, and so does everything after. */
		rd->keep_points = false;
		for (size_t i = 0; i < rd->npts; i++) {
			const struct acc *k = &rd->pts[i];
			bucket_add(rd, k->tsum / k->n, &(struct series_summary){k->tlast, k->n, k->sum, k->min, k->max, k->last});
		}
		free(rd->pts);
		rd->pts = NULL;
		rd->npts = rd->cap = 0;
	}
	bucket_add(rd, t, x);
}

/* Adds one point. */
static void
reader_point(struct reader *rd, double t, double v)
{
	reader_add(rd, t, &(struct series_summary){t, 1, v, v, v, v});
}

/* Adds the rows of s, bound: t, n, sum, min, max; t + half is the bucket's time, its mean its last. */
static void
read_aggregate_rows(struct reader *rd, sqlite3_stmt *s, double half)
{
	struct series_summary x;
	int rc;

	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		x = (struct series_summary){sqlite3_column_double(s, 0), sqlite3_column_double(s, 1),
					    sqlite3_column_double(s, 2), sqlite3_column_double(s, 3),
					    sqlite3_column_double(s, 4), 0};
		x.last = x.n > 0 ? x.sum / x.n : 0;
		reader_add(rd, x.t + half, &x);
	}
	if (rc != SQLITE_DONE)
		rd->r = store_fail(rd->c, rc, "series aggregates");
	sqlite3_reset(s);
}

/* A tier's rows (sql: bound to series, lo, hi) from lo to the reader's end. */
static void
read_aggregates(struct reader *rd, const char *sql, int64_t id, double lo, double half)
{
	sqlite3_stmt *s = store_stmt(rd->c, sql);

	if (s == NULL) {
		rd->r = STORE_EIO;
		return;
	}
	sqlite3_bind_int64(s, 1, id);
	sqlite3_bind_double(s, 2, lo);
	sqlite3_bind_double(s, 3, rd->to);
	read_aggregate_rows(rd, s, half);
}

/* The statement sql over the series' blocks that may hold points of the reader's range; NULL when none. */
static sqlite3_stmt *
blocks_stmt(struct reader *rd, const char *sql, int64_t id)
{
	sqlite3_stmt *s;
	int64_t first, last;

	if (!store_block_keys(id, rd->from - STORE_BLOCK_S, rd->to, &first, &last))
		return NULL;
	if ((s = store_stmt(rd->c, sql)) == NULL) {
		rd->r = STORE_EIO;
		return NULL;
	}
	sqlite3_bind_int64(s, 1, first);
	sqlite3_bind_int64(s, 2, last);
	return s;
}

static void
read_block_sums(struct reader *rd, int64_t id, bool dense)
{
	sqlite3_stmt *s = blocks_stmt(rd, dense ? sql_dense_sum : sql_blocks_sum, id);

	if (s == NULL)
		return;
	sqlite3_bind_int64(s, 3, id);
	read_aggregate_rows(rd, s, STORE_BLOCK_S / 2.0);
}

/* Summaries (a second's or a minute's, of width seconds) into the read, each at its middle. */
static void
read_summaries(struct reader *rd, const struct series_summary *x, size_t n, double width)
{
	for (size_t i = 0; i < n; i++)
		reader_add(rd, x[i].t + width / 2, &x[i]);
}

/* One span's row of blocks_stmt: a block's points (kind 0), per-second summaries (1), raw points (2). */
static void
read_span(struct reader *rd, int64_t id, int64_t job_id, sqlite3_stmt *s)
{
	int64_t key = sqlite3_column_int64(s, 0), t0 = key / STORE_BLOCK_KEY_SPAN * STORE_BLOCK_S;
	int kind = sqlite3_column_int(s, 1);
	const unsigned char *buf = sqlite3_column_blob(s, 2);
	size_t len = (size_t)sqlite3_column_bytes(s, 2);
	struct series_summary *x;
	struct series_cols cols;
	int r = kind == 2 ? store_raw_decode(rd->c, job_id, t0, buf, len, &cols)
			  : series_decode_block(buf, len, NULL, 0, NULL, 0, &cols) < 0 ? STORE_ENOTFOUND : STORE_OK;

	if (r == STORE_OK && cols.ncols != (kind == 1 ? SUMMARY_COLS : 1)) {
		series_cols_free(&cols);
		r = STORE_ENOTFOUND;
	}
	if (r != STORE_OK) {
		if (r == STORE_ENOTFOUND)
			log_warnx("%s: series %lld: a block does not decode; skipped", __func__, (long long)id);
		else
			rd->r = r;
		return;
	}
	if (kind != 1) {
		for (size_t i = 0; i < cols.n; i++)
			reader_point(rd, cols.t[i], cols.v[0][i]);
	} else if ((x = malloc(cols.n * sizeof(*x))) != NULL) {
		series_summary_join(cols.t, (const double *const *)cols.v, cols.n, x);
		read_summaries(rd, x, cols.n, 1);
		free(x);
	} else {
		rd->r = STORE_EIO;
	}
	series_cols_free(&cols);
}

/* A series' spans: blocks; a dense one's raw points under a second's width, else its summaries. */
static void
read_spans(struct reader *rd, int64_t id, int64_t job_id, bool dense)
{
	sqlite3_stmt *s = blocks_stmt(rd, dense ? sql_dense_raw : sql_blocks_raw, id);
	int rc = SQLITE_DONE;

	if (s == NULL)
		return;
	if (dense)
		sqlite3_bind_int(s, 3, rd->width < 1);
	while (rd->r == STORE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW)
		read_span(rd, id, job_id, s);
	if (rd->r == STORE_OK && rc != SQLITE_DONE)
		rd->r = store_fail(rd->c, rc, "series blocks");
	sqlite3_reset(s);
}

/* The series' minute blocks over the range, up to the newest hour that has any. */
static void
read_minute_blocks(struct reader *rd, int64_t id)
{
	sqlite3_stmt *s;
	struct series_summary *x;
	size_t n;
	int64_t first, last;
	int rc = SQLITE_DONE;

	if (isnan(rd->minutes_newest) ||
	    !store_tier_key(id, (int64_t)fmax(floor((rd->from - 3600) / 3600), 0) * 3600, 3600, &first) ||
	    !store_tier_key(id, (int64_t)fmax(floor(fmin(rd->to, rd->minutes_newest) / 3600), 0) * 3600, 3600, &last) ||
	    first > last)
		return;
	if ((s = store_stmt(rd->c, sql_minute_blocks)) == NULL) {
		rd->r = STORE_EIO;
		return;
	}
	sqlite3_bind_int64(s, 1, first);
	sqlite3_bind_int64(s, 2, last);
	while (rd->r == STORE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (store_minutes_decode(sqlite3_column_blob(s, 1), (size_t)sqlite3_column_bytes(s, 1), &x, &n) < 0) {
			log_warnx("%s: series %lld: a block of minutes does not decode; skipped", __func__, (long long)id);
			continue;
		}
		read_summaries(rd, x, n, 60);
		free(x);
	}
	if (rd->r == STORE_OK && rc != SQLITE_DONE)
		rd->r = store_fail(rd->c, rc, "series minutes");
	sqlite3_reset(s);
}

/* The flushed points of one series, from the tier that fits the width. */
static void
read_series_id(struct reader *rd, int64_t id, int64_t job_id, bool dense)
{
	if (rd->tier == TIER_HOUR) {
		read_aggregates(rd, sql_hours, id, rd->from - 3600, 1800);
		return;
	}
	/* Spans past the per-second retention are minutes; the rest are blocks and summaries. */
	read_aggregates(rd, sql_minutes, id, rd->from - 60, 30);
	read_minute_blocks(rd, id);
	if (rd->tier == TIER_BLOCK)
		read_block_sums(rd, id, dense);
	else
		read_spans(rd, id, job_id, dense);
}

static void
read_staged(struct reader *rd, int64_t job_id, const char *name, const char *phase)
{
	sqlite3_stmt *s = store_stmt(rd->c, sql_staged_pts);
	double v;
	int rc;

	if (s == NULL) {
		rd->r = STORE_EIO;
		return;
	}
	sqlite3_bind_int64(s, 1, job_id);
	sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
	sqlite3_bind_double(s, 3, rd->from);
	sqlite3_bind_double(s, 4, rd->to);
	if (phase != NULL)
		sqlite3_bind_text(s, 5, phase, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		v = sqlite3_column_double(s, 1);
		reader_point(rd, sqlite3_column_double(s, 0), v);
	}
	if (rc != SQLITE_DONE)
		rd->r = store_fail(rd->c, rc, "staged samples");
	sqlite3_reset(s);
}

/* The points in memory of one series (phase NULL: every phase), from the snapshot's flushed marks. */
static void
read_pending(struct reader *rd, int64_t job_id, const char *name, const char *phase)
{
	struct series_point *p;
	size_t n;

	for (int k = 0; k < PENDING_KINDS && rd->r == STORE_OK; k++) {
		if (pending_copy(store_pending_of(rd->st, (enum pending_kind)k), job_id, name, phase,
				 fmax(rd->from, rd->mark[k]), nextafter(rd->to, INFINITY), &p, &n) < 0) {
			rd->r = STORE_EIO;
			return;
		}
		for (size_t i = 0; i < n; i++)
			reader_point(rd, p[i].t, p[i].v);
		free(p);
	}
}

/* Reads one name of a job (phase NULL: every phase; "": none) from every tier and the staged tail. */
static void
read_name(struct reader *rd, int64_t job_id, const char *name, const char *phase)
{
	sqlite3_stmt *s = store_stmt(rd->c, sql_series_ids);
	int64_t ids[64];
	bool dense[64];
	size_t n = 0;
	int rc;

	if (s == NULL) {
		rd->r = STORE_EIO;
		return;
	}
	sqlite3_bind_int64(s, 1, job_id);
	sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
	if (phase != NULL)
		sqlite3_bind_text(s, 3, phase, -1, SQLITE_STATIC);
	/* Ids first: the reads below reuse statements this one must not hold open.  A name has a few phases. */
	while ((rc = sqlite3_step(s)) == SQLITE_ROW && n < sizeof(ids) / sizeof(ids[0])) {
		dense[n] = sqlite3_column_int(s, 1) != 0;
		ids[n++] = sqlite3_column_int64(s, 0);
	}
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		rd->r = store_fail(rd->c, rc, "series ids");
	sqlite3_reset(s);
	for (size_t i = 0; i < n && rd->r == STORE_OK; i++)
		read_series_id(rd, ids[i], job_id, dense[i]);
	if (rd->r == STORE_OK)
		read_staged(rd, job_id, name, phase);
	if (rd->r == STORE_OK)
		read_pending(rd, job_id, name, phase);
}

/* The flushed marks of the points in memory in this reader's snapshot. */
static int
read_marks(struct store_conn *c, double *mark)
{
	sqlite3_stmt *s = store_stmt(c, sql_marks);
	int rc;

	for (int k = 0; k < PENDING_KINDS; k++)
		mark[k] = INFINITY;
	if (s == NULL)
		return STORE_EIO;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW && (sqlite3_column_type(s, 0) == SQLITE_NULL || sqlite3_column_type(s, 1) == SQLITE_NULL))
		rc = SQLITE_CORRUPT;
	if (rc == SQLITE_ROW) {
		mark[PENDING_SAMPLER] = sqlite3_column_double(s, 0);
		mark[PENDING_REPORTED] = sqlite3_column_double(s, 1);
	}
	sqlite3_reset(s);
	return rc == SQLITE_ROW ? STORE_OK : store_fail(c, rc == SQLITE_DONE ? SQLITE_CORRUPT : rc, "flushed marks");
}

/* The newest hour of the minute tier's blocks (NAN when there are none). */
static int
read_minutes_newest(struct store_conn *c, double *t)
{
	sqlite3_stmt *s = store_stmt(c, sql_minutes_newest);
	int rc;

	*t = NAN;
	if (s == NULL)
		return STORE_EIO;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL)
		*t = sqlite3_column_double(s, 0);
	sqlite3_reset(s);
	return rc == SQLITE_ROW ? STORE_OK : store_fail(c, rc, "newest minutes");
}

/* Prepares a read of [from, to] in buckets of width, from the tier that fits it. */
static void
reader_init(struct reader *rd, struct store *st, struct store_conn *c, double from, double to, double width,
	    bool keep_points)
{
	memset(rd, 0, sizeof(*rd));
	rd->c = c;
	rd->st = st;
	rd->r = read_marks(c, rd->mark);
	if (rd->r == STORE_OK)
		rd->r = read_minutes_newest(c, &rd->minutes_newest);
	rd->from = from;
	rd->to = to;
	rd->width = width > 0 ? width : 1e-3;
	rd->nb = (size_t)fmin(floor((to - from) / rd->width) + 1, 1e7);
	rd->tier = rd->width >= 3600 ? TIER_HOUR : rd->width >= STORE_BLOCK_S ? TIER_BLOCK : TIER_RAW;
	rd->keep_points = keep_points && rd->tier == TIER_RAW;
}

static void
reader_free(struct reader *rd)
{
	free(rd->b);
	free(rd->pts);
}

static int
cmp_acc_t(const void *a, const void *b)
{
	const struct acc *x = a, *y = b;
	double tx = x->tsum / x->n, ty = y->tsum / y->n;

	return (tx > ty) - (tx < ty);
}

/* The read as points [t, mean] and bands [min, max], in time order. */
static int
reader_json(struct reader *rd, json_t *points, json_t *bands)
{
	struct acc *a = rd->pts != NULL ? rd->pts : rd->b;
	size_t n = rd->pts != NULL ? rd->npts : rd->b != NULL ? rd->nb : 0;

	if (rd->pts != NULL)
		qsort(rd->pts, rd->npts, sizeof(*rd->pts), cmp_acc_t);
	for (size_t i = 0; i < n; i++) {
		if (a[i].n <= 0)
			continue;
		if (json_array_append_new(points, json_pack("[f,f]", a[i].tsum / a[i].n, a[i].sum / a[i].n)) < 0 ||
		    json_array_append_new(bands, json_pack("[f,f]", a[i].min, a[i].max)) < 0)
			return STORE_EIO;
	}
	return STORE_OK;
}

int
store_series(struct store *st, const struct store_series_query *q, struct store_series_answer *out)
{
	struct store_conn *c = store_reader(st);
	struct reader rd;
	double from, to, width;
	int r;

	memset(out, 0, sizeof(*out));
	r = series_range(c, q, &from, &to);
	if (r == STORE_OK) {
		width = (to - from) / STORE_SERIES_MAX_POINTS;
		if (q->has_step && q->step > width)
			width = q->step;
		reader_init(&rd, st, c, from, to, width, !q->has_step);
		read_name(&rd, q->job_id, q->name, q->phase);
		out->points = json_array();
		out->bands = json_array();
		r = rd.r;
		if (r == STORE_OK)
			r = out->points && out->bands ? reader_json(&rd, out->points, out->bands) : STORE_EIO;
		out->tier = tier_names[rd.tier];
		reader_free(&rd);
	}
	store_reader_done(st, c);
	if (r != STORE_OK) {
		json_decref(out->points);
		json_decref(out->bands);
		out->points = out->bands = NULL;
		return r;
	}
	out->from = from;
	out->to = to;
	return STORE_OK;
}

/* Whether a read of the series starting with prefix (NULL: all but the per-thread ones) wants name. */
static bool
name_wanted(const char *prefix, const char *name)
{
	if (prefix == NULL)
		return strncmp(name, STORE_THREAD_PREFIX, strlen(STORE_THREAD_PREFIX)) != 0;
	return strncmp(name, prefix, strlen(prefix)) == 0;
}

/* The names and phases of a job, copied: the reads that follow reuse the connection's statements. */
struct name_list {
	char (*v)[2][128];              /* name, phase */
	size_t n, cap;
	const char *prefix;             /* see name_wanted */
	int r;
};

/* Adds a series in memory unless the list has it. */
static void
name_add_pending(const char *name, const char *phase, void *arg)
{
	struct name_list *l = arg;
	char (*nv)[2][128];

	if (!name_wanted(l->prefix, name))
		return;
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i][1], phase) == 0 && strcmp(l->v[i][0], name) == 0)
			return;
	if ((nv = array_grow(l->v, &l->cap, l->n + 1, sizeof(*nv))) == NULL) {
		l->r = STORE_EIO;
		return;
	}
	l->v = nv;
	snprintf(l->v[l->n][0], sizeof(l->v[l->n][0]), "%s", name);
	snprintf(l->v[l->n][1], sizeof(l->v[l->n][1]), "%s", phase);
	l->n++;
}

static int
job_names(struct store *st, struct store_conn *c, int64_t job_id, const char *prefix, char (**names)[2][128],
	  size_t *n)
{
	sqlite3_stmt *s = store_stmt_id(c, sql_job_names, job_id);
	char (*v)[2][128] = NULL, (*nv)[2][128];
	size_t cap = 0;
	int rc, r = STORE_OK;

	*n = 0;
	if (s == NULL)
		return STORE_EIO;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (!name_wanted(prefix, (const char *)sqlite3_column_text(s, 0)))
			continue;
		if ((nv = array_grow(v, &cap, *n + 1, sizeof(*v))) == NULL) {
			r = STORE_EIO;
			break;
		}
		v = nv;
		copy_col(s, 0, v[*n][0], sizeof(v[*n][0]));
		copy_col(s, 1, v[*n][1], sizeof(v[*n][1]));
		(*n)++;
	}
	if (r == STORE_OK && rc != SQLITE_DONE)
		r = store_fail(c, rc, "job series names");
	sqlite3_reset(s);
	if (r == STORE_OK) {
		struct name_list l = {v, *n, cap, prefix, STORE_OK};

		for (int k = 0; k < PENDING_KINDS; k++)
			pending_job_names(store_pending_of(st, (enum pending_kind)k), job_id, name_add_pending, &l);
		v = l.v;
		*n = l.n;
		r = l.r;
	}
	if (r != STORE_OK)
		free(v);
	else
		*names = v;
	return r;
}

int
store_series_buckets(struct store *st, int64_t job_id, const char *prefix, double from, double to, double width,
		     store_bucket_fn fn, void *arg)
{
	struct store_conn *c = store_reader(st);
	char (*names)[2][128] = NULL;
	struct store_bucket b;
	struct reader rd;
	size_t n = 0;
	int r = job_names(st, c, job_id, prefix, &names, &n);

	for (size_t i = 0; i < n && r == STORE_OK; i++) {
		reader_init(&rd, st, c, from, to, width, false);
		rd.to_open = true;
		read_name(&rd, job_id, names[i][0], names[i][1]);
		r = rd.r;
		for (size_t k = 0; r == STORE_OK && rd.b != NULL && k < rd.nb; k++) {
			if (rd.b[k].n <= 0)
				continue;
			b = (struct store_bucket){names[i][0], names[i][1], (int64_t)k, rd.b[k].tsum / rd.b[k].n,
						  rd.b[k].sum / rd.b[k].n, rd.b[k].sum, rd.b[k].n, rd.b[k].last};
			fn(&b, arg);
		}
		reader_free(&rd);
	}
	free(names);
	store_reader_done(st, c);
	return r;
}
