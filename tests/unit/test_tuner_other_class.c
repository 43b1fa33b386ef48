/*
 * Other hardware classes as a prior (daemon/tuner_other_class.c): what another
 * class measured of a workload variant gives it its prior shape while it
 * has no trials of this class, never its trials; the first job starts at
 * that class's best; the node's own trials then take over; a similar
 * workload of this class takes precedence; configs this node cannot run
 * are left out; the class with the most trials is the one used; and the
 * tuner asks the cluster about a variant only while it has no trials.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "node.h"
#include "tuner.h"

static const struct tuner_options topt = {.gain_threshold = 0.01};

#define KNOBS "{\"intra_threads\":{\"min\":1,\"max\":8}}"

struct asked {
	int n;
	char workload[64];
	char params[64];
};

struct fixture {
	struct node_info node;
	struct tuner *t;
	int64_t next_id;
	struct asked asked;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	snprintf(f->node.hostname, sizeof(f->node.hostname), "test");
	snprintf(f->node.hw_class, sizeof(f->node.hw_class), "x86_64-test-4c-1numa-0gpu");
	f->node.cores = f->node.cores_allowed = 4;
	f->node.cpus_online = f->node.cpus_allowed = 8;
	f->node.threads_per_core = 2;
	f->node.numa_nodes = 1;
	f->node.numa_cores[0] = 4;
	f->next_id = 1;
	f->t = tuner_open(NULL, &f->node, &topt);
	*state = f;
	return f->t ? 0 : -1;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	tuner_close(f->t);
	free(f);
	return 0;
}

static long knob(const json_t *config, const char *name)
{
	return (long)json_integer_value(json_object_get(config, name));
}

typedef double (*surface_fn)(long threads);

/* Best at 3 threads (of 1..8): another class's surface. */
static double peak3(long th)
{
	return 200.0 * (double)th / (1.0 + pow((double)th / 3.0, 2.0));
}

/* Best at 6 threads: this node's own surface, unlike the other class's. */
static double peak6(long th)
{
	return 200.0 * (double)th / (1.0 + pow((double)th / 6.0, 2.0));
}

/* Appends rows as the cluster's query gives them: threads 1..max, two trials each at fn's value. */
static void add_rows(json_t *rows, const char *cls, const char *params, surface_fn fn, long max, int trials)
{
	char config[64];
	long th;

	for (th = 1; th <= max; th++) {
		double v = fn(th);
		snprintf(config, sizeof(config), "{\"intra_threads\":%ld}", th);
		json_array_append_new(rows, json_pack("{s:s, s:s, s:s, s:i, s:i, s:f, s:f, s:f, s:i, s:s}", "params",
						      params, "hw_class", cls, "config", config, "trials", trials,
						      "steps", 100 * trials, "sum", trials * v, "sumsq", trials * v * v,
						      "sum_var", trials * pow(0.01 * v, 2.0), "nodes", 3, "declared", KNOBS));
	}
}

static int learn_other(struct fixture *f, const char *workload, json_t *rows)
{
	json_t *params = json_pack("{s:i}", "batch", 64);
	struct tuner_other_answer a = {.workload = workload, .params = params, .objective = OBJECTIVE_THROUGHPUT,
				       .rows = rows};
	int rc = tuner_learn_other_class(f->t, &a);

	json_decref(params);
	json_decref(rows);
	return rc;
}

static json_t *recommend(struct fixture *f, const char *workload)
{
	json_t *params = json_pack("{s:i}", "batch", 64);
	json_t *rec = tuner_recommend(f->t, workload, params, OBJECTIVE_THROUGHPUT);

	json_decref(params);
	assert_non_null(rec);
	return rec;
}

static json_t *start_job(struct fixture *f, const char *workload, const char *params, int64_t *id)
{
	json_t *k = json_loads(KNOBS, 0, NULL), *config;

	*id = f->next_id++;
	config = tuner_job_start(f->t, *id, workload, params, OBJECTIVE_THROUGHPUT, k);
	json_decref(k);
	assert_non_null(config);
	return config;
}

/* Runs a job of steps steps on fn with 2% deterministic noise; returns its last config. */
static json_t *run_job(struct fixture *f, int64_t id, json_t *config, surface_fn fn, int steps)
{
	struct sample s[10];
	unsigned seed = 7;
	double t = 1000.0;
	int done, i;

	for (done = 0; done < steps; done += 10) {
		json_t *next;
		for (i = 0; i < 10; i++) {
			seed = seed * 1103515245u + 12345u;
			t += 0.5;
			s[i] = (struct sample){.job_id = id, .t = t, .name = "samples_per_s",
					       .value = fn(knob(config, "intra_threads")) *
							(1.0 + 0.02 * (2.0 * ((seed >> 8) & 0xffff) / 65535.0 - 1.0))};
		}
		next = tuner_job_observe(f->t, id, s, 10, config);
		assert_non_null(next);
		json_decref(config);
		config = next;
	}
	return config;
}

static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

static void test_prior_then_own_trials(void **state)
{
	struct fixture *f = *state;
	json_t *rows = json_array(), *rec, *config, *view;
	int64_t id;

	rec = recommend(f, "resnet");
	assert_string_equal(str(rec, "source"), "default");
	json_decref(rec);

	add_rows(rows, "x86_64-big-64c-2numa-0gpu", "{\"batch\":64}", peak3, 8, 2);
	assert_int_equal(learn_other(f, "resnet", rows), 0);
	rec = recommend(f, "resnet");
	assert_string_equal(str(rec, "source"), "other_class");
	assert_int_equal(knob(json_object_get(rec, "config"), "intra_threads"), 3); /* theirs, not the 4 cores */
	assert_string_equal(str(json_object_get(rec, "other_class"), "hw_class"), "x86_64-big-64c-2numa-0gpu");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(rec, "other_class"), "trials")), 16);
	assert_int_equal(json_integer_value(json_object_get(rec, "trials")), 0);
	assert_true(json_is_null(json_object_get(rec, "expected")));  /* their figures are of other hardware */
	json_decref(rec);

	/* A prior, not trials: the variant has none, and says where its prior came from. */
	view = tuner_workload(f->t, "resnet", NULL, NULL);
	assert_non_null(view);
	assert_string_equal(str(view, "source"), "other_class");
	assert_int_equal(json_integer_value(json_object_get(view, "trials")), 0);
	assert_string_equal(str(json_object_get(view, "other_class"), "hw_class"), "x86_64-big-64c-2numa-0gpu");
	assert_int_equal(json_array_size(json_object_get(view, "tried")), 0);
	json_decref(view);

	/* The first job starts at the other class's best; its own trials then take over. */
	config = start_job(f, "resnet", "{\"batch\":64}", &id);
	assert_int_equal(knob(config, "intra_threads"), 3);
	config = run_job(f, id, config, peak6, 600);
	tuner_job_end(f->t, id);
	json_decref(config);
	rec = recommend(f, "resnet");
	assert_string_equal(str(rec, "source"), "learned");
	assert_int_equal(knob(json_object_get(rec, "config"), "intra_threads"), 6);
	assert_true(json_integer_value(json_object_get(rec, "trials")) < 16);  /* its own only */
	json_decref(rec);
	/* Learned here; the model's prior shape still came from the other class, and the view says so. */
	view = tuner_workload(f->t, "resnet", NULL, NULL);
	assert_string_equal(str(view, "source"), "learned");
	assert_string_equal(str(json_object_get(view, "best"), "prior"), "other_class");
	assert_string_equal(str(json_object_get(view, "other_class"), "hw_class"), "x86_64-big-64c-2numa-0gpu");
	json_decref(view);

	/* A later answer does not displace trials of this class. */
	rows = json_array();
	add_rows(rows, "x86_64-big-64c-2numa-0gpu", "{\"batch\":64}", peak3, 8, 4);
	assert_int_equal(learn_other(f, "resnet", rows), 0);
	rec = recommend(f, "resnet");
	assert_string_equal(str(rec, "source"), "learned");
	assert_int_equal(knob(json_object_get(rec, "config"), "intra_threads"), 6);
	json_decref(rec);
}

static void test_similar_takes_precedence(void **state)
{
	struct fixture *f = *state;
	json_t *rows = json_array(), *rec, *config;
	int64_t id;

	/* A similar workload of this class (other params) learned 6 threads here. */
	config = start_job(f, "lstm", "{\"batch\":32}", &id);
	config = run_job(f, id, config, peak6, 600);
	tuner_job_end(f->t, id);
	json_decref(config);
	add_rows(rows, "x86_64-big-64c-2numa-0gpu", "{\"batch\":64}", peak3, 8, 2);
	assert_int_equal(learn_other(f, "lstm", rows), 0);
	rec = recommend(f, "lstm");
	assert_string_equal(str(rec, "source"), "similar");
	json_decref(rec);
	config = start_job(f, "lstm", "{\"batch\":64}", &id);
	assert_int_equal(knob(config, "intra_threads"), 6);
	json_decref(config);
}

static void test_what_does_not_map(void **state)
{
	struct fixture *f = *state;
	json_t *rows = json_array(), *rec, *config0;
	char config[64];
	int64_t id;
	long th;

	/* Seen here (declared 1..8), never measured. */
	config0 = start_job(f, "big", "{\"batch\":64}", &id);
	tuner_job_end(f->t, id);
	json_decref(config0);
	/* Thread counts this node's space (1..8) lacks: nothing to read the surface from. */
	for (th = 16; th <= 64; th *= 2) {
		snprintf(config, sizeof(config), "{\"intra_threads\":%ld}", th);
		json_array_append_new(rows, json_pack("{s:s, s:s, s:s, s:i, s:i, s:f, s:f, s:f, s:i, s:s}", "params",
						      "{\"batch\":64}", "hw_class", "x86_64-big-64c-2numa-0gpu",
						      "config", config, "trials", 2, "steps", 200, "sum", 2.0 * th,
						      "sumsq", 2.0 * th * th, "sum_var", 0.01, "nodes", 1, "declared",
						      "{\"intra_threads\":{\"min\":1,\"max\":64}}"));
	}
	/* A plan with per-phase overrides says nothing about a uniform config. */
	json_array_append_new(rows, json_pack("{s:s, s:s, s:s, s:i, s:i, s:f, s:f, s:f, s:i}", "params",
					      "{\"batch\":64}", "hw_class", "x86_64-big-64c-2numa-0gpu", "config",
					      "{\"intra_threads\":2,\"phases\":{\"fwd\":{\"intra_threads\":1}}}",
					      "trials", 40, "steps", 4000, "sum", 40e6, "sumsq", 40e12, "sum_var",
					      0.0, "nodes", 1));
	assert_int_equal(learn_other(f, "big", rows), 0);
	rec = recommend(f, "big");
	assert_string_equal(str(rec, "source"), "default");
	json_decref(rec);

	/* Rows of other params, or bad numbers, are not this variant's. */
	rows = json_array();
	add_rows(rows, "x86_64-big-64c-2numa-0gpu", "{\"batch\":128}", peak3, 8, 2);
	assert_int_equal(learn_other(f, "other-params", rows), -1);
	rows = json_array();
	json_array_append_new(rows, json_pack("{s:s, s:s, s:s, s:i, s:i, s:f, s:f, s:f}", "params", "{\"batch\":64}",
					      "hw_class", "c", "config", "{\"intra_threads\":2}", "trials", 2, "steps",
					      20, "sum", 1.0, "sumsq", 1.0, "sum_var", -1.0));
	assert_int_equal(learn_other(f, "bad", rows), -1);
	assert_null(tuner_workload(f->t, "other-params", NULL, NULL));
}

static void test_most_trialled_class(void **state)
{
	struct fixture *f = *state;
	json_t *rows = json_array(), *rec;

	/* Params as a query gives them ("64") name the same variant as 64. */
	add_rows(rows, "arm64-few-8c-1numa-0gpu", "{\"batch\":\"64\"}", peak6, 8, 1);
	add_rows(rows, "x86_64-big-64c-2numa-0gpu", "{\"batch\":64}", peak3, 8, 3);
	assert_int_equal(learn_other(f, "bert", rows), 0);
	rec = recommend(f, "bert");
	assert_string_equal(str(rec, "source"), "other_class");
	assert_string_equal(str(json_object_get(rec, "other_class"), "hw_class"), "x86_64-big-64c-2numa-0gpu");
	assert_int_equal(knob(json_object_get(rec, "config"), "intra_threads"), 3);
	json_decref(rec);
}

static void record_ask(void *ctx, const char *workload, const json_t *params, enum objective objective)
{
	struct asked *a = ctx;
	char *text = json_dumps(params, JSON_COMPACT | JSON_SORT_KEYS);

	assert_int_equal(objective, OBJECTIVE_THROUGHPUT);
	a->n++;
	snprintf(a->workload, sizeof(a->workload), "%s", workload);
	snprintf(a->params, sizeof(a->params), "%s", text ? text : "");
	free(text);
}

static void test_asks_only_without_trials(void **state)
{
	struct fixture *f = *state;
	json_t *rec, *config;
	int64_t id;

	rec = recommend(f, "vit");  /* nobody to ask yet */
	json_decref(rec);
	tuner_set_other_ask(f->t, record_ask, &f->asked);
	rec = recommend(f, "vit");
	json_decref(rec);
	assert_int_equal(f->asked.n, 1);
	assert_string_equal(f->asked.workload, "vit");
	assert_string_equal(f->asked.params, "{\"batch\":64}");
	config = start_job(f, "vit", "{\"batch\":\"64\"}", &id);  /* canonical params */
	assert_int_equal(f->asked.n, 2);
	assert_string_equal(f->asked.params, "{\"batch\":64}");
	config = run_job(f, id, config, peak6, 100);
	tuner_job_end(f->t, id);
	json_decref(config);
	/* Trials of this class now: other classes are not asked about it. */
	rec = recommend(f, "vit");
	json_decref(rec);
	config = start_job(f, "vit", "{\"batch\":64}", &id);
	json_decref(config);
	assert_int_equal(f->asked.n, 2);
	tuner_set_other_ask(f->t, NULL, NULL);
	rec = recommend(f, "vit2");
	json_decref(rec);
	assert_int_equal(f->asked.n, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_prior_then_own_trials, setup, teardown),
		cmocka_unit_test_setup_teardown(test_similar_takes_precedence, setup, teardown),
		cmocka_unit_test_setup_teardown(test_what_does_not_map, setup, teardown),
		cmocka_unit_test_setup_teardown(test_most_trialled_class, setup, teardown),
		cmocka_unit_test_setup_teardown(test_asks_only_without_trials, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
