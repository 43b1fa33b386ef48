/*
 * objective=goodput inside the tuner (daemon/tuner_goodput.c), on a
 * workload and a job built here: a job's value is its samples/s while the
 * noise scale is unknown, nothing while the noise figures that will give
 * it come in, and samples/s x phi / (phi + M) once it is known; a job that
 * counts no samples is measured by its global batch over its step time;
 * a step's figures are those of its first time and of the whole job; each
 * run of a config leaves its warm-up out of the config's throughput; what
 * was measured survives a restart as JSON text; and the view measures its
 * speed-ups against the default config, else the first one measured.
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

/* One CPU: the threads are fixed, the batch size is the only knob (default 64). */
#define KNOBS "{\"batch_size\":{\"values\":[32,64,128],\"default\":64}}"

static const struct knob_topology topo = {.cpus_allowed = 1, .cores_allowed = 1};

struct fixture {
	struct tuner_workload w;
	struct tuner_job j;
	double t;                     /* the next step's time */
};

static void build(struct tuner_workload *w)
{
	json_t *knobs = json_loads(KNOBS, 0, NULL);
	char err[200];

	assert_int_equal(knobs_space_build(&w->sp, &topo, knobs, err, sizeof(err)), 0);
	json_decref(knobs);
	w->objective = OBJECTIVE_GOODPUT;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	build(&f->w);
	f->j.w = &f->w;
	f->j.gp_cand = -1;
	f->t = 1000.0;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	tuner_goodput_free(&f->w.gp);
	free(f);
	return 0;
}

static int cand(const struct tuner_workload *w, int batch)
{
	json_t *c = json_pack("{s:i}", "batch_size", batch);
	int cand = knobs_candidate_of(&w->sp, c, -1);

	json_decref(c);
	assert_true(cand >= 0);
	return cand;
}

/* The value of one whole-job sample name=value of a step under candidate c. */
static double value(struct fixture *f, const char *name, double v, int c)
{
	struct sample s = {.job_id = 1, .t = f->t, .name = name, .value = v};

	return tuner_goodput_value(&f->j, &s, c);
}

/* E|g_b|^2 = |G|^2 + tr(Sigma) / b, with |G|^2 = 4 and tr(Sigma) = 100: a noise scale of 25. */
static double sqnorm(double b)
{
	return 4.0 + 100.0 / b;
}

/* One step's figures as a job reports them: global batch m (0: none) and the two gradient norms. */
static void step(struct fixture *f, double m)
{
	struct sample s[5] = {
		{1, f->t, "grad_batch_small", 10.0, NULL},
		{1, f->t, "grad_sqnorm_small", sqnorm(10.0), NULL},
		{1, f->t, "grad_batch_large", 40.0, NULL},
		{1, f->t, "grad_sqnorm_large", sqnorm(40.0), NULL},
		{1, f->t, "global_batch", m, NULL},
	};
	const struct sample *p[5] = {&s[0], &s[1], &s[2], &s[3], &s[4]};

	tuner_goodput_step(&f->j, p, m > 0.0 ? 5 : 4);
	f->t += 1.0;
}

static const struct tuner_goodput_config *config_of(const struct tuner_workload *w, int c)
{
	for (size_t i = 0; i < w->gp.nconfigs; i++)
		if (w->gp.configs[i].cand == c)
			return &w->gp.configs[i];
	return NULL;
}

static void test_throughput_while_no_noise_is_reported(void **state)
{
	struct fixture *f = *state;
	int c64 = cand(&f->w, 64), c128 = cand(&f->w, 128);
	const struct tuner_goodput_config *c;

	for (int i = 0; i < TRIAL_WARMUP_START + 2; i++)
		assert_float_equal(value(f, "samples_per_s", 100.0 + i, c64), 100.0 + i, 0.0);
	/* Warm-up left out of the config's throughput: the last two steps only. */
	assert_non_null(c = config_of(&f->w, c64));
	assert_int_equal(c->n, 2);
	assert_float_equal(c->sps_sum, 2 * 100.0 + TRIAL_WARMUP_START + TRIAL_WARMUP_START + 1, 1e-9);
	/* Another config starts its own warm-up. */
	assert_float_equal(value(f, "samples_per_s", 300.0, c128), 300.0, 0.0);
	assert_null(config_of(&f->w, c128));
	assert_true(isnan(value(f, "samples_per_s", -1.0, c128)));
	assert_true(isnan(value(f, "loss", 1.0, c128)));
}

static void test_step_time_over_the_global_batch(void **state)
{
	struct fixture *f = *state;
	int c32 = cand(&f->w, 32);

	/* No batch said yet: a step time means nothing. */
	assert_true(isnan(value(f, "step_time_s", 0.5, c32)));
	f->j.gp_batch = 64.0;
	assert_float_equal(value(f, "step_time_s", 0.5, c32), 128.0, 1e-9);
	/* A job that counts its samples is measured by them alone. */
	assert_float_equal(value(f, "samples_per_s", 100.0, c32), 100.0, 0.0);
	assert_true(isnan(value(f, "step_time_s", 0.5, c32)));
}

static void test_waits_for_the_noise_then_weighs_by_it(void **state)
{
	struct fixture *f = *state;
	int c64 = cand(&f->w, 64);

	step(f, 64.0);
	assert_true(f->j.gp_noise);
	assert_float_equal(f->j.gp_batch, 64.0, 0.0);
	/* Noise figures come in but say nothing yet: no value rather than a wrong one. */
	assert_true(isnan(value(f, "samples_per_s", 100.0, c64)));
	for (int i = 1; i < GOODPUT_MIN_STEPS; i++)
		step(f, 64.0);
	assert_float_equal(goodput_noise_scale(&f->w.gp.noise), 25.0, 1e-9);
	assert_float_equal(value(f, "samples_per_s", 100.0, c64), 100.0 * 25.0 / (25.0 + 64.0), 1e-9);
	/* Known efficiency, unknown batch: the value cannot be known. */
	f->j.gp_batch = 0.0;
	assert_true(isnan(value(f, "samples_per_s", 100.0, c64)));
}

static void test_step_figures(void **state)
{
	struct fixture *f = *state;
	struct sample s[4] = {
		{1, 5.0, "global_batch", 32.0, "fwd"},   /* a phase's: not the step's */
		{1, 5.0, "grad_batch_large", 48.0, NULL},
		{1, 6.0, "global_batch", 128.0, NULL},    /* the next step's */
		{1, 5.0, "global_batch", 256.0, NULL},    /* after another time: not read */
	};
	const struct sample *p[4] = {&s[0], &s[1], &s[2], &s[3]};

	tuner_goodput_step(&f->j, p, 4);
	/* No global batch of the whole job: the all-reduced gradient's batch is the step's. */
	assert_float_equal(f->j.gp_batch, 48.0, 0.0);
	assert_false(f->j.gp_noise);
	assert_int_equal(f->w.gp.noise.n, 0);
}

static void test_state_survives_a_restart(void **state)
{
	struct fixture *f = *state;
	struct tuner_workload w2;
	int c32 = cand(&f->w, 32), c64 = cand(&f->w, 64);
	char *text;
	json_t *st;

	assert_null(tuner_goodput_state(&f->w)); /* nothing measured: nothing kept */
	for (int i = 0; i < GOODPUT_MIN_STEPS; i++) {
		step(f, 64.0);
		value(f, "samples_per_s", 100.0, c64);
	}
	f->j.gp_batch = 32.0;
	for (int i = 0; i < TRIAL_WARMUP_START + 3; i++)
		value(f, "samples_per_s", 60.0, c32);
	assert_non_null(text = tuner_goodput_state(&f->w));
	assert_non_null(st = json_loads(text, 0, NULL));
	free(text);
	memset(&w2, 0, sizeof(w2));
	build(&w2);
	tuner_goodput_restore(&w2, st);
	json_decref(st);
	assert_int_equal(w2.gp.noise.n, f->w.gp.noise.n);
	assert_float_equal(goodput_noise_scale(&w2.gp.noise), 25.0, 1e-9);
	assert_int_equal(w2.gp.nconfigs, 2);
	for (int k = 0; k < 2; k++) {
		int c = k ? c32 : c64;
		const struct tuner_goodput_config *a = config_of(&f->w, c), *b = config_of(&w2, c);
		assert_non_null(a);
		assert_non_null(b);
		assert_int_equal(b->n, a->n);
		assert_float_equal(b->sps_sum, a->sps_sum, 1e-9);
		assert_float_equal(b->global_batch, a->global_batch, 0.0);
	}
	tuner_goodput_free(&w2.gp);
	/* A config the space cannot express is dropped, the rest kept. */
	memset(&w2, 0, sizeof(w2));
	build(&w2);
	st = json_loads("{\"noise\":{\"n\":0},\"configs\":[{\"config\":{\"batch_size\":48},\"global_batch\":48,"
			"\"sps_sum\":10,\"n\":1},{\"config\":{\"batch_size\":32},\"global_batch\":32,\"sps_sum\":10,\"n\":1}]}",
			0, NULL);
	tuner_goodput_restore(&w2, st);
	json_decref(st);
	assert_int_equal(w2.gp.nconfigs, 1);
	assert_int_equal(w2.gp.configs[0].cand, c32);
	assert_int_equal(w2.gp.noise.n, 0);
	tuner_goodput_free(&w2.gp);
}

/* Runs n counted steps (after the warm-up) of a config at sps samples/s and global batch m. */
static void run(struct fixture *f, int batch, double sps, int n)
{
	int c = cand(&f->w, batch);

	f->j.gp_batch = batch;
	for (int i = 0; i < TRIAL_WARMUP_START + n; i++)
		value(f, "samples_per_s", sps, c);
}

static void test_view_against_the_default(void **state)
{
	struct fixture *f = *state;
	json_t *v, *rows, *base;

	for (int i = 0; i < GOODPUT_MIN_STEPS; i++)
		step(f, 0.0);
	run(f, 32, 100.0, 4);
	run(f, 128, 300.0, 4);
	/* The default (64) not measured: the first config measured is the baseline. */
	v = tuner_goodput_json(&f->w);
	base = json_object_get(v, "baseline");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(base, "config"), "batch_size")), 32);
	assert_string_equal(json_string_value(json_object_get(v, "ranked_by")), "goodput");
	json_decref(v);
	run(f, 64, 180.0, 4);
	v = tuner_goodput_json(&f->w);
	base = json_object_get(v, "baseline");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(base, "config"), "batch_size")), 64);
	rows = json_object_get(v, "configs");
	assert_int_equal(json_array_size(rows), 3);
	/* Ranked by learning speed-up: raw x (phi + 64) / (phi + M), phi 25. */
	{
		double prev = INFINITY;
		for (size_t i = 0; i < json_array_size(rows); i++) {
			json_t *r = json_array_get(rows, i);
			double m = json_number_value(json_object_get(r, "global_batch"));
			double raw = json_number_value(json_object_get(r, "raw_speedup"));
			double learn = json_number_value(json_object_get(r, "learning_speedup"));
			assert_float_equal(raw, json_number_value(json_object_get(r, "samples_per_s")) / 180.0, 1e-9);
			assert_float_equal(learn, raw * (25.0 + 64.0) / (25.0 + m), 1e-9);
			assert_true(learn <= prev);
			prev = learn;
		}
	}
	json_decref(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_throughput_while_no_noise_is_reported, setup, teardown),
		cmocka_unit_test_setup_teardown(test_step_time_over_the_global_batch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_waits_for_the_noise_then_weighs_by_it, setup, teardown),
		cmocka_unit_test_setup_teardown(test_step_figures, setup, teardown),
		cmocka_unit_test_setup_teardown(test_state_survives_a_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_view_against_the_default, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
