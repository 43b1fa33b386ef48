/*
 * Tests of the diagnosis report (daemon/diag_report.c) over a real store
 * seeded with a job's samples: the windows are built from what the store
 * holds (a running job over its lookback, an ended one over its life), a
 * verdict comes with its evidence and, with a tuner, a priced fix; a
 * distributed job's straggler comes first; what cannot be decided says
 * why; and /metrics' active kinds are computed once a window and dropped
 * when the options change.  The rules themselves are test_diag_rules's.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "clock.h"
#include "diag_report.h"
#include "node.h"
#include "store_fixture.h"
#include "tuner.h"

/* The configuration's defaults, with a sustain of 3 s. */
static const struct diag_thresholds th = {
	.sustain_s = 3, .underuse_share = 0.6, .gpu_idle_percent = 20, .oversub_ratio = 1.5,
	.input_share = 0.3, .comm_share = 0.3, .checkpoint_share = 0.1, .mtbf_s = 0,
	.memory_share = 0.9, .major_faults_per_s = 100, .imbalance_ratio = 1.5,
	.ipc_low = 0.7, .llc_mpki = 5, .ipc_high = 1.5, .peak_flops = 0, .peak_bandwidth = 0,
};

struct fixture {
	struct store_fixture sf;
	struct diag *d;
	double now;                /* the seeded samples end a second before it */
};

static int
setup(void **state)
{
	const struct diag_options o = {.th = th, .window_s = 1, .lookback_s = 600};
	struct fixture *f = calloc(1, sizeof(*f));

	if (f == NULL || store_fixture_open(&f->sf) < 0)
		return -1;
	f->d = diag_new(&o, &(struct diag_sources){.store = f->sf.st});
	f->now = floor(clock_now_s());
	*state = f;
	return f->d != NULL ? 0 : -1;
}

static int
teardown(void **state)
{
	struct fixture *f = *state;
	int r;

	diag_free(f->d);
	r = store_fixture_close(&f->sf);
	free(f);
	return r;
}

/* What the sampler and the job report each second. */
struct second {
	double cores, wait_cores, threads, allowed;
};

static const struct second healthy = {0.98, 0.02, 1, 1};
static const struct second oversubscribed = {2, 6, 8, 2};

/* Job's samples for the seconds [from, to): the sampler's gauges and one step a second. */
static void
seed(struct store *st, int64_t job, double from, double to, struct second s)
{
	struct sample v[8 * 64];
	size_t n = 0;

	for (double t = from; t < to; t++) {
		v[n++] = (struct sample){job, t, "cpu.cores", s.cores, NULL};
		v[n++] = (struct sample){job, t, "sched.wait_cores", s.wait_cores, NULL};
		v[n++] = (struct sample){job, t, "cpu.threads", s.threads, NULL};
		v[n++] = (struct sample){job, t, "cpu.busy_threads", s.threads > 1 ? s.threads : 1, NULL};
		v[n++] = (struct sample){job, t, "cpu.processes", 1, NULL};
		v[n++] = (struct sample){job, t, "cpu.allowed", s.allowed, NULL};
		v[n++] = (struct sample){job, t, "mem.rss_bytes", 1e8, NULL};
		v[n++] = (struct sample){job, t, "step_time_s", 1, NULL};
		if (n == sizeof(v) / sizeof(v[0]) || t + 1 >= to) {
			assert_int_equal(store_samples_write(st, v, n), STORE_OK);
			n = 0;
		}
	}
}

static json_t *
report(struct diag *d, int64_t job)
{
	json_t *out = NULL;

	assert_int_equal(diag_report(d, job, &out), STORE_OK);
	assert_non_null(out);
	return out;
}

static const json_t *
verdict(const json_t *r, size_t i)
{
	return json_array_get(json_object_get(r, "verdicts"), i);
}

static double
figure(const json_t *v, const char *name)
{
	return json_number_value(json_object_get(json_object_get(json_object_get(v, "evidence"), "figures"), name));
}

static void
running_job_shows_what_holds_now_with_evidence(void **state)
{
	struct fixture *f = *state;
	int64_t job = store_fixture_job(f->sf.st, "train", NULL, NULL, 0, f->now - 60);
	const json_t *v;
	json_t *r;

	seed(f->sf.st, job, f->now - 60, f->now - 30, healthy);
	seed(f->sf.st, job, f->now - 30, f->now, oversubscribed);
	r = report(f->d, job);
	assert_string_equal(json_string_value(json_object_get(r, "state")), "running");
	assert_string_equal(json_string_value(json_object_get(r, "workload")), "train");
	assert_true(json_real_value(json_object_get(r, "from")) == f->now - 60);   /* younger than the lookback */
	assert_int_equal(json_array_size(json_object_get(r, "verdicts")), 1);
	v = verdict(r, 0);
	assert_string_equal(json_string_value(json_object_get(v, "kind")), "oversubscribed");
	assert_true(json_is_true(json_object_get(v, "active")));
	assert_true(json_is_null(json_object_get(v, "until")));
	assert_true(json_real_value(json_object_get(v, "since")) == f->now - 30);
	assert_true(figure(v, "runnable_threads") == 8);
	assert_true(figure(v, "allowed_cpus") == 2);
	assert_non_null(strstr(json_string_value(json_object_get(v, "hint")), "OMP_NUM_THREADS=2"));
	assert_null(json_object_get(v, "fix"));                    /* no tuner to price one */
	assert_true(strncmp(json_string_value(json_object_get(r, "headline")), "oversubscribed: ", 16) == 0);
	/* No counters were sampled: compute- or memory-bound is left undecided, and says why. */
	assert_int_equal(json_array_size(json_object_get(r, "undecided")), 1);
	assert_int_equal(json_array_size(json_object_get(r, "ranks")), 0);
	assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(r, "energy"), "unavailable"),
							      "cpu")), "sampling is off");
	json_decref(r);
}

static void
running_job_is_judged_over_its_lookback_ended_one_over_its_life(void **state)
{
	struct fixture *f = *state;
	const struct diag_options recent = {.th = th, .window_s = 1, .lookback_s = 20};
	int64_t job = store_fixture_job(f->sf.st, "train", NULL, NULL, 0, f->now - 90);
	const json_t *v;
	json_t *r;

	seed(f->sf.st, job, f->now - 90, f->now - 60, healthy);
	seed(f->sf.st, job, f->now - 60, f->now - 30, oversubscribed);
	seed(f->sf.st, job, f->now - 30, f->now, healthy);
	/* Running, over its last 20 s: the problem is over, so the report shows none. */
	diag_set_options(f->d, &recent);
	r = report(f->d, job);
	assert_true(json_real_value(json_object_get(r, "from")) >= f->now - 21);
	assert_int_equal(json_array_size(json_object_get(r, "verdicts")), 0);
	assert_true(strncmp(json_string_value(json_object_get(r, "headline")), "No problem found over the last ", 31) == 0);
	json_decref(r);
	/* Ended: its whole life, the verdict with its end. */
	assert_int_equal(store_job_end(f->sf.st, job, f->now, true, 0), STORE_OK);
	r = report(f->d, job);
	assert_string_equal(json_string_value(json_object_get(r, "state")), "ended");
	assert_true(json_real_value(json_object_get(r, "from")) == f->now - 90);
	assert_int_equal(json_array_size(json_object_get(r, "verdicts")), 1);
	v = verdict(r, 0);
	assert_string_equal(json_string_value(json_object_get(v, "kind")), "oversubscribed");
	assert_true(json_is_false(json_object_get(v, "active")));
	assert_true(json_real_value(json_object_get(v, "since")) == f->now - 60);
	assert_true(json_real_value(json_object_get(v, "until")) >= f->now - 30 &&
		    json_real_value(json_object_get(v, "until")) <= f->now - 20);
	assert_string_equal(json_string_value(json_object_get(r, "headline")) + strlen("oversubscribed: "),
			    json_string_value(json_object_get(v, "hint")));
	json_decref(r);
}

static void
a_tuner_prices_the_fix(void **state)
{
	struct fixture *f = *state;
	const struct diag_options o = {.th = th, .window_s = 1, .lookback_s = 600};
	struct node_info node = {.hostname = "n1", .hw_class = "test", .sockets = 1, .cores = 8, .threads_per_core = 1,
				 .cpus_online = 8, .cpus_allowed = 8, .cores_allowed = 8, .numa_nodes = 1,
				 .numa_cores = {8}};
	const struct tuner_options to = {.gain_threshold = 0.01};
	struct tuner *t = tuner_open(f->sf.st, &node, &to);
	int64_t job = store_fixture_job(f->sf.st, "train", NULL, NULL, 0, f->now - 30);
	struct diag *d;
	const json_t *fix;
	json_t *r;

	assert_non_null(t);
	d = diag_new(&o, &(struct diag_sources){.store = f->sf.st, .tuner = t});
	assert_non_null(d);
	seed(f->sf.st, job, f->now - 30, f->now, oversubscribed);
	r = report(d, job);
	fix = json_object_get(verdict(r, 0), "fix");
	assert_non_null(fix);
	/* The tuner's default (8 threads on this node), never above the 2 CPUs the job may use. */
	assert_string_equal(json_string_value(json_object_get(json_object_get(fix, "env"), "OMP_NUM_THREADS")), "2");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(fix, "config"), "intra_threads")), 2);
	assert_string_equal(json_string_value(json_object_get(fix, "source")), "default");
	assert_non_null(strstr(json_string_value(json_object_get(fix, "text")), "gain not known"));
	json_decref(r);
	diag_free(d);
	tuner_close(t);
}

/* Rank r of the 3-rank job keyed key: a warm-up batch, then 10 steps of 2 s waiting comm_s each in collectives. */
static int64_t
rank_with_steps(struct store *st, const char *key, int r, double started, double comm_s)
{
	struct job_rank_spec rk = {.rank = r, .local_rank = r, .world_size = 3, .nodes = 1, .node = r == 2 ? "n2" : "n1"};
	int64_t id = store_fixture_job(st, "dist", key, &rk, 0, started);
	struct rank_report rep = {.job_id = id, .rank = r, .t = started + 1, .steps = 1, .step_s = 2, .comm_s = comm_s,
				  .data_s = 0.1, .samples_per_s = 50};

	assert_true(id > 0);
	assert_int_equal(store_rank_report(st, &rep), STORE_OK);
	rep.steps = 10;
	rep.step_s = 20;
	rep.comm_s = 10 * comm_s;
	rep.data_s = 1;
	rep.t = started + 21;
	assert_int_equal(store_rank_report(st, &rep), STORE_OK);
	return id;
}

static void
a_straggler_comes_first(void **state)
{
	struct fixture *f = *state;
	int64_t job;
	const json_t *v, *ranks;
	json_t *r;

	job = rank_with_steps(f->sf.st, "run:s", 0, f->now - 30, 1.0);
	rank_with_steps(f->sf.st, "run:s", 1, f->now - 30, 1.0);
	rank_with_steps(f->sf.st, "run:s", 2, f->now - 30, 0.1);   /* waits least: the others wait for it */
	seed(f->sf.st, job, f->now - 30, f->now, oversubscribed);
	r = report(f->d, job);
	ranks = json_object_get(r, "ranks");
	assert_int_equal(json_array_size(ranks), 3);
	assert_true(json_real_value(json_object_get(json_array_get(ranks, 0), "step_time_s")) == 2.0);
	assert_true(json_real_value(json_object_get(json_array_get(ranks, 0), "comm_share")) == 0.5);
	assert_int_equal(json_array_size(json_object_get(r, "verdicts")), 2);
	v = verdict(r, 0);
	assert_string_equal(json_string_value(json_object_get(v, "kind")), "straggler");
	assert_int_equal(json_integer_value(json_object_get(v, "rank")), 2);
	assert_string_equal(json_string_value(json_object_get(v, "node")), "n2");
	assert_true(fabs(json_real_value(json_object_get(v, "slower")) - 1.9) < 1e-9);   /* 1.9 s own work against 1.0 */
	assert_true(fabs(figure(v, "others_wait_share") - 0.45) < 1e-9);
	assert_true(json_is_true(json_object_get(v, "active")));
	assert_string_equal(json_string_value(json_object_get(verdict(r, 1), "kind")), "oversubscribed");
	assert_true(strncmp(json_string_value(json_object_get(r, "headline")), "straggler: ", 11) == 0);
	json_decref(r);
}

static void
unknown_jobs_and_no_diagnosis(void **state)
{
	struct fixture *f = *state;
	unsigned kinds = 99;
	json_t *r = NULL;

	assert_int_equal(diag_report(f->d, 12345, &r), STORE_ENOTFOUND);
	assert_null(r);
	assert_int_equal(diag_report(NULL, 1, &r), STORE_ENOTFOUND);
	assert_int_equal(diag_active(NULL, 1, &kinds), STORE_OK);
	assert_int_equal(kinds, 0);
}

static void
active_kinds_are_kept_a_window(void **state)
{
	struct fixture *f = *state;
	/* Windows of 2 minutes: the kinds are computed at most once in that. */
	const struct diag_options slow = {.th = th, .window_s = 120, .lookback_s = 600};
	int64_t job = store_fixture_job(f->sf.st, "train", NULL, NULL, 0, f->now - 600);
	unsigned kinds = 0;

	diag_set_options(f->d, &slow);
	seed(f->sf.st, job, f->now - 600, f->now, oversubscribed);
	assert_int_equal(diag_active(f->d, job, &kinds), STORE_OK);
	assert_int_equal(kinds, 1u << DIAG_OVERSUBSCRIBED);
	/* The job ended meanwhile: within the window the kinds stand as computed. */
	assert_int_equal(store_job_end(f->sf.st, job, f->now, true, 0), STORE_OK);
	assert_int_equal(diag_active(f->d, job, &kinds), STORE_OK);
	assert_int_equal(kinds, 1u << DIAG_OVERSUBSCRIBED);
	/* New options drop what was kept: an ended job has no active verdict. */
	diag_set_options(f->d, &slow);
	assert_int_equal(diag_active(f->d, job, &kinds), STORE_OK);
	assert_int_equal(kinds, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(running_job_shows_what_holds_now_with_evidence, setup, teardown),
		cmocka_unit_test_setup_teardown(running_job_is_judged_over_its_lookback_ended_one_over_its_life, setup,
						teardown),
		cmocka_unit_test_setup_teardown(a_tuner_prices_the_fix, setup, teardown),
		cmocka_unit_test_setup_teardown(a_straggler_comes_first, setup, teardown),
		cmocka_unit_test_setup_teardown(unknown_jobs_and_no_diagnosis, setup, teardown),
		cmocka_unit_test_setup_teardown(active_kinds_are_kept_a_window, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
