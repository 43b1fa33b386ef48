/*
 * Validation of what jobs send: metric names, labels, ingest batches (window,
 * limits, the first bad field named) and registrations (canonical params).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "reported.h"
#include "validate.h"

static const struct ingest_limits lim = {.max_samples = 3, .oldest = 1000, .newest = 2000};

static int ingest(const char *text, struct ingest_batch *b, char *err)
{
	json_t *body = json_loads(text, 0, NULL);
	int r;

	assert_non_null(body);
	memset(b, 0, sizeof(*b));
	r = validate_ingest(body, 7, &lim, b, err, 256);
	ingest_batch_free(b);
	json_decref(body);
	return r;
}

static void test_metric_names(void **state)
{
	(void)state;
	assert_true(validate_metric_name("samples_per_s"));
	assert_true(validate_metric_name("gpu.0.util_percent"));
	assert_false(validate_metric_name(""));
	assert_false(validate_metric_name("Samples"));
	assert_false(validate_metric_name("a-b"));
	assert_false(validate_metric_name("a b"));
	char long_name[66];
	memset(long_name, 'a', 65);
	long_name[65] = '\0';
	assert_false(validate_metric_name(long_name));
	long_name[64] = '\0';
	assert_true(validate_metric_name(long_name));
}

static void test_labels(void **state)
{
	(void)state;
	assert_true(validate_label("<img src=x onerror=alert(1)>", 64));
	assert_true(validate_label("décodeur", 64));
	assert_false(validate_label("", 64));
	assert_false(validate_label("a\nb", 64));
	assert_false(validate_label("tab\there", 64));
}

static void test_good_batch(void **state)
{
	json_t *body = json_loads("{\"samples\":[{\"t\":1500,\"name\":\"loss\",\"value\":0.5,\"phase\":\"lstm\"},"
				  "{\"t\":1501,\"name\":\"samples_per_s\",\"value\":12}],\"config\":{\"intra_threads\":2}}",
				  0, NULL);
	struct ingest_batch b = {0};
	char err[256];

	(void)state;
	assert_int_equal(validate_ingest(body, 7, &lim, &b, err, sizeof(err)), 0);
	assert_int_equal(b.n, 2);
	assert_int_equal(b.samples[0].job_id, 7);
	assert_string_equal(b.samples[0].phase, "lstm");
	assert_null(b.samples[1].phase);
	assert_true(b.samples[1].value == 12.0);
	assert_non_null(b.config);
	ingest_batch_free(&b);
	json_decref(body);
}

static void test_bad_batches_name_the_field(void **state)
{
	static const struct {
		const char *body, *field;
	} cases[] = {
		{"{\"samples\":{}}", "samples:"},
		{"{\"samples\":[1]}", "samples[0]:"},
		{"{\"samples\":[{\"t\":999,\"name\":\"a\",\"value\":1}]}", "samples[0].t"},
		{"{\"samples\":[{\"t\":2001,\"name\":\"a\",\"value\":1}]}", "samples[0].t"},
		{"{\"samples\":[{\"t\":1500,\"name\":\"a\",\"value\":1},{\"t\":1500,\"name\":\"B\",\"value\":1}]}",
		 "samples[1].name"},
		{"{\"samples\":[{\"t\":1500,\"name\":\"a\",\"value\":true}]}", "samples[0].value"},
		{"{\"samples\":[{\"t\":1500,\"name\":\"a\",\"value\":1,\"phase\":3}]}", "samples[0].phase"},
		{"{\"samples\":[],\"config\":[1]}", "config:"},
		{"{\"samples\":[],\"other\":1}", "other:"},
		{"{\"samples\":[{\"t\":1500,\"name\":\"a\",\"value\":1},{\"t\":1500,\"name\":\"a\",\"value\":1},"
		 "{\"t\":1500,\"name\":\"a\",\"value\":1},{\"t\":1500,\"name\":\"a\",\"value\":1}]}", "samples: 4 samples"},
	};
	struct ingest_batch b;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(ingest(cases[i].body, &b, err), -1);
		if (strncmp(err, cases[i].field, strlen(cases[i].field)) != 0)
			fail_msg("case %zu: '%s' does not start with '%s'", i, err, cases[i].field);
		assert_null(b.samples);
	}
}

static void test_registration(void **state)
{
	json_t *body = json_loads("{\"workload\":\"lstm\",\"params\":{\"z\":1,\"a\":\"x\"},\"pid\":42,"
				  "\"objective\":\"goodput\",\"knobs\":{\"intra_threads\":{\"min\":1,\"max\":8}}}", 0, NULL);
	struct job_spec spec;
	char *params = NULL, *knobs = NULL, err[256];

	(void)state;
	assert_int_equal(validate_registration(body, &spec, &params, &knobs, err, sizeof(err)), 0);
	assert_string_equal(spec.workload, "lstm");
	assert_string_equal(params, "{\"a\":\"x\",\"z\":1}");
	assert_int_equal(spec.objective, OBJECTIVE_GOODPUT);
	assert_int_equal(spec.pid, 42);
	assert_non_null(knobs);
	free(params);
	free(knobs);
	json_decref(body);
}

static void test_registration_without_params_is_empty_object(void **state)
{
	json_t *body = json_loads("{\"workload\":\"w\"}", 0, NULL);
	struct job_spec spec;
	char *params = NULL, *knobs = NULL, err[256];

	(void)state;
	assert_int_equal(validate_registration(body, &spec, &params, &knobs, err, sizeof(err)), 0);
	assert_string_equal(params, "{}");
	assert_null(knobs);
	free(params);
	json_decref(body);
}

static void test_bad_registration(void **state)
{
	static const char *const bodies[] = {
		"{}", "{\"workload\":3}", "{\"workload\":\"w\",\"pid\":0}", "{\"workload\":\"w\",\"pid\":\"1\"}",
		"{\"workload\":\"w\",\"params\":{\"a\":[1]}}", "{\"workload\":\"w\",\"objective\":\"fast\"}",
		"{\"workload\":\"w\",\"knobs\":{\"Bad\":{\"min\":1,\"max\":2}}}",
		"{\"workload\":\"w\",\"knobs\":{\"k\":{\"values\":[]}}}", "{\"workload\":\"w\",\"surprise\":1}",
	};
	struct job_spec spec;
	char *params = NULL, *knobs = NULL, err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		json_t *body = json_loads(bodies[i], 0, NULL);
		assert_non_null(body);
		if (validate_registration(body, &spec, &params, &knobs, err, sizeof(err)) != -1)
			fail_msg("accepted %s", bodies[i]);
		json_decref(body);
	}
}

/* The figures the daemon acts on read both ways; any other name, a near miss or a node metric, is REPORTED_OTHER. */
static void test_reported_names(void **state)
{
	(void)state;
	for (int r = REPORTED_OTHER + 1; r < REPORTED_COUNT; r++) {
		const char *name = reported_name((enum reported)r);
		assert_non_null(name);
		assert_int_equal(reported_of(name), r);
		/* A job may send each of them: they are valid metric names. */
		assert_true(validate_metric_name(name));
	}
	assert_null(reported_name(REPORTED_OTHER));
	assert_int_equal(reported_of("step_time"), REPORTED_OTHER);
	assert_int_equal(reported_of("cpu.cores"), REPORTED_OTHER);
	assert_int_equal(reported_of(NULL), REPORTED_OTHER);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metric_names),
		cmocka_unit_test(test_reported_names),
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_good_batch),
		cmocka_unit_test(test_bad_batches_name_the_field),
		cmocka_unit_test(test_registration),
		cmocka_unit_test(test_registration_without_params_is_empty_object),
		cmocka_unit_test(test_bad_registration),
	};
	return cmocka_run_group_tests_name("validate", tests, NULL, NULL);
}
