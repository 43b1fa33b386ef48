/*
 * Tests of job discovery on two hand-written /proc trees
 * (tests/fixtures/proc-jobs-t0 and -t1, stat lines in the kernel's format):
 * a registered job's process tree with a zombie, a registered pid since
 * reused by a later process, a Slurm job found by its cgroup v2 path and one
 * found by SLURM_JOB_ID in an environment (and slurmd's Epilog, which
 * carries the same variable, not taken for one); then the tree loses its root (the
 * orphan stays in the job) and the Slurm environment job ends.  Runs against
 * a real store in a temporary directory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "collectors_fixture.h"
#include "discovery.h"
#include "jobs.h"
#include "store.h"
#include "store_series.h"

#define BTIME 1700000000.0

struct fx {
	char dir[256], link[300], db[300];
	struct store *store;
	struct jobs *jobs;
	struct discovery *d;
};

static void
point_at(struct fx *f, const char *rel)
{
	char target[1024];

	unlink(f->link);
	assert_int_equal(symlink(fixture_path(target, sizeof(target), rel), f->link), 0);
}

static int
setup(void **state)
{
	static struct fx f;
	static const struct store_options opts = {.queue_limit = 1024, .readers = 2};

	memset(&f, 0, sizeof(f));
	snprintf(f.dir, sizeof(f.dir), "/tmp/dlprof-test-disc-XXXXXX");
	if (mkdtemp(f.dir) == NULL)
		return -1;
	snprintf(f.link, sizeof(f.link), "%s/proc", f.dir);
	snprintf(f.db, sizeof(f.db), "%s/db", f.dir);
	point_at(&f, "proc-jobs-t0");
	f.store = store_open(f.db, &opts);
	f.jobs = f.store ? jobs_new(f.store, NULL, "test", f.link) : NULL;
	f.d = f.jobs ? discovery_new(f.jobs, f.link) : NULL;
	if (f.d == NULL)
		return -1;
	*state = &f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;
	char cmd[600];

	discovery_free(f->d);
	jobs_free(f->jobs);
	store_close(f->store);
	unlink(f->link);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	return system(cmd) == 0 ? 0 : -1;
}

static int64_t
register_pid(struct fx *f, const char *workload, int64_t pid, double started)
{
	struct job_spec spec = {.workload = workload, .params_json = "{}", .hw_class = "test", .pid = pid,
				.objective = OBJECTIVE_THROUGHPUT, .source = "registered", .started = started};
	int64_t id;

	assert_int_equal(store_job_register(f->store, &spec, &id), STORE_OK);
	return id;
}

static const struct discovery_job *
job_by_id(const struct discovery_job *jobs, size_t n, int64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (jobs[i].id == id)
			return &jobs[i];
	return NULL;
}

static bool
running(struct fx *f, int64_t id)
{
	struct job_brief b;

	assert_int_equal(store_job_brief(f->store, id, &b), STORE_OK);
	return b.running;
}

static void
finds_trees_and_slurm_jobs(void **state)
{
	struct fx *f = *state;
	const struct discovery_job *jobs, *j;
	const int64_t *gone;
	size_t njobs, ngone;
	int64_t trainer, reused, slurm4242, slurm77;

	trainer = register_pid(f, "trainer", 300, BTIME + 100);
	reused = register_pid(f, "old", 500, BTIME + 100);
	assert_int_equal(discovery_update(f->d, BTIME + 1000, BTIME + 1000, &jobs, &njobs, &gone, &ngone), 0);
	assert_int_equal(njobs, 3);
	assert_int_equal(ngone, 0);

	/* The tree under 300, without its zombie child 303. */
	j = job_by_id(jobs, njobs, trainer);
	assert_non_null(j);
	assert_int_equal(j->npids, 3);
	assert_int_equal(j->pids[0], 300);
	assert_int_equal(j->pids[1], 301);
	assert_int_equal(j->pids[2], 302);
	/* Pid 500 now names a process that started after the job: the job is over. */
	assert_null(job_by_id(jobs, njobs, reused));
	assert_false(running(f, reused));

	/* Slurm jobs became jobs of their own, named by SLURM_JOB_NAME or the command. */
	assert_int_equal(store_job_find_external(f->store, "slurm:4242", &slurm4242), STORE_OK);
	assert_int_equal(store_job_find_external(f->store, "slurm:77", &slurm77), STORE_OK);
	j = job_by_id(jobs, njobs, slurm4242);
	assert_non_null(j);
	assert_int_equal(j->npids, 2);
	assert_string_equal(j->workload, "python3");
	assert_string_equal(j->cgroup, "/system.slice/slurmstepd.scope/job_4242");
	assert_int_equal(j->cgroup_version, 2);
	j = job_by_id(jobs, njobs, slurm77);
	assert_non_null(j);
	assert_int_equal(j->npids, 1);
	assert_int_equal(j->pids[0], 400);
	assert_string_equal(j->workload, "resnet-train");
	/* Pid 410 is slurmd's Epilog for job 88, which has ended: not a job's process. */
	assert_int_equal(store_job_find_external(f->store, "slurm:88", &slurm77), STORE_ENOTFOUND);
}

static void
follows_orphans_and_ends_empty_jobs(void **state)
{
	struct fx *f = *state;
	const struct discovery_job *jobs, *j;
	const int64_t *gone;
	size_t njobs, ngone;
	struct store_running_job *run;
	size_t nrun;
	int64_t trainer = 1, slurm77;

	assert_int_equal(store_job_find_external(f->store, "slurm:77", &slurm77), STORE_OK);
	point_at(f, "proc-jobs-t1");
	/* Not due by time: the exit of 300 and 301 is what makes this update scan. */
	discovery_set_rescan(f->d, 3600);
	assert_int_equal(discovery_update(f->d, BTIME + 1001, BTIME + 1001, &jobs, &njobs, &gone, &ngone), 0);
	/* 300 and 301 exited; 302, reparented to init, is still the trainer's. */
	j = job_by_id(jobs, njobs, trainer);
	assert_non_null(j);
	assert_int_equal(j->npids, 1);
	assert_int_equal(j->pids[0], 302);
	assert_null(job_by_id(jobs, njobs, slurm77));
	assert_false(running(f, slurm77));
	assert_int_equal(ngone, 1);
	assert_int_equal(gone[0], slurm77);
	/* No Slurm job registered twice. */
	assert_int_equal(store_jobs_running(f->store, &run, &nrun), STORE_OK);
	assert_int_equal(nrun, 2);
	free(run);
}

/* Between scans the last table is reused: no exit and no new job, no scan; a due one sees the change. */
static void
scans_only_when_due(void **state)
{
	struct fx *f = *state;
	const struct discovery_job *jobs, *j;
	const int64_t *gone;
	size_t njobs, ngone;
	int64_t trainer = 1;

	/* Back to the first tree: 300 and 301 are there again, but no member of any job left. */
	point_at(f, "proc-jobs-t0");
	discovery_set_rescan(f->d, 3600);
	assert_int_equal(discovery_update(f->d, BTIME + 1002, BTIME + 1002, &jobs, &njobs, &gone, &ngone), 0);
	j = job_by_id(jobs, njobs, trainer);
	assert_non_null(j);
	assert_int_equal(j->npids, 1);
	/* A scan every update again: the registered root 300 and its child are found. */
	discovery_set_rescan(f->d, 0);
	assert_int_equal(discovery_update(f->d, BTIME + 1003, BTIME + 1003, &jobs, &njobs, &gone, &ngone), 0);
	j = job_by_id(jobs, njobs, trainer);
	assert_non_null(j);
	assert_int_equal(j->npids, 3);
}

/*
 * A job registered after the stamp the tick's values get (a late tick, or
 * the grid's stamp rounded down) joins from the next tick: sampled now, its
 * first points would precede its start and be left out of its series (the
 * first sample, with its memory limit, was lost that way).  A start beyond
 * the clock by more than the slack is the clock set back: not waited for.
 */
static void
a_job_registered_after_the_stamp_joins_at_the_next_tick(void **state)
{
	struct fx *f = *state;
	const struct discovery_job *jobs;
	const int64_t *gone;
	size_t njobs, ngone;
	int64_t late, ahead;

	point_at(f, "proc-jobs-t0");
	late = register_pid(f, "late", 500, BTIME + 1004.1);
	assert_int_equal(discovery_update(f->d, BTIME + 1004.2, BTIME + 1004.0, &jobs, &njobs, &gone, &ngone), 0);
	assert_null(job_by_id(jobs, njobs, late));
	assert_int_equal(ngone, 0);
	assert_int_equal(discovery_update(f->d, BTIME + 1004.45, BTIME + 1004.25, &jobs, &njobs, &gone, &ngone), 0);
	assert_non_null(job_by_id(jobs, njobs, late));
	assert_true(running(f, late));

	ahead = register_pid(f, "clock-set-back", 400, BTIME + 5000);
	assert_int_equal(discovery_update(f->d, BTIME + 1004.7, BTIME + 1004.5, &jobs, &njobs, &gone, &ngone), 0);
	assert_non_null(job_by_id(jobs, njobs, ahead));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(finds_trees_and_slurm_jobs),
		cmocka_unit_test(follows_orphans_and_ends_empty_jobs),
		cmocka_unit_test(scans_only_when_due),
		cmocka_unit_test(a_job_registered_after_the_stamp_joins_at_the_next_tick),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
