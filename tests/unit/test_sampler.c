/*
 * Tests of the sampler's handling of collectors, with stand-in collectors in
 * place of the real table: one that works, one whose sampling always fails
 * (it must be retried with a doubling interval, not every tick, and must not
 * stop the others) and one whose init always fails (retried with backoff,
 * reported unavailable with its reason).  Also checks that the tick's values
 * reach the store and the snapshot, and that the tick hook main.c sets runs
 * after each tick is published.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "jobs.h"
#include "collector.h"
#include "sampler.h"
#include "store.h"
#include "store_series.h"

static _Atomic int good_calls, flaky_calls, broken_inits;
static int ctx_token;

static void *
ok_init(const struct collector_env *env, char *why, size_t len)
{
	(void)env;
	why[0] = '\0';
	(void)len;
	return &ctx_token;
}

static void *
broken_init(const struct collector_env *env, char *why, size_t len)
{
	(void)env;
	broken_inits++;
	snprintf(why, len, "no such hardware here");
	return NULL;
}

static int
good_node(void *ctx, struct collector_out *out, char *why, size_t len)
{
	(void)ctx;
	(void)why;
	(void)len;
	good_calls++;
	collector_put(out, 0, 42.0, "load.1");
	return COLLECTOR_OK;
}

static int
flaky_node(void *ctx, struct collector_out *out, char *why, size_t len)
{
	(void)ctx;
	(void)out;
	flaky_calls++;
	snprintf(why, len, "device busy");
	return COLLECTOR_TRANSIENT;
}

static void
no_fini(void *ctx)
{
	(void)ctx;
}

static const struct collector good = {COLLECTOR_VERSION, "proc", ok_init, good_node, NULL, NULL, NULL, no_fini};
static const struct collector flaky = {COLLECTOR_VERSION, "perf", ok_init, flaky_node, NULL, NULL, NULL, no_fini};
static const struct collector broken = {COLLECTOR_VERSION, "nvml", broken_init, NULL, NULL, NULL, NULL, no_fini};
static const struct collector *const table[] = {&good, &flaky, &broken, NULL};

/* What the tick hook saw; written on the sampler's thread, read after it stopped. */
struct tick_seen {
	struct sampler *s;
	int calls;
	unsigned long long last_ticks;  /* the snapshot's tick count at the last call */
	bool in_order;                  /* every call saw a tick newer than the call before */
};

static void
on_tick(void *ctx)
{
	struct tick_seen *seen = ctx;
	struct sampler_snapshot snap;

	if (sampler_snapshot_get(seen->s, &snap) < 0)
		return;
	if (snap.ticks <= seen->last_ticks)
		seen->in_order = false;
	seen->last_ticks = snap.ticks;
	seen->calls++;
	sampler_snapshot_free(&snap);
}

static json_t *
find_col(json_t *arr, const char *name)
{
	for (size_t i = 0; i < json_array_size(arr); i++)
		if (strcmp(json_string_value(json_object_get(json_array_get(arr, i), "name")), name) == 0)
			return json_array_get(arr, i);
	return NULL;
}

static void
failing_collectors_back_off(void **state)
{
	static const struct store_options opts = {.queue_limit = 1024, .readers = 2};
	struct sampler_options so = {.interval_s = 0.02, .proc_root = "/proc", .sys_root = "/sys",
				     .probe_retry_s = 0.04};
	struct sampler_snapshot snap;
	struct timespec pause = {1, 0};
	char dir[] = "/tmp/dlprof-test-sampler-XXXXXX", db[64], cmd[128];
	struct tick_seen seen = {.in_order = true};
	struct store *st;
	struct jobs *jobs;
	struct sampler *s;
	json_t *cols;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(db, sizeof(db), "%s/db", dir);
	st = store_open(db, &opts);
	assert_non_null(st);
	jobs = jobs_new(st, NULL, "test", "/proc");
	assert_non_null(jobs);
	s = sampler_start_with(st, jobs, &so, table);
	assert_non_null(s);
	seen.s = s;
	sampler_set_tick_hook(s, on_tick, &seen);
	nanosleep(&pause, NULL);
	cols = sampler_collectors_json(s);
	assert_int_equal(sampler_snapshot_get(s, &snap), 0);
	sampler_stop(s);

	/*
	 * About 50 ticks in a second; a collector failing every time is tried
	 * at 2, 4, 8, 16, 32 ... intervals: a handful of times.
	 */
	print_message("good %d, flaky %d, broken inits %d\n", good_calls, flaky_calls, broken_inits);
	assert_true(good_calls >= 10);
	assert_true(flaky_calls >= 2 && flaky_calls <= 8);
	assert_true(broken_inits >= 2 && broken_inits <= 8);
	assert_true(good_calls > 2 * flaky_calls);
	assert_string_equal(json_string_value(json_object_get(find_col(cols, "proc"), "status")), "available");
	assert_true(json_is_true(json_object_get(find_col(cols, "perf"), "failing")));
	assert_string_equal(json_string_value(json_object_get(find_col(cols, "nvml"), "status")), "unavailable");
	assert_string_equal(json_string_value(json_object_get(find_col(cols, "nvml"), "reason")),
			    "no such hardware here");
	/* Known collectors missing from the table are listed with why. */
	assert_string_equal(json_string_value(json_object_get(find_col(cols, "papi"), "status")), "unavailable");
	json_decref(cols);
	assert_true(snap.ticks >= 10);
	assert_true(snap.nvalues >= 1 && snap.values[0].value == 42.0);
	assert_true(snap.ncols == 3 && snap.cols[1].failures >= 2);
	/* The hook, set after the first ticks perhaps, ran after each later one, each seeing its tick published. */
	print_message("tick hook: %d calls, %llu ticks\n", seen.calls, snap.ticks);
	assert_true(seen.calls >= 10);
	assert_true(seen.in_order);
	/* Never more calls than ticks it saw published (a tick may end between the snapshot and the stop). */
	assert_true((unsigned long long)seen.calls <= seen.last_ticks);
	assert_true(seen.last_ticks >= snap.ticks);
	sampler_snapshot_free(&snap);
	jobs_free(jobs);
	store_close(st);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}


/*
 * A cadence whose phase sits a quarter interval off the grid, each tick up
 * to 3 ms late and now and then half an interval late, one tick skipped,
 * then a slow tick that restarts the cadence: every stamp is on the grid,
 * after the one before, at most an interval off the tick's own time, and
 * a gap is the intervals that passed.  (Rounding each tick's clock reading
 * gave two ticks one stamp here.)
 */
static void
stamps_on_the_grid_never_repeat(void **state)
{
	struct tick_grid g;
	const double interval = 0.5, phase = 1764000000.0 + 0.2499;
	double last = 0, now, due, t;
	unsigned seed = 3;

	(void)state;
	memset(&g, 0, sizeof(g));
	for (int k = 0; k < 3000; k++) {
		if (k == 777)
			continue;                               /* a tick that never ran */
		seed = seed * 1103515245u + 12345u;
		due = 100.0 + k * interval + (k >= 2000 ? 0.3 : 0);   /* from 2000 on, a new cadence */
		now = phase + (due - 100.0) + (double)(seed >> 8 & 3) / 1000.0 + (k % 97 == 5 ? 0.26 : 0);
		t = tick_grid_stamp(&g, interval, now, due);
		assert_true(fmod(t * 1000.0, interval * 1000.0) == 0);
		assert_true(fabs(t - now) <= interval);
		if (k > 0) {
			assert_true(t > last);
			assert_true(t - last <= (k == 778 || k == 2000 ? 2 : 1) * interval);
		}
		last = t;
	}
	/* The clock set an hour back: the grid starts again from it. */
	now = phase + 3000 * interval - 3600.0;
	t = tick_grid_stamp(&g, interval, now, 100.0 + 3000 * interval + 0.3);
	assert_true(fabs(t - now) <= interval / 2 && fmod(t * 1000.0, interval * 1000.0) == 0);
	last = t;
	t = tick_grid_stamp(&g, interval, now + interval, 100.0 + 3001 * interval + 0.3);
	assert_true(t == last + interval);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(failing_collectors_back_off),
		cmocka_unit_test(stamps_on_the_grid_never_repeat),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
