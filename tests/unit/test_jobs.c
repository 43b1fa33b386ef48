/*
 * Tests of daemon/jobs.c, the owner of a job's lifecycle, on a real store in
 * a temporary directory and a hand-written /proc tree made there (status
 * files only, which is all jobs.c reads): who may claim which process, who
 * owns the job, adoption by external id, ends, and exactly-once ingest.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <sqlite3.h>

#include "jobs.h"
#include "store.h"
#include "store_fixture.h"

#define ALICE 1000
#define BOB 2000

struct fx {
	char dir[64], proc[96], db[96];
	struct store *store;
	struct jobs *jobs;
};

static const struct jobs_caller root = {.has_uid = true, .uid = 0};
static const struct jobs_caller alice = {.has_uid = true, .uid = ALICE};
static const struct jobs_caller bob = {.has_uid = true, .uid = BOB};
static const struct jobs_caller nobody_known = {.has_uid = false};
static const struct jobs_caller token = {.has_uid = false, .token = true};

/* PROC/pid/status with the given state letter and real, effective, saved uids. */
static void add_proc(struct fx *f, int pid, char state, unsigned r, unsigned e, unsigned s)
{
	char path[160];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%d", f->proc, pid);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/%d/status", f->proc, pid);
	assert_non_null(fp = fopen(path, "w"));
	fprintf(fp, "Name:\tjob\nUmask:\t0022\nState:\t%c (x)\nTgid:\t%d\nPid:\t%d\nPPid:\t1\n"
		    "Uid:\t%u\t%u\t%u\t%u\nGid:\t0\t0\t0\t0\n",
		state, pid, pid, r, e, s, r);
	fclose(fp);
}

static int setup(void **state)
{
	static struct fx f;
	static const struct store_options opts = {.queue_limit = 1024, .readers = 2};

	memset(&f, 0, sizeof(f));
	snprintf(f.dir, sizeof(f.dir), "/tmp/dlprof-test-jobs-XXXXXX");
	if (!mkdtemp(f.dir))
		return -1;
	snprintf(f.proc, sizeof(f.proc), "%s/proc", f.dir);
	snprintf(f.db, sizeof(f.db), "%s/db", f.dir);
	if (mkdir(f.proc, 0755) < 0)
		return -1;
	add_proc(&f, 1, 'S', 0, 0, 0);              /* root's cron */
	add_proc(&f, 100, 'S', ALICE, ALICE, ALICE);
	add_proc(&f, 101, 'R', BOB, BOB, BOB);
	add_proc(&f, 102, 'S', ALICE, 0, 0);         /* alice ran a setuid-root program */
	add_proc(&f, 103, 'Z', ALICE, ALICE, ALICE); /* exited, not reaped */
	f.store = store_open(f.db, &opts);
	f.jobs = f.store ? jobs_new(f.store, NULL, "test", f.proc) : NULL;
	if (!f.jobs)
		return -1;
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	jobs_free(f->jobs);
	store_close(f->store);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* jobs_register with a small spec; returns its result, *id set on success. */
static int reg(struct fx *f, const struct jobs_caller *who, int64_t pid, const char *external, int64_t *id,
	       bool *adopted)
{
	struct job_spec spec = {.workload = "w", .params_json = "{}", .pid = pid, .external_id = external,
				.objective = OBJECTIVE_THROUGHPUT, .started = 1700000000.0};
	char why[256] = "";
	json_t *config = NULL;
	bool ad = false;
	int64_t got = 0;
	int r;

	r = jobs_register(f->jobs, who, &spec, NULL, &got, &ad, &config, why, sizeof(why));
	if (r == STORE_OK)
		assert_true(json_is_object(config));
	if (r <= JOBS_EFORBIDDEN)
		assert_true(why[0] != '\0');   /* every refusal says why */
	json_decref(config);
	if (id)
		*id = got;
	if (adopted)
		*adopted = ad;
	return r;
}

static struct job_brief brief(struct fx *f, int64_t id)
{
	struct job_brief b;

	assert_int_equal(store_job_brief(f->store, id, &b), STORE_OK);
	return b;
}

static void a_pid_must_name_a_live_process(void **state)
{
	struct fx *f = *state;

	assert_int_equal(reg(f, &root, 999, NULL, NULL, NULL), JOBS_ENOPROC);
	assert_int_equal(reg(f, &alice, 999, NULL, NULL, NULL), JOBS_ENOPROC);
	assert_int_equal(reg(f, &alice, 103, NULL, NULL, NULL), JOBS_ENOPROC);
}

static void a_user_claims_only_its_own_processes(void **state)
{
	struct fx *f = *state;
	int64_t id;

	assert_int_equal(reg(f, &alice, 1, NULL, NULL, NULL), JOBS_EFORBIDDEN);
	assert_int_equal(reg(f, &alice, 101, NULL, NULL, NULL), JOBS_EFORBIDDEN);
	/* Real uid alone is not enough: the daemon would sample a root process. */
	assert_int_equal(reg(f, &alice, 102, NULL, NULL, NULL), JOBS_EFORBIDDEN);
	assert_int_equal(reg(f, &alice, 100, NULL, &id, NULL), STORE_OK);
	assert_true(brief(f, id).has_uid && brief(f, id).uid == ALICE);
}

static void root_registers_the_users_job(void **state)
{
	struct fx *f = *state;
	int64_t id;

	assert_int_equal(reg(f, &root, 100, NULL, &id, NULL), STORE_OK);
	assert_true(brief(f, id).has_uid && brief(f, id).uid == ALICE);
	assert_int_equal(reg(f, &root, 1, NULL, &id, NULL), STORE_OK);
	assert_true(brief(f, id).uid == 0);
	assert_int_equal(reg(f, &token, 101, NULL, &id, NULL), STORE_OK);
	assert_true(brief(f, id).uid == BOB);
}

static void an_unknown_uid_claims_no_process(void **state)
{
	struct fx *f = *state;
	int64_t id;

	assert_int_equal(reg(f, &nobody_known, 100, NULL, NULL, NULL), JOBS_EFORBIDDEN);
	assert_int_equal(reg(f, &nobody_known, 0, NULL, &id, NULL), STORE_OK);
	assert_false(brief(f, id).has_uid);
}

static void adoption_keeps_the_owner(void **state)
{
	struct fx *f = *state;
	char why[256];
	int64_t first, again;
	bool adopted;

	assert_int_equal(reg(f, &alice, 0, "slurm:777", &first, &adopted), STORE_OK);
	assert_false(adopted);
	assert_int_equal(reg(f, &bob, 0, "slurm:777", NULL, NULL), JOBS_EFORBIDDEN);
	assert_int_equal(reg(f, &bob, 101, "slurm:777", NULL, NULL), JOBS_EFORBIDDEN);
	assert_true(brief(f, first).uid == ALICE);
	assert_int_equal(reg(f, &root, 0, "slurm:777", &again, &adopted), STORE_OK);
	assert_true(adopted && again == first && brief(f, first).uid == ALICE);
	assert_int_equal(reg(f, &alice, 100, "slurm:777", &again, &adopted), STORE_OK);
	assert_true(adopted && again == first && brief(f, first).uid == ALICE);
	assert_int_equal(jobs_end(f->jobs, &bob, first, -1, 1700000001.0, false, 0, why, sizeof(why)), JOBS_EFORBIDDEN);
	assert_non_null(strstr(why, "uid 1000"));
	assert_int_equal(jobs_end(f->jobs, &alice, first, -1, 1700000001.0, true, 0, why, sizeof(why)), STORE_OK);
	assert_false(brief(f, first).running);
}

static void a_found_slurm_job_belongs_to_its_process(void **state)
{
	struct fx *f = *state;
	struct job_spec spec = {.workload = "found", .params_json = "{}", .external_id = "slurm:5",
				.objective = OBJECTIVE_THROUGHPUT, .started = 1700000000.0};
	int64_t id;

	assert_int_equal(jobs_register_found(f->jobs, &spec, 101, &id), STORE_OK);
	assert_true(brief(f, id).has_uid && brief(f, id).uid == BOB);
	assert_int_equal(reg(f, &alice, 0, "slurm:5", NULL, NULL), JOBS_EFORBIDDEN);
	spec.external_id = "slurm:6";
	assert_int_equal(jobs_register_found(f->jobs, &spec, 999, &id), STORE_OK);
	assert_false(brief(f, id).has_uid);
}

static int ingest(struct fx *f, int64_t id, const char *stream, int64_t seq, bool *duplicate)
{
	struct sample s[2] = {{id, 1700000000.5, "samples_per_s", 10.0, NULL},
			      {id, 1700000000.5, "step_time_s", 0.1, NULL}};
	json_t *config = NULL;
	int r;

	r = jobs_ingest(f->jobs, &(struct jobs_batch){id, s, 2, NULL, stream, seq, false, 0}, duplicate, &config);
	if (r == STORE_OK)
		assert_true(json_is_object(config));
	json_decref(config);
	return r;
}

static void a_numbered_batch_is_stored_once(void **state)
{
	struct fx *f = *state;
	char why[256];
	bool dup;
	int64_t id;

	assert_int_equal(reg(f, &alice, 100, NULL, &id, NULL), STORE_OK);
	assert_int_equal(ingest(f, id, "a", 1, &dup), STORE_OK);
	assert_false(dup);
	assert_int_equal(ingest(f, id, "a", 1, &dup), STORE_OK);
	assert_true(dup);
	assert_int_equal(store_fixture_points(f->store, id, 1700000000, 1700000001), 2);
	assert_int_equal(ingest(f, id, "a", 3, &dup), STORE_OK);
	assert_false(dup);
	/* Below the mark: a resend of a batch stored before a later one. */
	assert_int_equal(ingest(f, id, "a", 2, &dup), STORE_OK);
	assert_true(dup);
	/* Another sender of the same job counts on its own. */
	assert_int_equal(ingest(f, id, "b", 1, &dup), STORE_OK);
	assert_false(dup);
	assert_int_equal(store_fixture_points(f->store, id, 1700000000, 1700000001), 6);
	/* Unnumbered batches are stored each time, as before. */
	assert_int_equal(ingest(f, id, "", 0, &dup), STORE_OK);
	assert_int_equal(ingest(f, id, "", 0, &dup), STORE_OK);
	assert_false(dup);
	assert_int_equal(store_fixture_points(f->store, id, 1700000000, 1700000001), 10);
	assert_int_equal(jobs_may_ingest(f->jobs, &bob, id, why, sizeof(why)), JOBS_EFORBIDDEN);
	assert_int_equal(jobs_may_ingest(f->jobs, &alice, id, why, sizeof(why)), STORE_OK);
	assert_int_equal(jobs_end(f->jobs, &root, id, -1, 1700000002.0, false, 0, why, sizeof(why)), STORE_OK);
	assert_int_equal(jobs_may_ingest(f->jobs, &alice, id, why, sizeof(why)), JOBS_EENDED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(a_pid_must_name_a_live_process, setup, teardown),
		cmocka_unit_test_setup_teardown(a_user_claims_only_its_own_processes, setup, teardown),
		cmocka_unit_test_setup_teardown(root_registers_the_users_job, setup, teardown),
		cmocka_unit_test_setup_teardown(an_unknown_uid_claims_no_process, setup, teardown),
		cmocka_unit_test_setup_teardown(adoption_keeps_the_owner, setup, teardown),
		cmocka_unit_test_setup_teardown(a_found_slurm_job_belongs_to_its_process, setup, teardown),
		cmocka_unit_test_setup_teardown(a_numbered_batch_is_stored_once, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
