/*
 * Tests of the ranks of distributed jobs in the store (daemon/store_ranks.c)
 * on a real store: ranks of one external id make one job, a rank's first
 * batch is its warm-up, figures are sums per step and CPU means between
 * two reads, a rank that joins again starts afresh, the last rank to end
 * ends the job with the first failing rank's status, and discovery's list
 * of running ranks holds only running ranks of running jobs.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "store_fixture.h"

#define T0 1700000000.0

/* Rank rank (of world) of the job keyed key, on node; its job's id. */
static int64_t
join(struct store *st, const char *key, int rank, int local_rank, int world, const char *node, int64_t pid)
{
	struct job_rank_spec rk = {.rank = rank, .local_rank = local_rank, .world_size = world, .nodes = 2, .node = node};
	int64_t id = store_fixture_job(st, "dist", key, &rk, pid, T0 + rank);

	assert_true(id > 0);
	return id;
}

/* A batch of rank's: steps, their sums, its throughput, and a reading of its CPU at t_mono (0: none). */
static void
report(struct store *st, int64_t id, int rank, int steps, double step_s, double comm_s, double data_s, double sps,
       double cpu_s, double wait_s, double t_mono)
{
	struct rank_report r = {.job_id = id, .rank = rank, .t = T0 + 100, .steps = steps, .step_s = step_s,
				.comm_s = comm_s, .data_s = data_s, .samples_per_s = sps, .has_cpu = t_mono > 0,
				.cpu_s = cpu_s, .wait_s = wait_s, .t_mono = t_mono};

	assert_int_equal(store_rank_report(st, &r), STORE_OK);
}

/* Job id's ranks; the caller frees them. */
static struct rank_row *
ranks_of(struct store *st, int64_t id, size_t *n)
{
	struct rank_row *v = NULL;

	assert_int_equal(store_job_ranks(st, id, &v, n), STORE_OK);
	return v;
}

static void
ranks_of_one_key_make_one_job(void **state)
{
	struct store_fixture *f = *state;
	struct job_spec spec = {.workload = "dist", .params_json = "{}", .hw_class = "test", .objective = OBJECTIVE_THROUGHPUT,
				.source = "registered", .external_id = "run:a", .started = T0};
	struct job_rank_spec rk = {.rank = 1, .local_rank = -1, .world_size = 4, .nodes = 2, .node = "n1"};
	struct rank_row *v;
	int64_t a, b, other;
	bool adopted = true;
	json_t *job;
	size_t n;

	spec.rank = &(struct job_rank_spec){.rank = 0, .local_rank = 0, .world_size = 4, .nodes = 2, .node = "n1"};
	spec.pid = 4242;
	assert_int_equal(store_job_join(f->st, &spec, &a, &adopted), STORE_OK);
	assert_false(adopted);
	spec.rank = &rk;
	spec.pid = 0;
	assert_int_equal(store_job_join(f->st, &spec, &b, &adopted), STORE_OK);
	assert_true(adopted);
	assert_true(a == b);
	other = join(f->st, "run:b", 0, 0, 2, "n1", 0);
	assert_true(other != a);

	v = ranks_of(f->st, a, &n);
	assert_int_equal(n, 2);
	assert_int_equal(v[0].rank, 0);
	assert_int_equal(v[0].local_rank, 0);
	assert_int_equal(v[0].pid, 4242);
	assert_string_equal(v[0].node, "n1");
	assert_true(v[0].running);
	assert_int_equal(v[1].rank, 1);
	assert_int_equal(v[1].local_rank, -1);
	assert_int_equal(v[1].pid, 0);
	free(v);

	/* The job's view: the world it spans, and the two ranks this node does not see. */
	assert_int_equal(store_job_get(f->st, a, &job), STORE_OK);
	assert_int_equal(json_integer_value(json_object_get(job, "world_size")), 4);
	assert_int_equal(json_integer_value(json_object_get(job, "nodes")), 2);
	assert_int_equal(json_array_size(json_object_get(job, "ranks")), 2);
	assert_int_equal(json_integer_value(json_object_get(job, "ranks_elsewhere")), 2);
	assert_true(json_is_null(json_object_get(json_array_get(json_object_get(job, "ranks"), 1), "local_rank")));
	json_decref(job);
}

static void
first_batch_is_warm_up_and_means_are_per_step(void **state)
{
	struct store_fixture *f = *state;
	int64_t id = join(f->st, "run:w", 0, 0, 2, "n1", 0);
	struct rank_row *v;
	json_t *o;
	size_t n;

	/* The warm-up: its steps are left out, its throughput and CPU reading kept. */
	report(f->st, id, 0, 3, 30, 3, 1.5, 100, 10, 1, 100);
	v = ranks_of(f->st, id, &n);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].steps, 0);
	assert_true(v[0].step_s == 0 && v[0].comm_s == 0 && v[0].data_s == 0);
	assert_true(v[0].samples_per_s == 100);
	assert_true(isnan(v[0].cpu_cores) && isnan(v[0].wait_cores));   /* one reading: no mean yet */
	o = store_rank_row_json(&v[0]);
	assert_true(json_is_null(json_object_get(o, "step_time_s")));
	assert_true(json_is_null(json_object_get(o, "cpu_cores")));
	json_decref(o);
	free(v);

	report(f->st, id, 0, 10, 20, 5, 2, 120, 30, 2, 110);
	report(f->st, id, 0, 10, 20, 5, 2, NAN, 0, 0, 0);   /* no throughput, no reading: both kept */
	v = ranks_of(f->st, id, &n);
	assert_int_equal(v[0].steps, 20);
	assert_true(v[0].step_s == 40 && v[0].comm_s == 10 && v[0].data_s == 4);
	assert_true(v[0].samples_per_s == 120);
	assert_true(fabs(v[0].cpu_cores - 2.0) < 1e-12);    /* 20 CPU seconds over 10 s */
	assert_true(fabs(v[0].wait_cores - 0.1) < 1e-12);
	o = store_rank_row_json(&v[0]);
	assert_true(json_real_value(json_object_get(o, "step_time_s")) == 2.0);
	assert_true(json_real_value(json_object_get(o, "comm_wait_s")) == 0.5);
	assert_true(json_real_value(json_object_get(o, "comm_share")) == 0.25);
	assert_true(json_real_value(json_object_get(o, "data_time_s")) == 0.2);
	assert_string_equal(json_string_value(json_object_get(o, "state")), "running");
	json_decref(o);
	free(v);

	/* A restarted process of the same rank starts its figures afresh. */
	join(f->st, "run:w", 0, 0, 2, "n1", 999);
	v = ranks_of(f->st, id, &n);
	assert_int_equal(n, 1);
	assert_int_equal(v[0].steps, 0);
	assert_true(v[0].step_s == 0);
	assert_true(isnan(v[0].samples_per_s) && isnan(v[0].cpu_cores));
	assert_int_equal(v[0].pid, 999);
	free(v);
}

static void
last_rank_ends_job_with_first_failure(void **state)
{
	struct store_fixture *f = *state;
	int64_t id = join(f->st, "run:e", 0, 0, 3, "n1", 0);
	bool ended = true;
	json_t *job;

	join(f->st, "run:e", 1, 1, 3, "n1", 0);
	join(f->st, "run:e", 2, 2, 3, "n1", 0);
	assert_int_equal(store_rank_end(f->st, id, 2, T0 + 50, true, 0, &ended), STORE_OK);
	assert_false(ended);
	assert_int_equal(store_rank_end(f->st, id, 1, T0 + 51, true, 7, &ended), STORE_OK);
	assert_false(ended);
	assert_int_equal(store_job_get(f->st, id, &job), STORE_OK);
	assert_string_equal(json_string_value(json_object_get(job, "state")), "running");
	json_decref(job);
	assert_int_equal(store_rank_end(f->st, id, 5, T0 + 52, true, 0, &ended), STORE_ENOTFOUND);
	assert_false(ended);
	assert_int_equal(store_rank_end(f->st, id, 0, T0 + 53, true, 0, &ended), STORE_OK);
	assert_true(ended);
	assert_int_equal(store_job_get(f->st, id, &job), STORE_OK);
	assert_string_equal(json_string_value(json_object_get(job, "state")), "ended");
	assert_int_equal(json_integer_value(json_object_get(job, "exit_status")), 7);
	assert_true(json_real_value(json_object_get(job, "ended")) == T0 + 53);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(job, "ranks"), 1),
							      "state")), "ended");
	json_decref(job);
}

static void
running_ranks_are_those_of_running_jobs(void **state)
{
	struct store_fixture *f = *state;
	int64_t a = join(f->st, "run:p", 0, 0, 2, "n1", 100);
	int64_t b = join(f->st, "run:q", 0, 0, 2, "n1", 0);   /* no pid: not discovery's */
	struct store_rank_pid *v;
	bool ended;
	size_t n;

	join(f->st, "run:p", 1, 1, 2, "n1", 101);
	assert_int_equal(store_ranks_running(f->st, &v, &n), STORE_OK);
	assert_int_equal(n, 2);
	assert_true(v[0].job_id == a && v[0].pid == 100 && v[0].joined == T0);
	assert_true(v[1].job_id == a && v[1].pid == 101 && v[1].joined == T0 + 1);
	free(v);
	assert_int_equal(store_rank_end(f->st, a, 1, T0 + 9, false, 0, &ended), STORE_OK);
	assert_int_equal(store_ranks_running(f->st, &v, &n), STORE_OK);
	assert_int_equal(n, 1);
	assert_true(v[0].pid == 100);
	free(v);
	/* The job ended some other way (its end route): its running rank's process is no longer its. */
	assert_int_equal(store_job_end(f->st, a, T0 + 10, false, 0), STORE_OK);
	assert_int_equal(store_ranks_running(f->st, &v, &n), STORE_OK);
	assert_int_equal(n, 0);
	free(v);
	(void)b;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(ranks_of_one_key_make_one_job, store_fixture_setup, store_fixture_teardown),
		cmocka_unit_test_setup_teardown(first_batch_is_warm_up_and_means_are_per_step, store_fixture_setup, store_fixture_teardown),
		cmocka_unit_test_setup_teardown(last_rank_ends_job_with_first_failure, store_fixture_setup, store_fixture_teardown),
		cmocka_unit_test_setup_teardown(running_ranks_are_those_of_running_jobs, store_fixture_setup, store_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
