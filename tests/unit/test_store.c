/*
 * The store: migrations on a new file, refusal of newer, foreign and
 * non-SQLite files (left untouched), job rows, samples with their latest
 * values, concurrent writers all committed, and a borrowed reader that sees
 * one snapshot until it is given back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "store.h"
#include "store_fixture.h"
#include "store_events.h"
#include "store_internal.h"
#include "store_labels.h"

static const struct store_options opts = {.queue_limit = 1024, .readers = 2};

struct fixture {
	char dir[64];
	char path[96];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/dlprof-store-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/t.db", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

static void test_migrations_on_new_file(void **state)
{
	struct fixture *f = *state;
	struct store *st = store_open(f->path, &opts);

	assert_non_null(st);
	store_close(st);
	assert_true(store_schema_version() >= 1);
	assert_int_equal(store_fixture_query_int(f->path, "PRAGMA user_version"), store_schema_version());
	assert_int_equal(store_fixture_query_int(f->path, "SELECT count(*) FROM sqlite_master WHERE name IN "
					    "('node','workloads','jobs','samples','trials')"), 5);
	/* Reopening an up-to-date file migrates nothing and works. */
	st = store_open(f->path, &opts);
	assert_non_null(st);
	store_close(st);
}

static void test_refuses_newer_schema(void **state)
{
	struct fixture *f = *state;
	struct store *st = store_open(f->path, &opts);
	sqlite3 *db;

	store_close(st);
	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 100000", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_null(store_open(f->path, &opts));
	assert_int_equal(store_fixture_query_int(f->path, "PRAGMA user_version"), 100000);
}

static void test_refuses_foreign_database(void **state)
{
	struct fixture *f = *state;
	sqlite3 *db;

	assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "CREATE TABLE theirs(x); INSERT INTO theirs VALUES (1)", NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db);
	assert_null(store_open(f->path, &opts));
	assert_int_equal(store_fixture_query_int(f->path, "SELECT count(*) FROM theirs"), 1);
	assert_int_equal(store_fixture_query_int(f->path, "SELECT count(*) FROM sqlite_master WHERE name = 'jobs'"), 0);
}

static void test_refuses_non_sqlite_file(void **state)
{
	struct fixture *f = *state;
	FILE *fp = fopen(f->path, "w");
	char buf[64] = {0};

	fputs("precious text, not a database\n", fp);
	fclose(fp);
	assert_null(store_open(f->path, &opts));
	fp = fopen(f->path, "r");
	assert_non_null(fgets(buf, sizeof(buf), fp));
	fclose(fp);
	assert_string_equal(buf, "precious text, not a database\n");
}

static int64_t register_job(struct store *st, const char *workload, const char *params)
{
	struct job_spec spec = {.workload = workload, .params_json = params, .hw_class = "x86_64-test-2c-1numa-0gpu",
				.pid = 123, .source = "registered", .started = 1000.0, .has_uid = true, .uid = 1000};
	int64_t id = 0;

	assert_int_equal(store_job_register(st, &spec, &id), STORE_OK);
	assert_true(id > 0);
	return id;
}

static void test_jobs(void **state)
{
	struct fixture *f = *state;
	struct store *st = store_open(f->path, &opts);
	struct job_brief b;
	json_t *list, *job;
	int64_t a, c;

	a = register_job(st, "lstm", "{\"batch\":64}");
	c = register_job(st, "lstm", "{\"batch\":64}");
	assert_int_equal(store_fixture_query_int(f->path, "SELECT count(*) FROM workloads"), 1);
	assert_int_equal(store_job_brief(st, a, &b), STORE_OK);
	assert_true(b.running && b.has_uid && b.uid == 1000);
	assert_string_equal(b.workload, "lstm");
	assert_int_equal(store_job_set_config(st, a, "{\"intra_threads\":2}", 1.0, "exploring"), STORE_OK);
	assert_int_equal(store_job_end(st, c, 1010.0, true, 0), STORE_OK);
	assert_int_equal(store_job_end(st, 9999, 1010.0, false, 0), STORE_ENOTFOUND);
	assert_int_equal(store_job_brief(st, 9999, &b), STORE_ENOTFOUND);

	assert_int_equal(store_jobs_list(st, JOB_FILTER_RUNNING, &list), STORE_OK);
	assert_int_equal(json_array_size(list), 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(list, 0), "id")), a);
	json_decref(list);
	assert_int_equal(store_jobs_list(st, JOB_FILTER_ALL, &list), STORE_OK);
	assert_int_equal(json_array_size(list), 2);
	json_decref(list);

	assert_int_equal(store_job_get(st, a, &job), STORE_OK);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(job, "config"), "intra_threads")), 2);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(job, "params"), "batch")), 64);
	json_decref(job);
	assert_int_equal(store_job_get(st, 424242, &job), STORE_ENOTFOUND);
	store_close(st);
}

/*
 * A config that changes is a timeline event with why it was given, in its
 * own transaction; the same config again is not; other events come back
 * in time order.
 */
static void test_config_and_rank_events(void **state)
{
	struct fixture *f = *state;
	struct store *st = store_open(f->path, &opts);
	json_t *events, *d;
	int64_t a = register_job(st, "lstm", "{}");

	assert_int_equal(store_job_set_config(st, a, "{\"intra_threads\":2}", 10.0, "exploring"), STORE_OK);
	assert_int_equal(store_job_set_config(st, a, "{\"intra_threads\":2}", 11.0, "best"), STORE_OK);
	assert_int_equal(store_job_set_config(st, a, "{\"intra_threads\":4}", 12.0, NULL), STORE_OK);
	d = json_pack("{s:i,s:i}", "rank", 1, "exit_status", 3);
	assert_int_equal(store_job_event(st, a, 11.5, "rank_left", d), STORE_OK);
	json_decref(d);
	assert_int_equal(store_job_events(st, a, &events), STORE_OK);
	assert_int_equal(json_array_size(events), 3);
	d = json_object_get(json_array_get(events, 0), "detail");
	assert_string_equal(json_string_value(json_object_get(json_array_get(events, 0), "kind")), "config");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(d, "config"), "intra_threads")), 2);
	assert_string_equal(json_string_value(json_object_get(d, "why")), "exploring");
	assert_string_equal(json_string_value(json_object_get(json_array_get(events, 1), "kind")), "rank_left");
	d = json_object_get(json_array_get(events, 2), "detail");
	assert_true(json_real_value(json_object_get(json_array_get(events, 2), "t")) == 12.0);
	assert_true(json_is_null(json_object_get(d, "why")));
	json_decref(events);
	/* A job without events has an empty list. */
	assert_int_equal(store_job_events(st, 4242, &events), STORE_OK);
	assert_int_equal(json_array_size(events), 0);
	json_decref(events);
	store_close(st);
}

/* Labels are kept per job and key, changed in place, and read by prefix. */
static void test_series_labels(void **state)
{
	struct fixture *f = *state;
	struct store *st = store_open(f->path, &opts);
	const struct store_label v[] = {
		{7, "thread.10.10", "python3", 1.0}, {7, "thread.10.11", "worker", 1.0},
		{7, "thread.100.1", "other", 1.0},   {8, "thread.10.10", "not mine", 1.0},
		{7, "threads.x", "not a thread", 1.0},
	};
	const struct store_label rename = {7, "thread.10.11", "pt_worker", 2.0};
	json_t *m;

	assert_int_equal(store_labels_post(st, v, 5), STORE_OK);
	assert_int_equal(store_labels_post(st, &rename, 1), STORE_OK);
	/* Posts are queued: read once the writer took them (a write waits behind them). */
	assert_int_equal(store_job_end(st, 9999, 1.0, false, 0), STORE_ENOTFOUND);
	assert_int_equal(store_labels(st, 7, "thread.10.", &m), STORE_OK);
	assert_int_equal(json_object_size(m), 2);
	assert_string_equal(json_string_value(json_object_get(m, "thread.10.10")), "python3");
	assert_string_equal(json_string_value(json_object_get(m, "thread.10.11")), "pt_worker");
	json_decref(m);
	assert_int_equal(store_labels(st, 7, "thread.", &m), STORE_OK);
	assert_int_equal(json_object_size(m), 3);
	json_decref(m);
	assert_int_equal(store_labels(st, 7, "", &m), STORE_OK);
	assert_int_equal(json_object_size(m), 4);
	json_decref(m);
	store_close(st);
}

static void test_samples_and_latest(void **state)
{
	struct fixture *f = *state;
	struct store *st = store_open(f->path, &opts);
	struct sample s[200];
	char names[100][16];
	json_t *job, *latest;
	int64_t id = register_job(st, "cnn", "{}");

	/* 100 distinct series (more than the batch tracks) and two values each, newest second. */
	for (int i = 0; i < 100; i++) {
		snprintf(names[i], sizeof(names[i]), "m%d", i);
		s[i] = (struct sample){.job_id = id, .t = 2000.0 + i, .name = names[i], .value = 1.0, .phase = NULL};
		s[100 + i] = (struct sample){.job_id = id, .t = 3000.0 + i, .name = names[i], .value = 2.0, .phase = "p"};
	}
	assert_int_equal(store_samples_write(st, s, 200), STORE_OK);
	/* An older sample arriving later does not replace the latest value. */
	s[0].t = 1.0;
	s[0].value = -1.0;
	assert_int_equal(store_samples_write(st, s, 1), STORE_OK);
	assert_int_equal(store_job_get(st, id, &job), STORE_OK);
	latest = json_object_get(job, "latest");
	assert_int_equal(json_object_size(latest), 100);
	for (int i = 0; i < 100; i++)
		assert_true(json_real_value(json_object_get(latest, names[i])) == 2.0);
	assert_int_equal(json_array_size(json_object_get(job, "phases")), 1);
	json_decref(job);
	store_close(st);
	/* Every point kept, with no row a point: read back when the store opens again. */
	assert_int_equal(store_fixture_query_int(f->path, "SELECT count(*) FROM samples"), 0);
	assert_non_null(st = store_open(f->path, &opts));
	assert_int_equal(store_fixture_points(st, id, 0, 4000), 201);
	store_close(st);
}

static void test_phases_listed_once_each_in_order(void **state)
{
	struct fixture *f = *state;
	struct store *st = store_open(f->path, &opts);
	static const char *const phases[] = {"lstm", "decoder", NULL, "embedding", "lstm", "decoder"};
	struct sample s[600];
	json_t *job, *list;
	int64_t id = register_job(st, "phased", "{}");

	for (int i = 0; i < 600; i++)
		s[i] = (struct sample){.job_id = id, .t = 100.0 + i, .name = "phase_time_s", .value = 0.1,
				       .phase = phases[i % 6]};
	assert_int_equal(store_samples_write(st, s, 600), STORE_OK);
	/* Another job's phases stay out of this one's list. */
	s[0].job_id = register_job(st, "other", "{}");
	s[0].phase = "zzz";
	assert_int_equal(store_samples_write(st, s, 1), STORE_OK);
	assert_int_equal(store_job_get(st, id, &job), STORE_OK);
	list = json_object_get(job, "phases");
	assert_int_equal(json_array_size(list), 3);
	assert_string_equal(json_string_value(json_array_get(list, 0)), "decoder");
	assert_string_equal(json_string_value(json_array_get(list, 1)), "embedding");
	assert_string_equal(json_string_value(json_array_get(list, 2)), "lstm");
	json_decref(job);
	store_close(st);
	/* The walk has the index it relies on. */
	assert_int_equal(store_fixture_query_int(f->path, "SELECT count(*) FROM sqlite_master WHERE name = 'samples_job_phase'"), 1);
}

struct writer_arg {
	struct store *st;
	int64_t job;
	int n;
};

static void *writer_thread(void *p)
{
	struct writer_arg *a = p;
	for (int i = 0; i < a->n; i++) {
		struct sample s = {.job_id = a->job, .t = 5000.0 + i, .name = "samples_per_s", .value = i};
		if (i % 2 == 0)
			assert_int_equal(store_samples_write(a->st, &s, 1), STORE_OK);
		else
			assert_int_equal(store_samples_post(a->st, &s, 1), STORE_OK);
	}
	return NULL;
}

static void test_concurrent_writers(void **state)
{
	struct fixture *f = *state;
	struct store *st = store_open(f->path, &opts);
	pthread_t th[8];
	struct writer_arg args[8];

	for (int i = 0; i < 8; i++) {
		args[i] = (struct writer_arg){st, register_job(st, "w", "{}"), 250};
		pthread_create(&th[i], NULL, writer_thread, &args[i]);
	}
	for (int i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	/* Closing drains what was posted and not yet committed, and keeps it all. */
	store_close(st);
	assert_non_null(st = store_open(f->path, &opts));
	for (int i = 0; i < 8; i++)
		assert_int_equal(store_fixture_points(st, args[i].job, 5000, 5250), 250);
	store_close(st);
}

static const char sql_count_jobs[] = "SELECT count(*) FROM jobs";

static int count_jobs(struct store_conn *c)
{
	sqlite3_stmt *s = store_stmt(c, sql_count_jobs);
	int n = -1;

	assert_non_null(s);
	if (sqlite3_step(s) == SQLITE_ROW)
		n = sqlite3_column_int(s, 0);
	sqlite3_reset(s);
	return n;
}

/* The queries of one answer agree with each other: a commit between them is seen by the next borrow. */
static void test_reader_sees_one_snapshot(void **state)
{
	struct fixture *f = *state;
	struct store *st = store_open(f->path, &opts);
	struct store_conn *c;

	register_job(st, "before", "{}");
	c = store_reader(st);
	assert_int_equal(count_jobs(c), 1);
	register_job(st, "meanwhile", "{}");   /* committed when it returns */
	assert_int_equal(count_jobs(c), 1);
	store_reader_done(st, c);
	c = store_reader(st);
	assert_int_equal(count_jobs(c), 2);
	store_reader_done(st, c);
	store_close(st);
}

static void test_failed_op_leaves_the_store_writable(void **state)
{
	struct fixture *f = *state;
	struct store *st = store_open(f->path, &opts);
	int64_t id;

	assert_int_equal(store_job_set_config(st, 77, "{}", 1.0, NULL), STORE_ENOTFOUND);
	id = register_job(st, "ok", "{}");
	assert_true(id > 0);
	assert_true(store_writable(st, NULL, 0));
	store_close(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_migrations_on_new_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuses_newer_schema, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuses_foreign_database, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuses_non_sqlite_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_jobs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_config_and_rank_events, setup, teardown),
		cmocka_unit_test_setup_teardown(test_series_labels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_samples_and_latest, setup, teardown),
		cmocka_unit_test_setup_teardown(test_phases_listed_once_each_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_writers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reader_sees_one_snapshot, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_op_leaves_the_store_writable, setup, teardown),
	};
	return cmocka_run_group_tests_name("store", tests, NULL, NULL);
}
