/*
 * Tests of the diagnosis rules (daemon/diag_rules.c) and the sustain rule
 * (daemon/diag_sustain.c) on constructed windows: each kind of verdict
 * fires on the figures it is about and not on healthy ones, a verdict
 * needs a sustained span to start and to end, unmeasured figures never
 * fire a rule, and the counter-based verdicts come from IPC, LLC misses
 * and bandwidth fixtures, or are left undecided with the counters named.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "diag_sustain.h"
#include "diag_rules.h"

#define NW 20

/* The configuration's defaults, with a sustain of 3 s over 1-second windows. */
static const struct diag_thresholds th = {
	.sustain_s = 3, .underuse_share = 0.6, .gpu_idle_percent = 20, .oversub_ratio = 1.5,
	.input_share = 0.3, .comm_share = 0.3, .checkpoint_share = 0.1, .mtbf_s = 0,
	.memory_share = 0.9, .major_faults_per_s = 100, .imbalance_ratio = 1.5,
	.ipc_low = 0.7, .llc_mpki = 5, .ipc_high = 1.5, .peak_flops = 0, .peak_bandwidth = 0,
};

/* A healthy job: one busy thread on its one CPU, steps of compute only. */
static void
healthy(struct diag_window *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		diag_window_clear(&w[i], 1000 + (double)i, 1001 + (double)i);
		w[i].cpu_cores = 0.98;
		w[i].wait_cores = 0.02;
		w[i].threads = 1;
		w[i].busy_threads = 1;
		w[i].processes = 1;
		w[i].thread_max_cores = 0.98;
		w[i].allowed_cpus = 1;
		w[i].rss_bytes = 1e8;
		w[i].major_faults_per_s = 0;
		w[i].step_s = 1;
		w[i].data_s = 0.02;
	}
}

static size_t
run(const struct diag_window *w, size_t n, const struct diag_thresholds *t, struct diag_verdict *v)
{
	return diag_evaluate(w, n, t, v, 16);
}

static const struct diag_verdict *
find(const struct diag_verdict *v, size_t n, enum diag_kind k)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].kind == k)
			return &v[i];
	return NULL;
}

/* The hint of the verdict of kind k, which must be there. */
static const char *
hint_of(const struct diag_verdict *v, size_t n, enum diag_kind k)
{
	const struct diag_verdict *x = find(v, n, k);

	assert_non_null(x);
	return x != NULL ? x->hint : "";
}

static void
test_healthy_gets_no_verdict(void **state)
{
	struct diag_window w[NW];
	struct diag_verdict v[16];

	(void)state;
	healthy(w, NW);
	assert_int_equal(run(w, NW, &th, v), 0);
}

static void
test_oversubscribed(void **state)
{
	struct diag_window w[NW];
	struct diag_verdict v[16];
	const struct diag_verdict *o;
	size_t n;

	(void)state;
	healthy(w, NW);
	for (size_t i = 5; i < NW; i++) {
		w[i].allowed_cpus = 2;
		w[i].threads = 8;
		w[i].cpu_cores = 2;
		w[i].wait_cores = 6;
	}
	n = run(w, NW, &th, v);
	assert_int_equal(n, 1);
	o = find(v, n, DIAG_OVERSUBSCRIBED);
	assert_non_null(o);
	assert_true(o->active);
	assert_true(o->since == 1005);
	assert_non_null(strstr(o->hint, "OMP_NUM_THREADS=2"));
	assert_non_null(strstr(o->hint, "8.0 threads want a CPU on 2 allowed CPUs"));
	assert_true(o->nevidence >= 4);
	assert_string_equal(o->evidence[0].name, "runnable_threads");
	assert_true(o->evidence[0].value == 8);
}

static void
test_contention_alone_is_not_oversubscription(void **state)
{
	struct diag_window w[NW];
	struct diag_verdict v[16];

	(void)state;
	healthy(w, NW);
	/* Other work on the node makes its one thread wait half the time. */
	for (size_t i = 0; i < NW; i++) {
		w[i].cpu_cores = 0.5;
		w[i].wait_cores = 0.5;
	}
	assert_int_equal(run(w, NW, &th, v), 0);
	/* An overloaded node: its main and reporter threads both queue, but others get the CPU. */
	for (size_t i = 0; i < NW; i++) {
		w[i].threads = 2;
		w[i].cpu_cores = 0.01;
		w[i].wait_cores = 2.07;
	}
	assert_int_equal(run(w, NW, &th, v), 0);
}

static void
test_one_sample_or_flapping_gives_nothing(void **state)
{
	struct diag_window w[NW];
	struct diag_verdict v[16];

	(void)state;
	healthy(w, NW);
	w[7].data_s = 0.9;           /* one slow data step */
	w[7].threads = 8;
	w[7].wait_cores = 8;         /* one window of oversubscription */
	assert_int_equal(run(w, NW, &th, v), 0);
	healthy(w, NW);
	for (size_t i = 0; i < NW; i += 2) {
		w[i].threads = 8;
		w[i].wait_cores = 8;
	}
	assert_int_equal(run(w, NW, &th, v), 0);
}

static void
test_verdict_ends_after_sustained_absence(void **state)
{
	struct diag_window w[NW];
	struct diag_verdict v[16];
	size_t n;

	(void)state;
	healthy(w, NW);
	for (size_t i = 2; i < 10; i++) {
		w[i].threads = 8;
		w[i].wait_cores = 8;
	}
	w[14].threads = 8;            /* a blip after it ended does not restart it */
	w[14].wait_cores = 8;
	n = run(w, NW, &th, v);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].kind, DIAG_OVERSUBSCRIBED);
	assert_false(v[0].active);
	assert_true(v[0].since == 1002);
	assert_true(v[0].until == 1010);
}

static void
test_sustain_rule(void **state)
{
	struct diag_sustain st = {0};
	double until = 0;

	(void)state;
	assert_int_equal(diag_sustain_step(&st, 0, 1, true, 3, &until), DIAG_SUSTAIN_NONE);
	assert_int_equal(diag_sustain_step(&st, 1, 2, true, 3, &until), DIAG_SUSTAIN_NONE);
	assert_int_equal(diag_sustain_step(&st, 2, 3, true, 3, &until), DIAG_SUSTAIN_START);
	assert_true(st.since == 0);
	assert_int_equal(diag_sustain_step(&st, 3, 4, false, 3, &until), DIAG_SUSTAIN_NONE);
	assert_int_equal(diag_sustain_step(&st, 4, 5, true, 3, &until), DIAG_SUSTAIN_NONE);
	assert_int_equal(diag_sustain_step(&st, 5, 6, false, 3, &until), DIAG_SUSTAIN_NONE);
	assert_int_equal(diag_sustain_step(&st, 6, 7, false, 3, &until), DIAG_SUSTAIN_NONE);
	assert_int_equal(diag_sustain_step(&st, 7, 8, false, 3, &until), DIAG_SUSTAIN_END);
	assert_true(until == 5);
	/* One wide window covers the sustain time by itself. */
	assert_int_equal(diag_sustain_step(&st, 8, 18, true, 3, &until), DIAG_SUSTAIN_START);
}

static void
test_underuse(void **state)
{
	struct diag_window w[NW];
	struct diag_verdict v[16];
	size_t n;

	(void)state;
	healthy(w, NW);
	for (size_t i = 0; i < NW; i++)
		w[i].allowed_cpus = 2;
	n = run(w, NW, &th, v);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].kind, DIAG_UNDERUSE);
	assert_non_null(strstr(v[0].hint, "uses 1.0 of its 2 allowed CPUs"));
	/* One CPU used of one allowed, or two of two, is not underuse. */
	healthy(w, NW);
	assert_int_equal(run(w, NW, &th, v), 0);
	for (size_t i = 0; i < NW; i++) {
		w[i].allowed_cpus = 2;
		w[i].cpu_cores = 1.9;
		w[i].busy_threads = 2;
		w[i].threads = 2;
	}
	assert_int_equal(run(w, NW, &th, v), 0);
}

static void
test_gpus_idle(void **state)
{
	struct diag_window w[NW];
	struct diag_verdict v[16];
	size_t n;

	(void)state;
	healthy(w, NW);
	for (size_t i = 0; i < NW; i++) {
		w[i].gpus = 2;
		w[i].gpu_util_percent = 20;  /* summed: 10% each */
	}
	n = run(w, NW, &th, v);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].kind, DIAG_GPU_IDLE);
	assert_non_null(strstr(v[0].hint, "busy 10%"));
	for (size_t i = 0; i < NW; i++)
		w[i].gpu_util_percent = 160;
	assert_int_equal(run(w, NW, &th, v), 0);
}

/* A GPU job whose GPUs wait on its data phase: both verdicts, and the GPU one points at the loader workers. */
static void
test_gpus_wait_on_input(void **state)
{
	struct diag_window w[NW];
	struct diag_verdict v[16];
	size_t n, k;

	(void)state;
	healthy(w, NW);
	for (size_t i = 0; i < NW; i++) {
		w[i].gpus = 1;
		w[i].gpu_util_percent = 10;
		w[i].step_s = 1;
		w[i].data_s = 0.6;
	}
	n = run(w, NW, &th, v);
	assert_int_equal(n, 2);
	for (k = 0; k < n && v[k].kind != DIAG_GPU_IDLE; k++)
		;
	assert_true(k < n);
	assert_non_null(strstr(v[k].hint, "busy 10% of the time and loading data takes 60% of each step: the GPUs "
				       "wait on input"));
	assert_non_null(strstr(v[k].hint, "DLPROF_DATALOADER_WORKERS"));
	for (k = 0; k < n && v[k].kind != DIAG_INPUT_BOUND; k++)
		;
	assert_true(k < n);
	assert_non_null(strstr(v[k].hint, "GPUs busy 10%"));
	assert_non_null(strstr(v[k].hint, "DLPROF_DATALOADER_WORKERS"));
}

static void
test_input_bound(void **state)
{
	struct diag_window w[NW];
	struct diag_verdict v[16];
	size_t n;

	(void)state;
	healthy(w, NW);
	for (size_t i = 0; i < NW; i++) {
		/* Steps reported every other window: shares come from the trailing span. */
		w[i].step_s = i % 2 ? 2 : NAN;
		w[i].data_s = i % 2 ? 1.2 : NAN;
		w[i].processes = 3;
	}
	n = run(w, NW, &th, v);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].kind, DIAG_INPUT_BOUND);
	assert_non_null(strstr(v[0].hint, "loading data takes 60% of each step (3 processes on 1 CPUs"));
	/* A job that only reports (no process sampled): the hint leaves out what is not known. */
	for (size_t i = 0; i < NW; i++) {
		double step = w[i].step_s, data = w[i].data_s;
		diag_window_clear(&w[i], w[i].t0, w[i].t1);
		w[i].step_s = step;
		w[i].data_s = data;
	}
	n = run(w, NW, &th, v);
	assert_int_equal(n, 1);
	assert_non_null(strstr(v[0].hint, "loading data takes 60% of each step: add loader"));
	assert_null(strstr(v[0].hint, "nan"));
}

static void
test_communication_and_checkpoint(void **state)
{
	struct diag_window w[NW];
	struct diag_verdict v[16];
	struct diag_thresholds t = th;
	size_t n;

	(void)state;
	healthy(w, NW);
	for (size_t i = 0; i < NW; i++) {
		w[i].comm_s = 0.4;
		if (i % 4 == 3) {
			w[i].checkpoint_s = 0.5;
			w[i].checkpoints = 1;
		}
	}
	t.mtbf_s = 3600;
	n = run(w, NW, &t, v);
	assert_int_equal(n, 2);
	assert_non_null(strstr(hint_of(v, n, DIAG_COMM_BOUND), "communication takes 40%"));
	/* Young/Daly: sqrt(2 * 0.5 s * 3600 s) = 60 s. */
	assert_non_null(strstr(hint_of(v, n, DIAG_CHECKPOINT), "0.5 s each"));
	assert_non_null(strstr(hint_of(v, n, DIAG_CHECKPOINT), "interval is 60 s"));
}

static void
test_memory_pressure(void **state)
{
	struct diag_window w[NW];
	struct diag_verdict v[16];
	size_t n;

	(void)state;
	healthy(w, NW);
	for (size_t i = 0; i < NW; i++)
		w[i].mem_limit_bytes = 1.2e8;     /* RSS 1e8: 83% */
	assert_int_equal(run(w, NW, &th, v), 0);
	for (size_t i = 0; i < NW; i++)
		w[i].rss_bytes = 1.15e8;          /* 96% */
	n = run(w, NW, &th, v);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].kind, DIAG_MEMORY_PRESSURE);
	assert_non_null(strstr(v[0].hint, "is 96% of its"));
	/* Without a limit, major faults alone tell it. */
	healthy(w, NW);
	for (size_t i = 0; i < NW; i++)
		w[i].major_faults_per_s = 500;
	n = run(w, NW, &th, v);
	assert_int_equal(n, 1);
	assert_non_null(strstr(v[0].hint, "500 major page faults/s"));
}

static void
test_imbalanced(void **state)
{
	struct diag_window w[NW];
	struct diag_verdict v[16];
	size_t n;

	(void)state;
	healthy(w, NW);
	for (size_t i = 0; i < NW; i++) {
		w[i].allowed_cpus = 2;
		w[i].threads = 4;
		w[i].busy_threads = 4;
		w[i].cpu_cores = 2.2 - 0.02;      /* one at 1.0, three at 0.4 */
		w[i].thread_max_cores = 1.0;
	}
	n = run(w, NW, &th, v);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].kind, DIAG_IMBALANCED);
	/* Evenly spread: the busiest thread is near the mean. */
	for (size_t i = 0; i < NW; i++)
		w[i].thread_max_cores = 0.6;
	assert_int_equal(run(w, NW, &th, v), 0);
}

/*
 * The mean busy thread is of the busy threads' own CPU.  The job of
 * tests/integration/test_diagnosis.py on a loaded node: one thread at 0.87
 * of a core, two of its 0.4-duty threads at 0.31, the third at 0.23 (under
 * the busy mark) and the idle parent; 1.73 cores in all.  Busiest over the
 * busy mean is 0.87 / (1.49 / 3) = 1.75; over the whole job's CPU it read
 * 0.87 / (1.73 / 3) = 1.51, and a tick's noise put it under 1.5.
 */
static void
test_imbalanced_below_busy_mark(void **state)
{
	struct diag_verdict v[16];
	struct diag_window w[NW];
	size_t n;

	(void)state;
	healthy(w, NW);
	for (size_t i = 0; i < NW; i++) {
		w[i].allowed_cpus = 2;
		w[i].threads = 5;
		w[i].processes = 5;
		w[i].busy_threads = 3;
		w[i].cpu_cores = 1.73 + (i % 2 ? 0.02 : 0);   /* the CPU under the mark comes and goes */
		w[i].busy_thread_cores = 0.87 + 2 * 0.31;
		w[i].thread_max_cores = 0.87;
	}
	n = run(w, NW, &th, v);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].kind, DIAG_IMBALANCED);
	assert_float_equal(diag_evidence(&v[0], "thread_mean_cores"), 1.49 / 3, 1e-9);
	/* Three busy threads near even: the busiest is near their mean. */
	for (size_t i = 0; i < NW; i++)
		w[i].busy_thread_cores = 0.87 + 2 * 0.7;
	assert_int_equal(run(w, NW, &th, v), 0);
}

/* Counter fixtures: instructions 1e9/s; misses and IPC as given. */
static void
counters(struct diag_window *w, size_t n, double ipc, double misses_per_s)
{
	for (size_t i = 0; i < n; i++) {
		w[i].ipc = ipc;
		w[i].instructions_per_s = 1e9;
		w[i].llc_misses_per_s = misses_per_s;
	}
}

static void
test_counter_fixtures(void **state)
{
	struct diag_window w[NW];
	struct diag_verdict v[16];
	struct diag_thresholds t = th;
	char why[320];
	size_t n;

	(void)state;
	healthy(w, NW);
	counters(w, NW, 0.4, 2e7);                /* 20 misses per 1000 instructions */
	n = run(w, NW, &th, v);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].kind, DIAG_MEMORY_BOUND);
	assert_non_null(strstr(v[0].hint, "IPC 0.40 with 20.0 LLC misses"));
	assert_false(diag_undecided(w, NW, why, sizeof(why)));
	counters(w, NW, 2.5, 5e5);                /* 0.5 per 1000 */
	n = run(w, NW, &th, v);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].kind, DIAG_COMPUTE_BOUND);
	counters(w, NW, 1.0, 2e6);                /* in between: neither */
	assert_int_equal(run(w, NW, &th, v), 0);
	/* Against measured peaks: 8 GB/s of a 10 GB/s peak binds, 5 of 10 does not. */
	t.peak_bandwidth = 1e10;
	for (size_t i = 0; i < NW; i++)
		w[i].bandwidth = 8e9;
	n = run(w, NW, &t, v);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].kind, DIAG_MEMORY_BOUND);
	for (size_t i = 0; i < NW; i++)
		w[i].bandwidth = 5e9;
	assert_int_equal(run(w, NW, &t, v), 0);
	/* The same bandwidth with no measured peak decides nothing. */
	healthy(w, NW);
	for (size_t i = 0; i < NW; i++)
		w[i].bandwidth = 8e9;
	assert_int_equal(run(w, NW, &th, v), 0);
}

static void
test_no_pmu_is_undecided_not_guessed(void **state)
{
	struct diag_window w[NW];
	struct diag_verdict v[16];
	char why[320];

	(void)state;
	healthy(w, NW);
	assert_int_equal(run(w, NW, &th, v), 0);
	assert_true(diag_undecided(w, NW, why, sizeof(why)));
	assert_non_null(strstr(why, "instructions and cycles (IPC)"));
	assert_non_null(strstr(why, "last-level cache misses"));
	/* IPC without misses: only the misses are missing. */
	for (size_t i = 0; i < NW; i++)
		w[i].ipc = 0.3;
	assert_int_equal(run(w, NW, &th, v), 0);
	assert_true(diag_undecided(w, NW, why, sizeof(why)));
	assert_null(strstr(why, "(IPC)"));
}

static void
test_unmeasured_figures_never_fire(void **state)
{
	struct diag_window w[NW];
	struct diag_verdict v[16];

	(void)state;
	for (size_t i = 0; i < NW; i++)
		diag_window_clear(&w[i], (double)i, (double)i + 1);
	assert_int_equal(run(w, NW, &th, v), 0);
	assert_int_equal(run(w, 0, &th, v), 0);
}

static void
test_phase_classes(void **state)
{
	(void)state;
	assert_int_equal(diag_phase_class("data"), DIAG_PHASE_DATA);
	assert_int_equal(diag_phase_class("DataLoader"), DIAG_PHASE_DATA);
	assert_int_equal(diag_phase_class("allreduce"), DIAG_PHASE_COMM);
	assert_int_equal(diag_phase_class("nccl_bcast"), DIAG_PHASE_COMM);
	assert_int_equal(diag_phase_class("checkpoint"), DIAG_PHASE_CHECKPOINT);
	assert_int_equal(diag_phase_class("save_model"), DIAG_PHASE_CHECKPOINT);
	assert_int_equal(diag_phase_class("forward"), DIAG_PHASE_OTHER);
	assert_int_equal(diag_phase_class(NULL), DIAG_PHASE_OTHER);
	assert_string_equal(diag_kind_name(DIAG_OVERSUBSCRIBED), "oversubscribed");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_healthy_gets_no_verdict),
		cmocka_unit_test(test_oversubscribed),
		cmocka_unit_test(test_contention_alone_is_not_oversubscription),
		cmocka_unit_test(test_one_sample_or_flapping_gives_nothing),
		cmocka_unit_test(test_verdict_ends_after_sustained_absence),
		cmocka_unit_test(test_sustain_rule),
		cmocka_unit_test(test_underuse),
		cmocka_unit_test(test_gpus_idle),
		cmocka_unit_test(test_gpus_wait_on_input),
		cmocka_unit_test(test_input_bound),
		cmocka_unit_test(test_communication_and_checkpoint),
		cmocka_unit_test(test_memory_pressure),
		cmocka_unit_test(test_imbalanced),
		cmocka_unit_test(test_imbalanced_below_busy_mark),
		cmocka_unit_test(test_counter_fixtures),
		cmocka_unit_test(test_no_pmu_is_undecided_not_guessed),
		cmocka_unit_test(test_unmeasured_figures_never_fire),
		cmocka_unit_test(test_phase_classes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
