/*
 * Tests of the store window (daemon/sample_window.c): one row per series
 * per window, the mean for gauges and the last value for counters, the
 * newest value kept for /metrics, series of ended jobs forgotten, and
 * thousands of series found again across windows.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sample_window.h"

static struct collector_value
val(int64_t job, const char *name, double t, double value)
{
	struct collector_value v;

	memset(&v, 0, sizeof(v));
	v.job_id = job;
	v.t = t;
	v.value = value;
	snprintf(v.name, sizeof(v.name), "%s", name);
	return v;
}

static const struct sample *
row_of(const struct sample *rows, size_t n, int64_t job, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (rows[i].job_id == job && strcmp(rows[i].name, name) == 0)
			return &rows[i];
	return NULL;
}

static void
gauges_mean_counters_last(void **state)
{
	struct sample_window w;
	struct collector_value tick[3];
	struct sample rows[8];
	size_t n;
	int i;

	(void)state;
	sample_window_init(&w);
	for (i = 0; i < 4; i++) {
		tick[0] = val(3, "cpu.cores", 100 + i, 1 + i);        /* gauge: 1 2 3 4 */
		tick[1] = val(3, "cpu.seconds", 100 + i, 10 * i);     /* counter: 0 10 20 30 */
		tick[2] = val(0, "cpu.busy_seconds", 100 + i, 50 + i); /* node counter */
		assert_int_equal(sample_window_add(&w, tick, 3), 0);
	}
	assert_int_equal(w.n, 3);
	n = sample_window_rows(&w, 104, rows);
	assert_int_equal(n, 3);
	assert_float_equal(row_of(rows, n, 3, "cpu.cores")->value, 2.5, 1e-12);
	assert_float_equal(row_of(rows, n, 3, "cpu.seconds")->value, 30, 1e-12);
	assert_float_equal(row_of(rows, n, 0, "cpu.busy_seconds")->value, 53, 1e-12);
	assert_float_equal(row_of(rows, n, 3, "cpu.cores")->t, 104, 1e-12);
	assert_null(row_of(rows, n, 3, "cpu.cores")->phase);
	/* The newest value, for /metrics, is the last tick's. */
	assert_float_equal(w.v[0].newest.value, 4, 1e-12);
	assert_float_equal(w.v[0].newest.t, 103, 1e-12);
	sample_window_free(&w);
}

/* A series read on detail ticks only (per-thread figures) is kept between them until unseen that long. */
static void
detail_series_kept_until_unseen_long(void **state)
{
	struct sample_window w;
	struct collector_value tick[2];

	(void)state;
	sample_window_init(&w);
	tick[0] = val(1, "cpu.cores", 100, 2);
	tick[1] = val(1, "cpu.busy_threads", 100, 6);
	sample_window_add(&w, tick, 2);
	sample_window_next(&w, 100 - 20);
	sample_window_add(&w, tick, 1);   /* the next tick: no detail */
	sample_window_next(&w, 101 - 20);
	assert_int_equal(w.n, 2);
	assert_string_equal(w.v[1].newest.name, "cpu.busy_threads");
	sample_window_next(&w, 121 - 20);
	assert_int_equal(w.n, 0);
	sample_window_free(&w);
}

static void
next_window_starts_afresh_and_forgets_the_unseen(void **state)
{
	struct sample_window w;
	struct collector_value tick[2];
	struct sample rows[8];
	size_t n;

	(void)state;
	sample_window_init(&w);
	tick[0] = val(1, "cpu.cores", 1, 2);
	tick[1] = val(2, "cpu.cores", 1, 6);
	sample_window_add(&w, tick, 2);
	sample_window_next(&w, INFINITY);
	/* A window with no values yet stores nothing, but the newest values stay shown. */
	assert_int_equal(sample_window_rows(&w, 2, rows), 0);
	assert_int_equal(w.n, 2);
	/* Job 2 ended: only job 1 reports in the second window. */
	tick[0] = val(1, "cpu.cores", 2, 4);
	sample_window_add(&w, tick, 1);
	n = sample_window_rows(&w, 3, rows);
	assert_int_equal(n, 1);
	assert_float_equal(rows[0].value, 4, 1e-12);
	sample_window_next(&w, INFINITY);
	assert_int_equal(w.n, 1);
	assert_true(w.v[0].newest.job_id == 1);
	/* Job 2's series can come back, found as a new one. */
	tick[0] = val(2, "cpu.cores", 4, 8);
	tick[1] = val(1, "cpu.cores", 4, 1);
	sample_window_add(&w, tick, 2);
	n = sample_window_rows(&w, 5, rows);
	assert_int_equal(n, 2);
	assert_float_equal(row_of(rows, n, 2, "cpu.cores")->value, 8, 1e-12);
	assert_float_equal(row_of(rows, n, 1, "cpu.cores")->value, 1, 1e-12);
	sample_window_free(&w);
}

/* Every sampled value is stored, a repeat too: the history has a point for every tick. */
static void
repeats_are_stored(void **state)
{
	struct sample_window w;
	struct collector_value tick[2];
	struct sample rows[4];
	double t;
	int stored_threads = 0, stored_cores = 0;

	(void)state;
	sample_window_init(&w);
	/* Ten-second windows over two minutes: threads stay 8, cores vary. */
	for (t = 10; t <= 120; t += 10) {
		size_t n, i;

		tick[0] = val(1, "cpu.threads", t, 8);
		tick[1] = val(1, "cpu.cores", t, t / 10);
		sample_window_add(&w, tick, 2);
		n = sample_window_rows(&w, t, rows);
		for (i = 0; i < n; i++) {
			if (strcmp(rows[i].name, "cpu.threads") == 0)
				stored_threads++;
			else
				stored_cores++;
		}
		sample_window_next(&w, INFINITY);
	}
	assert_int_equal(stored_threads, 12);
	assert_int_equal(stored_cores, 12);
	sample_window_free(&w);
}

/* 5,000 series over three windows: each found again (one series each), half forgotten in between. */
static void
many_series_keep_their_identity(void **state)
{
	enum { JOBS = 250, NAMES = 20 };
	static struct collector_value tick[JOBS * NAMES];
	static struct sample rows[JOBS * NAMES];
	struct sample_window w;
	char name[32];
	size_t n, i;
	int j, k, pass;

	(void)state;
	sample_window_init(&w);
	for (pass = 0; pass < 3; pass++) {
		for (j = 0, i = 0; j < JOBS; j++) {
			if (pass == 1 && j % 2 == 1)
				continue;  /* odd jobs miss the middle window */
			for (k = 0; k < NAMES; k++) {
				snprintf(name, sizeof(name), "m%d.x", k);
				tick[i++] = val(j + 1, name, pass, (j + 1) * 100 + k + pass);
			}
		}
		assert_int_equal(sample_window_add(&w, tick, i), 0);
		assert_int_equal(sample_window_add(&w, tick, i), 0);  /* twice: the same series */
		n = sample_window_rows(&w, pass, rows);
		assert_int_equal(n, i);
		for (i = 0; i < n; i++) {
			const char *dot = strchr(rows[i].name, '.');

			assert_non_null(dot);
			assert_float_equal(rows[i].value, rows[i].job_id * 100 + atoi(rows[i].name + 1) + pass, 1e-9);
		}
		sample_window_next(&w, INFINITY);
		assert_int_equal(w.n, n);
	}
	sample_window_free(&w);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(gauges_mean_counters_last),
		cmocka_unit_test(next_window_starts_afresh_and_forgets_the_unseen),
		cmocka_unit_test(detail_series_kept_until_unseen_long),
		cmocka_unit_test(repeats_are_stored),
		cmocka_unit_test(many_series_keep_their_identity),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
