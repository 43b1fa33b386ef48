/*
 * Tests of the straggler rule (daemon/diag_straggler.c) on constructed
 * ranks: a balanced job (ranks waiting alike) gets no verdict at 2, 4 and
 * 16 ranks; the rank the others wait for is named with how much slower it
 * is, at 2 ranks and among many; the cause is its data phase, a busy
 * neighbour (its threads alone wait for a CPU), oversubscription (every
 * rank's do), a smaller CPU share, or unknown; ranks with too few steps or
 * a small gap are not judged.  Where no rank timed its collectives, a rank
 * waiting for a CPU while the others sleep is named from the CPU figures,
 * and nothing else is.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "diag_straggler.h"

#define MAXR 16

/* n ranks of step 0.5 s waiting 0.2 s, 1 core each without CPU wait. */
static void
balanced(struct diag_rank *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		r[i] = (struct diag_rank){.rank = (int)i, .node = i % 2 ? "b" : "a", .steps = 50, .step_s = 0.5,
					  .comm_s = 0.2, .data_s = 0.01, .cpu_cores = 1.0, .wait_cores = 0.02};
}

/* Rank s does its share in 0.5 s (waits 0.0), the others in 0.3 s (wait 0.2). */
static void
slow(struct diag_rank *r, int s)
{
	r[s].comm_s = 0.0;
}

static void
test_balanced_gets_none(void **state)
{
	struct diag_rank r[MAXR];
	struct diag_straggler out;
	size_t sizes[] = {2, 4, 16};

	(void)state;
	for (size_t k = 0; k < 3; k++) {
		balanced(r, sizes[k]);
		/* Noise: a few ms more or less wait is not a straggler. */
		r[1].comm_s = 0.18;
		assert_false(diag_straggler_find(r, sizes[k], &out));
	}
}

static void
test_named_at_two_and_many(void **state)
{
	struct diag_rank r[MAXR];
	struct diag_straggler out;

	(void)state;
	balanced(r, 2);
	slow(r, 1);
	assert_true(diag_straggler_find(r, 2, &out));
	assert_int_equal(out.rank, 1);
	assert_string_equal(out.node, "b");
	assert_true(fabs(out.slower - 0.5 / 0.3) < 1e-9);
	assert_true(fabs(out.others_wait_share - 0.4) < 1e-9);
	balanced(r, 16);
	slow(r, 6);
	assert_true(diag_straggler_find(r, 16, &out));
	assert_int_equal(out.rank, 6);
	assert_string_equal(out.node, "a");
	assert_non_null(strstr(out.hint, "rank 6 on a"));
}

static void
test_cause_data(void **state)
{
	struct diag_rank r[4];
	struct diag_straggler out;

	(void)state;
	balanced(r, 4);
	slow(r, 3);
	r[3].data_s = 0.19;
	assert_true(diag_straggler_find(r, 4, &out));
	assert_int_equal(out.cause, DIAG_CAUSE_DATA);
	assert_string_equal(diag_straggler_cause_name(out.cause), "data_phase");
	assert_non_null(strstr(out.hint, "data phase"));
}

static void
test_cause_neighbour_and_oversubscribed(void **state)
{
	struct diag_rank r[4];
	struct diag_straggler out;

	(void)state;
	balanced(r, 4);
	slow(r, 2);
	r[2].wait_cores = 0.8;      /* waits 44% of its runnable time, the others 2% */
	assert_true(diag_straggler_find(r, 4, &out));
	assert_int_equal(out.cause, DIAG_CAUSE_NEIGHBOUR);
	for (int i = 0; i < 4; i++)
		r[i].wait_cores = 0.7;  /* every rank waits alike: the node is oversubscribed */
	r[2].wait_cores = 0.9;
	assert_true(diag_straggler_find(r, 4, &out));
	assert_int_equal(out.cause, DIAG_CAUSE_OVERSUBSCRIBED);
}

static void
test_cause_cpu_share_and_unknown(void **state)
{
	struct diag_rank r[4];
	struct diag_straggler out;

	(void)state;
	balanced(r, 4);
	slow(r, 0);
	r[0].cpu_cores = 0.5;       /* fewer threads, no wait */
	assert_true(diag_straggler_find(r, 4, &out));
	assert_int_equal(out.cause, DIAG_CAUSE_CPU_SHARE);
	r[0].cpu_cores = 1.0;
	assert_true(diag_straggler_find(r, 4, &out));
	assert_int_equal(out.cause, DIAG_CAUSE_UNKNOWN);
	r[0].cpu_cores = NAN;       /* not read: no CPU cause guessed */
	r[0].wait_cores = NAN;
	assert_true(diag_straggler_find(r, 4, &out));
	assert_int_equal(out.cause, DIAG_CAUSE_UNKNOWN);
}

static void
test_not_judged(void **state)
{
	struct diag_rank r[4];
	struct diag_straggler out;

	(void)state;
	balanced(r, 4);
	slow(r, 1);
	r[1].steps = DIAG_STRAGGLER_MIN_STEPS - 1;   /* too few steps: not judged */
	assert_false(diag_straggler_find(r, 4, &out));
	balanced(r, 1);
	assert_false(diag_straggler_find(r, 1, &out));
	balanced(r, 4);
	r[1].comm_s = 0.14;         /* others wait 12% of a step for it: below the share */
	assert_false(diag_straggler_find(r, 4, &out));
	for (int i = 0; i < 4; i++)
		r[i].step_s = NAN;      /* no step time: nothing judged */
	assert_false(diag_straggler_find(r, 4, &out));
}

/* n ranks that reported steps but no time in collectives, each running 0.5 cores and sleeping the rest. */
static void
untimed(struct diag_rank *r, size_t n)
{
	balanced(r, n);
	for (size_t i = 0; i < n; i++) {
		r[i].comm_s = 0;
		r[i].cpu_cores = 0.5;
		r[i].wait_cores = 0.01;
	}
}

static void
test_untimed_neighbour_named_from_cpus(void **state)
{
	struct diag_rank r[4];
	struct diag_straggler out;

	(void)state;
	untimed(r, 2);
	r[1].cpu_cores = 0.5;       /* runnable all the time, half of it waiting: the others sleep half */
	r[1].wait_cores = 0.5;
	assert_true(diag_straggler_find(r, 2, &out));
	assert_int_equal(out.rank, 1);
	assert_true(out.from_cpu);
	assert_int_equal(out.cause, DIAG_CAUSE_NEIGHBOUR);
	assert_true(fabs(out.slower - 1.0 / 0.51) < 1e-9);
	assert_true(fabs(out.others_wait_share - 0.49) < 1e-9);
	assert_non_null(strstr(out.hint, "rank 1 on b waits for a CPU 50%"));
	untimed(r, 4);
	r[2].cpu_cores = 0.6;
	r[2].wait_cores = 0.4;
	assert_true(diag_straggler_find(r, 4, &out));
	assert_int_equal(out.rank, 2);
	assert_true(out.from_cpu);
}

static void
test_untimed_nothing_else_named(void **state)
{
	struct diag_rank r[4];
	struct diag_straggler out;

	(void)state;
	untimed(r, 4);              /* balanced */
	assert_false(diag_straggler_find(r, 4, &out));
	r[1].wait_cores = 0.3;      /* waits for a CPU, yet the others keep as many cores runnable: not behind */
	r[1].cpu_cores = 0.25;
	assert_false(diag_straggler_find(r, 4, &out));
	untimed(r, 4);
	for (int i = 0; i < 4; i++)
		r[i].wait_cores = 0.4;  /* every rank waits: oversubscribed, no one rank to name */
	r[3].wait_cores = 0.6;
	assert_false(diag_straggler_find(r, 4, &out));
	untimed(r, 2);
	r[1].wait_cores = 0.1;      /* waits 17% of its runnable time: below the share that names a CPU */
	r[0].cpu_cores = 0.3;
	assert_false(diag_straggler_find(r, 2, &out));
	untimed(r, 2);
	r[0].cpu_cores = r[0].wait_cores = NAN;   /* the other rank's CPU not read */
	r[1].wait_cores = 0.5;
	assert_false(diag_straggler_find(r, 2, &out));
	untimed(r, 2);              /* a timed job is judged by its collectives: balanced there */
	r[0].comm_s = r[1].comm_s = 0.2;
	r[1].wait_cores = 0.5;
	assert_false(diag_straggler_find(r, 2, &out));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_balanced_gets_none),
		cmocka_unit_test(test_named_at_two_and_many),
		cmocka_unit_test(test_cause_data),
		cmocka_unit_test(test_cause_neighbour_and_oversubscribed),
		cmocka_unit_test(test_cause_cpu_share_and_unknown),
		cmocka_unit_test(test_not_judged),
		cmocka_unit_test(test_untimed_neighbour_named_from_cpus),
		cmocka_unit_test(test_untimed_nothing_else_named),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
