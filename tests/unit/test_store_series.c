/*
 * Tests of the series store: downsampling to at most ~1000 points, the
 * job's life as the default range, ranges and phases, and the per-minute
 * rollup of old raw samples (which keeps the series' mean).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "store.h"
#include "store_series.h"

#define T0 1700000000.0

struct fx {
	char dir[256], db[300];
	struct store *st;
	int64_t job;
};

static int
setup(void **state)
{
	static struct fx f;
	static const struct store_options opts = {.queue_limit = 1024, .readers = 2};
	struct job_spec spec = {.workload = "w", .params_json = "{}", .hw_class = "test", .objective = "throughput",
				.source = "registered", .started = T0};
	struct sample *s;
	int i;

	memset(&f, 0, sizeof(f));
	snprintf(f.dir, sizeof(f.dir), "/tmp/dlprof-test-series-XXXXXX");
	if (mkdtemp(f.dir) == NULL)
		return -1;
	snprintf(f.db, sizeof(f.db), "%s/db", f.dir);
	if ((f.st = store_open(f.db, &opts)) == NULL || store_job_register(f.st, &spec, &f.job) != STORE_OK)
		return -1;
	/* 5000 samples a second apart: value = i; plus a phase series. */
	s = calloc(5000, sizeof(*s));
	for (i = 0; i < 5000; i++)
		s[i] = (struct sample){f.job, T0 + i, "cpu.cores", (double)i, NULL};
	if (store_samples_write(f.st, s, 5000) != STORE_OK)
		return -1;
	for (i = 0; i < 10; i++)
		s[i] = (struct sample){f.job, T0 + i, "phase_time_s", i % 2 ? 2.0 : 1.0, i % 2 ? "lstm" : "data"};
	if (store_samples_write(f.st, s, 10) != STORE_OK)
		return -1;
	/* Ended: its whole life is T0 .. T0 + 5000 (a running job's reaches now). */
	if (store_job_end(f.st, f.job, T0 + 4999, false, 0) != STORE_OK)
		return -1;
	free(s);
	*state = &f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;
	char cmd[600];

	store_close(f->st);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	return system(cmd) == 0 ? 0 : -1;
}

static double
mean_of(json_t *points)
{
	double sum = 0;
	size_t i;

	for (i = 0; i < json_array_size(points); i++)
		sum += json_real_value(json_array_get(json_array_get(points, i), 1));
	return sum / (double)json_array_size(points);
}

static void
whole_life_downsampled(void **state)
{
	struct fx *f = *state;
	struct store_series_query q = {.job_id = f->job, .name = "cpu.cores"};
	double from, to;
	json_t *pts;

	assert_int_equal(store_series(f->st, &q, &pts, &from, &to), STORE_OK);
	assert_true(from == T0);
	assert_true(json_array_size(pts) <= STORE_SERIES_MAX_POINTS + 1);
	assert_true(json_array_size(pts) >= STORE_SERIES_MAX_POINTS / 2);
	/* Buckets keep the mean: 0..4999 averages 2499.5. */
	assert_float_equal(mean_of(pts), 2499.5, 5.0);
	json_decref(pts);
}

static void
short_range_is_raw(void **state)
{
	struct fx *f = *state;
	struct store_series_query q = {.job_id = f->job, .name = "cpu.cores", .has_from = true, .from = T0 + 10,
				       .has_to = true, .to = T0 + 19};
	double from, to;
	json_t *pts;

	assert_int_equal(store_series(f->st, &q, &pts, &from, &to), STORE_OK);
	assert_int_equal(json_array_size(pts), 10);
	assert_float_equal(json_real_value(json_array_get(json_array_get(pts, 0), 0)), T0 + 10, 1e-6);
	assert_float_equal(json_real_value(json_array_get(json_array_get(pts, 9), 1)), 19, 1e-9);
	json_decref(pts);
	/* A coarser step: ten seconds into one point. */
	q.has_step = true;
	q.step = 10;
	assert_int_equal(store_series(f->st, &q, &pts, &from, &to), STORE_OK);
	assert_int_equal(json_array_size(pts), 1);
	assert_float_equal(json_real_value(json_array_get(json_array_get(pts, 0), 1)), 14.5, 1e-9);
	json_decref(pts);
}

static void
phase_filter_and_unknown_job(void **state)
{
	struct fx *f = *state;
	struct store_series_query q = {.job_id = f->job, .name = "phase_time_s", .phase = "lstm", .has_from = true,
				       .from = T0, .has_to = true, .to = T0 + 9.5};
	double from, to;
	json_t *pts;

	assert_int_equal(store_series(f->st, &q, &pts, &from, &to), STORE_OK);
	assert_int_equal(json_array_size(pts), 5);
	assert_float_equal(mean_of(pts), 2.0, 1e-9);
	json_decref(pts);
	q.job_id = 999;
	assert_int_equal(store_series(f->st, &q, &pts, &from, &to), STORE_ENOTFOUND);
}

static double
point(json_t *pts, size_t i, int k)
{
	return json_real_value(json_array_get(json_array_get(pts, i), (size_t)k));
}

static void
rollup_per_minute(void **state)
{
	struct fx *f = *state;
	struct store_series_query q = {.job_id = f->job, .name = "cpu.cores", .has_from = true, .from = T0 - 60,
				       .has_to = true, .to = T0 + 119.5};
	double from, to;
	json_t *pts;

	/*
	 * T0 is 20 s past a minute.  A cutoff of T0 + 130 rounds down to the
	 * minute at T0 + 100: samples 0..39 and 40..99 become two minute rows.
	 */
	assert_int_equal(store_samples_rollup(f->st, T0 + 130), STORE_OK);
	/* The rollup is posted; a blocking write queued behind it returns once it is committed. */
	assert_int_equal(store_samples_write(f->st, &(struct sample){f->job, T0 + 6000, "other", 1, NULL}, 1), STORE_OK);
	assert_int_equal(store_series(f->st, &q, &pts, &from, &to), STORE_OK);
	assert_int_equal(json_array_size(pts), 2 + 20);
	assert_float_equal(point(pts, 0, 0), T0 - 20, 1e-6);
	assert_float_equal(point(pts, 0, 1), 19.5, 1e-9);
	assert_float_equal(point(pts, 1, 0), T0 + 40, 1e-6);
	assert_float_equal(point(pts, 1, 1), 69.5, 1e-9);
	assert_float_equal(point(pts, 2, 1), 100, 1e-9);
	json_decref(pts);
	/* Rolling up again changes nothing: those raw rows are gone. */
	assert_int_equal(store_samples_rollup(f->st, T0 + 130), STORE_OK);
	assert_int_equal(store_samples_write(f->st, &(struct sample){f->job, T0 + 6001, "other", 1, NULL}, 1), STORE_OK);
	assert_int_equal(store_series(f->st, &q, &pts, &from, &to), STORE_OK);
	assert_int_equal(json_array_size(pts), 22);
	assert_float_equal(point(pts, 1, 1), 69.5, 1e-9);
	json_decref(pts);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(whole_life_downsampled),
		cmocka_unit_test(short_range_is_raw),
		cmocka_unit_test(phase_filter_and_unknown_job),
		cmocka_unit_test(rollup_per_minute),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
