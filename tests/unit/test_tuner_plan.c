/*
 * Plans (daemon/tuner_plan.c) on a workload built here, without a tuner
 * around it: a plan's config names only the runtime knobs a phase
 * switches and reads back to the same plan; an override that changes
 * nothing is dropped; a plan has one pool however often it is pooled; a
 * plan with overrides is worth what its own trials measured, and a trial
 * far from them is a drift; a plan is predicted from the phases' times
 * until then, and from what the workload's measured plans lost to their
 * switches; the ranking answers within the job's filter, the prior's
 * pick before anything is measured, the best measured plan after; and a
 * config's resources are its GPUs, else its threads.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "tuner_internal.h"

/* intra_threads (runtime) 1, 2 or 4; interop_threads (static) 1 or 2; affinity and allocator fixed: 6 candidates. */
#define KNOBS "{\"intra_threads\":{\"values\":[1,2,4]},\"interop_threads\":{\"values\":[1,2]}}"

static const struct knob_topology topo = {.cpus_allowed = 8, .cores_allowed = 8, .numa_cores = 8};

struct fixture {
	struct tuner t;
	struct tuner_workload w;
	int fwd;                      /* the index of phase "fwd" */
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	json_t *knobs = json_loads(KNOBS, 0, NULL);
	char err[200];

	if (!f || !knobs || knobs_space_build(&f->w.sp, &topo, knobs, err, sizeof(err)) < 0)
		return -1;
	json_decref(knobs);
	f->t.opt.gain_threshold = 0.01;
	snprintf(f->w.name, sizeof(f->w.name), "plans");
	f->w.objective = OBJECTIVE_THROUGHPUT;
	if (!tuner_phase_get(&f->w, "", true) || !tuner_phase_get(&f->w, "fwd", true))
		return -1;
	f->fwd = (int)(tuner_phase_get(&f->w, "fwd", false) - f->w.phases);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	for (int i = 0; i < f->w.nphases; i++)
		learner_free(f->w.phases[i].l);
	for (size_t i = 0; i < f->w.npools; i++)
		free(f->w.pools[i].config);
	free(f->w.pools);
	free(f);
	return 0;
}

/* The candidate of a config given as JSON text. */
static int cand_of(const struct fixture *f, const char *config)
{
	json_t *c = json_loads(config, 0, NULL);
	int cand = knobs_candidate_of(&f->w.sp, c, -1);

	json_decref(c);
	assert_true(cand >= 0);
	return cand;
}

static void test_plan_json_round_trip(void **state)
{
	struct fixture *f = *state;
	struct tuner_plan p, back;
	json_t *config;
	char *text;

	tuner_plan_uniform(&p, cand_of(f, "{\"intra_threads\":4,\"interop_threads\":2}"));
	p.over[f->fwd] = cand_of(f, "{\"intra_threads\":1,\"interop_threads\":2}");
	assert_false(tuner_plan_is_uniform(&f->w, &p));
	config = tuner_plan_json(&f->w, &p);
	assert_non_null(config);
	text = json_dumps(json_object_get(config, "phases"), JSON_COMPACT | JSON_SORT_KEYS);
	/* Only what the phase switches: the static inter-op threads stay the top's. */
	assert_string_equal(text, "{\"fwd\":{\"intra_threads\":1}}");
	free(text);
	assert_int_equal(json_integer_value(json_object_get(config, "intra_threads")), 4);
	assert_int_equal(tuner_plan_of_config(&f->w, config, -1, &back), 0);
	assert_true(tuner_plan_equal(&f->w, &p, &back));
	json_decref(config);
}

static void test_override_that_changes_nothing_is_dropped(void **state)
{
	struct fixture *f = *state;
	json_t *config = json_loads("{\"intra_threads\":2,\"interop_threads\":1,\"phases\":{\"fwd\":{\"intra_threads\":2}}}",
				    0, NULL);
	struct tuner_plan p;

	assert_int_equal(tuner_plan_of_config(&f->w, config, -1, &p), 0);
	assert_int_equal(p.over[f->fwd], -1);
	assert_true(tuner_plan_is_uniform(&f->w, &p));
	json_decref(config);
	/* A value the space lacks: no plan. */
	config = json_loads("{\"intra_threads\":2,\"phases\":{\"fwd\":{\"intra_threads\":3}}}", 0, NULL);
	assert_int_equal(tuner_plan_of_config(&f->w, config, -1, &p), -1);
	json_decref(config);
}

static void test_one_pool_per_plan(void **state)
{
	struct fixture *f = *state;
	struct tuner_plan a, b;
	int pa, pb;

	tuner_plan_uniform(&a, cand_of(f, "{\"intra_threads\":4}"));
	a.over[f->fwd] = cand_of(f, "{\"intra_threads\":1}");
	tuner_plan_uniform(&b, cand_of(f, "{\"intra_threads\":4}"));
	pa = tuner_plan_pool(&f->w, &a);
	assert_true(pa >= 0);
	assert_int_equal(tuner_plan_pool(&f->w, &a), pa);
	pb = tuner_plan_pool(&f->w, &b);
	assert_true(pb >= 0 && pb != pa);
	assert_int_equal(f->w.npools, 2);
	assert_false(f->w.pools[pa].uniform);
	assert_true(f->w.pools[pb].uniform);
	assert_non_null(strstr(f->w.pools[pa].config, "\"phases\""));
	assert_null(strstr(f->w.pools[pb].config, "\"phases\""));
	/* The pool's text reads back to its plan. */
	{
		struct tuner_pool copy = f->w.pools[pa];
		tuner_plan_pool_parse(&f->w, &copy);
		assert_true(tuner_plan_equal(&f->w, &copy.plan, &a));
		assert_false(copy.uniform);
	}
}

/* Pools n more trials into the pool of p: mean - 0.5 and mean + 0.5 in turn (variance of each mean var). */
static int measure(struct fixture *f, const struct tuner_plan *p, int n, double mean, double var)
{
	int pool = tuner_plan_pool(&f->w, p);
	struct learner_stats *s;

	assert_true(pool >= 0);
	s = &f->w.pools[pool].fresh;
	for (int i = 0; i < n; i++)
		assert_true(learner_stats_add(s, 100, mean + (s->trials % 2 ? 0.5 : -0.5), var));
	return pool;
}

static void test_measured_plan_and_drift(void **state)
{
	struct fixture *f = *state;
	struct tuner_plan p;
	struct tuner_plan_est e;
	double mu, sd;
	int pool;

	tuner_plan_uniform(&p, cand_of(f, "{\"intra_threads\":2}"));
	p.over[f->fwd] = cand_of(f, "{\"intra_threads\":4}");
	pool = measure(f, &p, 1, 100.0, 0.01);
	/* One trial is no ground to call the next one a drift. */
	assert_false(tuner_pool_drifted(&f->w, pool, 200.0, 0.01, &mu, &sd));
	measure(f, &p, 3, 100.0, 0.01);
	tuner_plan_estimate(&f->t, &f->w, &p, &e);
	assert_true(e.measured);
	assert_int_equal(e.trials, 4);
	assert_float_equal(e.mu, 100.0, 1e-9);
	assert_true(e.sd > 0.0 && e.sd < 5.0);
	assert_false(tuner_pool_drifted(&f->w, pool, 101.0, 0.01, &mu, &sd));
	assert_float_equal(mu, 100.0, 1e-9);
	assert_true(tuner_pool_drifted(&f->w, pool, 150.0, 0.01, &mu, &sd));
	assert_true(tuner_pool_drifted(&f->w, pool, 50.0, 0.01, &mu, &sd));
	assert_false(tuner_pool_drifted(&f->w, -1, 150.0, 0.01, &mu, &sd));
	assert_false(tuner_pool_drifted(&f->w, (int)f->w.npools, 150.0, 0.01, &mu, &sd));
}

static void test_predicted_from_the_phases(void **state)
{
	struct fixture *f = *state;
	struct learner *whole = tuner_phase_get(&f->w, "", false)->l, *fwd = f->w.phases[f->fwd].l;
	int c1 = cand_of(f, "{\"intra_threads\":1}"), c4 = cand_of(f, "{\"intra_threads\":4}");
	struct tuner_plan p;
	struct tuner_plan_est e;

	tuner_plan_uniform(&p, c1);
	p.over[f->fwd] = c4;
	/* No step time known yet: no prediction. */
	tuner_plan_estimate(&f->t, &f->w, &p, &e);
	assert_false(e.measured);
	assert_true(isnan(e.mu));
	/* 10 steps/s under c1, one step 0.1 s; the phase takes 0.05 s under c1 and 0.025 s under c4. */
	for (int i = 0; i < 3; i++) {
		learner_add(whole, c1, 100, 10.0, 1e-4, false);
		learner_add(fwd, c1, 100, 20.0, 1e-4, false);
		learner_add(fwd, c4, 100, 40.0, 1e-4, false);
	}
	f->w.kappa_sum = 1.0 * 10;  /* value x step time = 1 */
	f->w.kappa_n = 10;
	tuner_plan_estimate(&f->t, &f->w, &p, &e);
	assert_false(e.measured);
	assert_int_equal(e.trials, 0);
	/* The step loses the 0.025 s the phase saves: 0.075 s, 13.3 steps/s, within the models' error. */
	assert_float_equal(e.mu, 10.0 * 0.1 / 0.075, 0.5);
	assert_true(e.sd > 0.0);
	/* The uniform plan is the whole-job learner's own. */
	tuner_plan_uniform(&p, c1);
	tuner_plan_estimate(&f->t, &f->w, &p, &e);
	assert_true(e.measured);
	assert_int_equal(e.trials, 3);
}

/*
 * Whole-job values of 10 (c1) and 12 (c2) steps/s, one step of 0.1 s at
 * 10 (value x step time = 1); phase fwd 20 steps/s under c1, 30 under c2,
 * 40 under c4.  Plan a runs c1 with fwd on c4, plan b c2 with fwd on c4:
 * each switches twice a step, and both are predicted at 0.075 s a step.
 */
static void switch_fixture(struct fixture *f, struct tuner_plan *a, struct tuner_plan *b)
{
	struct learner *whole = tuner_phase_get(&f->w, "", false)->l, *fwd = f->w.phases[f->fwd].l;
	int c1 = cand_of(f, "{\"intra_threads\":1}"), c2 = cand_of(f, "{\"intra_threads\":2}"),
	    c4 = cand_of(f, "{\"intra_threads\":4}");

	for (int i = 0; i < 3; i++) {
		learner_add(whole, c1, 100, 10.0, 1e-4, false);
		learner_add(whole, c2, 100, 12.0, 1e-4, false);
		learner_add(fwd, c1, 100, 20.0, 1e-4, false);
		learner_add(fwd, c2, 100, 30.0, 1e-4, false);
		learner_add(fwd, c4, 100, 40.0, 1e-4, false);
	}
	f->w.kappa_sum = 1.0 * 10;
	f->w.kappa_n = 10;
	tuner_plan_uniform(a, c1);
	a->over[f->fwd] = c4;
	tuner_plan_uniform(b, c2);
	b->over[f->fwd] = c4;
}

/* Plan b's estimate after a ranking, which learns what the workload's switches cost. */
static void estimate_after_ranking(struct fixture *f, const struct tuner_plan *b, struct tuner_plan_est *e)
{
	struct tuner_plan_choice ch;
	struct knob_filter all;

	knobs_filter_all(&f->w.sp, &all);
	assert_int_equal(tuner_plan_choose(&f->t, &f->w, &all, &ch), 0);
	tuner_plan_estimate(&f->t, &f->w, b, e);
	assert_false(e->measured);
}

static void test_switches_cost_what_a_plan_lost(void **state)
{
	struct fixture *f = *state;
	struct tuner_plan a, b;
	struct tuner_plan_est before, after;

	switch_fixture(f, &a, &b);
	estimate_after_ranking(f, &b, &before);
	assert_float_equal(before.mu, 1.0 / 0.075, 0.7);
	/*
	 * a measured at 8 steps/s: 0.125 s a step where its phases predict
	 * 0.075, 0.025 s for each of its two switches.  Taken with one plan of
	 * no cost beside it, 0.0125 s a switch: b, which switches as often,
	 * now takes 0.1 s a step, and is less certain than before.
	 */
	measure(f, &a, 2, 8.0, 0.01);
	estimate_after_ranking(f, &b, &after);
	assert_float_equal(after.mu, 1.0 / 0.1, 0.7);
	assert_true(after.sd > before.sd);
	/* A uniform plan switches nothing. */
	tuner_plan_uniform(&b, b.top);
	tuner_plan_estimate(&f->t, &f->w, &b, &after);
	assert_float_equal(after.mu, 12.0, 0.5);
}

static void test_a_plan_that_beat_its_prediction_costs_no_switch(void **state)
{
	struct fixture *f = *state;
	struct tuner_plan a, b;
	struct tuner_plan_est before, after;

	switch_fixture(f, &a, &b);
	estimate_after_ranking(f, &b, &before);
	/* a measured above what its phases predict: how its phases interact, nothing b's switches would share. */
	measure(f, &a, 2, 16.0, 0.01);
	estimate_after_ranking(f, &b, &after);
	assert_float_equal(after.mu, before.mu, 1e-9);
}

static void test_choose_within_the_filter(void **state)
{
	struct fixture *f = *state;
	struct learner *whole = tuner_phase_get(&f->w, "", false)->l;
	int i2 = knobs_find_id(&f->w.sp, KNOB_INTRA_THREADS), c4 = cand_of(f, "{\"intra_threads\":4}");
	struct tuner_plan_choice ch;
	struct knob_filter all, small;

	knobs_filter_all(&f->w.sp, &all);
	small = all;
	small.allowed[i2] = 0x3u;  /* 1 or 2 intra-op threads only */
	/* Nothing measured: the prior's pick, proposed as it is, with everything to gain. */
	assert_int_equal(tuner_plan_choose(&f->t, &f->w, &small, &ch), 0);
	assert_false(ch.any_measured);
	assert_true(tuner_plan_equal(&f->w, &ch.best, &ch.next));
	assert_true(knobs_filter_pass(&f->w.sp, &small, ch.best.top));
	assert_float_equal(ch.gain, 1.0, 0.0);
	/* c4 measured best, but the job may not run it: the best it may run is answered. */
	for (int i = 0; i < 3; i++) {
		learner_add(whole, c4, 100, 50.0, 1e-4, false);
		learner_add(whole, cand_of(f, "{\"intra_threads\":2}"), 100, 20.0, 1e-4, false);
	}
	assert_int_equal(tuner_plan_choose(&f->t, &f->w, &small, &ch), 0);
	assert_true(ch.any_measured);
	assert_true(ch.best_est.measured);
	assert_int_equal(knobs_int_value(&f->w.sp, ch.best.top, KNOB_INTRA_THREADS, 0), 2);
	assert_true(knobs_filter_pass(&f->w.sp, &small, ch.next.top));
	assert_true(ch.gain >= 0.0);
	assert_int_equal(tuner_plan_choose(&f->t, &f->w, &all, &ch), 0);
	assert_int_equal(ch.best.top, c4);
	assert_float_equal(ch.best_est.mu, 50.0, 2.0);
}

static void test_resources(void **state)
{
	struct knob_topology gpus = topo;
	struct knob_space sp;
	char err[200];
	json_t *k = json_loads("{\"intra_threads\":{\"values\":[2,4]},\"gpus\":{\"values\":[0,2]}}", 0, NULL);

	(void)state;
	gpus.gpus_total = 2;
	gpus.gpus_free = 2;
	assert_int_equal(knobs_space_build(&sp, &gpus, k, err, sizeof(err)), 0);
	json_decref(k);
	for (int c = 0; c < sp.ncand; c++) {
		long g = knobs_int_value(&sp, c, KNOB_GPUS, -1), th = knobs_int_value(&sp, c, KNOB_INTRA_THREADS, -1);
		assert_float_equal(tuner_resources(&sp, c), g > 0 ? (double)g : (double)th, 0.0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_plan_json_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_override_that_changes_nothing_is_dropped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_pool_per_plan, setup, teardown),
		cmocka_unit_test_setup_teardown(test_measured_plan_and_drift, setup, teardown),
		cmocka_unit_test_setup_teardown(test_predicted_from_the_phases, setup, teardown),
		cmocka_unit_test_setup_teardown(test_switches_cost_what_a_plan_lost, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_plan_that_beat_its_prediction_costs_no_switch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_choose_within_the_filter, setup, teardown),
		cmocka_unit_test(test_resources),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
