/*
 * The series' upkeep in the writer (sql/007_series_blocks.sql): the flush
 * that encodes staged sample rows and the sampler's points in memory of
 * closed spans into one compressed block per series and span
 * (series_codec.h) and adds them to the hour tier, and the retention that turns blocks older than the raw retention
 * into per-minute rows and drops minute rows past theirs.  One posted
 * operation does both, once a minute (the sampler posts it).
 *
 * The sampler's points come from the writer's memory (store_pending.c):
 * each span is encoded as soon as it closes, the flushed mark moves past
 * it in the same savepoint, and the points leave memory at the next upkeep,
 * when no reader's snapshot can still predate the mark.
 *
 * A flush takes at most FLUSH_MAX_S of staged time, oldest first, so the
 * first flushes after the migration (days of rows staged) keep each
 * writer transaction short and catch up over a few minutes.  Points that
 * arrive for a span already flushed (a job's late batch) are merged into
 * its block.
 */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "log.h"
#include "series_codec.h"
#include "store_internal.h"
#include "store_series.h"

#define FLUSH_MAX_S (6 * 3600.0)
#define MINUTE_DAYS 90.0           /* per-minute rows are kept this long; hour rows always */
/* Spans below 2^31 (until the year ~42,800): span x STORE_BLOCK_KEY_SPAN + id stays an int64. */
#define SPAN_MAX 2147483647.0

static const char sql_staged_oldest[] = "SELECT min(t) FROM samples";
static const char sql_staged[] =
	"SELECT job_id, name, coalesce(phase, ''), t, value FROM samples WHERE t < ?1"
	" ORDER BY job_id, name, coalesce(phase, ''), t";
static const char sql_staged_delete[] = "DELETE FROM samples WHERE t < ?1";
static const char sql_series_insert[] =
	"INSERT INTO series (job_id, name, phase) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING";
static const char sql_series_id[] = "SELECT id FROM series WHERE job_id = ?1 AND name = ?2 AND phase = ?3";
static const char sql_block_get[] = "SELECT data FROM series_blocks WHERE key = ?1";
static const char sql_block_put[] =
	"INSERT OR REPLACE INTO series_blocks (key, n, sum, min, max, data) VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
static const char sql_hour_add[] =
	"INSERT INTO series_hour (series_id, t, n, sum, min, max) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
	" ON CONFLICT(series_id, t) DO UPDATE SET n = n + excluded.n, sum = sum + excluded.sum,"
	" min = min(min, excluded.min), max = max(max, excluded.max)";
static const char sql_minute_add[] =
	"INSERT INTO series_minute (series_id, t, n, sum, min, max) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"
	" ON CONFLICT(series_id, t) DO UPDATE SET n = n + excluded.n, sum = sum + excluded.sum,"
	" min = min(min, excluded.min), max = max(max, excluded.max)";
/* The blocks of every span before the one whose first key is ?1. */
static const char sql_old_blocks[] = "SELECT key, data FROM series_blocks WHERE key < ?1";
static const char sql_old_blocks_delete[] = "DELETE FROM series_blocks WHERE key < ?1";
static const char sql_old_minutes_delete[] = "DELETE FROM series_minute WHERE t < ?1";

static const char sql_mark_set[] = "UPDATE sampler_flushed SET t = ?1";

struct maintain {
	struct store *st;
	double now, raw_days;
};

/* One series' staged points of one span, as the flush gathers them. */
struct group {
	int64_t job_id, t0, series_id;
	char name[128], phase[128];
	int has_series;                 /* series_id is this key's */
	struct series_point *p;
	size_t n, cap;
};

struct summary {
	double n, sum, min, max;
};

static void
summarize(const struct series_point *p, size_t n, struct summary *s)
{
	s->n = (double)n;
	s->sum = 0;
	s->min = INFINITY;
	s->max = -INFINITY;
	for (size_t i = 0; i < n; i++) {
		s->sum += p[i].v;
		s->min = fmin(s->min, p[i].v);
		s->max = fmax(s->max, p[i].v);
	}
}

/* Adds a summary to the minute or hour row (sql) that starts at t. */
static int
tier_add(struct store_conn *c, const char *sql, int64_t series_id, int64_t t, const struct summary *s)
{
	sqlite3_stmt *st = store_stmt(c, sql);
	int rc;

	if (st == NULL)
		return STORE_EIO;
	sqlite3_bind_int64(st, 1, series_id);
	sqlite3_bind_int64(st, 2, t);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)s->n);
	sqlite3_bind_double(st, 4, s->sum);
	sqlite3_bind_double(st, 5, s->min);
	sqlite3_bind_double(st, 6, s->max);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? STORE_OK : store_fail(c, rc, "add to a series tier");
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

/* Adds the points of the group's block (key) already stored: late points for a flushed span. */
static int
group_merge_stored(struct store_conn *c, struct group *g, int64_t key)
{
	sqlite3_stmt *s = store_stmt(c, sql_block_get);
	struct series_point *old = NULL, *np;
	size_t nold = 0;
	int rc, r = STORE_OK;

	if (s == NULL)
		return STORE_EIO;
	sqlite3_bind_int64(s, 1, key);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		if (series_decode(sqlite3_column_blob(s, 0), (size_t)sqlite3_column_bytes(s, 0), &old, &nold) < 0) {
			/* Keeping the new points beats failing every flush from now on. */
			log_warnx("%s: series %lld: block at %lld does not decode; replaced", __func__,
				  (long long)g->series_id, (long long)g->t0);
			nold = 0;
		}
	} else if (rc != SQLITE_DONE) {
		r = store_fail(c, rc, "read a block");
	}
	sqlite3_reset(s);
	if (r == STORE_OK && nold > 0) {
		if ((np = array_grow(g->p, &g->cap, g->n + nold, sizeof(*np))) == NULL) {
			r = STORE_EIO;
		} else {
			g->p = np;
			memcpy(g->p + g->n, old, nold * sizeof(*old));
			g->n += nold;
			qsort(g->p, g->n, sizeof(*g->p), cmp_point_t);
		}
	}
	free(old);
	return r;
}

/* Encodes the group into its block and adds the new points to the hour tier. */
static int
group_flush(struct store_conn *c, struct group *g)
{
	struct summary fresh, all;
	unsigned char *buf = NULL;
	sqlite3_stmt *put;
	size_t len, nfresh = g->n;
	int64_t key;
	int r, rc;

	if (g->n == 0)
		return STORE_OK;
	summarize(g->p, nfresh, &fresh);
	if ((r = group_series(c, g)) != STORE_OK)
		return r;
	if (!store_block_key(g->series_id, g->t0, &key)) {
		/* Points before 1970 (ingest refuses them; a row written by hand), or the 2^32nd series. */
		log_warnx("%s: series %lld: %zu points in the span at %lld have no block; dropped", __func__,
			  (long long)g->series_id, g->n, (long long)g->t0);
		return STORE_OK;
	}
	if ((r = group_merge_stored(c, g, key)) != STORE_OK)
		return r;
	summarize(g->p, g->n, &all);
	/* A span holds 600 s of points: more than the codec's maximum only above ~100 Hz; the rest is dropped. */
	if (g->n > SERIES_CODEC_MAX_POINTS) {
		log_warnx("%s: series %lld: %zu points in the span at %lld, above %d; the newest are dropped", __func__,
			  (long long)g->series_id, g->n, (long long)g->t0, SERIES_CODEC_MAX_POINTS);
		g->n = SERIES_CODEC_MAX_POINTS;
		summarize(g->p, g->n, &all);
	}
	if (series_encode(g->p, g->n, &buf, &len) < 0)
		return STORE_EIO;
	if ((put = store_stmt(c, sql_block_put)) == NULL) {
		free(buf);
		return STORE_EIO;
	}
	sqlite3_bind_int64(put, 1, key);
	sqlite3_bind_int64(put, 2, (sqlite3_int64)all.n);
	sqlite3_bind_double(put, 3, all.sum);
	sqlite3_bind_double(put, 4, all.min);
	sqlite3_bind_double(put, 5, all.max);
	sqlite3_bind_blob(put, 6, buf, (int)len, free);
	rc = sqlite3_step(put);
	sqlite3_reset(put);
	if (rc != SQLITE_DONE)
		return store_fail(c, rc, "write a block");
	return tier_add(c, sql_hour_add, g->series_id, g->t0 / 3600 * 3600, &fresh);
}

/* Whether the row at s (job, name, phase) in the span t0 is outside g's series and span. */
static int
group_other(const struct group *g, sqlite3_stmt *s, int64_t t0)
{
	const char *name = (const char *)sqlite3_column_text(s, 1), *phase = (const char *)sqlite3_column_text(s, 2);

	return g->n == 0 || t0 != g->t0 || sqlite3_column_int64(s, 0) != g->job_id ||
	       strcmp(name != NULL ? name : "", g->name) != 0 || strcmp(phase != NULL ? phase : "", g->phase) != 0;
}

/* g starts gathering the row's series and span; it keeps its series id when only the span changes. */
static void
group_start(struct group *g, sqlite3_stmt *s, int64_t t0)
{
	const char *name = (const char *)sqlite3_column_text(s, 1), *phase = (const char *)sqlite3_column_text(s, 2);
	int64_t job = sqlite3_column_int64(s, 0);

	name = name != NULL ? name : "";
	phase = phase != NULL ? phase : "";
	if (!g->has_series || job != g->job_id || strcmp(name, g->name) != 0 || strcmp(phase, g->phase) != 0) {
		g->job_id = job;
		snprintf(g->name, sizeof(g->name), "%s", name);
		snprintf(g->phase, sizeof(g->phase), "%s", phase);
		g->has_series = 0;
	}
	g->t0 = t0;
	g->n = 0;
}

/* Runs sql bound to one number. */
static int
exec_bound(struct store_conn *c, const char *sql, double arg, const char *what)
{
	sqlite3_stmt *s = store_stmt(c, sql);
	int rc;

	if (s == NULL)
		return STORE_EIO;
	sqlite3_bind_double(s, 1, arg);
	rc = sqlite3_step(s);
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? STORE_OK : store_fail(c, rc, what);
}

/* Encodes the staged rows before cutoff into blocks and deletes them. */
static int
flush_staged(struct store_conn *c, double cutoff, size_t *rows)
{
	sqlite3_stmt *s = store_stmt(c, sql_staged);
	struct group g = {0};
	struct series_point *np;
	int rc = SQLITE_DONE, r = STORE_OK;
	int64_t t0;
	double t;

	*rows = 0;
	if (s == NULL)
		return STORE_EIO;
	sqlite3_bind_double(s, 1, cutoff);
	while (r == STORE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		t = sqlite3_column_double(s, 3);
		t0 = (int64_t)floor(t / STORE_BLOCK_S) * STORE_BLOCK_S;
		if (group_other(&g, s, t0)) {
			if ((r = group_flush(c, &g)) != STORE_OK)
				break;
			group_start(&g, s, t0);
		}
		if (g.n == g.cap) {
			if ((np = array_grow(g.p, &g.cap, g.n + 1, sizeof(*np))) == NULL) {
				r = STORE_EIO;
				break;
			}
			g.p = np;
		}
		g.p[g.n++] = (struct series_point){t, sqlite3_column_double(s, 4)};
		(*rows)++;
	}
	if (r == STORE_OK && rc != SQLITE_DONE)
		r = store_fail(c, rc, "read staged samples");
	sqlite3_reset(s);
	if (r == STORE_OK)
		r = group_flush(c, &g);
	free(g.p);
	if (r != STORE_OK)
		return r;
	return exec_bound(c, sql_staged_delete, cutoff, "delete flushed samples");
}

/*
 * The end of the staged time this flush takes: spans closed for a whole
 * span at least, at most FLUSH_MAX_S past the oldest.  Jobs' batches arrive
 * late by seconds to minutes (a client's last batch, its resend after the
 * daemon was away): while their span is staged they are a plain insert,
 * not a block decoded and encoded again; and every staged point stays a
 * row of samples for at least STORE_BLOCK_S, which readers of the recent
 * past (and tests of what a crash keeps) can count on.  The sampler's
 * points are never late and are not staged (flush_pending).
 */
static int
flush_cutoff(struct store_conn *c, double now, double *cutoff)
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
	if (!isnan(oldest)) {
		cap = (floor(oldest / STORE_BLOCK_S) + 1) * STORE_BLOCK_S + FLUSH_MAX_S;
		if (cap < *cutoff)
			*cutoff = cap;
	}
	return STORE_OK;
}

/* Adds a retired block's points to the minute tier. */
static int
block_to_minutes(struct store_conn *c, int64_t series_id, const struct series_point *p, size_t n)
{
	struct summary s;
	size_t i = 0, j;
	int64_t m;
	int r;

	while (i < n) {
		m = (int64_t)floor(p[i].t / 60.0) * 60;
		for (j = i; j < n && (int64_t)floor(p[j].t / 60.0) * 60 == m; j++)
			;
		summarize(p + i, j - i, &s);
		if ((r = tier_add(c, sql_minute_add, series_id, m, &s)) != STORE_OK)
			return r;
		i = j;
	}
	return STORE_OK;
}

/* Blocks whose span ended before cutoff become minute rows; minute rows past their retention go. */
static int
retire_blocks(struct store_conn *c, double cutoff, double minute_cutoff, size_t *nblocks)
{
	sqlite3_stmt *s = store_stmt(c, sql_old_blocks), *del;
	double span = floor(cutoff / STORE_BLOCK_S);   /* the first span that has not ended by cutoff */
	struct series_point *p;
	int rc = SQLITE_DONE, r = STORE_OK;
	int64_t key, series_id, first;
	size_t n;

	*nblocks = 0;
	if (s == NULL)
		return STORE_EIO;
	/* The first key of that span: its series 0's. */
	if (!(span > 0) || !store_block_key(0, (int64_t)fmin(span, SPAN_MAX) * STORE_BLOCK_S, &first))
		return exec_bound(c, sql_old_minutes_delete, minute_cutoff, "delete old minute rows");
	sqlite3_bind_int64(s, 1, first);
	while (r == STORE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		key = sqlite3_column_int64(s, 0);
		series_id = key % STORE_BLOCK_KEY_SPAN;
		if (series_decode(sqlite3_column_blob(s, 1), (size_t)sqlite3_column_bytes(s, 1), &p, &n) < 0) {
			log_warnx("%s: series %lld: block at %lld does not decode; dropped", __func__,
				  (long long)series_id, (long long)(key / STORE_BLOCK_KEY_SPAN * STORE_BLOCK_S));
			continue;
		}
		r = block_to_minutes(c, series_id, p, n);
		free(p);
		(*nblocks)++;
	}
	if (r == STORE_OK && rc != SQLITE_DONE)
		r = store_fail(c, rc, "read old blocks");
	sqlite3_reset(s);
	if (r != STORE_OK)
		return r;
	if ((del = store_stmt(c, sql_old_blocks_delete)) == NULL)
		return STORE_EIO;
	sqlite3_bind_int64(del, 1, first);
	rc = sqlite3_step(del);
	sqlite3_reset(del);
	if (rc != SQLITE_DONE)
		return store_fail(c, rc, "delete old blocks");
	return exec_bound(c, sql_old_minutes_delete, minute_cutoff, "delete old minute rows");
}

bool
store_block_key(int64_t series_id, int64_t t0, int64_t *key)
{
	if (series_id < 0 || series_id >= STORE_BLOCK_KEY_SPAN || t0 < 0 || t0 % STORE_BLOCK_S != 0 ||
	    (double)(t0 / STORE_BLOCK_S) > SPAN_MAX)
		return false;
	*key = t0 / STORE_BLOCK_S * STORE_BLOCK_KEY_SPAN + series_id;
	/* What readers and retention rely on: the key orders by span, then series, and gives both back. */
	assert(*key >= 0 && *key / STORE_BLOCK_KEY_SPAN == t0 / STORE_BLOCK_S &&
	       *key % STORE_BLOCK_KEY_SPAN == series_id);
	return true;
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

/* Encodes one series' points from memory (any order) into their spans' blocks. */
static int
flush_run(struct store_conn *c, struct pending_run *run, struct group *g)
{
	struct series_point *np;
	size_t i = 0, j;
	int r = STORE_OK;

	qsort(run->p, run->n, sizeof(*run->p), cmp_point_t);
	if (!g->has_series || g->job_id != run->job_id || strcmp(g->name, run->name) != 0) {
		g->job_id = run->job_id;
		snprintf(g->name, sizeof(g->name), "%s", run->name);
		g->phase[0] = '\0';
		g->has_series = 0;
	}
	while (r == STORE_OK && i < run->n) {
		g->t0 = (int64_t)floor(run->p[i].t / STORE_BLOCK_S) * STORE_BLOCK_S;
		for (j = i; j < run->n && (int64_t)floor(run->p[j].t / STORE_BLOCK_S) * STORE_BLOCK_S == g->t0; j++)
			;
		/* group_flush may add a stored block's points: g owns a copy. */
		if ((np = array_grow(g->p, &g->cap, j - i, sizeof(*np))) == NULL)
			return STORE_EIO;
		g->p = np;
		memcpy(g->p, run->p + i, (j - i) * sizeof(*g->p));
		g->n = j - i;
		r = group_flush(c, g);
		i = j;
	}
	return r;
}

/*
 * The sampler's points of the spans closed by now, from memory into blocks,
 * and the flushed mark past them; the points flushed at an earlier upkeep
 * (committed a minute ago at least) leave memory.
 */
static int
flush_pending(struct store *st, struct store_conn *c, double now, size_t *points)
{
	double *mark = store_pending_mark(st), cutoff = floor(now / STORE_BLOCK_S) * STORE_BLOCK_S;
	struct pending_run *runs = NULL;
	struct group g = {0};
	size_t nruns = 0;
	int r = STORE_OK;

	*points = 0;
	pending_prune(store_pending_of(st), *mark);
	if (!(cutoff > *mark))
		return STORE_OK;
	if (pending_take(store_pending_of(st), *mark, cutoff, &runs, &nruns) < 0)
		return STORE_EIO;
	for (size_t i = 0; i < nruns && r == STORE_OK; i++) {
		r = flush_run(c, &runs[i], &g);
		*points += runs[i].n;
	}
	free(g.p);
	pending_runs_free(runs, nruns);
	if (r != STORE_OK || (r = exec_bound(c, sql_mark_set, cutoff, "move the sampler's flushed mark")) != STORE_OK)
		return r;
	*mark = cutoff;
	return STORE_OK;
}

static int
apply_maintain(struct store_conn *c, void *arg)
{
	const struct maintain *m = arg;
	double cutoff = 0;
	size_t rows = 0, blocks = 0, points = 0;
	int r;

	if ((r = flush_cutoff(c, m->now, &cutoff)) != STORE_OK || (r = flush_staged(c, cutoff, &rows)) != STORE_OK ||
	    (r = flush_pending(m->st, c, m->now, &points)) != STORE_OK)
		return r;
	if (m->raw_days > 0 &&
	    (r = retire_blocks(c, m->now - m->raw_days * 86400.0, m->now - MINUTE_DAYS * 86400.0, &blocks)) != STORE_OK)
		return r;
	if (rows > 0 || points > 0 || blocks > 0)
		log_debug("%s: %zu staged samples before %.0f and %zu of the sampler's encoded; %zu blocks retired to"
			  " minutes", __func__, rows, cutoff, points, blocks);
	return STORE_OK;
}

int
store_series_maintain(struct store *st, double now, double raw_days, bool wait)
{
	struct maintain *m;

	if (wait)
		return store_write(st, apply_maintain, &(struct maintain){st, now, raw_days});
	if ((m = malloc(sizeof(*m))) == NULL)
		return STORE_EBUSY;
	*m = (struct maintain){st, now, raw_days};
	return store_post(st, apply_maintain, m, free);
}
