/*
 * Tests of the SPANK plugin's JSON scanner (contrib/slurm/spank_json.c):
 * validation of good and bad texts, member lookup, iteration of arrays and
 * objects, integers, strings with escapes, and the answers the plugin reads
 * (a registration, a job list).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "spank_json.h"

static void test_parse_accepts_valid(void **state)
{
	static const char *const good[] = {
		"{}", "[]", " 0 ", "-1.5e+3", "true", "false", "null", "\"a\\u00e9\\n\"",
		"{\"a\":[1,{\"b\":null}],\"c\":\"x\"}", "[[[[]]]]", "{\"k\" : 1 , \"l\":2}",
	};
	struct sj_value v;

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_int_equal(sj_parse(good[i], &v), 0);
}

static void test_parse_rejects_invalid(void **state)
{
	static const char *const bad[] = {
		"", "{", "[1,]", "{\"a\"}", "{\"a\":}", "{a:1}", "01", "1.", "-", "tru",
		"\"unterminated", "\"bad\\x\"", "\"\\u12\"", "[1] 2", "{\"a\":1,}", "\"ctl\x01\"",
	};
	struct sj_value v;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (sj_parse(bad[i], &v) == 0)
			fail_msg("accepted invalid JSON: %s", bad[i]);
	}
}

static void test_parse_bounds_nesting(void **state)
{
	char deep[401];
	struct sj_value v;

	(void)state;
	/* 50 levels are followed... */
	memset(deep, '[', 50);
	memset(deep + 50, ']', 50);
	deep[100] = '\0';
	assert_int_equal(sj_parse(deep, &v), 0);
	/* ...200 are more than the scanner follows: refused, not a stack overflow. */
	memset(deep, '[', 200);
	memset(deep + 200, ']', 200);
	deep[400] = '\0';
	assert_int_equal(sj_parse(deep, &v), -1);
}

static void test_registration_answer(void **state)
{
	const char *text = "{\"id\": 42, \"workload\": \"lstm\", \"config\": "
			   "{\"intra_threads\": 4, \"affinity\": \"close\", \"phases\": {\"x\": {\"id\": 7}}}}";
	struct sj_value root, v, cfg;
	long long id;
	char buf[32];

	(void)state;
	assert_int_equal(sj_parse(text, &root), 0);
	assert_int_equal(sj_get(&root, "id", &v), 0);
	assert_int_equal(sj_int(&v, &id), 0);
	assert_int_equal(id, 42);
	assert_int_equal(sj_get(&root, "config", &cfg), 0);
	assert_int_equal(sj_get(&cfg, "intra_threads", &v), 0);
	assert_int_equal(sj_text(&v, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "4");
	assert_int_equal(sj_get(&cfg, "affinity", &v), 0);
	assert_int_equal(sj_text(&v, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "close");
	assert_int_equal(sj_get(&cfg, "missing", &v), -1);
	/* Lookup is by member of this object, not anywhere below it. */
	assert_int_equal(sj_get(&cfg, "id", &v), -1);
}

static void test_job_list(void **state)
{
	const char *text = "{\"jobs\":[{\"id\":1,\"external_id\":\"slurm:9\"},"
			   "{\"id\":2,\"external_id\":null},{\"id\":3,\"external_id\":\"slurm:10\"}]}";
	struct sj_value root, list, job, v;
	const char *cursor = NULL;
	long long ids[3], id;
	char ext[32];
	int n = 0, rc;

	(void)state;
	assert_int_equal(sj_parse(text, &root), 0);
	assert_int_equal(sj_get(&root, "jobs", &list), 0);
	while ((rc = sj_next(&list, &cursor, NULL, 0, &job)) == 1) {
		assert_int_equal(sj_get(&job, "id", &v), 0);
		assert_int_equal(sj_int(&v, &id), 0);
		ids[n++] = id;
		assert_int_equal(sj_get(&job, "external_id", &v), 0);
		if (id == 2)
			assert_int_equal(sj_text(&v, ext, sizeof(ext)), -1);   /* null */
		else
			assert_int_equal(sj_text(&v, ext, sizeof(ext)), 0);
	}
	assert_int_equal(rc, 0);
	assert_int_equal(n, 3);
	assert_true(ids[0] == 1 && ids[1] == 2 && ids[2] == 3);
}

static void test_object_iteration_keys(void **state)
{
	const char *text = "{\"a\\\"b\":1, \"c\":[2], \"d\":{}}";
	struct sj_value root, v;
	const char *cursor = NULL;
	char key[16];

	(void)state;
	assert_int_equal(sj_parse(text, &root), 0);
	assert_int_equal(sj_next(&root, &cursor, key, sizeof(key), &v), 1);
	assert_string_equal(key, "a\"b");
	assert_int_equal(sj_next(&root, &cursor, key, sizeof(key), &v), 1);
	assert_string_equal(key, "c");
	assert_true(*v.p == '[');
	assert_int_equal(sj_next(&root, &cursor, key, sizeof(key), &v), 1);
	assert_string_equal(key, "d");
	assert_int_equal(sj_next(&root, &cursor, key, sizeof(key), &v), 0);
}

static void test_text_and_int_edges(void **state)
{
	struct sj_value v;
	char small[4];
	long long n;

	(void)state;
	assert_int_equal(sj_parse("\"abcdef\"", &v), 0);
	assert_int_equal(sj_text(&v, small, sizeof(small)), -1);   /* does not fit */
	assert_int_equal(sj_parse("\"\\u0041\\u4e2d\"", &v), 0);
	assert_int_equal(sj_text(&v, small, sizeof(small)), 0);
	assert_string_equal(small, "A?");
	assert_int_equal(sj_parse("1.5", &v), 0);
	assert_int_equal(sj_int(&v, &n), -1);
	assert_int_equal(sj_parse("\"7\"", &v), 0);
	assert_int_equal(sj_int(&v, &n), -1);
	assert_int_equal(sj_parse("99999999999999999999999", &v), 0);
	assert_int_equal(sj_int(&v, &n), -1);   /* out of range */
	assert_int_equal(sj_parse("[1]", &v), 0);
	assert_int_equal(sj_text(&v, small, sizeof(small)), -1);
	assert_int_equal(sj_get(&v, "x", &v), -1);                 /* not an object */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_accepts_valid),
		cmocka_unit_test(test_parse_rejects_invalid),
		cmocka_unit_test(test_parse_bounds_nesting),
		cmocka_unit_test(test_registration_answer),
		cmocka_unit_test(test_job_list),
		cmocka_unit_test(test_object_iteration_keys),
		cmocka_unit_test(test_text_and_int_edges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
