/*
 * Tests of the CPU energy attribution (daemon/energy.c): a tick's joules go
 * to jobs by their share of the node's busy cores, totals accumulate per job,
 * a missing or restarted node total is a new baseline, a job that left is
 * forgotten.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "energy.h"
#include "collector_values.h"

/* One tick as the collectors leave it: the node's joules (NAN: unmeasured) and busy cores, two jobs' cores. */
static void
tick(struct energy_attr *a, struct collector_out *out, double node_j, double busy, double cores5, double cores6)
{
	collector_out_reset(out, 1.0, 1.0);
	if (!isnan(node_j))
		collector_put(out, 0, node_j, "energy.cpu_joules");
	collector_put(out, 0, busy, "cpu.cores");
	collector_put(out, 5, cores5, "cpu.cores");
	if (!isnan(cores6))
		collector_put(out, 6, cores6, "cpu.cores");
	energy_attr_tick(a, out);
}

static void
shares_of_busy_time(void **state)
{
	struct energy_attr *a = energy_attr_new();
	struct collector_out out = {0};

	(void)state;
	assert_non_null(a);
	/* The first measurement is the baseline: jobs start at 0 J. */
	tick(a, &out, 1000, 8, 4, 2);
	assert_true(collector_value_of(&out, 5, "energy.cpu_joules") == 0);
	assert_true(collector_value_of(&out, 6, "energy.cpu_joules") == 0);
	/* 200 J over a tick in which 8 cores were busy: job 5 ran 4, job 6 ran 2; 50 J stay the node's. */
	tick(a, &out, 1200, 8, 4, 2);
	assert_float_equal(collector_value_of(&out, 5, "energy.cpu_joules"), 100, 1e-9);
	assert_float_equal(collector_value_of(&out, 6, "energy.cpu_joules"), 50, 1e-9);
	/* Totals grow; job 6 not sampled this tick takes nothing. */
	tick(a, &out, 1300, 2, 2, NAN);
	assert_float_equal(collector_value_of(&out, 5, "energy.cpu_joules"), 200, 1e-9);
	assert_true(isnan(collector_value_of(&out, 6, "energy.cpu_joules")));
	/* A job's cores above the node's (clocks read apart) take the whole tick, never more. */
	tick(a, &out, 1310, 1, 1.5, 0);
	assert_float_equal(collector_value_of(&out, 5, "energy.cpu_joules"), 210, 1e-9);
	assert_float_equal(collector_value_of(&out, 6, "energy.cpu_joules"), 50, 1e-9);
	/* An idle node: no busy time to share, nothing attributed. */
	tick(a, &out, 1400, 0, 0, 0);
	assert_float_equal(collector_value_of(&out, 5, "energy.cpu_joules"), 210, 1e-9);
	energy_attr_free(a);
	collector_out_free(&out);
}

static void
baselines_and_departures(void **state)
{
	struct energy_attr *a = energy_attr_new();
	struct collector_out out = {0};

	(void)state;
	tick(a, &out, 100, 4, 4, NAN);
	tick(a, &out, 140, 4, 4, NAN);
	assert_float_equal(collector_value_of(&out, 5, "energy.cpu_joules"), 40, 1e-9);
	/* RAPL unreadable for a tick: nothing is emitted, and the next reading is a new baseline. */
	tick(a, &out, NAN, 4, 4, NAN);
	assert_true(isnan(collector_value_of(&out, 5, "energy.cpu_joules")));
	tick(a, &out, 500, 4, 4, NAN);
	assert_float_equal(collector_value_of(&out, 5, "energy.cpu_joules"), 40, 1e-9);
	/* The collector counting afresh (reinitialised): the drop is not negative energy. */
	tick(a, &out, 3, 4, 4, NAN);
	assert_float_equal(collector_value_of(&out, 5, "energy.cpu_joules"), 40, 1e-9);
	tick(a, &out, 13, 4, 4, NAN);
	assert_float_equal(collector_value_of(&out, 5, "energy.cpu_joules"), 50, 1e-9);
	/* A job that left is forgotten: an id seen again starts from nothing. */
	energy_attr_job_gone(a, 5);
	tick(a, &out, 23, 4, 4, NAN);
	assert_float_equal(collector_value_of(&out, 5, "energy.cpu_joules"), 10, 1e-9);
	energy_attr_free(a);
	collector_out_free(&out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shares_of_busy_time),
		cmocka_unit_test(baselines_and_departures),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
