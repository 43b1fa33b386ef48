/*
 * A job's view rendered once per state of the store (job_view.c): the
 * second answer is the first's, from the cache; a committed write (a new
 * latest value) gives a new answer, never the old one; a reader from the
 * network without the token has its own, without the command line; an
 * unknown job is not found and nothing is kept.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "app.h"
#include "job_view.h"
#include "store.h"

struct fx {
	char dir[64], db[96];
	struct app app;
	int64_t job;
};

static int
setup(void **state)
{
	static const struct store_options opts = {.queue_limit = 64, .readers = 2};
	struct fx *f = calloc(1, sizeof(*f));
	struct job_spec spec = {.workload = "w", .params_json = "{}", .hw_class = "test", .objective = OBJECTIVE_THROUGHPUT,
				.source = "registered", .command = "train.py --secret", .started = 1700000000};

	if (f == NULL)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/dlprof-test-view-XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return -1;
	snprintf(f->db, sizeof(f->db), "%s/db", f->dir);
	if ((f->app.store = store_open(f->db, &opts)) == NULL || (f->app.job_views = job_views_new()) == NULL ||
	    store_job_register(f->app.store, &spec, &f->job) != STORE_OK)
		return -1;
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	job_views_free(f->app.job_views);
	store_close(f->app.store);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

static json_t *
view(struct fx *f, int64_t id, bool redacted, char **text)
{
	size_t len;
	int err;

	*text = job_view_text(&f->app, id, redacted, &len, &err);
	assert_non_null(*text);
	assert_int_equal(err, STORE_OK);
	assert_int_equal(strlen(*text), len);
	return json_loads(*text, 0, NULL);
}

static void
kept_until_a_write(void **state)
{
	struct fx *f = *state;
	struct sample s = {f->job, 1700000001, "loss", 2.5, NULL};
	json_t *a, *b;
	char *ta, *tb;

	a = view(f, f->job, false, &ta);
	assert_int_equal(job_views_count(f->app.job_views), 1);
	b = view(f, f->job, false, &tb);
	assert_string_equal(ta, tb);
	assert_int_equal(job_views_count(f->app.job_views), 1);
	assert_string_equal(json_string_value(json_object_get(a, "command")), "train.py --secret");
	json_decref(b);
	free(tb);
	/* A new latest value: the next view shows it, in the same slot. */
	assert_int_equal(store_samples_write(f->app.store, &s, 1), STORE_OK);
	b = view(f, f->job, false, &tb);
	assert_true(json_real_value(json_object_get(json_object_get(b, "latest"), "loss")) == 2.5);
	assert_null(json_object_get(json_object_get(a, "latest"), "loss"));
	assert_int_equal(job_views_count(f->app.job_views), 1);
	json_decref(a);
	json_decref(b);
	free(ta);
	free(tb);
}

static void
redacted_apart(void **state)
{
	struct fx *f = *state;
	json_t *a, *b;
	char *ta, *tb;
	size_t len;
	int err;

	a = view(f, f->job, true, &ta);
	b = view(f, f->job, false, &tb);
	assert_true(json_is_null(json_object_get(a, "command")));
	assert_string_equal(json_string_value(json_object_get(b, "command")), "train.py --secret");
	assert_int_equal(job_views_count(f->app.job_views), 2);
	json_decref(a);
	json_decref(b);
	free(ta);
	free(tb);
	assert_null(job_view_text(&f->app, f->job + 1, false, &len, &err));
	assert_int_equal(err, STORE_ENOTFOUND);
	assert_int_equal(job_views_count(f->app.job_views), 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(kept_until_a_write, setup, teardown),
		cmocka_unit_test_setup_teardown(redacted_apart, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
