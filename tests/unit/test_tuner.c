/*
 * The tuner driven like the daemon drives it: jobs start, report batches of
 * samples with the config they ran, and end.  Jobs converge on a surface's
 * best, persist it across a reopen, never get a config that cannot run, get
 * per-phase settings, keep exploration within its budget once confident
 * (and are asked for their steps promptly only while a proposal is measured),
 * learn the same whatever the replay speed or the order inside a batch,
 * notice a drift, start from a similar workload, and rank by goodput
 * (throughput x statistical efficiency) where jobs report gradient noise.
 * Trials are kept pooled per phase and config, and read back the same.
 * Cached recommend answers read as fresh ones, go stale on any change and
 * stay within their bound.
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

#include "node.h"
#include "store.h"
#include "tuner.h"
#include "tuner_internal.h"   /* the pools, to check their bound */

static const struct tuner_options topt = {.gain_threshold = 0.01};
static const struct store_options sopt = {.queue_limit = 1024, .readers = 2};

struct fixture {
	char dir[64];
	char path[96];
	struct node_info node;
	struct store *st;
	struct tuner *t;
	int64_t next_id;       /* job ids when there is no store */
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/dlprof-tuner-XXXXXX");
	if (!f || !mkdtemp(f->dir))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/t.db", f->dir);
	snprintf(f->node.hostname, sizeof(f->node.hostname), "test");
	snprintf(f->node.hw_class, sizeof(f->node.hw_class), "x86_64-test-4c-1numa-2gpu");
	f->node.cores = f->node.cores_allowed = 4;
	f->node.cpus_online = f->node.cpus_allowed = 8;
	f->node.threads_per_core = 2;
	f->node.numa_nodes = 1;
	f->node.numa_cores[0] = 4;
	f->node.gpus = 2;
	f->next_id = 1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	tuner_close(f->t);
	store_close(f->st);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

static void open_all(struct fixture *f, bool with_store)
{
	if (with_store) {
		f->st = store_open(f->path, &sopt);
		assert_non_null(f->st);
	}
	f->t = tuner_open(f->st, &f->node, &topt);
	assert_non_null(f->t);
}

/* Registers a job (in the store when there is one) and starts it in the tuner; returns its config. */
static json_t *start_job(struct fixture *f, const char *workload, const char *params, enum objective objective,
			 const char *knobs, int64_t *id)
{
	json_t *k = knobs ? json_loads(knobs, 0, NULL) : NULL, *config;

	if (f->st) {
		struct job_spec spec = {.workload = workload, .params_json = params, .hw_class = f->node.hw_class,
					.objective = objective, .knobs_json = knobs, .source = "registered",
					.started = 1000.0};
		assert_int_equal(store_job_register(f->st, &spec, id), STORE_OK);
	} else {
		*id = f->next_id++;
	}
	config = tuner_job_start(f->t, *id, workload, params, objective, k);
	json_decref(k);
	assert_non_null(config);
	return config;
}

static long knob(const json_t *config, const char *name)
{
	return (long)json_integer_value(json_object_get(config, name));
}

typedef double (*surface_fn)(const json_t *config);

/* Threads 1..8 with the static knobs fixed, so one job can settle the whole space. */
#define SETTLING_KNOBS "{\"intra_threads\":{\"min\":1,\"max\":8},\"interop_threads\":{\"values\":[1]}," \
		       "\"gpus\":{\"values\":[0]}}"

/* Throughput peaking at 3 threads, falling off beyond (declared range 1..8 on 4 cores). */
static double peak3(const json_t *c)
{
	double th = (double)knob(c, "intra_threads");
	return 200.0 * th / (1.0 + pow(th / 3.0, 2.0));
}

/* Deterministic noise in [-a, a]. */
static double noise(unsigned *seed, double a)
{
	*seed = *seed * 1103515245u + 12345u;
	return a * (2.0 * ((*seed >> 8) & 0xffff) / 65535.0 - 1.0);
}

/*
 * Runs a job for steps steps in batches of batch, each step reporting
 * samples_per_s = fn(config) with 2% noise, at dt seconds per step from t0.
 * Returns the last config (owned by the caller); *explore counts the steps
 * run on a config other than best (when best >= 1).
 */
static json_t *run_job(struct fixture *f, int64_t id, json_t *config, surface_fn fn, int steps, int batch,
		       double t0, double dt, long best, int *explore)
{
	struct sample *s = calloc((size_t)batch, sizeof(*s));
	unsigned seed = 7;
	double t = t0;
	int done = 0, i;

	while (done < steps) {
		json_t *next;
		for (i = 0; i < batch; i++) {
			t += dt;
			s[i] = (struct sample){.job_id = id, .t = t, .name = "samples_per_s",
					       .value = fn(config) * (1.0 + noise(&seed, 0.02))};
			if (explore && best > 0 && knob(config, "intra_threads") != best)
				(*explore)++;
		}
		done += batch;
		next = tuner_job_observe(f->t, id, s, (size_t)batch, config);
		assert_non_null(next);
		json_decref(config);
		config = next;
	}
	free(s);
	return config;
}

static void test_converges_and_persists(void **state)
{
	struct fixture *f = *state;
	json_t *config, *rec, *rec2, *params;
	int64_t id;

	open_all(f, true);
	config = start_job(f, "peak", "{\"batch\":64}", OBJECTIVE_THROUGHPUT, "{\"intra_threads\":{\"min\":1,\"max\":8}}", &id);
	assert_int_equal(knob(config, "intra_threads"), 4);   /* the physical cores first */
	config = run_job(f, id, config, peak3, 400, 10, 1000.0, 0.5, 0, NULL);
	assert_int_equal(knob(config, "intra_threads"), 3);
	tuner_job_end(f->t, id);
	json_decref(config);
	params = json_pack("{s:s}", "batch", "64");   /* a query gives strings */
	rec = tuner_recommend(f->t, "peak", params, OBJECTIVE_THROUGHPUT);
	json_decref(params);
	assert_string_equal(json_string_value(json_object_get(rec, "source")), "learned");
	assert_int_equal(knob(json_object_get(rec, "config"), "intra_threads"), 3);
	assert_true(json_integer_value(json_object_get(rec, "trials")) <= 12);
	/* Everything learned comes back after a restart. */
	tuner_close(f->t);
	f->t = tuner_open(f->st, &f->node, &topt);
	assert_non_null(f->t);
	params = json_pack("{s:i}", "batch", 64);
	rec2 = tuner_recommend(f->t, "peak", params, OBJECTIVE_THROUGHPUT);
	json_decref(params);
	assert_string_equal(json_string_value(json_object_get(rec2, "source")), "learned");
	assert_true(json_equal(json_object_get(rec, "config"), json_object_get(rec2, "config")));
	assert_int_equal(json_integer_value(json_object_get(rec, "trials")),
			 json_integer_value(json_object_get(rec2, "trials")));
	json_decref(rec);
	json_decref(rec2);
}

static double more_threads_better(const json_t *c)
{
	return 10.0 * (double)knob(c, "intra_threads") + 5.0 * (double)knob(c, "gpus");
}

static void test_never_impossible(void **state)
{
	struct fixture *f = *state;
	json_t *a, *b, *c;
	int64_t ida, idb, idc;
	int i;

	open_all(f, false);
	a = start_job(f, "gpu", NULL, OBJECTIVE_THROUGHPUT, NULL, &ida);
	assert_int_equal(knob(a, "gpus"), 2);                 /* all idle GPUs */
	b = start_job(f, "gpu", NULL, OBJECTIVE_THROUGHPUT, NULL, &idb);
	assert_int_equal(knob(b, "gpus"), 0);                 /* none left */
	for (i = 0; i < 5; i++)
		b = run_job(f, idb, b, more_threads_better, 40, 10, 2000.0 + i * 100, 0.1, 0, NULL);
	assert_true(knob(b, "intra_threads") <= 8);           /* never beyond the allowed CPUs */
	assert_int_equal(knob(b, "gpus"), 0);
	tuner_job_end(f->t, ida);
	c = start_job(f, "gpu", NULL, OBJECTIVE_THROUGHPUT, NULL, &idc);
	assert_true(knob(c, "gpus") <= 2);
	json_decref(a);
	json_decref(b);
	json_decref(c);
}

/* Two phases: "a" runs best on 2 threads, "b" on 8. */
static json_t *run_phased(struct fixture *f, int64_t id, json_t *config, int steps, double t0)
{
	struct sample s[30];
	double t = t0;
	int done, i;

	for (done = 0; done < steps; done += 10) {
		json_t *next, *ph = json_object_get(config, "phases");
		long top = knob(config, "intra_threads");
		long ta = json_object_get(json_object_get(ph, "a"), "intra_threads") ? knob(json_object_get(ph, "a"), "intra_threads") : top;
		long tb = json_object_get(json_object_get(ph, "b"), "intra_threads") ? knob(json_object_get(ph, "b"), "intra_threads") : top;
		for (i = 0; i < 10; i++) {
			double pa = 0.01 * (1.0 + 0.1 * fabs((double)ta - 2.0));
			double pb = 0.04 / (double)tb + 0.002 * (double)tb;
			t += pa + pb;
			s[3 * i] = (struct sample){.job_id = id, .t = t, .name = "phase_time_s", .value = pa, .phase = "a"};
			s[3 * i + 1] = (struct sample){.job_id = id, .t = t, .name = "phase_time_s", .value = pb, .phase = "b"};
			s[3 * i + 2] = (struct sample){.job_id = id, .t = t, .name = "samples_per_s", .value = 32.0 / (pa + pb)};
		}
		next = tuner_job_observe(f->t, id, s, 30, config);
		assert_non_null(next);
		json_decref(config);
		config = next;
	}
	return config;
}

static void test_phases_get_their_own_threads(void **state)
{
	struct fixture *f = *state;
	json_t *config, *ph;
	int64_t id;

	open_all(f, false);
	config = start_job(f, "phased", NULL, OBJECTIVE_THROUGHPUT, NULL, &id);
	config = run_phased(f, id, config, 1500, 5000.0);
	ph = json_object_get(config, "phases");
	assert_non_null(ph);
	/* Each phase runs its own best, either as an override or as the top level. */
	assert_int_equal(json_object_get(json_object_get(ph, "a"), "intra_threads")
				 ? knob(json_object_get(ph, "a"), "intra_threads") : knob(config, "intra_threads"), 2);
	assert_int_equal(json_object_get(json_object_get(ph, "b"), "intra_threads")
				 ? knob(json_object_get(ph, "b"), "intra_threads") : knob(config, "intra_threads"), 4);
	json_decref(config);
}

/*
 * Exploration pays for itself: once nothing better is likely, a job runs its
 * best and nothing else (static knobs fixed: the job's own threads alone).
 */
static void test_explore_nothing_once_confident(void **state)
{
	struct fixture *f = *state;
	json_t *config;
	int64_t id;
	int explore = 0, k;

	open_all(f, false);
	/* Learn the workload over a few jobs. */
	for (k = 0; k < 4; k++) {
		config = start_job(f, "budget", NULL, OBJECTIVE_THROUGHPUT, SETTLING_KNOBS, &id);
		/* Its first plan is measured: the job is asked for its steps as soon as they may decide. */
		if (k == 0)
			assert_int_equal(tuner_job_report_within(f->t, id), TRIAL_CUT_FAR_STEPS);
		config = run_job(f, id, config, peak3, 400, 10, 10000.0 * (k + 1), 0.5, 0, NULL);
		tuner_job_end(f->t, id);
		json_decref(config);
	}
	config = start_job(f, "budget", NULL, OBJECTIVE_THROUGHPUT, SETTLING_KNOBS, &id);
	config = run_job(f, id, config, peak3, 1000, 10, 90000.0, 0.5, 3, &explore);
	if (explore > 20)
		fail_msg("%d of 1000 steps explored once confident", explore);
	assert_int_equal(knob(config, "intra_threads"), 3);
	/* On the best, nothing is about to be decided: the job reports at its own pace. */
	assert_int_equal(tuner_job_report_within(f->t, id), 0);
	assert_int_equal(tuner_job_report_within(f->t, id + 1000), 0);
	json_decref(config);
}

/*
 * A far-off best: 1..32 threads declared on 4 cores, the best at 24 (three
 * times the cores' value), the first config at the cores.  While the best
 * measured sits far below what the model thinks possible, exploring is
 * worth much of a job: the first job finds the best region and ends there,
 * spending more than the tenth of its steps a flat share would allow.
 */
static double far_peak(const json_t *c)
{
	double th = (double)knob(c, "intra_threads");
	return 50.0 * th / (1.0 + pow(th / 24.0, 4.0)) + 20.0;
}

static void test_explore_more_when_far_below(void **state)
{
	struct fixture *f = *state;
	json_t *config;
	int64_t id;
	int explore = 0;

	open_all(f, false);
	config = start_job(f, "far", NULL, OBJECTIVE_THROUGHPUT, "{\"intra_threads\":{\"min\":1,\"max\":32},"
				 "\"interop_threads\":{\"values\":[1]},\"gpus\":{\"values\":[0]}}", &id);
	assert_int_equal(knob(config, "intra_threads"), 4);
	config = run_job(f, id, config, far_peak, 120, 1, 100.0, 0.5, 24, &explore);
	if (explore <= 12)
		fail_msg("%d of 120 steps explored", explore);
	if (far_peak(config) < 0.95 * 50.0 * 24.0 / 2.0)
		fail_msg("the first job ended on %ld threads", knob(config, "intra_threads"));
	tuner_job_end(f->t, id);
	json_decref(config);
}

/* A workload nothing is known of starts where this node's other workloads did best, not at the cores. */
static void test_first_config_from_the_node(void **state)
{
	struct fixture *f = *state;
	json_t *config;
	int64_t id;
	int k;

	open_all(f, false);
	for (k = 0; k < 3; k++) {
		config = start_job(f, k == 2 ? "second" : "first", NULL, OBJECTIVE_THROUGHPUT, "{\"intra_threads\":{\"min\":1,\"max\":8}}", &id);
		config = run_job(f, id, config, peak3, 300, 10, 1000.0 * (k + 1), 0.5, 0, NULL);
		tuner_job_end(f->t, id);
		json_decref(config);
	}
	config = start_job(f, "new", NULL, OBJECTIVE_THROUGHPUT, "{\"intra_threads\":{\"min\":1,\"max\":8}}", &id);
	assert_int_equal(knob(config, "intra_threads"), 3);
	json_decref(config);
}

/* Replays one recorded job at another speed and with each batch shuffled: the same answers. */
static void test_replay_speed_and_order(void **state)
{
	struct fixture *f = *state;
	struct tuner *t2;
	struct sample s[10], r[10];
	json_t *c1, *c2;
	unsigned seed = 3;
	int64_t id;
	int b, i;

	open_all(f, false);
	t2 = tuner_open(NULL, &f->node, &topt);
	c1 = start_job(f, "replay", NULL, OBJECTIVE_THROUGHPUT, NULL, &id);
	c2 = tuner_job_start(t2, id, "replay", NULL, OBJECTIVE_THROUGHPUT, NULL);
	for (b = 0; b < 60; b++) {
		json_t *n1, *n2;
		assert_true(json_equal(c1, c2));
		for (i = 0; i < 10; i++) {
			double v = peak3(c1) * (1.0 + noise(&seed, 0.05));
			s[i] = (struct sample){.job_id = id, .t = 100.0 + (b * 10 + i) * 0.2, .name = "samples_per_s", .value = v};
			r[9 - i] = s[i];
			r[9 - i].t = 5000.0 + (b * 10 + i) * 30.0; /* 150 times slower, reversed in the batch */
		}
		n1 = tuner_job_observe(f->t, id, s, 10, c1);
		n2 = tuner_job_observe(t2, id, r, 10, c2);
		json_decref(c1);
		json_decref(c2);
		c1 = n1;
		c2 = n2;
	}
	assert_true(json_equal(c1, c2));
	json_decref(c1);
	json_decref(c2);
	tuner_close(t2);
}

static double drift_factor = 1.0;

/* Like peak3, but the best config (3 threads) loses a share after the drift. */
static double drifting(const json_t *c)
{
	return peak3(c) * (knob(c, "intra_threads") == 3 ? drift_factor : 1.0);
}

static void test_drift_reopens_exploration(void **state)
{
	struct fixture *f = *state;
	json_t *config;
	int64_t id;

	struct tuner_workload *w;

	open_all(f, false);
	drift_factor = 1.0;
	/* Static knobs fixed: the job alone can make the workload confident (settled). */
	config = start_job(f, "drift", NULL, OBJECTIVE_THROUGHPUT, SETTLING_KNOBS, &id);
	config = run_job(f, id, config, drifting, 600, 10, 100.0, 0.5, 0, NULL);
	assert_int_equal(knob(config, "intra_threads"), 3);
	for (w = f->t->workloads; w && strcmp(w->name, "drift") != 0; w = w->next)
		;
	assert_non_null(w);
	assert_true(tuner_phase_get(w, "", false)->settled);
	assert_true(tuner_phase_get(w, "", false)->drift_t == 0.0);
	drift_factor = 0.5;                                  /* 3 threads now gives 100, 2 or 4 more */
	config = run_job(f, id, config, drifting, 3000, 10, 1000.0, 0.5, 0, NULL);
	assert_true(tuner_phase_get(w, "", false)->drift_t > 0.0);   /* seen as a drift, not explored anyway */
	assert_int_not_equal(knob(config, "intra_threads"), 3);
	json_decref(config);
}

/* The entry of a view's list ("tried" or "plans", which has no phase) of like's phase and config, or NULL. */
static json_t *view_entry(json_t *view, const char *list, const json_t *like)
{
	json_t *e, *phase = json_object_get(like, "phase");
	size_t i;

	json_array_foreach(json_object_get(view, list), i, e)
		if ((phase ? json_equal(json_object_get(e, "phase"), phase) : !json_object_get(e, "phase")) &&
		    json_equal(json_object_get(e, "config"), json_object_get(like, "config")))
			return e;
	return NULL;
}

static void assert_close(const json_t *a, const json_t *b, const char *key)
{
	double x = json_number_value(json_object_get(a, key)), y = json_number_value(json_object_get(b, key));

	if (fabs(x - y) > 1e-9 * fmax(1.0, fabs(x)))
		fail_msg("%s: %.17g before the reopen, %.17g after", key, x, y);
}

static void test_pools_bounded_and_read_back(void **state)
{
	struct fixture *f = *state;
	const char *knobs = SETTLING_KNOBS;
	struct tuner_workload *w;
	json_t *config, *before, *after, *e;
	int64_t id;
	size_t i, tried_pools = 0, plan_pools = 0, plan_entries = 0;
	long pooled = 0, trials = 0;

	open_all(f, true);
	/* A job that sees a drift (stale evidence), then one with phases. */
	drift_factor = 1.0;
	config = start_job(f, "pooled", NULL, OBJECTIVE_THROUGHPUT, knobs, &id);
	config = run_job(f, id, config, drifting, 3000, 10, 2000.0, 0.5, 0, NULL);
	drift_factor = 0.5;
	config = run_job(f, id, config, drifting, 3000, 10, 4000.0, 0.5, 0, NULL);
	tuner_job_end(f->t, id);
	json_decref(config);
	config = start_job(f, "pooled", NULL, OBJECTIVE_THROUGHPUT, knobs, &id);
	config = run_phased(f, id, config, 1500, 6000.0);
	tuner_job_end(f->t, id);
	json_decref(config);
	before = tuner_workload(f->t, "pooled", NULL, NULL);
	assert_non_null(before);

	/*
	 * One pool per phase and config tried, however many trials each holds;
	 * whole-job plans with overrides are pooled apart (the view's "plans").
	 */
	for (w = f->t->workloads; w && strcmp(w->name, "pooled") != 0; w = w->next)
		;
	assert_non_null(w);
	assert_true(tuner_phase_get(w, "", false)->drift_t > 0.0);   /* the premise: some evidence is stale */
	for (i = 0; i < w->npools; i++) {
		if (w->pools[i].fresh.trials + w->pools[i].stale.trials == 0)
			continue;
		if (!w->pools[i].phase[0] && !w->pools[i].uniform)
			plan_pools++;
		else
			tried_pools++;
		pooled += w->pools[i].fresh.trials + w->pools[i].stale.trials;
	}
	assert_int_equal(tried_pools, json_array_size(json_object_get(before, "tried")));
	json_array_foreach(json_object_get(before, "tried"), i, e)
		trials += (long)json_integer_value(json_object_get(e, "trials"));
	json_array_foreach(json_object_get(before, "plans"), i, e)
		if (!json_is_true(json_object_get(e, "uniform"))) {
			plan_entries++;
			trials += (long)json_integer_value(json_object_get(e, "trials"));
		}
	assert_int_equal(plan_pools, plan_entries);
	assert_int_equal(pooled, trials);
	assert_true(trials > 2 * (long)tried_pools);

	/* The store's trials, pooled again at the reopen, teach the same. */
	tuner_close(f->t);
	f->t = tuner_open(f->st, &f->node, &topt);
	assert_non_null(f->t);
	after = tuner_workload(f->t, "pooled", NULL, NULL);
	assert_non_null(after);
	assert_int_equal(json_array_size(json_object_get(after, "tried")),
			 json_array_size(json_object_get(before, "tried")));
	json_array_foreach(json_object_get(before, "tried"), i, e) {
		json_t *a = view_entry(after, "tried", e);
		assert_non_null(a);
		assert_int_equal(json_integer_value(json_object_get(a, "trials")),
				 json_integer_value(json_object_get(e, "trials")));
		assert_int_equal(json_integer_value(json_object_get(a, "n")), json_integer_value(json_object_get(e, "n")));
		assert_close(e, a, "mean");
		assert_close(e, a, "std");
		assert_close(e, a, "predicted");   /* stale evidence counts less: a wrong split shows here */
		assert_close(e, a, "predicted_std");
	}
	/* The same plans, counted alike; sums pooled in another order may differ in the last digit. */
	assert_int_equal(json_array_size(json_object_get(after, "plans")), json_array_size(json_object_get(before, "plans")));
	json_array_foreach(json_object_get(before, "plans"), i, e) {
		json_t *a = view_entry(after, "plans", e);
		assert_non_null(a);
		assert_true(json_equal(json_object_get(a, "uniform"), json_object_get(e, "uniform")));
		assert_true(json_equal(json_object_get(a, "status"), json_object_get(e, "status")));
		assert_int_equal(json_integer_value(json_object_get(a, "trials")),
				 json_integer_value(json_object_get(e, "trials")));
		assert_int_equal(json_integer_value(json_object_get(a, "n")), json_integer_value(json_object_get(e, "n")));
		assert_close(e, a, "mean");
		assert_close(e, a, "std");
		assert_close(e, a, "vs_best");
	}
	json_decref(before);
	json_decref(after);
}

static void test_similar_workload_warm_start(void **state)
{
	struct fixture *f = *state;
	json_t *config, *rec, *params;
	int64_t id;

	open_all(f, false);
	rec = tuner_recommend(f->t, "other", NULL, OBJECTIVE_THROUGHPUT);
	assert_string_equal(json_string_value(json_object_get(rec, "source")), "default");
	assert_int_equal(knob(json_object_get(rec, "config"), "intra_threads"), 4);   /* the physical cores */
	json_decref(rec);
	config = start_job(f, "sim", "{\"batch\":32}", OBJECTIVE_THROUGHPUT, "{\"intra_threads\":{\"min\":1,\"max\":8}}", &id);
	config = run_job(f, id, config, peak3, 400, 10, 100.0, 0.5, 0, NULL);
	tuner_job_end(f->t, id);
	json_decref(config);
	params = json_pack("{s:i}", "batch", 128);
	rec = tuner_recommend(f->t, "sim", params, OBJECTIVE_THROUGHPUT);
	json_decref(params);
	assert_string_equal(json_string_value(json_object_get(rec, "source")), "similar");
	json_decref(rec);
	config = start_job(f, "sim", "{\"batch\":64}", OBJECTIVE_THROUGHPUT, "{\"intra_threads\":{\"min\":1,\"max\":8}}", &id);
	assert_int_equal(knob(config, "intra_threads"), 3);  /* the similar workload's best, not the cores */
	json_decref(config);
	/* Another workload on this node: what "sim" measured of the node, not the cores. */
	rec = tuner_recommend(f->t, "other", NULL, OBJECTIVE_THROUGHPUT);
	assert_string_equal(json_string_value(json_object_get(rec, "source")), "node");
	assert_int_equal(knob(json_object_get(rec, "config"), "intra_threads"), 3);
	json_decref(rec);
}

/* A runtime batch knob: the larger batch has the higher throughput. */
#define GOODPUT_KNOBS "{\"intra_threads\":{\"values\":[2]},\"interop_threads\":{\"values\":[1]}," \
		      "\"gpus\":{\"values\":[0]},\"batch\":{\"values\":[32,512],\"default\":32,\"runtime\":true}}"

/*
 * Runs a job of workload name under objective for 60 batches of 10 steps:
 * samples/s 600 at batch 32 and 1000 at batch 512 (2% noise), the global
 * batch, and, with_noise, gradient norms of |G|^2 = 4 and
 * tr(Sigma) = 100 (noise scale 25) from a quarter of the batch and all of
 * it.  Returns the batch the job runs at the end.
 */
static long run_batch_job(struct fixture *f, const char *name, enum objective objective, bool with_noise)
{
	struct sample s[10 * 6];
	json_t *config, *next;
	double t = 100.0;
	unsigned seed = 3;
	long batch = 0;
	int64_t id;
	int b, i;

	config = start_job(f, name, NULL, objective, GOODPUT_KNOBS, &id);
	for (b = 0; b < 60; b++) {
		size_t n = 0;
		double m = (double)knob(config, "batch");
		for (i = 0; i < 10; i++) {
			t += 1.0;
			s[n++] = (struct sample){.job_id = id, .t = t, .name = "samples_per_s",
						 .value = (m > 32 ? 1000.0 : 600.0) * (1.0 + noise(&seed, 0.02))};
			s[n++] = (struct sample){.job_id = id, .t = t, .name = "global_batch", .value = m};
			if (!with_noise)
				continue;
			s[n++] = (struct sample){.job_id = id, .t = t, .name = "grad_batch_small", .value = m / 4};
			s[n++] = (struct sample){.job_id = id, .t = t, .name = "grad_sqnorm_small", .value = 4.0 + 100.0 / (m / 4)};
			s[n++] = (struct sample){.job_id = id, .t = t, .name = "grad_batch_large", .value = m};
			s[n++] = (struct sample){.job_id = id, .t = t, .name = "grad_sqnorm_large", .value = 4.0 + 100.0 / m};
		}
		next = tuner_job_observe(f->t, id, s, n, config);
		json_decref(config);
		config = next;
	}
	batch = knob(config, "batch");
	json_decref(config);
	tuner_job_end(f->t, id);
	return batch;
}

/* The config of a goodput view's row with that batch. */
static const json_t *goodput_row(const json_t *gp, long batch)
{
	const json_t *row;
	size_t i;

	json_array_foreach(json_object_get(gp, "configs"), i, row)
		if (knob(json_object_get(row, "config"), "batch") == batch)
			return row;
	fail_msg("no goodput row for batch %ld", batch);
	return NULL;
}

static void test_goodput_objective(void **state)
{
	struct fixture *f = *state;
	const json_t *gp, *big, *small;
	json_t *w;

	open_all(f, false);
	/* Small noise scale (25): batch 512 is 1.67x faster but each sample is worth 57/537 of one at 32. */
	assert_int_equal(run_batch_job(f, "gp", OBJECTIVE_GOODPUT, true), 32);
	assert_int_equal(run_batch_job(f, "gp", OBJECTIVE_THROUGHPUT, true), 512);
	w = tuner_workload(f->t, "gp", NULL, &(enum objective){OBJECTIVE_GOODPUT});
	gp = json_object_get(w, "goodput");
	assert_non_null(gp);
	assert_float_equal(json_real_value(json_object_get(gp, "noise_scale")), 25.0, 1e-6);
	assert_string_equal(json_string_value(json_object_get(gp, "ranked_by")), "goodput");
	assert_int_equal(knob(json_object_get(json_object_get(gp, "baseline"), "config"), "batch"), 32);
	big = goodput_row(gp, 512);
	small = goodput_row(gp, 32);
	assert_float_equal(json_real_value(json_object_get(big, "efficiency")), 57.0 / 537.0, 1e-9);
	assert_true(json_real_value(json_object_get(big, "raw_speedup")) > 1.5);
	assert_true(json_real_value(json_object_get(big, "learning_speedup")) < 0.2);
	assert_float_equal(json_real_value(json_object_get(small, "learning_speedup")), 1.0, 1e-9);
	/* Ranked by learning speed-up: the small batch first. */
	assert_ptr_equal(json_array_get(json_object_get(gp, "configs"), 0), small);
	json_decref(w);
}

/* A goodput workload whose jobs report no noise figures is ranked by throughput, and says so. */
static void test_goodput_without_noise_is_throughput(void **state)
{
	struct fixture *f = *state;
	const json_t *gp;
	json_t *w;

	open_all(f, false);
	assert_int_equal(run_batch_job(f, "gp-plain", OBJECTIVE_GOODPUT, false), 512);
	w = tuner_workload(f->t, "gp-plain", NULL, &(enum objective){OBJECTIVE_GOODPUT});
	gp = json_object_get(w, "goodput");
	assert_true(json_is_null(json_object_get(gp, "noise_scale")));
	assert_string_equal(json_string_value(json_object_get(gp, "ranked_by")), "throughput");
	assert_true(json_is_null(json_object_get(goodput_row(gp, 512), "learning_speedup")));
	assert_true(json_real_value(json_object_get(goodput_row(gp, 512), "raw_speedup")) > 1.5);
	json_decref(w);
}

static void test_job_known_after_restart(void **state)
{
	struct fixture *f = *state;
	struct sample s = {.t = 100.0, .name = "samples_per_s", .value = 10.0};
	json_t *config, *next;
	int64_t id;

	open_all(f, true);
	config = start_job(f, "restart", NULL, OBJECTIVE_THROUGHPUT, NULL, &id);
	tuner_close(f->t);
	f->t = tuner_open(f->st, &f->node, &topt);
	s.job_id = id;
	next = tuner_job_observe(f->t, id, &s, 1, config);   /* the job is rebuilt from its row */
	assert_non_null(next);
	assert_null(tuner_job_observe(f->t, 9999, &s, 1, NULL)); /* an unknown job: no answer */
	json_decref(config);
	json_decref(next);
}

static void test_workload_views(void **state)
{
	struct fixture *f = *state;
	json_t *config, *list, *w;
	int64_t id;

	open_all(f, false);
	config = start_job(f, "view", "{\"b\":1}", OBJECTIVE_THROUGHPUT, "{\"intra_threads\":{\"min\":1,\"max\":8}}", &id);
	config = run_job(f, id, config, peak3, 400, 10, 100.0, 0.5, 0, NULL);
	json_decref(config);
	list = tuner_workloads(f->t);
	assert_int_equal(json_array_size(json_object_get(list, "workloads")), 1);
	w = tuner_workload(f->t, "view", NULL, NULL);
	assert_non_null(w);
	assert_true(json_array_size(json_object_get(w, "tried")) >= 3);
	/* Every thread count the model predicts, for each inter-op value a new job may use. */
	assert_true(json_array_size(json_object_get(w, "predicted")) >= 8);
	assert_int_equal(json_array_size(json_object_get(w, "predicted")) % 8, 0);
	assert_int_equal(knob(json_object_get(json_object_get(w, "best"), "config"), "intra_threads"), 3);
	assert_null(tuner_workload(f->t, "nothing", NULL, NULL));
	json_decref(list);
	json_decref(w);
}

/* A recommendation rendered the way the handler caches it. */
static char *rendered(struct fixture *f, const char *workload)
{
	json_t *rec = tuner_recommend(f->t, workload, NULL, OBJECTIVE_THROUGHPUT);
	char *text;

	assert_non_null(rec);
	text = json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(rec);
	assert_non_null(text);
	return text;
}

/* Caches the current answer of workload under key; returns the rendered text. */
static char *cache_answer(struct fixture *f, const char *workload, const char *key)
{
	uint64_t gen;
	size_t len;
	char *text, *hit;

	assert_null(tuner_answer_get(f->t, key, strlen(key), &len, &gen));
	text = rendered(f, workload);
	tuner_answer_put(f->t, key, strlen(key), text, strlen(text), gen);
	hit = tuner_answer_get(f->t, key, strlen(key), &len, &gen);
	assert_non_null(hit);
	assert_int_equal(len, strlen(text));
	assert_string_equal(hit, text);
	free(hit);
	return text;
}

static void test_answer_cache_same_as_fresh(void **state)
{
	struct fixture *f = *state;
	json_t *config;
	int64_t id;
	size_t len;
	uint64_t gen;
	char *cached, *fresh, *hit;

	open_all(f, false);
	config = start_job(f, "peak", NULL, OBJECTIVE_THROUGHPUT, "{\"intra_threads\":{\"min\":1,\"max\":8}}", &id);
	config = run_job(f, id, config, peak3, 200, 10, 1000.0, 0.5, 0, NULL);
	tuner_job_end(f->t, id);
	json_decref(config);
	cached = cache_answer(f, "peak", "peak");
	/* Nothing learned since: the cached answer is what a fresh one renders, and it stays. */
	fresh = rendered(f, "peak");
	assert_string_equal(cached, fresh);
	hit = tuner_answer_get(f->t, "peak", 4, &len, &gen);
	assert_non_null(hit);
	assert_string_equal(hit, fresh);
	/* Another key is another entry. */
	assert_null(tuner_answer_get(f->t, "peak2", 5, &len, &gen));
	free(hit);
	free(cached);
	free(fresh);
}

static void test_answer_cache_invalidated(void **state)
{
	struct fixture *f = *state;
	json_t *config;
	int64_t id;
	size_t len;
	uint64_t gen, old_gen;
	char *before, *after, *stale;

	open_all(f, false);
	before = cache_answer(f, "peak", "peak");
	assert_non_null(strstr(before, "\"source\":\"default\""));
	assert_null(tuner_answer_get(f->t, "nothing", 7, &len, &old_gen));
	/* A job starts (it takes GPUs and may change the free ones): the answer is no longer served. */
	config = start_job(f, "peak", NULL, OBJECTIVE_THROUGHPUT, "{\"intra_threads\":{\"min\":1,\"max\":8}}", &id);
	assert_null(tuner_answer_get(f->t, "peak", 4, &len, &gen));
	/* New trials change the recommendation: the cache misses and the fresh answer differs. */
	free(cache_answer(f, "peak", "peak"));
	config = run_job(f, id, config, peak3, 200, 10, 1000.0, 0.5, 0, NULL);
	tuner_job_end(f->t, id);
	json_decref(config);
	assert_null(tuner_answer_get(f->t, "peak", 4, &len, &gen));
	after = rendered(f, "peak");
	assert_non_null(strstr(after, "\"source\":\"learned\""));
	assert_string_not_equal(before, after);
	/* An answer computed before the change (old generation) is refused. */
	tuner_answer_put(f->t, "peak", 4, before, strlen(before), old_gen);
	assert_null(tuner_answer_get(f->t, "peak", 4, &len, &gen));
	tuner_answer_put(f->t, "peak", 4, after, strlen(after), gen);
	stale = tuner_answer_get(f->t, "peak", 4, &len, &gen);
	assert_non_null(stale);
	assert_string_equal(stale, after);
	free(stale);
	free(before);
	free(after);
}

static void test_answer_cache_bounded(void **state)
{
	struct fixture *f = *state;
	char key[64], *big, *hit;
	size_t len;
	uint64_t gen;
	int i;

	open_all(f, false);
	for (i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "hostile-%d", i);
		assert_null(tuner_answer_get(f->t, key, strlen(key), &len, &gen));
		tuner_answer_put(f->t, key, strlen(key), "{}", 2, gen);
		assert_true(tuner_cache_count(f->t) <= 64);
	}
	assert_int_equal(tuner_cache_count(f->t), 64);
	/* The least recently used went: the newest are there, the oldest not. */
	hit = tuner_answer_get(f->t, "hostile-4999", 12, &len, &gen);
	assert_non_null(hit);
	free(hit);
	assert_null(tuner_answer_get(f->t, "hostile-0", 9, &len, &gen));
	/* Keys or bodies beyond the bounds are not kept. */
	big = calloc(1, 64 * 1024 + 1);
	assert_non_null(big);
	memset(big, 'x', 64 * 1024);
	tuner_answer_put(f->t, big, TUNER_ANSWER_KEY_MAX + 1, "{}", 2, gen);
	assert_null(tuner_answer_get(f->t, big, TUNER_ANSWER_KEY_MAX + 1, &len, &gen));
	tuner_answer_put(f->t, "big", 3, big, 64 * 1024, gen);
	assert_null(tuner_answer_get(f->t, "big", 3, &len, &gen));
	free(big);
}

/* ---- per-phase plans: the three traps of a phase-blind or phase-greedy tuner ---- */

/*
 * A job of two phases as the client runs it: each step runs the top level's
 * intra-op threads, each phase its override, the static inter-op threads
 * throughout; the step time is the phases' times plus what the model adds
 * outside them (switching costs).  Reports step_time_s, samples_per_s and
 * phase_time_s per step, as the client does.  As in PyTorch, the forked
 * phase's work runs on the inter-op pool (when there is one, inter-op > 1),
 * whose threads keep the intra-op count in force when they were created at
 * the job's first fork: a later switch of that phase's threads does not
 * reach it, though the config reported says it does.
 */
struct phase_model {
	double (*phase)(int phase, long inter, long intra);   /* seconds of phase 0 or 1 */
	double outside_per_switch;                            /* seconds per thread switch in a step */
	double noise;                                         /* relative, per step */
	int pool_start_steps;                                 /* with an inter-op pool, its first steps ... */
	double pool_start_factor;                             /* ... run the forked phase this many times slower */
};

static const char *const model_phases[2] = {"fork", "seq"};

struct model_run {
	long steps;
	long on[8];            /* steps per effective (inter-1)*4 + (fork-1)*2 + (seq-1) */
	double value_sum;      /* sum of steps/s */
};

static long phase_threads(const json_t *config, const char *phase)
{
	json_t *o = json_object_get(json_object_get(config, "phases"), phase);

	return json_object_get(o, "intra_threads") ? knob(o, "intra_threads") : knob(config, "intra_threads");
}

static json_t *run_model_job(struct fixture *f, int64_t id, json_t *config, const struct phase_model *m,
			     int steps, int batch, double t0, struct model_run *out)
{
	struct sample *s = calloc((size_t)batch * 4, sizeof(*s));
	unsigned seed = (unsigned)id * 7919u + 17u;
	double t = t0;
	long pool_intra = 0;   /* the inter-op pool's intra-op threads, once created */
	int done = 0, i, k;

	memset(out, 0, sizeof(*out));
	while (done < steps) {
		json_t *next;
		size_t ns = 0;
		for (i = 0; i < batch; i++) {
			long inter = knob(config, "interop_threads"), top = knob(config, "intra_threads");
			long th[2] = {phase_threads(config, "fork"), phase_threads(config, "seq")};
			double step = 0.0, pt[2];
			int switches = (th[0] != top) * 2 + (th[1] != top) * 2;
			if (inter > 1) {
				if (!pool_intra)
					pool_intra = th[0];
				th[0] = pool_intra;
			}
			for (k = 0; k < 2; k++) {
				pt[k] = m->phase(k, inter, th[k]) * (1.0 + noise(&seed, m->noise));
				if (k == 0 && inter > 1 && out->steps < m->pool_start_steps)
					pt[k] *= m->pool_start_factor;
				step += pt[k];
			}
			step += m->outside_per_switch * switches;
			t += step;
			for (k = 0; k < 2; k++)
				s[ns++] = (struct sample){.job_id = id, .t = t, .name = "phase_time_s", .value = pt[k],
							  .phase = model_phases[k]};
			s[ns++] = (struct sample){.job_id = id, .t = t, .name = "step_time_s", .value = step};
			s[ns++] = (struct sample){.job_id = id, .t = t, .name = "samples_per_s", .value = 16.0 / step};
			out->on[(inter - 1) * 4 + (th[0] - 1) * 2 + (th[1] - 1)]++;
			out->value_sum += 1.0 / step;
			out->steps++;
		}
		done += batch;
		next = tuner_job_observe(f->t, id, s, ns, config);
		assert_non_null(next);
		json_decref(config);
		config = next;
	}
	free(s);
	return config;
}

#define PHASE_KNOBS "{\"intra_threads\":{\"values\":[1,2]},\"interop_threads\":{\"values\":[1,2]},\"gpus\":{\"values\":[0]}}"

/* Job number job of workload name (PHASE_KNOBS) on model m, steps steps in batches of 3, start to end. */
static void run_phase_job(struct fixture *f, const char *name, const struct phase_model *m, int job, int steps,
			  struct model_run *r)
{
	int64_t id;
	json_t *config = start_job(f, name, NULL, OBJECTIVE_THROUGHPUT, PHASE_KNOBS, &id);

	config = run_model_job(f, id, config, m, steps, 3, 1000.0 * job, r);
	tuner_job_end(f->t, id);
	json_decref(config);
}

/* The inter-op threads of workload name's best plan. */
static long best_interop(struct fixture *f, const char *name)
{
	json_t *view = tuner_workload(f->t, name, NULL, NULL);
	long n = knob(json_object_get(json_object_get(view, "best"), "config"), "interop_threads");

	json_decref(view);
	return n;
}

/*
 * Runs jobs 1..jobs of workload name on model m (60 steps each) and asserts
 * that the last ran inter-op 2 with the forked phase on 1 thread and the
 * sequential one on 2 (index 4 + 0 + 1) nearly throughout, and that this is
 * the workload's best plan.
 */
static void assert_settles_on_inter2_plan(struct fixture *f, const char *name, const struct phase_model *m, int jobs)
{
	struct model_run r;
	int job;

	for (job = 1; job <= jobs; job++)
		run_phase_job(f, name, m, job, 60, &r);
	if (r.on[5] < r.steps * 85 / 100)
		fail_msg("%s, last job: %ld of %ld steps on the best plan", name, r.on[5], r.steps);
	assert_int_equal(best_interop(f, name), 2);
}

/*
 * The job: a forked ensemble phase that wants 2 inter-op threads
 * with 1 intra-op thread each, then a sequential phase that wants 2
 * intra-op threads.  Every uniform setting with 2 inter-op threads loses to
 * 1 inter-op x 2 intra-op (0.29 s a step); the per-phase plan (inter-op 2,
 * fork 1, seq 2) wins (0.225 s + switching).
 */
static double fork_seq(int phase, long inter, long intra)
{
	if (phase == 0)
		return inter == 1 ? (intra == 1 ? 0.20 : 0.16) : (intra == 1 ? 0.09 : 0.18);
	return (intra == 1 ? 0.20 : 0.13) + (inter == 2 ? 0.005 : 0.0);
}

static void test_static_knob_judged_with_its_phase_settings(void **state)
{
	struct fixture *f = *state;
	struct phase_model m = {.phase = fork_seq, .outside_per_switch = 0.002, .noise = 0.03};
	struct model_run r;
	json_t *view, *best;
	int job;

	open_all(f, false);
	for (job = 1; job <= 8; job++) {
		run_phase_job(f, "forkseq", &m, job, 150, &r);
		if (job >= 6) {
			/* inter-op 2, fork on 1 thread, seq on 2: index 4 + 0 + 1 */
			long on_best = r.on[5];
			if (on_best < r.steps * 85 / 100)
				fail_msg("job %d: %ld of %ld steps on the per-phase best", job, on_best, r.steps);
		}
	}
	view = tuner_workload(f->t, "forkseq", NULL, NULL);
	best = json_object_get(json_object_get(view, "best"), "config");
	assert_int_equal(knob(best, "interop_threads"), 2);
	assert_int_equal(phase_threads(best, "fork"), 1);
	assert_int_equal(phase_threads(best, "seq"), 2);
	json_decref(view);
}

/*
 * Phase "fork" runs a little faster on 1 thread (0.10 s against 0.11) but
 * every switch of the thread count costs 0.02 s outside the phases: the
 * whole job is slower with the override (0.10 + 0.10 + 0.08 against 0.21).
 * A tuner that adopts overrides by their phase's time alone takes it.
 */
static double override_trap(int phase, long inter, long intra)
{
	(void)inter;
	if (phase == 0)
		return intra == 1 ? 0.10 : 0.11;
	return intra == 1 ? 0.20 : 0.10;
}

static void test_override_needs_the_whole_job(void **state)
{
	struct fixture *f = *state;
	struct phase_model m = {.phase = override_trap, .outside_per_switch = 0.02, .noise = 0.02};
	struct model_run r;
	json_t *config, *view, *e, *settings, *fork = NULL;
	int64_t id;
	size_t i;
	int job;

	open_all(f, false);
	for (job = 1; job <= 6; job++) {
		config = start_job(f, "trap", NULL, OBJECTIVE_THROUGHPUT, "{\"intra_threads\":{\"values\":[1,2]},"
					      "\"interop_threads\":{\"values\":[1]}}", &id);
		config = run_model_job(f, id, config, &m, 150, 3, 1000.0 * job, &r);
		tuner_job_end(f->t, id);
		json_decref(config);
	}
	/* The last job ran uniform 2 threads (index 3) nearly throughout. */
	if (r.on[3] < r.steps * 85 / 100)
		fail_msg("last job: %ld of %ld steps on uniform 2 threads", r.on[3], r.steps);
	view = tuner_workload(f->t, "trap", NULL, NULL);
	assert_null(json_object_get(json_object_get(json_object_get(view, "best"), "config"), "phases"));
	/* The override was measured, rejected, and the evidence is shown. */
	settings = json_object_get(view, "phase_settings");
	json_array_foreach(settings, i, e)
		if (strcmp(json_string_value(json_object_get(e, "phase")), "fork") == 0)
			fork = e;
	assert_non_null(fork);
	assert_true(json_is_null(json_object_get(fork, "adopted")));
	assert_true(json_array_size(json_object_get(fork, "rejected")) >= 1);
	e = json_array_get(json_object_get(fork, "rejected"), 0);
	assert_true(json_number_value(json_object_get(e, "vs_best")) < 1.0);
	json_decref(view);
}

/* One phase; 1 thread runs 28% slower than 2, with noisy steps (a full trial would take ~30). */
static double losing(int phase, long inter, long intra)
{
	(void)inter;
	return phase == 0 ? 0.0 : (intra == 1 ? 1.0 / 2.3 : 1.0 / 3.2);
}

static void test_losing_trial_cut_short(void **state)
{
	struct fixture *f = *state;
	struct phase_model m = {.phase = losing, .outside_per_switch = 0.0, .noise = 0.15};
	struct model_run r;
	struct tuner_job *j;
	json_t *config;
	int64_t id;

	open_all(f, false);
	config = start_job(f, "loser", NULL, OBJECTIVE_THROUGHPUT, "{\"intra_threads\":{\"values\":[1,2]},"
				     "\"interop_threads\":{\"values\":[1]}}", &id);
	assert_int_equal(knob(config, "intra_threads"), 2);   /* the prior: the physical cores allowed */
	config = run_model_job(f, id, config, &m, 120, 1, 100.0, &r);
	/* 1 thread: dropped warm-up steps, three measured, a step of reply lag. */
	if (r.on[0] > 8)
		fail_msg("%ld of %ld steps on the losing config", r.on[0], r.steps);
	for (j = f->t->jobs; j && j->id != id; j = j->next)
		;
	assert_non_null(j);
	assert_true(j->cut_trials >= 1);
	tuner_job_end(f->t, id);
	json_decref(config);
}

/*
 * As the forked ensemble measured on this machine: with 2 intra-op threads
 * the forked phase oversubscribes the cores (badly with 2 inter-op threads),
 * so every plan measured under inter-op 1 says "fewer threads", and the
 * models, fitted on inter-op 1 alone, predict inter-op 2 no better.  Yet
 * inter-op 2 with the forked phase on 1 thread and the sequential one on 2
 * is the best plan (0.135 s a step against 0.16).  A static setting never
 * measured must not be ruled out on such extrapolation.
 */
static double unmeasured_static(int phase, long inter, long intra)
{
	if (phase == 0)
		return inter == 1 ? (intra == 1 ? 0.10 : 0.25) : (intra == 1 ? 0.07 : 1.0);
	return intra == 1 ? 0.10 : (inter == 1 ? 0.06 : 0.065);
}

static void test_unmeasured_static_knob_explored(void **state)
{
	struct fixture *f = *state;
	struct phase_model m = {.phase = unmeasured_static, .outside_per_switch = 0.001, .noise = 0.03};

	open_all(f, false);
	assert_settles_on_inter2_plan(f, "unmeasured", &m, 10);
}

/*
 * The forked ensemble as measured on a 2-core machine (bench/tuner/e2e.py's
 * branches): 2 intra-op threads in the forked phase oversubscribe the cores
 * (five times slower with 1 inter-op thread, thirty with 2), the sequential
 * phase wants 2.  Every inter-op-2 plan the models can extrapolate looks no
 * better than inter-op 1's best (fork on 1, seq on 2: 0.135 s a step), yet
 * inter-op 2 with the same per-phase plan is 5% faster.  With two static
 * groups each is measured once before the workload settles.
 */
static double branches_2core(int phase, long inter, long intra)
{
	if (phase == 0)
		return intra == 1 ? (inter == 1 ? 0.100 : 0.093) : (inter == 1 ? 0.50 : 2.9);
	return (intra == 1 ? 0.095 : 0.035) + (inter == 2 ? 0.001 : 0.0);
}

static void test_static_group_surveyed(void **state)
{
	struct fixture *f = *state;
	struct phase_model m = {.phase = branches_2core, .outside_per_switch = 0.0005, .noise = 0.03};

	open_all(f, false);
	assert_settles_on_inter2_plan(f, "surveyed", &m, 8);
}

/*
 * As branches_2core, with the inter-op pool's start: its threads and their
 * OpenMP teams are created by the first forks, which run five times slower
 * for three steps.  A job with a pool runs one plan, so its trial must not
 * be cut on those steps (it could not switch anyway): the cut would record
 * them as the plan's value and inter-op 2 would never be measured again.
 */
static void test_locked_plan_measured_in_full(void **state)
{
	struct fixture *f = *state;
	struct phase_model m = {.phase = branches_2core, .outside_per_switch = 0.0005, .noise = 0.03,
				.pool_start_steps = 3, .pool_start_factor = 5.0};

	open_all(f, false);
	assert_settles_on_inter2_plan(f, "poolstart", &m, 8);
}

/*
 * As branches_2core until another job comes to share the node: from then
 * on the inter-op pool's forked work runs 20% slower, and inter-op 1's plan
 * (fork on 1, seq on 2: 117 a second) beats inter-op 2's (122 before, 107
 * now).  The per-phase plan the workload settled on must be seen to drift
 * at its next trial, not kept on the average of its old ones (which stays
 * above inter-op 1's for several jobs).
 */
static bool branches_shared;

static double branches_drifting(int phase, long inter, long intra)
{
	if (phase == 0 && inter == 2 && branches_shared)
		return 1.2 * branches_2core(phase, inter, intra);
	return branches_2core(phase, inter, intra);
}

static void test_plan_drift_reopens_exploration(void **state)
{
	struct fixture *f = *state;
	struct phase_model m = {.phase = branches_drifting, .outside_per_switch = 0.0005, .noise = 0.03};
	struct model_run r;
	int job;

	open_all(f, false);
	branches_shared = false;
	for (job = 1; job <= 12; job++) {
		branches_shared = job > 8;
		run_phase_job(f, "shared", &m, job, 60, &r);
		if (job == 8 && r.on[5] < r.steps * 85 / 100)
			fail_msg("job 8, before the drift: %ld of %ld steps on inter-op 2's plan", r.on[5], r.steps);
		/* Jobs 11 and 12 ran inter-op 1, fork on 1 thread, seq on 2 (index 0 + 0 + 1) nearly throughout. */
		if (job >= 11 && r.on[1] < r.steps * 85 / 100)
			fail_msg("job %d: %ld of %ld steps on inter-op 1's plan", job, r.on[1], r.steps);
	}
	assert_int_equal(best_interop(f, "shared"), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_converges_and_persists, setup, teardown),
		cmocka_unit_test_setup_teardown(test_never_impossible, setup, teardown),
		cmocka_unit_test_setup_teardown(test_phases_get_their_own_threads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_explore_nothing_once_confident, setup, teardown),
		cmocka_unit_test_setup_teardown(test_explore_more_when_far_below, setup, teardown),
		cmocka_unit_test_setup_teardown(test_first_config_from_the_node, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replay_speed_and_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_drift_reopens_exploration, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pools_bounded_and_read_back, setup, teardown),
		cmocka_unit_test_setup_teardown(test_similar_workload_warm_start, setup, teardown),
		cmocka_unit_test_setup_teardown(test_goodput_objective, setup, teardown),
		cmocka_unit_test_setup_teardown(test_goodput_without_noise_is_throughput, setup, teardown),
		cmocka_unit_test_setup_teardown(test_job_known_after_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_workload_views, setup, teardown),
		cmocka_unit_test_setup_teardown(test_answer_cache_same_as_fresh, setup, teardown),
		cmocka_unit_test_setup_teardown(test_answer_cache_invalidated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_answer_cache_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_static_knob_judged_with_its_phase_settings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_override_needs_the_whole_job, setup, teardown),
		cmocka_unit_test_setup_teardown(test_losing_trial_cut_short, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unmeasured_static_knob_explored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_static_group_surveyed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_plan_drift_reopens_exploration, setup, teardown),
		cmocka_unit_test_setup_teardown(test_locked_plan_measured_in_full, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
