/*
 * How long each tier keeps a series, and the size the whole store keeps to
 * (sql/016_series_tiers.sql).  The tiers, finest first:
 *
 *   raw      dense series' points as sent (series_raw, series_times), for
 *            raw_hours;
 *   second   per-second data: every other series' blocks (series_blocks:
 *            the sampler's points) and the dense ones' summaries
 *            (series_seconds), for retention_days;
 *   minute   per-minute summaries, one block per series and hour
 *            (series_minutes; series_minute rows of older databases), 90 days;
 *   hour     per-hour rows (series_hour), kept.
 *
 * Data leaves a tier when it is older than the tier keeps it or when the
 * store is over its budget: then the oldest of the finest tier that holds
 * anything goes first (a span of raw points, an hour of per-second data
 * into minutes, an hour of minutes, a day of hours), until the database's
 * pages in use are under the budget less room for the WAL and a margin.
 * Jobs, trials, configs, verdicts and the cluster outboxes are never
 * touched.  "Under budget" is of bytes on disk: the database file, its WAL
 * and its shared memory.  A file keeps its size when pages are freed
 * (they go to its freelist and are reused); a database created with
 * auto_vacuum=INCREMENTAL gives the excess back with incremental_vacuum
 * when the file itself is over the budget (a budget lowered, the first
 * start on a database of an older dlprofd); an older database is turned
 * into one by a VACUUM, once, when that happens (store.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "array.h"
#include "log.h"
#include "series_codec.h"
#include "series_summary.h"
#include "store_internal.h"
#include "store_series.h"

#define HOUR_S 3600
#define MINUTES_IN_HOUR 60
#define SPAN_MAX 2147483647.0
/* The most units (a span, an hour) one upkeep retires or deletes: a writer transaction stays short. */
#define UPKEEP_UNITS_MAX 64
/* The budget is kept to this much below it once enforced, so it is not enforced again every minute. */
#define BUDGET_HYSTERESIS 0.05
#define BUDGET_MARGIN 0.05

static const char sql_raw_delete[] = "DELETE FROM series_raw WHERE key < ?1";
static const char sql_times_delete[] = "DELETE FROM series_times WHERE key < ?1";
static const char sql_raw_oldest[] = "SELECT min(key) FROM series_raw";
static const char sql_second_oldest[] =
	"SELECT min(k) FROM (SELECT min(key) AS k FROM series_blocks UNION ALL SELECT min(key) FROM series_seconds"
	" UNION ALL SELECT min(key) FROM series_raw)";
static const char sql_hour_blocks[] = "SELECT key, data FROM series_blocks WHERE key >= ?1 AND key < ?2";
static const char sql_hour_seconds[] = "SELECT key, data FROM series_seconds WHERE key >= ?1 AND key < ?2";
static const char sql_hour_blocks_delete[] = "DELETE FROM series_blocks WHERE key < ?1";
static const char sql_hour_seconds_delete[] = "DELETE FROM series_seconds WHERE key < ?1";
static const char sql_minutes_get[] = "SELECT data FROM series_minutes WHERE key = ?1";
static const char sql_minutes_put[] = "INSERT OR REPLACE INTO series_minutes (key, data) VALUES (?1, ?2)";
static const char sql_minutes_delete[] = "DELETE FROM series_minutes WHERE key < ?1";
static const char sql_minutes_oldest[] =
	"SELECT min(t) FROM (SELECT min(key) / 4294967296 * 3600 AS t FROM series_minutes"
	" UNION ALL SELECT min(t) FROM series_minute)";
static const char sql_old_minutes_delete[] = "DELETE FROM series_minute WHERE t < ?1";
static const char sql_hours_oldest[] = "SELECT min(t) FROM series_hour";
static const char sql_hours_delete[] = "DELETE FROM series_hour WHERE t < ?1";
static const char sql_page_count[] = "PRAGMA page_count";
static const char sql_freelist[] = "PRAGMA freelist_count";
static const char sql_page_size[] = "PRAGMA page_size";
static const char sql_auto_vacuum[] = "PRAGMA auto_vacuum";
static const char sql_incremental_fmt[] = "PRAGMA incremental_vacuum(%lld)";   /* a pragma takes no parameter */
_Static_assert(STORE_BLOCK_KEY_SPAN == 4294967296LL, "the tiers' SQL spells the key's span out");

/* The first key of the span (of span_s seconds) that holds t, clamped to the keys there are. */
static int64_t
first_key(double t, double span_s)
{
	double idx = fmin(fmax(floor(t / span_s), 0), SPAN_MAX);

	return (int64_t)idx * STORE_BLOCK_KEY_SPAN;
}

/* Steps sql bound to one integer (and its rows ignored). */
static int
exec_int(struct store_conn *c, const char *sql, int64_t arg, const char *what)
{
	sqlite3_stmt *s = store_stmt_id(c, sql, arg);
	int rc;

	if (s == NULL)
		return STORE_EIO;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		;
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? STORE_OK : store_fail(c, rc, what);
}

/* The one number sql gives; *has false when it is NULL. */
static int
query_number(struct store_conn *c, const char *sql, double *v, bool *has)
{
	sqlite3_stmt *s = store_stmt(c, sql);
	int rc;

	*has = false;
	if (s == NULL)
		return STORE_EIO;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL) {
		*v = sqlite3_column_double(s, 0);
		*has = true;
	}
	sqlite3_reset(s);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? STORE_OK : store_fail(c, rc, sql);
}

/* Raw points of the spans that ended before t go, with their spans' time tables. */
static int
raw_drop_before(struct store_conn *c, double t)
{
	int64_t k = first_key(t, STORE_BLOCK_S);
	int r = exec_int(c, sql_raw_delete, k, "delete raw points");

	return r != STORE_OK ? r : exec_int(c, sql_times_delete, k, "delete time tables");
}

/* ---- per-second data into minutes ---- */

/* One series' minutes of the hour being retired. */
struct minute_acc {
	int64_t series_id;
	struct summary_acc m[MINUTES_IN_HOUR];
	bool used[MINUTES_IN_HOUR];
};

struct hour_retire {
	double hour;                    /* the hour's start */
	struct minute_acc *acc;         /* by series id, ascending */
	size_t n, cap;
};

/* The accumulator of series_id, added in order when absent; NULL when out of memory. */
static struct minute_acc *
acc_of(struct hour_retire *h, int64_t series_id)
{
	size_t lo = 0, hi = h->n;
	struct minute_acc *na;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (h->acc[mid].series_id < series_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < h->n && h->acc[lo].series_id == series_id)
		return &h->acc[lo];
	if ((na = array_grow(h->acc, &h->cap, h->n + 1, sizeof(*na))) == NULL)
		return NULL;
	h->acc = na;
	memmove(&h->acc[lo + 1], &h->acc[lo], (h->n - lo) * sizeof(*na));
	h->n++;
	memset(&h->acc[lo], 0, sizeof(*na));
	h->acc[lo].series_id = series_id;
	return &h->acc[lo];
}

/* Adds a summary (a point: n 1) at t to its minute; its last is the minute's when tlast is the latest. */
static void
acc_add(struct hour_retire *h, struct minute_acc *a, double t, double tlast, const struct series_summary *x)
{
	double m = floor((t - h->hour) / 60);
	size_t i;

	if (!(m >= 0 && m < MINUTES_IN_HOUR))
		return;
	i = (size_t)m;
	if (!a->used[i]) {
		summary_acc_start(&a->m[i], h->hour + 60.0 * (double)i);
		a->used[i] = true;
	}
	summary_acc_add(&a->m[i], x->n, x->sum, x->min, x->max, x->last, tlast);
}

/* Adds the rows of sql over the hour (points of series_blocks, or summaries of series_seconds). */
static int
hour_read(struct store_conn *c, struct hour_retire *h, const char *sql, bool summaries)
{
	sqlite3_stmt *s = store_stmt_id(c, sql, first_key(h->hour, STORE_BLOCK_S));
	struct series_cols cols;
	struct minute_acc *a;
	int rc, r = STORE_OK;

	if (s == NULL)
		return STORE_EIO;
	sqlite3_bind_int64(s, 2, first_key(h->hour + HOUR_S, STORE_BLOCK_S));
	while (r == STORE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t key = sqlite3_column_int64(s, 0);

		if (series_decode_block(sqlite3_column_blob(s, 1), (size_t)sqlite3_column_bytes(s, 1), NULL, 0, NULL, 0,
					&cols) < 0 ||
		    cols.ncols != (summaries ? SUMMARY_COLS : 1)) {
			log_warnx("%s: series %lld: a block at %lld does not decode; dropped", __func__,
				  (long long)(key % STORE_BLOCK_KEY_SPAN), (long long)(key / STORE_BLOCK_KEY_SPAN * STORE_BLOCK_S));
			if (cols.t != NULL)
				series_cols_free(&cols);
			continue;
		}
		if ((a = acc_of(h, key % STORE_BLOCK_KEY_SPAN)) == NULL)
			r = STORE_EIO;
		for (size_t i = 0; a != NULL && i < cols.n; i++) {
			struct series_summary x;

			if (summaries)
				x = (struct series_summary){cols.t[i], cols.v[SUMMARY_N][i], cols.v[SUMMARY_SUM][i],
							    cols.v[SUMMARY_MIN][i], cols.v[SUMMARY_MAX][i],
							    cols.v[SUMMARY_LAST][i]};
			else
				x = (struct series_summary){cols.t[i], 1, cols.v[0][i], cols.v[0][i], cols.v[0][i], cols.v[0][i]};
			acc_add(h, a, cols.t[i], cols.t[i], &x);
		}
		series_cols_free(&cols);
	}
	if (r == STORE_OK && rc != SQLITE_DONE)
		r = store_fail(c, rc, "read per-second data");
	sqlite3_reset(s);
	return r;
}

int
store_minutes_decode(const unsigned char *buf, size_t len, struct series_summary **out, size_t *n)
{
	struct series_cols cols;

	*out = NULL;
	*n = 0;
	if (series_decode_block(buf, len, NULL, 0, NULL, 0, &cols) < 0)
		return -1;
	if (cols.ncols != SUMMARY_COLS || (*out = malloc(cols.n * sizeof(**out))) == NULL) {
		series_cols_free(&cols);
		return -1;
	}
	series_summary_join(cols.t, (const double *const *)cols.v, cols.n, *out);
	*n = cols.n;
	series_cols_free(&cols);
	return 0;
}

/* Adds the minutes already stored for the accumulator's series and hour (late points retired again). */
static int
acc_merge_stored(struct store_conn *c, struct hour_retire *h, struct minute_acc *a, int64_t key)
{
	sqlite3_stmt *s = store_stmt_id(c, sql_minutes_get, key);
	struct series_summary *old = NULL;
	size_t n = 0;
	int rc, bad = 0;

	if (s == NULL)
		return STORE_EIO;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		bad = store_minutes_decode(sqlite3_column_blob(s, 0), (size_t)sqlite3_column_bytes(s, 0), &old, &n) < 0;
	sqlite3_reset(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_fail(c, rc, "read minutes");
	if (bad)
		log_warnx("%s: series %lld: the minutes of the hour at %.0f do not decode; replaced", __func__,
			  (long long)a->series_id, h->hour);
	/* The stored minute's last stands: what arrives late is older than what was there. */
	for (size_t i = 0; i < n; i++)
		acc_add(h, a, old[i].t, INFINITY, &old[i]);
	free(old);
	return STORE_OK;
}

/* Writes one series' minutes of the hour (merged with what was stored). */
static int
acc_write(struct store_conn *c, struct hour_retire *h, struct minute_acc *a)
{
	struct series_summary s[MINUTES_IN_HOUR];
	double t[MINUTES_IN_HOUR], mem[SUMMARY_COLS][MINUTES_IN_HOUR], *cols[SUMMARY_COLS];
	sqlite3_stmt *put;
	unsigned char *buf;
	size_t n = 0, len;
	int64_t key;
	int r, rc;

	if (!store_tier_key(a->series_id, (int64_t)h->hour, HOUR_S, &key))
		return STORE_OK;
	if ((r = acc_merge_stored(c, h, a, key)) != STORE_OK)
		return r;
	for (size_t i = 0; i < MINUTES_IN_HOUR; i++)
		if (a->used[i])
			s[n++] = summary_acc_get(&a->m[i]);
	if (n == 0)
		return STORE_OK;
	for (int k = 0; k < SUMMARY_COLS; k++)
		cols[k] = mem[k];
	series_summary_split(s, n, t, cols);
	if (series_encode_block(t, n, (const double *const *)cols, SUMMARY_COLS, NULL, 0, NULL, &buf, &len) < 0)
		return STORE_EIO;
	if ((put = store_stmt(c, sql_minutes_put)) == NULL) {
		free(buf);
		return STORE_EIO;
	}
	sqlite3_bind_int64(put, 1, key);
	sqlite3_bind_blob(put, 2, buf, (int)len, free);
	rc = sqlite3_step(put);
	sqlite3_reset(put);
	return rc == SQLITE_DONE ? STORE_OK : store_fail(c, rc, "write minutes");
}

/*
 * The per-second data of the hour at `hour` (and any before it) becomes
 * per-minute summaries: series_blocks' points and series_seconds'
 * summaries, while raw points and time tables of those spans just go.
 */
static int
retire_hour(struct store_conn *c, double hour)
{
	struct hour_retire h = {.hour = hour};
	int64_t end = first_key(hour + HOUR_S, STORE_BLOCK_S);
	int r;

	if ((r = hour_read(c, &h, sql_hour_blocks, false)) == STORE_OK)
		r = hour_read(c, &h, sql_hour_seconds, true);
	for (size_t i = 0; i < h.n && r == STORE_OK; i++)
		r = acc_write(c, &h, &h.acc[i]);
	free(h.acc);
	if (r == STORE_OK)
		r = exec_int(c, sql_hour_blocks_delete, end, "delete retired blocks");
	if (r == STORE_OK)
		r = exec_int(c, sql_hour_seconds_delete, end, "delete retired summaries");
	return r == STORE_OK ? raw_drop_before(c, hour + HOUR_S) : r;
}

/* The start of the hour of the oldest per-second data; *has false when there is none. */
static int
second_oldest_hour(struct store_conn *c, double *hour, bool *has)
{
	double key;
	int r = query_number(c, sql_second_oldest, &key, has);

	if (r == STORE_OK && *has)
		*hour = floor(floor(key / (double)STORE_BLOCK_KEY_SPAN) * STORE_BLOCK_S / HOUR_S) * HOUR_S;
	return r;
}

/* Retires the hours of per-second data that ended before t, oldest first, at most *units of them. */
static int
retire_seconds_before(struct store_conn *c, double t, int *units)
{
	double hour;
	bool has;
	int r;

	while (*units > 0) {
		if ((r = second_oldest_hour(c, &hour, &has)) != STORE_OK || !has || !(hour + HOUR_S <= t))
			return r;
		if ((r = retire_hour(c, hour)) != STORE_OK)
			return r;
		(*units)--;
	}
	return STORE_OK;
}

/* Minutes (blocks and older databases' rows) of the hours that ended before t go. */
static int
minutes_drop_before(struct store_conn *c, double t)
{
	int r = exec_int(c, sql_minutes_delete, first_key(t, HOUR_S), "delete old minutes");

	return r != STORE_OK ? r : exec_int(c, sql_old_minutes_delete, (int64_t)floor(t / 60) * 60, "delete old minute rows");
}

/* ---- the budget ---- */

static int
pragma_int(struct store_conn *c, const char *sql, int64_t *v)
{
	bool has;
	double d = 0;
	int r = query_number(c, sql, &d, &has);

	*v = (int64_t)d;
	return r;
}

static int64_t
file_bytes(const char *path, const char *suffix)
{
	char p[1100];
	struct stat sb;

	snprintf(p, sizeof(p), "%s%s", path, suffix);
	return stat(p, &sb) == 0 ? (int64_t)sb.st_size : 0;
}

/* The database's pages as the connection sees them (its own transaction's changes included) and its files. */
static int
measure(struct store_conn *c, const char *path, struct store_usage *u)
{
	int64_t pages, free_pages, page_size;
	int r;

	if ((r = pragma_int(c, sql_page_count, &pages)) != STORE_OK ||
	    (r = pragma_int(c, sql_freelist, &free_pages)) != STORE_OK ||
	    (r = pragma_int(c, sql_page_size, &page_size)) != STORE_OK)
		return r;
	u->page_size = page_size;
	u->file_bytes = pages * page_size;
	u->free_bytes = free_pages * page_size;
	u->wal_bytes = file_bytes(path, "-wal") + file_bytes(path, "-shm");
	u->bytes = u->file_bytes + u->wal_bytes;
	return STORE_OK;
}

int64_t
store_wal_limit(int64_t budget)
{
	int64_t pages = budget / 32 / 4096;

	return 4096 * (pages < 16 ? 16 : pages > 1000 ? 1000 : pages);
}

int
store_tiers_live(struct store_conn *c, int64_t *live)
{
	int64_t pages, free_pages, page_size;
	int r;

	if ((r = pragma_int(c, sql_page_count, &pages)) != STORE_OK ||
	    (r = pragma_int(c, sql_freelist, &free_pages)) != STORE_OK ||
	    (r = pragma_int(c, sql_page_size, &page_size)) != STORE_OK)
		return r;
	*live = (pages - free_pages) * page_size;
	return STORE_OK;
}

/*
 * The pages in use the budget allows: room is left for the WAL (what an
 * upkeep's commit wrote to it at most, and a checkpoint's worth besides),
 * for what one upkeep's flush adds (the file grows by it before anything
 * is freed), and a margin.
 */
static double
budget_live_max(const struct store_budget_seen *seen, int64_t budget)
{
	int64_t wal = 2 * store_wal_limit(budget);

	if (seen->wal_peak > wal)
		wal = seen->wal_peak;
	return (double)budget * (1 - BUDGET_MARGIN) - (double)wal - (double)seen->growth_peak;
}

/*
 * Frees one unit of the finest tier that holds anything: the oldest span of
 * raw points, the oldest hour of per-second data (into minutes), the oldest
 * hour of minutes, the oldest day of hours.  *none: nothing was left to free.
 */
static int
budget_free_one(struct store_conn *c, bool *none)
{
	double t;
	bool has;
	int r;

	*none = false;
	if ((r = query_number(c, sql_raw_oldest, &t, &has)) != STORE_OK)
		return r;
	if (has)
		return raw_drop_before(c, (floor(t / (double)STORE_BLOCK_KEY_SPAN) + 1) * STORE_BLOCK_S);
	if ((r = second_oldest_hour(c, &t, &has)) != STORE_OK)
		return r;
	if (has)
		return retire_hour(c, t);
	if ((r = query_number(c, sql_minutes_oldest, &t, &has)) != STORE_OK)
		return r;
	if (has)
		return minutes_drop_before(c, floor(t / HOUR_S) * HOUR_S + HOUR_S);
	if ((r = query_number(c, sql_hours_oldest, &t, &has)) != STORE_OK)
		return r;
	if (has)
		return exec_int(c, sql_hours_delete, (int64_t)t + 86400, "delete old hours");
	*none = true;
	return STORE_OK;
}

/*
 * Gives free pages at the file's end back, enough to bring the files under
 * the budget, at most `most` bytes of them (each moved page is written
 * through the WAL).  A file without auto_vacuum is left to one VACUUM.
 */
static int
budget_shrink(struct store *st, struct store_conn *c, const struct store_usage *u, int64_t budget, int64_t most)
{
	int64_t mode = 0, excess = u->bytes + store_budget_of(st)->wal_peak - budget, pages;
	int r;

	if (excess <= 0 || u->free_bytes == 0 || (r = pragma_int(c, sql_auto_vacuum, &mode)) != STORE_OK)
		return STORE_OK;
	if (mode != 2) {
		store_budget_of(st)->vacuum_due = !store_budget_of(st)->vacuum_failed;
		return STORE_OK;
	}
	if (excess > most)
		excess = most;
	pages = (excess + u->page_size - 1) / u->page_size;
	if (pages * u->page_size > u->free_bytes)
		pages = u->free_bytes / u->page_size;
	return pages > 0 ? store_exec_pragma(c, sql_incremental_fmt, pages) : STORE_OK;
}

/*
 * Keeps the pages in use under budget_live_max, freeing the finest and
 * oldest first (at most *units of it and about `most` bytes: what is freed
 * is written through the WAL), then gives the file's excess back.
 */
static int
budget_keep(struct store *st, struct store_conn *c, int64_t budget, int64_t live_before, int *units)
{
	struct store_budget_seen *seen = store_budget_of(st);
	int64_t most = budget / 16 > 65536 ? budget / 16 : 65536, live0;
	double live_max, target;
	struct store_usage u;
	bool none = false;
	int r;

	if ((r = measure(c, store_path(st), &u)) != STORE_OK)
		return r;
	live0 = u.file_bytes - u.free_bytes;
	if (live0 - live_before > seen->growth_peak)
		seen->growth_peak = live0 - live_before;
	live_max = budget_live_max(seen, budget);
	target = live_max - BUDGET_HYSTERESIS * (double)budget;
	if ((double)live0 > live_max) {
		while (*units > 0 && !none && (double)(u.file_bytes - u.free_bytes) > target &&
		       live0 - (u.file_bytes - u.free_bytes) < most) {
			if ((r = budget_free_one(c, &none)) != STORE_OK || (r = measure(c, store_path(st), &u)) != STORE_OK)
				return r;
			(*units)--;
		}
		if (none && !seen->short_logged) {
			seen->short_logged = true;
			log_warnx("store: storage_budget %lld bytes is too small: no history is left and %lld bytes are in"
				  " use (jobs, trials, the newest samples); raise it",
				  (long long)budget, (long long)(u.file_bytes - u.free_bytes));
		}
	}
	return budget_shrink(st, c, &u, budget, most);
}

int
store_tiers_upkeep(struct store *st, struct store_conn *c, double now, int64_t live_before)
{
	struct store_limits l;
	int units = UPKEEP_UNITS_MAX, r = STORE_OK;

	store_limits_get(st, &l);
	if (l.raw_s > 0)
		r = raw_drop_before(c, now - l.raw_s);
	if (r == STORE_OK && l.second_s > 0)
		r = retire_seconds_before(c, now - l.second_s, &units);
	if (r == STORE_OK && l.minute_s > 0)
		r = minutes_drop_before(c, now - l.minute_s);
	if (r == STORE_OK && l.budget > 0)
		r = budget_keep(st, c, l.budget, live_before, &units);
	/* What this commit writes to the WAL is noted, and the WAL cut back, once it is committed. */
	store_budget_of(st)->checkpoint_due = true;
	return r;
}

/* ---- what the store holds ---- */

/* The oldest and newest data of a tier from sql's min and max (span starts, or times); to the span's end. */
static int
tier_span(struct store_conn *c, const char *min_sql, const char *max_sql, double span_s, struct store_tier *t)
{
	double lo = 0, hi = 0;
	bool has_lo, has_hi;
	int r;

	if ((r = query_number(c, min_sql, &lo, &has_lo)) != STORE_OK || (r = query_number(c, max_sql, &hi, &has_hi)) != STORE_OK)
		return r;
	if (!has_lo || !has_hi)
		return STORE_OK;
	if (!t->any || lo < t->from)
		t->from = lo;
	if (!t->any || hi + span_s > t->to)
		t->to = hi + span_s;
	t->any = true;
	return STORE_OK;
}

static const char sql_raw_min[] = "SELECT min(key) / 4294967296 * 600 FROM series_raw";
static const char sql_raw_max[] = "SELECT max(key) / 4294967296 * 600 FROM series_raw";
static const char sql_blocks_min[] = "SELECT min(key) / 4294967296 * 600 FROM series_blocks";
static const char sql_blocks_max[] = "SELECT max(key) / 4294967296 * 600 FROM series_blocks";
static const char sql_seconds_min[] = "SELECT min(key) / 4294967296 * 600 FROM series_seconds";
static const char sql_seconds_max[] = "SELECT max(key) / 4294967296 * 600 FROM series_seconds";
static const char sql_minutes_min[] = "SELECT min(key) / 4294967296 * 3600 FROM series_minutes";
static const char sql_minutes_max[] = "SELECT max(key) / 4294967296 * 3600 FROM series_minutes";
static const char sql_old_minutes_min[] = "SELECT min(t) FROM series_minute";
static const char sql_old_minutes_max[] = "SELECT max(t) FROM series_minute";
static const char sql_hours_min[] = "SELECT min(t) FROM series_hour";
static const char sql_hours_max[] = "SELECT max(t) FROM series_hour";

int
store_usage(struct store *st, struct store_usage *u)
{
	struct store_conn *c = store_reader(st);
	struct store_limits l;
	int r;

	memset(u, 0, sizeof(*u));
	store_limits_get(st, &l);
	u->budget = l.budget;
	u->tier[STORE_TIER_RAW].keep_s = l.raw_s;
	u->tier[STORE_TIER_SECOND].keep_s = l.second_s;
	u->tier[STORE_TIER_MINUTE].keep_s = l.minute_s;
	if ((r = measure(c, store_path(st), u)) == STORE_OK)
		r = tier_span(c, sql_raw_min, sql_raw_max, STORE_BLOCK_S, &u->tier[STORE_TIER_RAW]);
	if (r == STORE_OK)
		r = tier_span(c, sql_blocks_min, sql_blocks_max, STORE_BLOCK_S, &u->tier[STORE_TIER_SECOND]);
	if (r == STORE_OK)
		r = tier_span(c, sql_seconds_min, sql_seconds_max, STORE_BLOCK_S, &u->tier[STORE_TIER_SECOND]);
	if (r == STORE_OK)
		r = tier_span(c, sql_minutes_min, sql_minutes_max, HOUR_S, &u->tier[STORE_TIER_MINUTE]);
	if (r == STORE_OK)
		r = tier_span(c, sql_old_minutes_min, sql_old_minutes_max, 60, &u->tier[STORE_TIER_MINUTE]);
	if (r == STORE_OK)
		r = tier_span(c, sql_hours_min, sql_hours_max, HOUR_S, &u->tier[STORE_TIER_HOUR]);
	store_reader_done(st, c);
	return r;
}

const char *const store_tier_names[STORE_TIERS] = {"raw", "second", "minute", "hour"};
