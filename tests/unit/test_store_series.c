/*
 * Tests of the series store: answers of at most ~1000 points with their
 * min/max bands, the job's life as the default range, ranges and phases;
 * the staged tail answered before any flush and the same answer after the
 * flush into blocks (bit for bit); the tier chosen by the span; retention
 * into per-minute rows; late points merged into a flushed block; and the
 * migrations of a schema-6 database (raw rows and per-minute rollups), of
 * a schema-9 one (blocks in a WITHOUT ROWID table), and of a database the
 * release before sql/016 wrote (tests/fixtures/store-b4c3343: every point
 * read back, before and after this store's first flush); the sampler's posted
 * points answered from memory, encoded when their span closes without a
 * staged row, and staged by a clean close; a job's acknowledged batches
 * read back after a crash; a failed commit undoing what its transaction
 * put in memory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <sqlite3.h>

#include "../fixtures/store-b4c3343/points.h"
#include "migrations.h"
#include "series_codec.h"
#include "store.h"
#include "store_fixture.h"
#include "store_internal.h"
#include "store_series.h"

/* 200 s into a ten-minute span, 20 s into a minute. */
#define T0 1700000000.0
#define N 5000

struct fx {
	char dir[256], db[300];
	struct store *st;
	int64_t job;
};

static const struct store_options opts = {.queue_limit = 1024, .readers = 2};

static int
fx_dir(struct fx *f)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/dlprof-test-series-XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return -1;
	snprintf(f->db, sizeof(f->db), "%s/db", f->dir);
	return 0;
}

/* Removes fx_dir's directory and all in it; 0 when done. */
static int
fx_remove_dir(const struct fx *f)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	return system(cmd) == 0 ? 0 : -1;
}

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct job_spec spec = {.workload = "w", .params_json = "{}", .hw_class = "test", .objective = OBJECTIVE_THROUGHPUT,
				.source = "registered", .started = T0};
	struct sample *s = calloc(N, sizeof(*s));
	int i;

	if (f == NULL || s == NULL || fx_dir(f) < 0)
		return -1;
	if ((f->st = store_open(f->db, &opts)) == NULL || store_job_register(f->st, &spec, &f->job) != STORE_OK)
		return -1;
	/* 5000 samples a second apart: value = i; plus a phase series. */
	for (i = 0; i < N; i++)
		s[i] = (struct sample){f->job, T0 + i, "cpu.cores", (double)i, NULL};
	if (store_samples_write(f->st, s, N) != STORE_OK)
		return -1;
	for (i = 0; i < 10; i++)
		s[i] = (struct sample){f->job, T0 + i, "phase_time_s", i % 2 ? 2.0 : 1.0, i % 2 ? "lstm" : "data"};
	if (store_samples_write(f->st, s, 10) != STORE_OK)
		return -1;
	/* Ended: its whole life is T0 .. T0 + 5000 (a running job's reaches now). */
	if (store_job_end(f->st, f->job, T0 + N - 1, false, 0) != STORE_OK)
		return -1;
	free(s);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;
	int r;

	store_close(f->st);
	r = fx_remove_dir(f);
	free(f);
	return r;
}

static double
point(json_t *pts, size_t i, int k)
{
	return json_real_value(json_array_get(json_array_get(pts, i), (size_t)k));
}

static double
mean_of(json_t *points)
{
	double sum = 0;
	size_t i;

	for (i = 0; i < json_array_size(points); i++)
		sum += point(points, i, 1);
	return sum / (double)json_array_size(points);
}

static void
answer_free(struct store_series_answer *a)
{
	json_decref(a->points);
	json_decref(a->bands);
}

/* Flushes every closed span (the store's "now" far after the data), keeping all raw. */
static void
flush_all(struct fx *f)
{
	assert_int_equal(store_series_maintain(f->st, T0 + 86400, true), STORE_OK);
}

static void
whole_life_downsampled(void **state)
{
	struct fx *f = *state;
	struct store_series_query q = {.job_id = f->job, .name = "cpu.cores"};
	struct store_series_answer a;

	for (int flushed = 0; flushed < 2; flushed++) {
		if (flushed)
			flush_all(f);
		assert_int_equal(store_series(f->st, &q, &a), STORE_OK);
		assert_true(a.from == T0);
		assert_string_equal(a.tier, "raw");
		assert_true(json_array_size(a.points) <= STORE_SERIES_MAX_POINTS + 1);
		assert_true(json_array_size(a.points) >= STORE_SERIES_MAX_POINTS / 2);
		assert_int_equal(json_array_size(a.bands), json_array_size(a.points));
		/* Buckets keep the mean: 0..4999 averages 2499.5; each band spans its bucket's values. */
		assert_float_equal(mean_of(a.points), 2499.5, 5.0);
		assert_true(point(a.bands, 0, 0) == 0 && point(a.bands, 0, 1) >= 4 && point(a.bands, 0, 1) <= 5);
		answer_free(&a);
	}
	assert_int_equal(store_fixture_query_int(f->db, "SELECT count(*) FROM samples"), 0);
	assert_int_equal(store_fixture_query_int(f->db, "SELECT sum(n) FROM series_blocks"), N + 10);
}

static void
short_range_is_raw(void **state)
{
	struct fx *f = *state;
	struct store_series_query q = {.job_id = f->job, .name = "cpu.cores", .has_from = true, .from = T0 + 10,
				       .has_to = true, .to = T0 + 19};
	struct store_series_answer a;

	assert_int_equal(store_series(f->st, &q, &a), STORE_OK);
	assert_int_equal(json_array_size(a.points), 10);
	assert_float_equal(point(a.points, 0, 0), T0 + 10, 1e-6);
	assert_float_equal(point(a.points, 9, 1), 19, 1e-9);
	assert_float_equal(point(a.bands, 9, 0), 19, 1e-9);
	answer_free(&a);
	/* A coarser step: ten seconds into one point, its band 10..19. */
	q.has_step = true;
	q.step = 10;
	assert_int_equal(store_series(f->st, &q, &a), STORE_OK);
	assert_int_equal(json_array_size(a.points), 1);
	assert_float_equal(point(a.points, 0, 1), 14.5, 1e-9);
	assert_float_equal(point(a.bands, 0, 0), 10, 1e-9);
	assert_float_equal(point(a.bands, 0, 1), 19, 1e-9);
	answer_free(&a);
}

static void
phase_filter_and_unknown_job(void **state)
{
	struct fx *f = *state;
	struct store_series_query q = {.job_id = f->job, .name = "phase_time_s", .phase = "lstm", .has_from = true,
				       .from = T0, .has_to = true, .to = T0 + 9.5};
	struct store_series_answer a;

	for (int flushed = 0; flushed < 2; flushed++) {
		if (flushed)
			flush_all(f);
		assert_int_equal(store_series(f->st, &q, &a), STORE_OK);
		assert_int_equal(json_array_size(a.points), 5);
		assert_float_equal(mean_of(a.points), 2.0, 1e-9);
		answer_free(&a);
		q.phase = NULL;   /* every phase */
		assert_int_equal(store_series(f->st, &q, &a), STORE_OK);
		assert_int_equal(json_array_size(a.points), 10);
		answer_free(&a);
		q.phase = "lstm";
	}
	q.job_id = 999;
	assert_int_equal(store_series(f->st, &q, &a), STORE_ENOTFOUND);
}

/* Odd values that only a bit-exact codec gives back. */
static void
flush_is_bit_exact(void **state)
{
	struct fx *f = *state;
	struct sample s[300];
	struct store_series_query q = {.job_id = f->job, .name = "noisy", .has_from = true, .from = T0,
				       .has_to = true, .to = T0 + 400};
	struct store_series_answer before, after;

	for (int i = 0; i < 300; i++)
		s[i] = (struct sample){f->job, T0 + i * 1.337 + 1e-7 * i, "noisy", sin(i) * 1e-300 - i / 3.0, NULL};
	assert_int_equal(store_samples_write(f->st, s, 300), STORE_OK);
	assert_int_equal(store_series(f->st, &q, &before), STORE_OK);
	flush_all(f);
	assert_int_equal(store_series(f->st, &q, &after), STORE_OK);
	assert_int_equal(json_array_size(before.points), 300);
	assert_true(json_equal(before.points, after.points));
	for (int i = 0; i < 300; i++) {
		assert_true(point(after.points, (size_t)i, 0) == s[i].t);
		assert_true(point(after.points, (size_t)i, 1) == s[i].value);
	}
	answer_free(&before);
	answer_free(&after);
}

static void
tier_by_span(void **state)
{
	struct fx *f = *state;
	struct store_series_query q = {.job_id = f->job, .name = "cpu.cores", .has_from = true, .from = T0 - 200,
				       .has_to = true, .to = T0 - 200 + 600 * 1000.0};
	struct store_series_answer a;

	flush_all(f);
	/* 600 s buckets: the blocks' summaries, one a span: 0..399 then 400..999 and so on. */
	assert_int_equal(store_series(f->st, &q, &a), STORE_OK);
	assert_string_equal(a.tier, "block");
	assert_int_equal(json_array_size(a.points), (N + 200 + 599) / 600);
	assert_float_equal(point(a.points, 0, 1), 199.5, 1e-9);
	assert_float_equal(point(a.bands, 1, 0), 400, 1e-9);
	assert_float_equal(point(a.bands, 1, 1), 999, 1e-9);
	answer_free(&a);
	/* Hour buckets: the hour tier.  T0 is 800 s into its hour. */
	q.from = T0 - 800;
	q.to = q.from + 3600 * 1000.0;
	assert_int_equal(store_series(f->st, &q, &a), STORE_OK);
	assert_string_equal(a.tier, "hour");
	assert_int_equal(json_array_size(a.points), 2);
	assert_float_equal(point(a.points, 0, 1), 1399.5, 1e-9);   /* 0..2799 */
	assert_float_equal(point(a.bands, 1, 0), 2800, 1e-9);
	assert_float_equal(point(a.bands, 1, 1), 4999, 1e-9);
	answer_free(&a);
}

static void
retention_keeps_minutes(void **state)
{
	struct fx *f = *state;
	struct store_series_query q = {.job_id = f->job, .name = "cpu.cores", .has_from = true, .from = T0 - 60,
				       .has_to = true, .to = T0 + 3200 - 0.5};
	struct store_series_answer a;

	/*
	 * Per-second data kept 1 day, as of T0 + 86400 + 3000: the hour that
	 * ended at T0 + 2800 (T0 is 800 s into its hour; values 0..2799)
	 * becomes minutes: one for 0..39 (T0 is 20 s into its minute), then
	 * one per minute; values from 2800 stay as they were.
	 */
	flush_all(f);
	store_set_limits(f->st, &(struct store_limits){.second_s = 86400});
	assert_int_equal(store_series_maintain(f->st, T0 + 86400 + 3000, true), STORE_OK);
	assert_int_equal(store_fixture_query_int(f->db, "SELECT min(key) / 4294967296 * 600 FROM series_blocks"), (int64_t)T0 + 2800);
	assert_int_equal(store_series(f->st, &q, &a), STORE_OK);
	assert_int_equal(json_array_size(a.points), 1 + 46 + 400);
	assert_float_equal(point(a.points, 0, 0), T0 - 20 + 30, 1e-6);
	assert_float_equal(point(a.points, 0, 1), 19.5, 1e-9);
	assert_float_equal(point(a.bands, 0, 1), 39, 1e-9);
	assert_float_equal(point(a.points, 1, 1), 69.5, 1e-9);
	assert_float_equal(point(a.points, 47, 1), 2800, 1e-9);
	answer_free(&a);
	/* Again: nothing changes; one block of minutes for cpu.cores and one for each phase's series. */
	assert_int_equal(store_series_maintain(f->st, T0 + 86400 + 3000, true), STORE_OK);
	assert_int_equal(store_fixture_query_int(f->db, "SELECT count(*) FROM series_minutes"), 3);
	assert_int_equal(store_series(f->st, &q, &a), STORE_OK);
	assert_int_equal(json_array_size(a.points), 1 + 46 + 400);
	answer_free(&a);
}

static void
late_points_merge(void **state)
{
	struct fx *f = *state;
	struct store_series_query q = {.job_id = f->job, .name = "cpu.cores", .has_from = true, .from = T0 + 99,
				       .has_to = true, .to = T0 + 101};
	struct store_series_answer a;

	flush_all(f);
	assert_int_equal(store_samples_write(f->st, &(struct sample){f->job, T0 + 100.5, "cpu.cores", -1, NULL}, 1),
			 STORE_OK);
	flush_all(f);
	assert_int_equal(store_fixture_query_int(f->db, "SELECT count(*) FROM samples"), 0);
	assert_int_equal(store_series(f->st, &q, &a), STORE_OK);
	assert_int_equal(json_array_size(a.points), 4);
	assert_float_equal(point(a.points, 2, 0), T0 + 100.5, 1e-9);
	assert_float_equal(point(a.points, 2, 1), -1, 1e-9);
	answer_free(&a);
	/* The hour tier counts it once. */
	assert_int_equal(store_fixture_query_int(f->db, "SELECT sum(n) FROM series_hour"), N + 10 + 1);
}

/*
 * A point before 1970 has no block (ingest refuses one; the store does not
 * count on it): it is dropped, and the flush that met it goes on.
 */
static void
points_before_1970_dropped_alone(void **state)
{
	struct fx *f = *state;
	struct store_series_query q = {.job_id = f->job, .name = "early", .has_from = true, .from = T0 - 10,
				       .has_to = true, .to = T0 + 10};
	struct sample early[2] = {{f->job, -30.0, "early", 1, NULL}, {f->job, 30.0, "early", 3, NULL}};
	struct store_series_answer a;

	flush_all(f);
	assert_int_equal(store_samples_write(f->st, early, 2), STORE_OK);
	assert_int_equal(store_series_maintain(f->st, 7200, true), STORE_OK);
	assert_int_equal(store_fixture_query_int(f->db, "SELECT count(*) FROM samples"), 0);
	/* The point at 30 s has its block: the one before 1970 did not stop the flush. */
	assert_int_equal(store_fixture_query_int(f->db, "SELECT count(*) FROM series_blocks WHERE key < 4294967296"), 1);
	assert_int_equal(store_fixture_query_int(f->db, "SELECT sum(n) FROM series_blocks"), N + 10 + 1);
	assert_int_equal(store_samples_write(f->st, &(struct sample){f->job, T0, "early", 2, NULL}, 1), STORE_OK);
	flush_all(f);
	assert_int_equal(store_series(f->st, &q, &a), STORE_OK);
	assert_int_equal(json_array_size(a.points), 1);
	assert_true(point(a.points, 0, 1) == 2);
	answer_free(&a);
}

/* The keys of a series' spans: t0 in (lo, hi], from 1970 on, ids below 2^32. */
static void
block_keys(void **state)
{
	int64_t k, first, last;

	(void)state;
	assert_true(store_block_key(7, 1200, &k) && k == 2 * STORE_BLOCK_KEY_SPAN + 7);
	assert_true(store_block_key(STORE_BLOCK_KEY_SPAN - 1, 0, &k) && k == STORE_BLOCK_KEY_SPAN - 1);
	assert_false(store_block_key(STORE_BLOCK_KEY_SPAN, 0, &k));
	assert_false(store_block_key(-1, 0, &k));
	assert_false(store_block_key(7, -600, &k));
	assert_false(store_block_key(7, 601, &k));
	/* (600, 1800]: the spans at 1200 and 1800; (599.5, 1799.9]: 600 and 1200. */
	assert_true(store_block_keys(7, 600, 1800, &first, &last));
	assert_true(first == 2 * STORE_BLOCK_KEY_SPAN + 7 && last == 3 * STORE_BLOCK_KEY_SPAN + 7);
	assert_true(store_block_keys(7, 599.5, 1799.9, &first, &last));
	assert_true(first == 1 * STORE_BLOCK_KEY_SPAN + 7 && last == 2 * STORE_BLOCK_KEY_SPAN + 7);
	/* Before 1970 clamps to the first span; nothing in (600, 1199]; no range of NaN or a bad id. */
	assert_true(store_block_keys(7, -1e300, 0, &first, &last) && first == 7 && last == 7);
	assert_false(store_block_keys(7, 600, 1199, &first, &last));
	assert_false(store_block_keys(7, NAN, 1e9, &first, &last));
	assert_false(store_block_keys(STORE_BLOCK_KEY_SPAN, 0, 1e9, &first, &last));
	/* The far future clamps below the int64's end. */
	assert_true(store_block_keys(7, 0, 1e300, &first, &last) && last > first && last % STORE_BLOCK_KEY_SPAN == 7);
}

/* A database as schema 6 wrote it: raw rows and per-minute rollups. */
static void
make_v6(const char *path)
{
	sqlite3 *db;
	char sql[512];

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	for (const struct migration *m = migrations; m->version && m->version <= 6; m++)
		assert_int_equal(sqlite3_exec(db, m->sql, NULL, NULL, NULL), SQLITE_OK);
	snprintf(sql, sizeof(sql),
		 "PRAGMA user_version = 6; PRAGMA application_id = %d;"
		 "INSERT INTO samples VALUES (0, %.17g, 'mem.used', 0.1, NULL), (0, %.17g, 'mem.used', 0.2, 'x');"
		 "INSERT INTO samples_rollup VALUES (0, %.1f, 'mem.used', '', 4, 2.5, 1, 4);",
		 0x646c7066, T0 + 0.123456789, T0 + 1, T0 - 20 - 3600);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

static void
migrates_schema_6(void **state)
{
	struct store_series_query q = {.job_id = 0, .name = "mem.used", .has_from = true, .from = T0 - 7200,
				       .has_to = true, .to = T0 + 10};
	struct store_series_answer staged, a;
	struct fx f;

	(void)state;
	assert_int_equal(fx_dir(&f), 0);
	make_v6(f.db);
	assert_non_null(f.st = store_open(f.db, &opts));
	assert_int_equal(store_series(f.st, &q, &staged), STORE_OK);
	assert_int_equal(store_series_maintain(f.st, T0 + 86400, true), STORE_OK);
	assert_int_equal(store_series(f.st, &q, &a), STORE_OK);
	/* The rollup as a minute row, the raw rows as they were, bit for bit after the flush. */
	assert_int_equal(json_array_size(a.points), 3);
	assert_true(json_equal(staged.points, a.points) && json_equal(staged.bands, a.bands));
	assert_float_equal(point(a.points, 0, 1), 2.5, 1e-12);
	assert_float_equal(point(a.bands, 0, 0), 1, 1e-12);
	assert_float_equal(point(a.bands, 0, 1), 4, 1e-12);
	assert_float_equal(point(a.points, 1, 0), T0 + 0.123456789, 1e-6);
	assert_true(point(a.points, 1, 1) == 0.1 && point(a.points, 2, 1) == 0.2);
	answer_free(&staged);
	answer_free(&a);
	assert_int_equal(store_fixture_query_int(f.db, "SELECT count(*) FROM samples"), 0);
	assert_int_equal(store_fixture_query_int(f.db, "SELECT count(*) FROM sqlite_master WHERE name = 'samples_rollup'"), 0);
	assert_int_equal(store_fixture_query_int(f.db, "SELECT count(*) FROM series"), 2);
	store_close(f.st);
	assert_int_equal(fx_remove_dir(&f), 0);
}

/*
 * A database as schema 9 wrote it: one node series with two blocks of 300
 * points, every 2 s (a constant, then 0.1 steps), in a WITHOUT ROWID table.
 */
static void
make_v9(const char *path)
{
	struct series_point p[300];
	sqlite3 *db;
	sqlite3_stmt *ins;
	unsigned char *buf;
	size_t len;
	char sql[256];

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	for (const struct migration *m = migrations; m->version && m->version <= 9; m++)
		assert_int_equal(sqlite3_exec(db, m->sql, NULL, NULL, NULL), SQLITE_OK);
	snprintf(sql, sizeof(sql), "PRAGMA user_version = 9; PRAGMA application_id = %d;"
		 "INSERT INTO series (id, job_id, name) VALUES (1, 0, 'mem.used')", 0x646c7066);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO series_blocks VALUES (1, ?1, ?2, 0, 0, 0, ?3)", -1, &ins,
					    NULL), SQLITE_OK);
	for (int b = 0; b < 2; b++) {
		for (int i = 0; i < 300; i++)
			p[i] = (struct series_point){T0 - 200 - 600 * (1 - b) + 2 * i, b ? 0.1 * i : 7.0};
		assert_int_equal(series_encode(p, 300, &buf, &len), 0);
		sqlite3_bind_int64(ins, 1, (sqlite3_int64)(T0 - 200 - 600 * (1 - b)));
		sqlite3_bind_int(ins, 2, 300);
		sqlite3_bind_blob(ins, 3, buf, (int)len, free);
		assert_int_equal(sqlite3_step(ins), SQLITE_DONE);
		sqlite3_reset(ins);
	}
	sqlite3_finalize(ins);
	sqlite3_close(db);
}

static void
migrates_schema_9(void **state)
{
	struct store_series_query q = {.job_id = 0, .name = "mem.used", .has_from = true, .from = T0 - 800,
				       .has_to = true, .to = T0 + 400};
	struct store_series_answer a;
	struct fx f;

	(void)state;
	assert_int_equal(fx_dir(&f), 0);
	make_v9(f.db);
	assert_non_null(f.st = store_open(f.db, &opts));
	assert_int_equal(store_series(f.st, &q, &a), STORE_OK);
	/* Every point of both blocks, bit for bit. */
	assert_int_equal(json_array_size(a.points), 600);
	for (int i = 0; i < 600; i++) {
		assert_true(point(a.points, (size_t)i, 0) == T0 - 800 + 2 * i);
		assert_true(point(a.points, (size_t)i, 1) == (i < 300 ? 7.0 : 0.1 * (i - 300)));
	}
	answer_free(&a);
	store_close(f.st);
	assert_int_equal(store_fixture_query_int(f.db, "SELECT count(rowid) FROM series_blocks"), 2);
	assert_int_equal(store_fixture_query_int(f.db, "SELECT count(*) FROM sqlite_master WHERE sql LIKE '%series_blocks%WITHOUT ROWID%'"),
			 0);
	/* Keyed by span and series (sql/015): neither of 010's indexes is left, only 019's of the spans' totals. */
	assert_int_equal(store_fixture_query_int(f.db, "SELECT count(*) FROM sqlite_master WHERE tbl_name = 'series_blocks'"
					 " AND type = 'index' AND name != 'series_blocks_series'"), 0);
	assert_int_equal(store_fixture_query_int(f.db, "SELECT count(*) FROM series_blocks WHERE key % 4294967296 = 1"
					 " AND key / 4294967296 * 600 IN (1699999200, 1699999800)"), 2);   /* T0 - 800, T0 - 200 */
	assert_int_equal(fx_remove_dir(&f), 0);
}

/* The answer over [from, to] of job's name (phase, or NULL): its points, at most 1000, no step. */
static void
fixture_series(struct store *st, int64_t job, const char *name, const char *phase, double from, double to,
	       struct store_series_answer *a)
{
	struct store_series_query q = {.job_id = job, .name = name, .phase = phase, .has_from = true, .from = from,
				       .has_to = true, .to = to};

	assert_int_equal(store_series(st, &q, a), STORE_OK);
}

/* Every point of tests/fixtures/store-b4c3343/points.h, read back bit for bit (the old hour as minutes). */
static void
fixture_reads_back(struct store *st)
{
	struct store_series_answer a;

	for (int i = 0; i < 3; i++)
		for (long k0 = 0; k0 < FIX_STEPS; k0 += 480) {
			fixture_series(st, 1, fix_step_names[i], i == 2 ? "forward" : NULL, fix_step_t(k0),
				       fix_step_t(k0 + 479), &a);
			assert_int_equal(json_array_size(a.points), 480);
			for (long k = 0; k < 480; k++)
				assert_true(point(a.points, (size_t)k, 0) == fix_step_t(k0 + k) &&
					    point(a.points, (size_t)k, 1) == fix_step_v(i, k0 + k));
			answer_free(&a);
		}
	fixture_series(st, 2, "samples_per_s", NULL, FIX_T0, FIX_T0 + FIX_NODE, &a);
	assert_int_equal(json_array_size(a.points), FIX_SLOW);
	for (long k = 0; k < FIX_SLOW; k++)
		assert_true(point(a.points, (size_t)k, 0) == FIX_T0 + 5.0 * k + 0.5 && point(a.points, (size_t)k, 1) == fix_slow_v(k));
	answer_free(&a);
	fixture_series(st, 0, "cpu.cores", NULL, FIX_T0, FIX_T0 + FIX_NODE - 1, &a);
	assert_int_equal(json_array_size(a.points), FIX_NODE);
	for (long k = 0; k < FIX_NODE; k++)
		assert_true(point(a.points, (size_t)k, 0) == FIX_T0 + k && point(a.points, (size_t)k, 1) == fix_node_v(k));
	answer_free(&a);
	/* The old hour retired to minute rows: each minute's mean, least and greatest. */
	fixture_series(st, 0, "load.1", NULL, FIX_OLD_T0, FIX_OLD_T0 + FIX_OLD - 1, &a);
	assert_int_equal(json_array_size(a.points), 60);
	for (long m = 0; m < 60; m++) {
		double sum = 0, lo = INFINITY, hi = -INFINITY;

		for (long k = 60 * m; k < 60 * (m + 1); k++) {
			sum += fix_old_v(k);
			lo = fmin(lo, fix_old_v(k));
			hi = fmax(hi, fix_old_v(k));
		}
		assert_float_equal(point(a.points, (size_t)m, 1), sum / 60, 1e-12);
		assert_true(point(a.bands, (size_t)m, 0) == lo && point(a.bands, (size_t)m, 1) == hi);
	}
	answer_free(&a);
}

static void
migrates_release_b4c3343(void **state)
{
	const char *src = getenv("DLPROF_SRCDIR");
	struct store_options o = opts;
	struct fx f;
	char cmd[1200];

	(void)state;
	assert_int_equal(fx_dir(&f), 0);
	snprintf(cmd, sizeof(cmd), "gzip -dc '%s/tests/fixtures/store-b4c3343/db.gz' > '%s'", src != NULL ? src : ".", f.db);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(store_fixture_query_int(f.db, "PRAGMA user_version"), 15);
	assert_non_null(f.st = store_open(f.db, &o));
	fixture_reads_back(f.st);
	/* This store's first flush: the staged steps become raw points over a table, and summaries; the same answers. */
	assert_int_equal(store_series_maintain(f.st, FIX_T0 + 86400, true), STORE_OK);
	assert_int_equal(store_fixture_query_int(f.db, "SELECT count(*) FROM samples"), 0);
	assert_int_equal(store_fixture_query_int(f.db, "SELECT count(*) FROM series_times"), 1);
	fixture_reads_back(f.st);
	store_close(f.st);
	assert_int_equal(store_fixture_query_int(f.db, "PRAGMA user_version"), store_schema_version());
	assert_int_equal(fx_remove_dir(&f), 0);
}

#define POSTED 900   /* the sampler's points, a second apart from T0: 400 in one span, 500 in the next */

/* Posts POSTED node points of cpu.cores as the sampler does (ten ticks a batch), then waits for them. */
static void
post_ticks(struct store *st)
{
	struct sample s[10];
	struct sample other = {0, T0, "other", 1, NULL};

	for (int i = 0; i < POSTED; i += 10) {
		for (int k = 0; k < 10; k++)
			s[k] = (struct sample){0, T0 + i + k, "cpu.cores", 0.5 * (i + k), NULL};
		assert_int_equal(store_samples_post(st, s, 10), STORE_OK);
	}
	/* The writer takes operations in order: once this one is committed, so are the posts. */
	assert_int_equal(store_samples_write(st, &other, 1), STORE_OK);
}

static void
count_name(const struct store_bucket *b, void *arg)
{
	if (strcmp(b->name, "cpu.cores") == 0)
		(*(int *)arg)++;
}

/* A store in a fresh directory, the ticks of post_ticks written. */
static void
fx_open_posted(struct fx *f)
{
	assert_int_equal(fx_dir(f), 0);
	assert_non_null(f->st = store_open(f->db, &opts));
	post_ticks(f->st);
}

/* The answer over the posted points, which must be all of them, bit for bit. */
static void
answer_posted(struct store *st, struct store_series_answer *a)
{
	struct store_series_query q = {.job_id = 0, .name = "cpu.cores", .has_from = true, .from = T0,
				       .has_to = true, .to = T0 + POSTED - 1};

	assert_int_equal(store_series(st, &q, a), STORE_OK);
	assert_int_equal(json_array_size(a->points), POSTED);
	for (int i = 0; i < POSTED; i++)
		assert_true(point(a->points, (size_t)i, 0) == T0 + i && point(a->points, (size_t)i, 1) == 0.5 * i);
}

static void
sampler_points_in_memory(void **state)
{
	struct store_series_answer a;
	struct fx f;
	int buckets = 0;

	(void)state;
	fx_open_posted(&f);
	/* Not staged (the one batch is the ingest-like write, no row a point), yet answered, and the series listed. */
	assert_int_equal(store_fixture_query_int(f.db, "SELECT count(*) FROM samples"), 0);
	assert_int_equal(store_fixture_query_int(f.db, "SELECT count(*) FROM reported_batches"), 1);
	answer_posted(f.st, &a);
	answer_free(&a);
	assert_int_equal(store_series_buckets(f.st, 0, NULL, T0, T0 + POSTED, 60, count_name, &buckets), STORE_OK);
	assert_int_equal(buckets, POSTED / 60);   /* every minute bucket of the range has points */
	/* The first span closes: encoded from memory, the mark past it, the answer the same. */
	assert_int_equal(store_series_maintain(f.st, T0 + POSTED, true), STORE_OK);
	assert_int_equal(store_fixture_query_int(f.db, "SELECT sum(n) FROM series_blocks"), 400);
	assert_int_equal(store_fixture_query_int(f.db, "SELECT t FROM sampler_flushed"), (int64_t)T0 + 400);
	assert_int_equal(store_fixture_query_int(f.db, "SELECT count(*) FROM reported_batches"), 1);
	answer_posted(f.st, &a);
	answer_free(&a);
	/* The next upkeep forgets the encoded points: still answered, from the block. */
	assert_int_equal(store_series_maintain(f.st, T0 + POSTED, true), STORE_OK);
	answer_posted(f.st, &a);
	answer_free(&a);
	/* A clean close stages the open span's points as a batch; reopened, the answer is the same. */
	store_close(f.st);
	assert_int_equal(store_fixture_query_int(f.db, "SELECT count(*) FROM samples"), 0);
	assert_int_equal(store_fixture_query_int(f.db, "SELECT count(*) FROM reported_batches"), 2);
	assert_non_null(f.st = store_open(f.db, &opts));
	answer_posted(f.st, &a);
	answer_free(&a);
	store_close(f.st);
	assert_int_equal(fx_remove_dir(&f), 0);
}

/* An operation that holds the writer until the test opens the gate: what is posted meanwhile is one transaction. */
struct gate {
	pthread_mutex_t lock;
	pthread_cond_t opened;
	bool open;
};

static int
apply_gate(struct store_conn *c, void *arg)
{
	struct gate *g = arg;

	(void)c;
	pthread_mutex_lock(&g->lock);
	while (!g->open)
		pthread_cond_wait(&g->opened, &g->lock);
	pthread_mutex_unlock(&g->lock);
	return STORE_OK;
}

/* A trial of no workload, its foreign key checked at the commit: the whole transaction fails there. */
static int
apply_poison(struct store_conn *c, void *arg)
{
	static const char sql[] = "PRAGMA defer_foreign_keys = ON;"
				  " INSERT INTO trials (workload_id, config, objective, t_start)"
				  " VALUES (424242, '{}', 'throughput', 0)";

	(void)arg;
	return sqlite3_exec(c->db, sql, NULL, NULL, NULL) == SQLITE_OK ? STORE_OK : STORE_EIO;
}

static int
apply_nothing(struct store_conn *c, void *arg)
{
	(void)c;
	(void)arg;
	return STORE_OK;
}

static void
free_nothing(void *arg)
{
	(void)arg;
}

/*
 * A commit that fails takes back what its transaction put in memory: the
 * points posted in it are not answered, and an upkeep in it leaves the
 * flushed mark where the database has it, so no point is dropped from
 * memory that is not in a block.
 */
static void
failed_commit_undoes_memory(void **state)
{
	struct store_series_query q = {.job_id = 0, .name = "cpu.cores", .has_from = true, .from = T0 + POSTED,
				       .has_to = true, .to = T0 + POSTED + 100};
	struct gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
	struct sample s[10];
	struct store_series_answer a;
	struct fx f;

	(void)state;
	fx_open_posted(&f);
	assert_int_equal(store_series_maintain(f.st, T0 + POSTED, true), STORE_OK);
	/* Held: ten more ticks, an upkeep that would encode the second span, and the poison, in one transaction. */
	assert_int_equal(store_post(f.st, apply_gate, &g, free_nothing), STORE_OK);
	for (int k = 0; k < 10; k++)
		s[k] = (struct sample){0, T0 + POSTED + k, "cpu.cores", -1.0 - k, NULL};
	assert_int_equal(store_samples_post(f.st, s, 10), STORE_OK);
	assert_int_equal(store_series_maintain(f.st, T0 + 1300, false), STORE_OK);
	assert_int_equal(store_post(f.st, apply_poison, NULL, free_nothing), STORE_OK);
	pthread_mutex_lock(&g.lock);
	g.open = true;
	pthread_cond_signal(&g.opened);
	pthread_mutex_unlock(&g.lock);
	/* Whichever transaction this lands in, it ends after the poisoned one. */
	(void)store_write(f.st, apply_nothing, NULL);
	assert_int_equal(store_fixture_query_int(f.db, "SELECT t FROM sampler_flushed"), (int64_t)T0 + 400);
	assert_int_equal(store_series(f.st, &q, &a), STORE_OK);
	assert_int_equal(json_array_size(a.points), 0);
	answer_free(&a);
	/* The next upkeeps prune by the mark the database has: every point acknowledged is still answered. */
	assert_int_equal(store_series_maintain(f.st, T0 + 1300, true), STORE_OK);
	assert_int_equal(store_series_maintain(f.st, T0 + 1300, true), STORE_OK);
	assert_int_equal(store_fixture_query_int(f.db, "SELECT t FROM sampler_flushed"), (int64_t)T0 + 1000);
	assert_int_equal(store_fixture_query_int(f.db, "SELECT sum(b.n) FROM series_blocks b JOIN series s"
						       " ON s.id = b.key % 4294967296 WHERE s.name = 'cpu.cores'"),
			 POSTED);
	answer_posted(f.st, &a);
	answer_free(&a);
	store_close(f.st);
	assert_int_equal(fx_remove_dir(&f), 0);
}

/* A point posted behind the flushed mark (a clock stepped back) is staged, then merged into its block. */
static void
sampler_point_behind_the_mark(void **state)
{
	struct store_series_query q = {.job_id = 0, .name = "cpu.cores", .has_from = true, .from = T0,
				       .has_to = true, .to = T0 + 10};
	struct sample late = {0, T0 + 5.5, "cpu.cores", -1, NULL};
	struct store_series_answer a;
	struct fx f;

	(void)state;
	fx_open_posted(&f);
	assert_int_equal(store_series_maintain(f.st, T0 + POSTED, true), STORE_OK);
	assert_int_equal(store_samples_post(f.st, &late, 1), STORE_OK);
	assert_int_equal(store_series_maintain(f.st, T0 + POSTED, true), STORE_OK);
	assert_int_equal(store_fixture_query_int(f.db, "SELECT count(*) FROM samples WHERE name = 'cpu.cores'"), 1);
	assert_int_equal(store_series(f.st, &q, &a), STORE_OK);
	assert_int_equal(json_array_size(a.points), 12);
	assert_true(point(a.points, 6, 0) == T0 + 5.5 && point(a.points, 6, 1) == -1);
	answer_free(&a);
	assert_int_equal(store_series_maintain(f.st, T0 + 86400, true), STORE_OK);
	assert_int_equal(store_fixture_query_int(f.db, "SELECT count(*) FROM samples WHERE name = 'cpu.cores'"), 0);
	assert_int_equal(store_fixture_query_int(f.db, "SELECT sum(n) FROM series_blocks"), POSTED + 1 + 1);
	store_close(f.st);
	assert_int_equal(fx_remove_dir(&f), 0);
}

#define CRASH_STEPS 6000    /* a job's steps 0.25 s apart from T0: 1,500 s, over three spans */
#define CRASH_BATCH 40      /* steps a batch: ten seconds */

/* Step k's points: a dense series, another, and a phase's. */
static void
crash_step(int64_t job, int k, struct sample *s)
{
	double t = T0 + 0.25 * k;

	s[0] = (struct sample){job, t, "step_time_s", 0.1 + 1e-4 * (k % 17), NULL};
	s[1] = (struct sample){job, t, "samples_per_s", 320.0 / (0.1 + 1e-4 * (k % 17)), NULL};
	s[2] = (struct sample){job, t, "phase_time_s", 0.05 * (k % 3), k % 2 ? "fwd" : "bwd"};
}

/* Writes batches [from, to) as a client does, numbered from 1 on stream "c"; 0 or -1. */
static int
crash_write(struct store *st, int64_t job, int from, int to)
{
	struct sample s[3 * CRASH_BATCH];
	bool dup;

	for (int b = from; b < to; b++) {
		for (int k = 0; k < CRASH_BATCH; k++)
			crash_step(job, b * CRASH_BATCH + k, &s[3 * k]);
		if (store_samples_write_once(st, job, "c", b + 1, s, 3 * CRASH_BATCH, &dup) != STORE_OK || dup)
			return -1;
	}
	return 0;
}

/* Every point of every step, answered once and bit for bit, 200 s at a time (within an answer's raw points). */
static void
crash_reads_back(struct store *st, int64_t job)
{
	static const char *const names[] = {"step_time_s", "samples_per_s", "phase_time_s"};
	struct store_series_answer a;
	struct sample s[3];

	for (int n = 0; n < 3; n++)
		for (int w = 0; w < CRASH_STEPS / 800; w++) {
			struct store_series_query q = {.job_id = job, .name = names[n], .has_from = true,
						       .from = T0 + 200.0 * w, .has_to = true,
						       .to = T0 + 200.0 * w + 199.875};

			assert_int_equal(store_series(st, &q, &a), STORE_OK);
			assert_int_equal(json_array_size(a.points), 800);
			for (int i = 0; i < 800; i++) {
				crash_step(job, 800 * w + i, s);
				assert_true(point(a.points, (size_t)i, 0) == s[n].t &&
					    point(a.points, (size_t)i, 1) == s[n].value);
			}
			answer_free(&a);
		}
}

static int
count_run(const struct sample *s, size_t n, void *arg)
{
	(void)s;
	*(size_t *)arg += n;
	return 0;
}

/* A staged batch decodes to its points; cut short anywhere, or with a byte past its end, it is refused. */
static void
batch_damage_refused(const char *db)
{
	sqlite3 *h;
	sqlite3_stmt *s;
	unsigned char *b;
	size_t len, n = 0;

	assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
	assert_int_equal(
		sqlite3_prepare_v2(h, "SELECT data FROM reported_batches ORDER BY id DESC LIMIT 1", -1, &s, NULL),
		SQLITE_OK);
	assert_int_equal(sqlite3_step(s), SQLITE_ROW);
	len = (size_t)sqlite3_column_bytes(s, 0);
	assert_non_null(b = malloc(len + 1));
	memcpy(b, sqlite3_column_blob(s, 0), len);
	sqlite3_finalize(s);
	sqlite3_close(h);
	assert_int_equal(store_batch_decode(b, len, count_run, &n), 0);
	assert_int_equal(n, 3 * CRASH_BATCH);
	for (size_t cut = 0; cut < len; cut++)
		assert_int_equal(store_batch_decode(b, cut, count_run, &n), -1);
	b[len] = 0;
	assert_int_equal(store_batch_decode(b, len + 1, count_run, &n), -1);
	free(b);
}

/*
 * A job's acknowledged batches survive a crash.  A child writes them, with
 * an upkeep halfway that encodes the first span from memory, and dies
 * without closing the store; reopened, every point is answered once, bit
 * for bit, from blocks and from the staged batches read back; a resent
 * batch is still a duplicate; the next flushes encode the rest and leave
 * no batch.
 */
static void
reported_batches_survive_a_crash(void **state)
{
	struct fx f;
	struct sample s[3 * CRASH_BATCH];
	int64_t job = 0;
	int status;
	bool dup;
	pid_t pid;
	json_t *view;

	(void)state;
	assert_int_equal(fx_dir(&f), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct job_spec spec = {.workload = "w", .params_json = "{}", .hw_class = "test",
					.objective = OBJECTIVE_THROUGHPUT, .source = "registered", .started = T0};
		struct store *st = store_open(f.db, &opts);

		if (st == NULL || store_job_register(st, &spec, &job) != STORE_OK ||
		    crash_write(st, job, 0, CRASH_STEPS / CRASH_BATCH / 2) < 0 ||
		    store_series_maintain(st, T0 + 1300, true) != STORE_OK ||
		    crash_write(st, job, CRASH_STEPS / CRASH_BATCH / 2, CRASH_STEPS / CRASH_BATCH) < 0)
			_exit(1);
		_exit(0);   /* no store_close: what a crash leaves */
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* The first span in blocks, the batches wholly before the reported mark gone, no row a point. */
	assert_int_equal(store_fixture_query_int(f.db, "SELECT t FROM reported_flushed"), (int64_t)T0 + 400);
	assert_int_equal(store_fixture_query_int(f.db, "SELECT count(*) FROM samples"), 0);
	assert_int_equal(store_fixture_query_int(f.db, "SELECT min(tmax) >= 1700000400 FROM reported_batches"), 1);
	assert_int_equal(store_fixture_query_int(f.db, "SELECT count(*) FROM series_raw"), 2);
	batch_damage_refused(f.db);
	assert_non_null(f.st = store_open(f.db, &opts));
	job = store_fixture_query_int(f.db, "SELECT max(id) FROM jobs");
	crash_reads_back(f.st, job);
	/* The job view lists its phases once each, from blocks and from memory. */
	assert_int_equal(store_job_get(f.st, job, &view), STORE_OK);
	assert_int_equal(json_array_size(json_object_get(view, "phases")), 2);
	assert_string_equal(json_string_value(json_array_get(json_object_get(view, "phases"), 0)), "bwd");
	json_decref(view);
	for (int k = 0; k < CRASH_BATCH; k++)
		crash_step(job, (CRASH_STEPS / CRASH_BATCH - 1) * CRASH_BATCH + k, &s[3 * k]);
	assert_int_equal(store_samples_write_once(f.st, job, "c", CRASH_STEPS / CRASH_BATCH, s, 3 * CRASH_BATCH, &dup),
			 STORE_OK);
	assert_true(dup);
	/* Closed cleanly and reopened in between: the same answers. */
	store_close(f.st);
	assert_non_null(f.st = store_open(f.db, &opts));
	crash_reads_back(f.st, job);
	assert_int_equal(store_series_maintain(f.st, T0 + 86400, true), STORE_OK);
	assert_int_equal(store_series_maintain(f.st, T0 + 86400, true), STORE_OK);
	assert_int_equal(store_fixture_query_int(f.db, "SELECT count(*) FROM reported_batches"), 0);
	crash_reads_back(f.st, job);
	store_close(f.st);
	assert_int_equal(fx_remove_dir(&f), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(whole_life_downsampled, setup, teardown),
		cmocka_unit_test_setup_teardown(short_range_is_raw, setup, teardown),
		cmocka_unit_test_setup_teardown(phase_filter_and_unknown_job, setup, teardown),
		cmocka_unit_test_setup_teardown(flush_is_bit_exact, setup, teardown),
		cmocka_unit_test_setup_teardown(tier_by_span, setup, teardown),
		cmocka_unit_test_setup_teardown(retention_keeps_minutes, setup, teardown),
		cmocka_unit_test_setup_teardown(late_points_merge, setup, teardown),
		cmocka_unit_test_setup_teardown(points_before_1970_dropped_alone, setup, teardown),
		cmocka_unit_test(block_keys),
		cmocka_unit_test(migrates_schema_6),
		cmocka_unit_test(migrates_schema_9),
		cmocka_unit_test(migrates_release_b4c3343),
		cmocka_unit_test(sampler_points_in_memory),
		cmocka_unit_test(reported_batches_survive_a_crash),
		cmocka_unit_test(failed_commit_undoes_memory),
		cmocka_unit_test(sampler_point_behind_the_mark),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
