/*
 * The tuner's pure algorithm: the Gaussian process (interpolation,
 * uncertainty, expected improvement), the learner (first trial from the
 * prior, finding the best of a surface, stopping once confident, filters,
 * drift, doubt kept where nothing was measured), and trials in progress
 * (warm-up dropped, completion rules).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "knobs.h"
#include "tuner_learner.h"
#include "tuner_model.h"
#include "tuner_trial.h"

/* ---- the Gaussian process ---- */

static void test_gp_interpolates(void **state)
{
	double x[5] = {0, 1, 2, 3, 4}, y[5] = {0.1, 0.3, 0.5, 0.2, -0.1}, nv[5] = {0}, mu, var, far_var;
	int reps[5] = {1, 1, 1, 1, 1}, i;
	struct gp_data d = {.n = 5, .dim = 1, .x = x, .y = y, .noise_var = nv, .reps = reps};
	struct gp_hyper h = {.lengthscale = 1.0, .signal_sd = 0.3, .nugget_sd = 0.001};
	struct gp gp = {0};
	double at = 10.0;

	(void)state;
	assert_int_equal(gp_fit(&gp, &d, &h), 0);
	for (i = 0; i < 5; i++) {
		gp_predict(&gp, &x[i], &mu, &var);
		assert_true(fabs(mu - y[i]) < 0.01);
		assert_true(var < 0.001);
	}
	gp_predict(&gp, &at, &mu, &far_var);
	assert_true(fabs(mu) < 0.05);              /* reverts to the prior mean far away */
	assert_true(far_var > 0.08);               /* and to the prior spread */
	assert_int_equal(gp_fit_select(&gp, &d), 0);
	gp_free(&gp);
}

static void test_gp_noise_smooths(void **state)
{
	double x[2] = {1, 1}, y[2] = {0.0, 1.0}, nv[2] = {0.25, 0.25}, mu, var;
	int reps[2] = {1, 1};
	struct gp_data d = {.n = 2, .dim = 1, .x = x, .y = y, .noise_var = nv, .reps = reps};
	struct gp_hyper h = {.lengthscale = 1.0, .signal_sd = 1.0, .nugget_sd = 0.0};
	struct gp gp = {0};

	(void)state;
	/* Two noisy measurements of one point: the model averages them. */
	assert_int_equal(gp_fit(&gp, &d, &h), 0);
	gp_predict(&gp, &x[0], &mu, &var);
	assert_true(mu > 0.35 && mu < 0.5);
	gp_free(&gp);
}

static void test_expected_improvement(void **state)
{
	(void)state;
	assert_true(gp_expected_improvement(1.0, 0.5, 1.0) > gp_expected_improvement(1.0, 0.1, 1.0));
	assert_true(gp_expected_improvement(0.0, 0.01, 1.0) < 1e-12);
	assert_true(fabs(gp_expected_improvement(2.0, 0.0, 1.0) - 1.0) < 1e-12);
	assert_true(gp_expected_improvement(0.9, 0.2, 1.0) > 0.0);
}

/* ---- the learner on a surface ---- */

static struct knob_space space_1_8(void)
{
	static const struct knob_topology topo = {.cpus_allowed = 8, .cores_allowed = 4, .numa_cores = 4};
	struct knob_space sp;
	char err[100];
	json_t *d = json_loads("{\"interop_threads\":{\"values\":[1]}}", 0, NULL);

	assert_int_equal(knobs_space_build(&sp, &topo, d, err, sizeof(err)), 0);
	json_decref(d);
	return sp;
}

/* Throughput peaking at 6 threads. */
static double surface(const struct knob_space *sp, int c)
{
	double t = (double)knobs_int_value(sp, c, KNOB_INTRA_THREADS, 1);
	return 100.0 * t / (1.0 + pow(t / 6.0, 2.0));
}

static void test_learner_first_is_prior(void **state)
{
	struct knob_space sp = space_1_8();
	struct learner *l = learner_new(&sp);
	struct knob_filter f;

	(void)state;
	knobs_filter_all(&sp, &f);
	assert_int_equal(learner_propose(l, &f), knobs_prior_candidate(&sp));
	assert_int_equal(learner_best(l, &f), knobs_prior_candidate(&sp));
	assert_true(learner_gain(l, &f) >= 1.0);
	learner_free(l);
}

static void test_learner_finds_best_and_stops(void **state)
{
	struct knob_space sp = space_1_8();
	struct learner *l = learner_new(&sp);
	struct knob_filter f;
	int k, c = -1, best = 0;

	(void)state;
	knobs_filter_all(&sp, &f);
	for (c = 0; c < sp.ncand; c++)
		if (surface(&sp, c) > surface(&sp, best))
			best = c;
	for (k = 0; k < 8 && learner_gain(l, &f) >= 0.01; k++) {
		c = learner_propose(l, &f);
		learner_add(l, c, 10, surface(&sp, c), 0.01, false);
	}
	assert_int_equal(learner_best(l, &f), best);
	assert_true(k < 8);                    /* stopped before trying all 8 */
	assert_true(learner_gain(l, &f) < 0.01);
	learner_free(l);
}

static void test_learner_respects_filter(void **state)
{
	struct knob_space sp = space_1_8();
	struct learner *l = learner_new(&sp);
	struct knob_filter f;
	int k, c;

	(void)state;
	knobs_filter_all(&sp, &f);
	f.allowed[knobs_find(&sp, "intra_threads")] = 0x7; /* 1..3 threads only */
	for (k = 0; k < 6; k++) {
		c = learner_propose(l, &f);
		assert_true(c >= 0);
		assert_true(knobs_int_value(&sp, c, KNOB_INTRA_THREADS, 0) <= 3);
		learner_add(l, c, 10, surface(&sp, c), 0.01, false);
	}
	assert_int_equal(knobs_int_value(&sp, learner_best(l, &f), KNOB_INTRA_THREADS, 0), 3);
	f.allowed[knobs_find(&sp, "intra_threads")] = 0;
	assert_int_equal(learner_propose(l, &f), -1);
	learner_free(l);
}

static void test_learner_shape_guides(void **state)
{
	struct knob_space sp = space_1_8();
	struct learner *l = learner_new(&sp);
	struct knob_filter f;
	double shape[64];
	int c;

	(void)state;
	/* A similar workload's surface says 7 threads: the first trial goes there. */
	for (c = 0; c < sp.ncand; c++)
		shape[c] = knobs_int_value(&sp, c, KNOB_INTRA_THREADS, 0) == 7 ? 1.0 : 0.5;
	learner_set_shape(l, shape);
	knobs_filter_all(&sp, &f);
	assert_int_equal(knobs_int_value(&sp, learner_propose(l, &f), KNOB_INTRA_THREADS, 0), 7);
	learner_free(l);
}

static void test_learner_drift(void **state)
{
	struct knob_space sp = space_1_8();
	struct learner *l = learner_new(&sp);
	struct knob_filter f;
	int c, k, best;

	(void)state;
	knobs_filter_all(&sp, &f);
	for (c = 0; c < sp.ncand; c++)
		learner_add(l, c, 20, surface(&sp, c), 1.0, false);
	best = learner_best(l, &f);
	for (k = 0; k < 3; k++)
		learner_add(l, best, 20, surface(&sp, best), 1.0, false);
	assert_false(learner_drifted(l, best, surface(&sp, best) * 0.99, 1.0));
	assert_true(learner_drifted(l, best, surface(&sp, best) * 0.6, 1.0));
	/* After the drift the old evidence is stale: new measurements decide. */
	learner_mark_stale(l);
	for (k = 0; k < 3; k++)
		learner_add(l, best, 20, surface(&sp, best) * 0.6, 1.0, false);
	assert_int_not_equal(learner_best(l, &f), best);
	learner_free(l);
}

static void test_learner_tried_stats(void **state)
{
	struct knob_space sp = space_1_8();
	struct learner *l = learner_new(&sp);
	double mean, std, mu, sd;
	int trials;
	long steps;

	(void)state;
	learner_add(l, 2, 10, 90.0, 1.0, false);
	learner_add(l, 2, 10, 110.0, 1.0, false);
	learner_tried(l, 2, &mean, &std, &trials, &steps);
	assert_true(fabs(mean - 100.0) < 1e-9);
	assert_int_equal(trials, 2);
	assert_int_equal(steps, 20);
	assert_true(fabs(std - sqrt(200.0)) < 1e-9);
	learner_predict(l, 2, &mu, &sd);
	assert_true(fabs(mu - 100.0) < 10.0);
	learner_free(l);
}

/*
 * Trials flat along the threads, all at one batch size (a job bound by its
 * loader): the fit alone would call every batch size settled.  A batch size
 * more than a doubling from any measured keeps the model's starting doubt
 * and is presumed as good as the measured one; a config never measured keeps
 * some doubt however flat its neighbours.
 */
static void test_learner_doubt_where_nothing_was_measured(void **state)
{
	static const struct knob_topology topo = {.cpus_allowed = 8, .cores_allowed = 8, .numa_cores = 8};
	json_t *d = json_loads("{\"interop_threads\":{\"values\":[1]},\"batch_size\":{\"values\":[16,32,64,128]}}", 0, NULL);
	struct knob_space sp;
	struct learner *l;
	struct gp_hyper h;
	struct knob_filter f;
	struct knob_config x;
	double mu, sd, mu0, sd0;
	char err[100];
	int c, b, at16 = -1;

	(void)state;
	assert_int_equal(knobs_space_build(&sp, &topo, d, err, sizeof(err)), 0);
	json_decref(d);
	l = learner_new(&sp);
	b = knobs_find(&sp, "batch_size");
	for (c = 0; c < sp.ncand; c++) {
		knobs_decode(&sp, c, &x);
		if (x.idx[b] == 0 && knobs_int_value(&sp, c, KNOB_INTRA_THREADS, 0) % 2 == 0) {
			learner_add(l, c, 10, 100.0, 0.25, false);
			if (knobs_int_value(&sp, c, KNOB_INTRA_THREADS, 0) == 4)
				at16 = c;
		}
	}
	assert_true(at16 >= 0);
	gp_hyper_default(&h);
	learner_predict(l, at16, &mu0, &sd0);
	assert_true(sd0 < 0.05 * 100.0);
	knobs_decode(&sp, at16, &x);
	x.idx[b] = 3;                          /* 128: three doublings from 16 */
	learner_predict(l, knobs_encode(&sp, &x), &mu, &sd);
	assert_true(sd >= h.signal_sd * 100.0 * 0.999);
	assert_true(mu >= 0.95 * mu0);
	x.idx[b] = 0;
	x.idx[knobs_find(&sp, "intra_threads")] = 2; /* 3 threads at batch 16: between measured ones, never measured */
	learner_predict(l, knobs_encode(&sp, &x), &mu, &sd);
	assert_true(sd >= 0.05 * 100.0 * 0.999);
	knobs_filter_all(&sp, &f);
	assert_true(learner_gain(l, &f) >= 0.01);   /* not settled */
	learner_free(l);
}

/*
 * Inter-op threads on 2 CPUs, the configs a survey measures (every inter-op
 * count at one intra-op thread, every intra-op count at one inter-op
 * thread).  Where 3 and 4 inter-op threads did not fall (a job that never
 * forks: torch-lstm-train-b8's measured means), the model weighs the idle
 * hypothesis up and 2 x 2, 4 "threads" on 2 CPUs, is worth measuring; where
 * they fell as past a cliff (a job that forks), it stays unlikely and 2 x 2
 * is predicted below the best.
 */
static void add_idle_survey(struct learner *l, const double means[4][4])
{
	for (int c = 0; c < l->sp.ncand; c++) {
		long intra = knobs_int_value(&l->sp, c, KNOB_INTRA_THREADS, 0);
		long inter = knobs_int_value(&l->sp, c, KNOB_INTEROP_THREADS, 0);
		if (intra == 1 || inter == 1)
			learner_add(l, c, 60, means[intra - 1][inter - 1], 9.0, false);
	}
}

static void test_learner_weighs_idle_interop(void **state)
{
	static const struct knob_topology topo = {.cpus_allowed = 2, .cores_allowed = 2, .numa_cores = 2};
	static const double idle[4][4] = {{182.2, 183.3, 175.8, 197.1}, {219.1}, {159.9}, {149.8}};
	static const double forks[4][4] = {{182.2, 190.0, 110.0, 80.0}, {219.1}, {159.9}, {149.8}};
	json_t *d = json_loads("{\"intra_threads\":{\"values\":[1,2,3,4]},\"interop_threads\":{\"values\":[1,2,3,4]}}", 0,
			       NULL);
	struct knob_space sp;
	struct knob_config x;
	struct learner *l;
	double mu, sd;
	char err[100];
	int two_by_two;

	(void)state;
	assert_int_equal(knobs_space_build(&sp, &topo, d, err, sizeof(err)), 0);
	json_decref(d);
	knobs_decode(&sp, 0, &x);
	x.idx[knobs_find(&sp, "intra_threads")] = 1;
	x.idx[knobs_find(&sp, "interop_threads")] = 1;
	two_by_two = knobs_encode(&sp, &x);

	l = learner_new(&sp);
	add_idle_survey(l, idle);
	learner_predict(l, two_by_two, &mu, &sd);
	print_message("idle: weight %.3f, 2x2 %.1f +- %.1f\n", l->idle_weight, mu, sd);
	assert_true(l->idle_weight > 0.5);
	assert_true(mu >= 0.9 * 219.1);
	learner_free(l);

	l = learner_new(&sp);
	add_idle_survey(l, forks);
	learner_predict(l, two_by_two, &mu, &sd);
	print_message("forks: weight %.3f, 2x2 %.1f +- %.1f\n", l->idle_weight, mu, sd);
	assert_true(l->idle_weight < 0.1);
	assert_true(mu < 0.8 * 219.1);
	learner_free(l);
}

/* ---- trials in progress ---- */

static void test_trial_warmup_and_completion(void **state)
{
	struct trial_acc a;
	int i;

	(void)state;
	trial_begin(&a, 3, 2, 0);
	assert_false(trial_step(&a, 1.0, 1000.0)); /* warm-up: dropped */
	assert_false(trial_step(&a, 2.0, 1000.0));
	for (i = 0; i < TRIAL_MIN_STEPS - 1; i++)
		assert_false(trial_step(&a, 3.0 + i, 50.0));
	assert_true(trial_step(&a, 10.0, 50.0));    /* precise enough at the minimum */
	assert_int_equal(a.n, TRIAL_MIN_STEPS);
	assert_true(fabs(a.mean - 50.0) < 1e-12);
	assert_true(a.t_start == 3.0 && a.t_end == 10.0);
}

static void test_trial_noisy_runs_longer(void **state)
{
	struct trial_acc a;
	long n = 0;

	(void)state;
	trial_begin(&a, 0, 0, 0);
	do
		n++;
	while (!trial_step(&a, (double)n, n % 2 ? 60.0 : 40.0));
	assert_int_equal(n, TRIAL_MAX_STEPS);
	assert_true(fabs(a.mean - 50.0) < 1e-9);
	assert_true(trial_var_mean(&a) > 0.0);
	trial_begin(&a, 0, 0, 7);                  /* a fixed length */
	for (n = 1; n < 7; n++)
		assert_false(trial_step(&a, (double)n, 5.0));
	assert_true(trial_step(&a, 8.0, 5.0));
	assert_false(trial_step(&a, 9.0, NAN) && a.n > 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gp_interpolates),
		cmocka_unit_test(test_gp_noise_smooths),
		cmocka_unit_test(test_expected_improvement),
		cmocka_unit_test(test_learner_first_is_prior),
		cmocka_unit_test(test_learner_finds_best_and_stops),
		cmocka_unit_test(test_learner_respects_filter),
		cmocka_unit_test(test_learner_shape_guides),
		cmocka_unit_test(test_learner_drift),
		cmocka_unit_test(test_learner_tried_stats),
		cmocka_unit_test(test_learner_doubt_where_nothing_was_measured),
		cmocka_unit_test(test_learner_weighs_idle_interop),
		cmocka_unit_test(test_trial_warmup_and_completion),
		cmocka_unit_test(test_trial_noisy_runs_longer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
