/*
 * The tiers of the series and the storage budget (store_blocks.c,
 * store_tiers.c): a job's steps (several points a second, times from the
 * clock, values in microseconds and floats) flushed as raw points over one
 * time table shared by the job's series, with per-second summaries beside
 * them; answers under a second's width bit for bit from the raw points,
 * wider ones from the summaries with exact counts and sums; the raw window
 * leaving the summaries alone; late points merged into either; and the
 * budget: bytes on disk (database, WAL, shared memory) stay under it while
 * a node writes far more, the finest and oldest going first (raw, then
 * seconds into minutes), a lowered budget shrinking the file, and a file
 * of an older dlprofd (no auto_vacuum) rebuilt once to shrink.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>
#include <sqlite3.h>

#include "migrations.h"
#include "series_codec.h"
#include "series_summary.h"
#include "store.h"
#include "store_fixture.h"
#include "store_internal.h"
#include "store_series.h"

/* A span's start (1700000400 = 2023-11-14T22:20:00Z), 1200 s into its hour. */
#define T0 1700000400.0
#define STEPS_S 20            /* steps a second */
#define SPAN_STEPS (600 * STEPS_S)

struct fx {
	char dir[256], db[300];
	struct store *st;
	int64_t job;
};

static const char *const names[3] = {"step_time_s", "loss", "phase_time_s"};

static int
fx_open(struct fx *f, const struct store_limits *l)
{
	struct store_options o = {.queue_limit = 4096, .readers = 2};
	struct job_spec spec = {.workload = "w", .params_json = "{}", .hw_class = "test", .objective = OBJECTIVE_THROUGHPUT,
				.source = "registered", .started = T0};

	if (l != NULL)
		o.limits = *l;
	if ((f->st = store_open(f->db, &o)) == NULL)
		return -1;
	return f->job != 0 || store_job_register(f->st, &spec, &f->job) == STORE_OK ? 0 : -1;
}

static int
setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/dlprof-test-tiers-XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return -1;
	snprintf(f->db, sizeof(f->db), "%s/db", f->dir);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;
	char cmd[600];
	int r;

	store_close(f->st);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	r = system(cmd) == 0 ? 0 : -1;
	free(f);
	return r;
}

/* Step k's time: a clock's reading, not on any decimal grid, 50 ms apart with jitter. */
static double
step_t(long k)
{
	return T0 + 0.05 * (double)k + 0.0001234567 * (double)(k % 7);
}

/* Series i's value at step k: microseconds, a float's value, microseconds again. */
static double
step_v(int i, long k)
{
	unsigned u = (unsigned)k * 2654435761u;

	if (i == 1)
		return (double)(float)(2.3 - 1e-5 * (double)k + (double)(u >> 20) * 1e-6);
	return (double)(50000 + (u >> 22) % 5000 + 1000 * i) / 1e6;
}

/* Writes steps [k0, k1) of the job's three series, a second's steps a batch, as a client sends them. */
static void
write_steps(struct fx *f, long k0, long k1)
{
	struct sample s[3 * STEPS_S];
	size_t n = 0;

	for (long k = k0; k < k1; k++) {
		for (int i = 0; i < 3; i++)
			s[n++] = (struct sample){f->job, step_t(k), names[i], step_v(i, k), i == 2 ? "forward" : NULL};
		if (n == 3 * STEPS_S || k + 1 == k1) {
			assert_int_equal(store_samples_write(f->st, s, n), STORE_OK);
			n = 0;
		}
	}
}

static double
point(json_t *pts, size_t i, int k)
{
	return json_real_value(json_array_get(json_array_get(pts, i), (size_t)k));
}

static void
answer_free(struct store_series_answer *a)
{
	json_decref(a->points);
	json_decref(a->bands);
}

/* Series i over [from, to] (no step: raw points while they fit). */
static void
series(struct fx *f, int i, double from, double to, struct store_series_answer *a)
{
	struct store_series_query q = {.job_id = f->job, .name = names[i], .phase = i == 2 ? "forward" : NULL,
				       .has_from = true, .from = from, .has_to = true, .to = to};

	assert_int_equal(store_series(f->st, &q, a), STORE_OK);
}

/* Two spans of steps flushed: raw points over one time table a span, summaries beside them. */
static void
dense_spans_share_times(void **state)
{
	struct fx *f = *state;
	struct store_series_answer a;

	assert_int_equal(fx_open(f, NULL), 0);
	write_steps(f, 0, 2 * SPAN_STEPS);
	assert_int_equal(store_series_maintain(f->st, T0 + 1800 + 60, true), STORE_OK);
	assert_int_equal(store_fixture_query_int(f->db, "SELECT count(*) FROM samples"), 0);
	assert_int_equal(store_fixture_query_int(f->db, "SELECT count(*) FROM series_raw"), 6);
	assert_int_equal(store_fixture_query_int(f->db, "SELECT count(*) FROM series_seconds"), 6);
	assert_int_equal(store_fixture_query_int(f->db, "SELECT count(*) FROM series_times"), 2);
	assert_int_equal(store_fixture_query_int(f->db, "SELECT count(*) FROM series_blocks"), 0);
	assert_int_equal(store_fixture_query_int(f->db, "SELECT count(*) FROM series WHERE dense = 1"), 3);
	assert_int_equal(store_fixture_query_int(f->db, "SELECT sum(n) FROM series_seconds"), 6 * SPAN_STEPS);
	/* The times cost once a span: the three series' raw blocks hold the values and counts. */
	assert_true(store_fixture_query_int(f->db, "SELECT sum(length(data)) FROM series_raw") +
			    store_fixture_query_int(f->db, "SELECT sum(length(data)) FROM series_times") <
		    3 * 2 * SPAN_STEPS * 4);
	/* Ten seconds: under a second's width, every point as it was written, from both spans' sides. */
	for (int i = 0; i < 3; i++) {
		series(f, i, step_t(SPAN_STEPS - 100), step_t(SPAN_STEPS + 99), &a);
		assert_int_equal(json_array_size(a.points), 200);
		for (long k = 0; k < 200; k++) {
			assert_true(point(a.points, (size_t)k, 0) == step_t(SPAN_STEPS - 100 + k));
			assert_true(point(a.points, (size_t)k, 1) == step_v(i, SPAN_STEPS - 100 + k));
		}
		assert_string_equal(a.tier, "raw");
		answer_free(&a);
	}
}

/* Buckets of ten seconds over the summaries: each holds its 200 steps, their exact sum. */
static void
counts(const struct store_bucket *b, void *arg)
{
	double *seen = arg;
	long k0 = b->bucket * 10 * STEPS_S;
	double sum = 0;

	if (strcmp(b->name, "step_time_s") != 0 || b->bucket >= 60)
		return;
	/* Step k falls in second floor(0.05 k + ...): 20 steps a second, the first of each at its start. */
	for (long k = k0; k < k0 + 10 * STEPS_S; k++)
		sum += step_v(0, k);
	assert_true(b->count == 10 * STEPS_S);
	assert_float_equal(b->sum, sum, 1e-9);
	assert_true(b->last == step_v(0, k0 + 10 * STEPS_S - 1));
	seen[0]++;
}

static void
summaries_answer_wide_reads(void **state)
{
	struct fx *f = *state;
	struct store_series_answer a;
	double seen = 0;

	assert_int_equal(fx_open(f, NULL), 0);
	write_steps(f, 0, SPAN_STEPS);
	assert_int_equal(store_series_maintain(f->st, T0 + 1200 + 60, true), STORE_OK);
	/* 600 s: 0.6 s buckets still read the raw points; a step of a second reads the summaries. */
	series(f, 0, T0, T0 + 599.999, &a);
	assert_true(json_array_size(a.points) >= 999 && json_array_size(a.points) <= 1001);
	answer_free(&a);
	assert_int_equal(store_series_buckets(f->st, f->job, NULL, T0, T0 + 600, 10, counts, &seen), STORE_OK);
	assert_true(seen == 60);
	/* The raw window passes: only the summaries are left, a point a second under any width. */
	store_set_limits(f->st, &(struct store_limits){.raw_s = 600});
	assert_int_equal(store_series_maintain(f->st, T0 + 1200 + 60, true), STORE_OK);
	assert_int_equal(store_fixture_query_int(f->db, "SELECT count(*) FROM series_raw"), 0);
	assert_int_equal(store_fixture_query_int(f->db, "SELECT count(*) FROM series_times"), 0);
	series(f, 1, T0 + 100, T0 + 109.999, &a);
	assert_int_equal(json_array_size(a.points), 10);
	for (size_t i = 0; i < 10; i++) {
		double lo = INFINITY, hi = -INFINITY;

		for (long k = (long)(100 + i) * STEPS_S; k < (long)(101 + i) * STEPS_S; k++) {
			lo = fmin(lo, step_v(1, k));
			hi = fmax(hi, step_v(1, k));
		}
		assert_true(point(a.bands, i, 0) == lo && point(a.bands, i, 1) == hi);
	}
	answer_free(&a);
	seen = 0;
	assert_int_equal(store_series_buckets(f->st, f->job, NULL, T0, T0 + 600, 10, counts, &seen), STORE_OK);
	assert_true(seen == 60);
}

/*
 * Ten-minute buckets read each span's totals alone (sql/019): a span of
 * summaries, and a span of the same series kept as a block (one point a
 * second), each its own series' and nobody else's.
 */
static void
span_totals_answer_wide_reads(void **state)
{
	struct fx *f = *state;
	struct store_series_query q = {.name = names[0], .has_from = true, .from = T0, .has_to = true,
				       .to = T0 + 1199.999, .has_step = true, .step = 600};
	struct store_series_answer a;
	struct sample s;
	double sum = 0, lo = INFINITY, hi = -INFINITY;

	assert_int_equal(fx_open(f, NULL), 0);
	write_steps(f, 0, SPAN_STEPS);
	for (int i = 0; i < 600; i++) {
		s = (struct sample){f->job, T0 + 600 + i, names[0], 0.5 + i * 1e-3, NULL};
		assert_int_equal(store_samples_write(f->st, &s, 1), STORE_OK);
	}
	assert_int_equal(store_series_maintain(f->st, T0 + 1800 + 60, true), STORE_OK);
	assert_int_equal(store_fixture_query_int(f->db, "SELECT count(*) FROM series_seconds"), 3);
	assert_int_equal(store_fixture_query_int(f->db, "SELECT count(*) FROM series_blocks"), 1);
	q.job_id = f->job;
	assert_int_equal(store_series(f->st, &q, &a), STORE_OK);
	assert_string_equal(a.tier, "block");
	assert_int_equal(json_array_size(a.points), 2);
	for (long k = 0; k < SPAN_STEPS; k++) {
		sum += step_v(0, k);
		lo = fmin(lo, step_v(0, k));
		hi = fmax(hi, step_v(0, k));
	}
	assert_float_equal(point(a.points, 0, 1), sum / SPAN_STEPS, 1e-12);
	assert_true(point(a.bands, 0, 0) == lo && point(a.bands, 0, 1) == hi);
	assert_float_equal(point(a.points, 1, 1), 0.5 + 299.5e-3, 1e-12);
	assert_true(point(a.bands, 1, 0) == 0.5 && point(a.bands, 1, 1) == 0.5 + 599e-3);
	answer_free(&a);
}

/* A late point joins the raw block while it is kept, the summaries alone after. */
static void
late_points_join_either(void **state)
{
	struct fx *f = *state;
	struct store_series_answer a;
	struct sample late = {0, T0 + 100.01, "step_time_s", 0.25, NULL};

	assert_int_equal(fx_open(f, NULL), 0);
	late.job_id = f->job;
	write_steps(f, 0, SPAN_STEPS);
	assert_int_equal(store_series_maintain(f->st, T0 + 1200 + 60, true), STORE_OK);
	assert_int_equal(store_samples_write(f->st, &late, 1), STORE_OK);
	assert_int_equal(store_series_maintain(f->st, T0 + 1200 + 120, true), STORE_OK);
	series(f, 0, T0 + 100, T0 + 100.999, &a);
	assert_int_equal(json_array_size(a.points), STEPS_S + 1);
	assert_true(point(a.points, 1, 0) == T0 + 100.01 && point(a.points, 1, 1) == 0.25);
	answer_free(&a);
	assert_int_equal(store_fixture_query_int(f->db, "SELECT sum(n) FROM series_seconds"), 3 * SPAN_STEPS + 1);
	/* Raw gone; another late point: its second counts it. */
	store_set_limits(f->st, &(struct store_limits){.raw_s = 600});
	assert_int_equal(store_series_maintain(f->st, T0 + 1200 + 120, true), STORE_OK);
	late.t = T0 + 200.5;
	assert_int_equal(store_samples_write(f->st, &late, 1), STORE_OK);
	assert_int_equal(store_series_maintain(f->st, T0 + 1200 + 180, true), STORE_OK);
	assert_int_equal(store_fixture_query_int(f->db, "SELECT count(*) FROM series_raw"), 0);
	assert_int_equal(store_fixture_query_int(f->db, "SELECT sum(n) FROM series_seconds"), 3 * SPAN_STEPS + 2);
	series(f, 0, T0 + 200, T0 + 200.999, &a);
	assert_int_equal(json_array_size(a.points), 1);
	assert_true(point(a.bands, 0, 1) == 0.25);
	answer_free(&a);
}

/* Bytes the store takes on disk. */
static int64_t
disk_bytes(const char *db)
{
	static const char *const suffix[] = {"", "-wal", "-shm"};
	char p[400];
	struct stat sb;
	int64_t n = 0;

	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s%s", db, suffix[i]);
		if (stat(p, &sb) == 0)
			n += (int64_t)sb.st_size;
	}
	return n;
}

/* Posts one simulated minute m of a node: 2 dense series (20 points a second) of noise, and 8 at 1 Hz. */
static void
post_minute(struct fx *f, long m, double t0)
{
	static char dense[2][24], slow[8][24];
	struct sample s[2 * STEPS_S + 8];
	unsigned u = (unsigned)m * 2654435761u;

	for (int i = 0; i < 2; i++)
		snprintf(dense[i], sizeof(dense[i]), "dense.%d", i);
	for (int i = 0; i < 8; i++)
		snprintf(slow[i], sizeof(slow[i]), "slow.%d", i);
	for (long sec = 0; sec < 60; sec++) {
		size_t n = 0;
		double t = t0 + 60.0 * (double)m + (double)sec;

		for (int k = 0; k < STEPS_S; k++)
			for (int i = 0; i < 2; i++) {
				u = u * 1103515245u + 12345u;
				s[n++] = (struct sample){f->job, t + 0.05 * k, dense[i], (double)(u >> 8) / 16777216.0, NULL};
			}
		for (int i = 0; i < 8; i++) {
			u = u * 1103515245u + 12345u;
			s[n++] = (struct sample){f->job, t, slow[i], (double)(u >> 16), NULL};
		}
		assert_int_equal(store_samples_post(f->st, s, n), STORE_OK);
	}
}

/*
 * A node writing some 5 MB of blocks into a budget of 1 MB: after every
 * upkeep the files on disk are within it; per-second data retires to
 * minutes only once no raw point is left; the newest minutes are answered;
 * the job is still there.
 */
static void
budget_holds_finest_first(void **state)
{
	struct fx *f = *state;
	struct store_limits l = {.raw_s = 86400, .second_s = 14 * 86400, .minute_s = 90 * 86400, .budget = 1 << 20};
	struct store_usage u;
	struct store_series_answer a;
	struct json_t *job;
	bool minutes_seen = false;

	assert_int_equal(fx_open(f, &l), 0);
	for (long m = 0; m < 3 * 60; m++) {
		post_minute(f, m, T0);
		assert_int_equal(store_series_maintain(f->st, T0 + 60.0 * (double)(m + 1), true), STORE_OK);
		assert_int_equal(store_usage(f->st, &u), STORE_OK);
		assert_true(disk_bytes(f->db) <= l.budget);
		assert_true(u.bytes <= l.budget && u.budget == l.budget);
		if (u.tier[STORE_TIER_MINUTE].any && !minutes_seen) {
			/* The first hour retired for the budget: every raw point had gone before. */
			minutes_seen = true;
			assert_false(u.tier[STORE_TIER_RAW].any);
		}
	}
	assert_true(minutes_seen);
	assert_true(u.tier[STORE_TIER_SECOND].any && u.tier[STORE_TIER_SECOND].to >= T0 + 3 * 3600 - 600);
	/* The first hour, from its minutes; the job's row untouched. */
	series(f, 0, T0, T0 + 3600, &a);
	answer_free(&a);
	{
		struct store_series_query q = {.job_id = f->job, .name = "slow.3", .has_from = true, .from = T0 - 1200,
					       .has_to = true, .to = T0 + 2400};

		assert_int_equal(store_series(f->st, &q, &a), STORE_OK);
		assert_true(json_array_size(a.points) >= 40);
		answer_free(&a);
	}
	assert_int_equal(store_job_get(f->st, f->job, &job), STORE_OK);
	json_decref(job);
}

/* A budget lowered: the file gives its free pages back until it is within the new one. */
static void
lowered_budget_shrinks_the_file(void **state)
{
	struct fx *f = *state;
	struct store_limits l = {.raw_s = 86400, .second_s = 14 * 86400, .budget = 4 << 20};
	long m = 0;

	assert_int_equal(fx_open(f, &l), 0);
	assert_int_equal(store_fixture_query_int(f->db, "PRAGMA auto_vacuum"), 2);
	for (; disk_bytes(f->db) < (2 << 20); m++) {
		post_minute(f, m, T0);
		assert_int_equal(store_series_maintain(f->st, T0 + 60.0 * (double)(m + 1), true), STORE_OK);
	}
	l.budget = 1 << 20;
	store_set_limits(f->st, &l);
	for (int i = 0; i < 20 && disk_bytes(f->db) > l.budget; i++)
		assert_int_equal(store_series_maintain(f->st, T0 + 60.0 * (double)m, true), STORE_OK);
	assert_true(disk_bytes(f->db) <= l.budget);
}

/* A database made before auto_vacuum (schema 15, as the last release made it) over the budget: rebuilt once, then kept. */
static void
older_file_rebuilt_once(void **state)
{
	struct fx *f = *state;
	struct store_limits l = {.raw_s = 86400, .second_s = 14 * 86400};
	sqlite3 *db;
	long m = 0;
	char sql[128];

	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	for (const struct migration *mg = migrations; mg->version && mg->version <= 15; mg++)
		assert_int_equal(sqlite3_exec(db, mg->sql, NULL, NULL, NULL), SQLITE_OK);
	snprintf(sql, sizeof(sql), "PRAGMA user_version = 15; PRAGMA application_id = %d;", 0x646c7066);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(fx_open(f, &l), 0);
	assert_int_equal(store_fixture_query_int(f->db, "PRAGMA auto_vacuum"), 0);
	for (; disk_bytes(f->db) < (2 << 20); m++) {
		post_minute(f, m, T0);
		assert_int_equal(store_series_maintain(f->st, T0 + 60.0 * (double)(m + 1), true), STORE_OK);
	}
	l.budget = 1 << 20;
	store_set_limits(f->st, &l);
	for (int i = 0; i < 20 && disk_bytes(f->db) > l.budget; i++)
		assert_int_equal(store_series_maintain(f->st, T0 + 60.0 * (double)m, true), STORE_OK);
	assert_true(disk_bytes(f->db) <= l.budget);
	assert_int_equal(store_fixture_query_int(f->db, "PRAGMA auto_vacuum"), 2);
}

/* Sums of decimals stay decimals; of anything else, the plain sum. */
static void
exact_sums(void **state)
{
	struct exact_sum s;

	(void)state;
	exact_sum_start(&s);
	exact_sum_add(&s, 0.1);
	exact_sum_add(&s, 0.2);
	assert_true(exact_sum_value(&s) == 0.3);
	exact_sum_add(&s, 0.000001);
	assert_true(exact_sum_value(&s) == 0.300001);
	exact_sum_add(&s, 1.0 / 3);
	assert_false(s.exact);
	assert_true(exact_sum_value(&s) == 0.1 + 0.2 + 0.000001 + 1.0 / 3);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(exact_sums),
		cmocka_unit_test_setup_teardown(dense_spans_share_times, setup, teardown),
		cmocka_unit_test_setup_teardown(summaries_answer_wide_reads, setup, teardown),
		cmocka_unit_test_setup_teardown(span_totals_answer_wide_reads, setup, teardown),
		cmocka_unit_test_setup_teardown(late_points_join_either, setup, teardown),
		cmocka_unit_test_setup_teardown(budget_holds_finest_first, setup, teardown),
		cmocka_unit_test_setup_teardown(lowered_budget_shrinks_the_file, setup, teardown),
		cmocka_unit_test_setup_teardown(older_file_rebuilt_once, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
