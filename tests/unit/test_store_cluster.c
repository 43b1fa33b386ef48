/*
 * Tests of the cluster store's side in the node's own database
 * (daemon/store_cluster.c, daemon/store_cluster_ranks.c) on a store seeded
 * with jobs, trials and ranks: trials enter the outbox only while it is on,
 * a peek gives the oldest with every column the shared store takes and the
 * last id it covers, done trims exactly that much, the outbox is bounded
 * with the drops counted; ranks of jobs with an external id enter theirs,
 * a rank reported after a peek stays for the next push, and the
 * distributed jobs with ranks elsewhere are listed newest first.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "store_cluster.h"
#include "store_fixture.h"
#include "store_tuner.h"

#define T0 1700000000.0

/* A completed trial of job on a config with intra_threads = threads, its mean the threads x 100. */
static void
trial(struct store *st, int64_t job, const char *phase, int threads)
{
	char config[64];
	struct store_trial tr = {.job_id = job, .phase = phase, .config_json = config, .objective = "throughput",
				 .n = 8, .mean = threads * 100.0, .m2 = 4, .t_start = T0 + threads,
				 .t_end = T0 + threads + 1};

	snprintf(config, sizeof(config), "{\"intra_threads\":%d}", threads);
	assert_int_equal(store_trial_add(st, &tr), STORE_OK);
}

static long
waiting(struct store *st, long *dropped)
{
	long w = -1, d = -1;

	assert_int_equal(store_cluster_outbox_stats(st, &w, &d), STORE_OK);
	if (dropped != NULL)
		*dropped = d;
	return w;
}

static json_t *
peek(struct store *st, int max, int64_t *last)
{
	json_t *rows = NULL;

	assert_int_equal(store_cluster_outbox_peek(st, max, &rows, last), STORE_OK);
	return rows;
}

static json_int_t
id_of(const json_t *row)
{
	return json_integer_value(json_object_get(row, "trial_id"));
}

static void
trials_enter_only_while_on(void **state)
{
	struct store_fixture *f = *state;
	int64_t job = store_fixture_job(f->st, "resnet", NULL, NULL, 0, T0), last = -1;
	char id[STORE_CLUSTER_ID_MAX], again[STORE_CLUSTER_ID_MAX];
	json_t *rows, *r;
	long dropped;

	assert_true(job > 0);
	assert_int_equal(store_cluster_enable(f->st, false, 100, id, sizeof(id)), STORE_OK);
	trial(f->st, job, "", 1);
	assert_int_equal(waiting(f->st, &dropped), 0);
	assert_int_equal(dropped, 0);

	/* The database's name in the shared store: random once, the same at every start. */
	assert_int_equal(store_cluster_enable(f->st, true, 100, id, sizeof(id)), STORE_OK);
	assert_int_equal(strlen(id), 16);
	assert_int_equal(strspn(id, "0123456789abcdef"), 16);
	assert_int_equal(store_cluster_enable(f->st, true, 100, again, sizeof(again)), STORE_OK);
	assert_string_equal(id, again);

	assert_int_equal(store_tuner_declared_save(f->st, job, "throughput", "{\"intra_threads\":{\"min\":1,\"max\":8}}"),
			 STORE_OK);
	trial(f->st, job, "", 2);
	trial(f->st, job, "forward", 4);
	trial(f->st, job, "", 8);
	assert_int_equal(waiting(f->st, NULL), 3);

	/* Oldest first, every column the shared store's dlprofd_push() takes; last covers the window. */
	rows = peek(f->st, 2, &last);
	assert_int_equal(json_array_size(rows), 2);
	r = json_array_get(rows, 0);
	assert_true(id_of(r) < id_of(json_array_get(rows, 1)));
	assert_true(last == id_of(json_array_get(rows, 1)));
	assert_string_equal(json_string_value(json_object_get(r, "hw_class")), "test");
	assert_string_equal(json_string_value(json_object_get(r, "workload")), "resnet");
	assert_string_equal(json_string_value(json_object_get(r, "params")), "{}");
	assert_string_equal(json_string_value(json_object_get(r, "objective")), "throughput");
	assert_string_equal(json_string_value(json_object_get(r, "phase")), "");
	assert_string_equal(json_string_value(json_object_get(r, "config")), "{\"intra_threads\":2}");
	assert_int_equal(json_integer_value(json_object_get(r, "job_id")), job);
	assert_int_equal(json_integer_value(json_object_get(r, "n")), 8);
	assert_true(json_real_value(json_object_get(r, "mean")) == 200.0);
	assert_true(json_real_value(json_object_get(r, "m2")) == 4.0);
	assert_true(json_real_value(json_object_get(r, "t_start")) == T0 + 2);
	assert_true(json_real_value(json_object_get(r, "t_end")) == T0 + 3);
	assert_string_equal(json_string_value(json_object_get(r, "declared")), "{\"intra_threads\":{\"min\":1,\"max\":8}}");
	assert_string_equal(json_string_value(json_object_get(json_array_get(rows, 1), "phase")), "forward");
	json_decref(rows);

	/* done trims what the push covered, no more. */
	assert_int_equal(store_cluster_outbox_done(f->st, last), STORE_OK);
	assert_int_equal(waiting(f->st, NULL), 1);
	rows = peek(f->st, 10, &last);
	assert_int_equal(json_array_size(rows), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(rows, 0), "config")), "{\"intra_threads\":8}");
	json_decref(rows);

	/* Off again: new trials stay out, the waiting one stays for when it is on. */
	assert_int_equal(store_cluster_enable(f->st, false, 100, NULL, 0), STORE_OK);
	trial(f->st, job, "", 16);
	assert_int_equal(waiting(f->st, NULL), 1);
	assert_int_equal(store_cluster_outbox_done(f->st, last), STORE_OK);
	rows = peek(f->st, 10, &last);
	assert_int_equal(json_array_size(rows), 0);
	assert_true(last == 0);
	json_decref(rows);
}

static void
outbox_is_bounded(void **state)
{
	struct store_fixture *f = *state;
	int64_t job = store_fixture_job(f->st, "bounded", NULL, NULL, 0, T0), last;
	json_t *rows;
	long dropped;

	assert_int_equal(store_cluster_enable(f->st, true, 3, NULL, 0), STORE_OK);
	for (int i = 1; i <= 5; i++)
		trial(f->st, job, "", i);
	assert_int_equal(waiting(f->st, &dropped), 3);
	assert_int_equal(dropped, 2);
	rows = peek(f->st, 10, &last);
	assert_int_equal(json_array_size(rows), 3);
	/* The oldest went: the newest three wait. */
	assert_string_equal(json_string_value(json_object_get(json_array_get(rows, 0), "config")), "{\"intra_threads\":3}");
	assert_string_equal(json_string_value(json_object_get(json_array_get(rows, 2), "config")), "{\"intra_threads\":5}");
	json_decref(rows);
}

/* Rank r of world joins the job keyed key; the job's id. */
static int64_t
rank(struct store *st, const char *key, int r, int world, int64_t pid)
{
	struct job_rank_spec rk = {.rank = r, .local_rank = r, .world_size = world, .nodes = 2, .node = "n1"};
	int64_t id = store_fixture_job(st, "dist", key, &rk, pid, T0 + r);

	assert_true(id > 0);
	return id;
}

static void
rank_report(struct store *st, int64_t job, int r, int steps, double sps)
{
	struct rank_report rr = {.job_id = job, .rank = r, .t = T0 + 50, .steps = steps, .step_s = steps * 0.5,
				 .comm_s = steps * 0.1, .data_s = 0, .samples_per_s = sps};

	assert_int_equal(store_rank_report(st, &rr), STORE_OK);
}

static json_t *
ranks_peek(struct store *st, int64_t *last)
{
	json_t *rows = NULL;

	assert_int_equal(store_cluster_ranks_peek(st, 10, &rows, last), STORE_OK);
	return rows;
}

static void
ranks_wait_for_their_newest_figures(void **state)
{
	struct store_fixture *f = *state;
	int64_t job, last = -1, later;
	json_t *rows, *r;

	assert_int_equal(store_cluster_enable(f->st, true, 100, NULL, 0), STORE_OK);
	assert_true(store_fixture_job(f->st, "alone", NULL, NULL, 0, T0) > 0);   /* no external id: not shared */
	job = rank(f->st, "slurm:9", 0, 4, 321);
	rank(f->st, "slurm:9", 1, 4, 0);
	rank_report(f->st, job, 0, 4, 10);
	rank_report(f->st, job, 0, 6, 12);

	rows = ranks_peek(f->st, &last);
	assert_int_equal(json_array_size(rows), 2);       /* one row per rank, however often it changed */
	/* Oldest change first: rank 1 joined before rank 0's reports. */
	r = json_array_get(rows, 1);
	assert_string_equal(json_string_value(json_object_get(r, "job_key")), "slurm:9");
	assert_int_equal(json_integer_value(json_object_get(r, "rank")), 0);
	assert_string_equal(json_string_value(json_object_get(r, "node")), "n1");
	assert_int_equal(json_integer_value(json_object_get(r, "world_size")), 4);
	assert_int_equal(json_integer_value(json_object_get(r, "local_rank")), 0);
	assert_int_equal(json_integer_value(json_object_get(r, "pid")), 321);
	assert_string_equal(json_string_value(json_object_get(r, "state")), "running");
	assert_int_equal(json_integer_value(json_object_get(r, "steps")), 6);   /* the first batch is the warm-up */
	assert_true(json_real_value(json_object_get(r, "step_s")) == 3.0);
	assert_true(json_real_value(json_object_get(r, "samples_per_s")) == 12.0);
	assert_true(json_real_value(json_object_get(r, "updated")) == T0 + 50);
	assert_true(json_is_null(json_object_get(r, "cpu_cores")));
	assert_true(json_is_null(json_object_get(json_array_get(rows, 0), "pid")));
	json_decref(rows);

	/* Rank 1 reports after the push read: its newer figures wait for the next one. */
	rank_report(f->st, job, 1, 2, 9);
	assert_int_equal(store_cluster_ranks_done(f->st, last), STORE_OK);
	rows = ranks_peek(f->st, &later);
	assert_int_equal(json_array_size(rows), 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(rows, 0), "rank")), 1);
	assert_true(json_real_value(json_object_get(json_array_get(rows, 0), "samples_per_s")) == 9.0);
	assert_true(later > last);
	json_decref(rows);
	assert_int_equal(store_cluster_ranks_done(f->st, later), STORE_OK);
	rows = ranks_peek(f->st, &later);
	assert_int_equal(json_array_size(rows), 0);
	assert_true(later == 0);
	json_decref(rows);

	/* Bounded by the same limit as the trials'. */
	assert_int_equal(store_cluster_enable(f->st, true, 2, NULL, 0), STORE_OK);
	rank(f->st, "slurm:10", 0, 3, 0);
	rank(f->st, "slurm:10", 1, 3, 0);
	rank(f->st, "slurm:10", 2, 3, 0);
	rows = ranks_peek(f->st, &later);
	assert_int_equal(json_array_size(rows), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(rows, 0), "rank")), 1);
	json_decref(rows);
}

static void
distributed_jobs_with_ranks_elsewhere(void **state)
{
	struct store_fixture *f = *state;
	json_t *rows, *r;
	int64_t ended_job;
	bool ended;

	rank(f->st, "run:a", 0, 4, 0);                    /* two of four ranks here: listed */
	rank(f->st, "run:a", 1, 4, 0);
	rank(f->st, "run:b", 0, 2, 0);                    /* whole here: not listed */
	rank(f->st, "run:b", 1, 2, 0);
	ended_job = rank(f->st, "run:c", 0, 2, 0);        /* ended, one rank elsewhere: listed */
	assert_int_equal(store_rank_end(f->st, ended_job, 0, T0 + 30, true, 0, &ended), STORE_OK);
	assert_true(ended);
	assert_true(store_fixture_job(f->st, "single", "run:d", NULL, 0, T0) > 0);   /* world 1: not distributed */

	assert_int_equal(store_cluster_rank_jobs(f->st, 10, &rows), STORE_OK);
	assert_int_equal(json_array_size(rows), 2);
	r = json_array_get(rows, 0);                       /* newest first */
	assert_string_equal(json_string_value(json_object_get(r, "job_key")), "run:c");
	assert_int_equal(json_integer_value(json_object_get(r, "job_id")), ended_job);
	assert_true(json_is_false(json_object_get(r, "running")));
	assert_true(json_real_value(json_object_get(r, "ended")) == T0 + 30);
	r = json_array_get(rows, 1);
	assert_string_equal(json_string_value(json_object_get(r, "job_key")), "run:a");
	assert_true(json_is_true(json_object_get(r, "running")));
	assert_true(json_real_value(json_object_get(r, "ended")) == 0);
	json_decref(rows);
	assert_int_equal(store_cluster_rank_jobs(f->st, 1, &rows), STORE_OK);
	assert_int_equal(json_array_size(rows), 1);
	json_decref(rows);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(trials_enter_only_while_on, store_fixture_setup, store_fixture_teardown),
		cmocka_unit_test_setup_teardown(outbox_is_bounded, store_fixture_setup, store_fixture_teardown),
		cmocka_unit_test_setup_teardown(ranks_wait_for_their_newest_figures, store_fixture_setup, store_fixture_teardown),
		cmocka_unit_test_setup_teardown(distributed_jobs_with_ranks_elsewhere, store_fixture_setup, store_fixture_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
