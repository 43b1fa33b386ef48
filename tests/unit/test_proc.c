/*
 * Tests of the proc collector on snapshots of real busy processes, copied
 * from this machine's /proc about one second apart: tests/fixtures/proc-t0
 * and proc-t1 (3 threads; a tree without schedstat, so thread CPU comes
 * from task/TID/stat) and proc-sched-t0 and proc-sched-t1 (3 threads of
 * bench's spawn_jobs, each busy 6 of every 10 ms on 2 CPUs, with
 * schedstat).  A temporary directory is the collector's proc root; copying
 * the next snapshot over its files in place moves time forward, as the
 * collector keeps them open.  Expected figures are the ones the snapshot
 * files give by hand: CPU time difference over the interval, as top
 * computes %CPU.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "collector.h"
#include "collectors_fixture.h"
#include "collector_values.h"

#define BUSY_PID 19869
#define SCHED_PID 8585

struct fx {
	char dir[256];
	char link[300];
	void *ctx;
	struct collector_out out;
};

static void
point_at(struct fx *f, const char *rel)
{
	assert_int_equal(fixture_install(rel, f->link), 0);
}

static int
setup(void **state)
{
	static struct fx f;
	char sys[1024], why[256];
	struct collector_env env;

	memset(&f, 0, sizeof(f));
	snprintf(f.dir, sizeof(f.dir), "/tmp/dlprof-test-proc-XXXXXX");
	if (mkdtemp(f.dir) == NULL)
		return -1;
	snprintf(f.link, sizeof(f.link), "%s/proc", f.dir);
	point_at(&f, "proc-t0");
	env = (struct collector_env){f.link, fixture_path(sys, sizeof(sys), "sys-slurm-v2"), NULL, 1.0};
	f.ctx = collector_proc.init(&env, why, sizeof(why));
	if (f.ctx == NULL)
		return -1;
	*state = &f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;
	char cmd[300];

	collector_proc.fini(f->ctx);
	collector_out_free(&f->out);

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	return system(cmd) == 0 ? 0 : -1;
}

static const pid_t busy_pids[] = {BUSY_PID};
static const struct collector_job busy_job = {7, busy_pids, 1, "/system.slice/slurmstepd.scope/job_4242", 2};

static void
job_rates_match_the_snapshots(void **state)
{
	struct fx *f = *state;
	char why[128] = "";

	collector_out_reset(&f->out, 1000.0, 10.0);
	assert_int_equal(collector_proc.sample_job(f->ctx, &busy_job, &f->out, why, sizeof(why)), COLLECTOR_OK);
	/* First sight: levels only, no rate from a single reading. */
	assert_true(isnan(collector_value_of(&f->out, 7, "cpu.cores")));
	assert_true(collector_value_of(&f->out, 7, "cpu.threads") == 4);
	assert_true(collector_value_of(&f->out, 7, "cpu.processes") == 1);
	assert_true(collector_value_of(&f->out, 7, "mem.rss_bytes") == 273.0 * sysconf(_SC_PAGESIZE));
	assert_true(collector_value_of(&f->out, 7, "cpu.allowed") == 2);
	assert_true(collector_value_of(&f->out, 7, "cpu.quota_cores") == 4);
	assert_true(collector_value_of(&f->out, 7, "cpu.cpuset_cpus") == 4);

	point_at(f, "proc-t1");
	collector_out_reset(&f->out, 1001.0, 11.0);
	assert_int_equal(collector_proc.sample_job(f->ctx, &busy_job, &f->out, why, sizeof(why)), COLLECTOR_OK);
	/* utime 96 -> 159, stime 0 -> 1 at 100 ticks/s over 1 s. */
	assert_float_equal(collector_value_of(&f->out, 7, "cpu.cores"), 0.64, 1e-9);
	assert_float_equal(collector_value_of(&f->out, 7, "cpu.user_cores"), 0.63, 1e-9);
	assert_float_equal(collector_value_of(&f->out, 7, "cpu.system_cores"), 0.01, 1e-9);
	assert_float_equal(collector_value_of(&f->out, 7, "cpu.seconds"), 0.64, 1e-9);
	/* Threads: 19, 17 and 18 ticks; none reached a quarter core on the loaded VM. */
	assert_float_equal(collector_value_of(&f->out, 7, "cpu.thread_max_cores"), 0.19, 1e-9);
	assert_true(collector_value_of(&f->out, 7, "cpu.busy_threads") == 0);
	assert_true(collector_value_of(&f->out, 7, "cpu.busy_thread_cores") == 0);
	/* Without schedstat there is no waiting time or slice count to give. */
	assert_true(isnan(collector_value_of(&f->out, 7, "sched.wait_cores")));
	assert_true(isnan(collector_value_of(&f->out, 7, "sched.switches_per_s")));
	assert_float_equal(collector_value_of(&f->out, 7, "mem.minor_faults_per_s"), 0, 1e-9);
}

static void
half_interval_doubles_the_rate(void **state)
{
	struct fx *f = *state;
	char why[128] = "";

	collector_proc.job_gone(f->ctx, 7);
	point_at(f, "proc-t0");
	collector_out_reset(&f->out, 2000.0, 20.0);
	collector_proc.sample_job(f->ctx, &busy_job, &f->out, why, sizeof(why));
	point_at(f, "proc-t1");
	collector_out_reset(&f->out, 2000.5, 20.5);
	collector_proc.sample_job(f->ctx, &busy_job, &f->out, why, sizeof(why));
	assert_float_equal(collector_value_of(&f->out, 7, "cpu.cores"), 1.28, 1e-9);
}

/* Writes the busy process's stat with utime and stime set, in place (the collector keeps it open). */
static void
write_busy_stat(const struct fx *f, unsigned long long utime, unsigned long long stime)
{
	char path[400];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%d/stat", f->link, BUSY_PID);
	assert_non_null(fp = fopen(path, "w"));
	fprintf(fp, "%d (busy) S 19866 19866 5967 0 -1 4194304 130 0 0 0 %llu %llu 0 0 20 0 4 0 78382 27713536 273 "
		"18446744073709551615 94091718856704 94091718857201 140721620408512 0 0 0 0 6 0 0 0 0 17 1 0 0 0 0 0 "
		"94091718868432 94091718869032 94091956342784 140721620413022 140721620413046 140721620413046 "
		"140721620414435 0\n", BUSY_PID, utime, stime);
	fclose(fp);
}

/*
 * cpu.seconds over many ticks is the clock ticks counted over USER_HZ,
 * exactly: a sum of doubles drifted (4.470000000000001 after 447 ticks),
 * which the store could only keep as a full double a point.
 */
static void
cpu_seconds_stay_exact(void **state)
{
	struct fx *f = *state;
	char why[128] = "";
	unsigned long long ticks = 0;

	collector_proc.job_gone(f->ctx, 7);
	point_at(f, "proc-t0");
	write_busy_stat(f, 96, 0);
	collector_out_reset(&f->out, 3000.0, 30.0);
	collector_proc.sample_job(f->ctx, &busy_job, &f->out, why, sizeof(why));
	for (int k = 1; k <= 200; k++) {
		ticks += (unsigned long long)(k % 7) * 3 + 1;
		write_busy_stat(f, 96 + ticks - ticks / 3, ticks / 3);
		collector_out_reset(&f->out, 3000.0 + k, 30.0 + k);
		assert_int_equal(collector_proc.sample_job(f->ctx, &busy_job, &f->out, why, sizeof(why)), COLLECTOR_OK);
		assert_true(collector_value_of(&f->out, 7, "cpu.seconds") == (double)ticks / 100.0);
	}
}

/* Between detail ticks only the whole-process figures come; the thread figures span both intervals. */
static void
thread_figures_only_on_detail_ticks(void **state)
{
	struct fx *f = *state;
	char why[128] = "";

	collector_proc.job_gone(f->ctx, 7);
	point_at(f, "proc-t0");
	collector_out_reset(&f->out, 5000.0, 50.0);
	collector_proc.sample_job(f->ctx, &busy_job, &f->out, why, sizeof(why));
	point_at(f, "proc-t1");
	collector_out_reset(&f->out, 5000.5, 50.5);
	f->out.detail = 0;
	collector_proc.sample_job(f->ctx, &busy_job, &f->out, why, sizeof(why));
	assert_float_equal(collector_value_of(&f->out, 7, "cpu.cores"), 1.28, 1e-9);
	assert_true(collector_value_of(&f->out, 7, "cpu.threads") == 4);
	assert_true(isnan(collector_value_of(&f->out, 7, "cpu.thread_max_cores")));
	assert_true(isnan(collector_value_of(&f->out, 7, "cpu.allowed")));
	/* Nothing changes in the next half second; the detail tick spans the whole second. */
	collector_out_reset(&f->out, 5001.0, 51.0);
	collector_proc.sample_job(f->ctx, &busy_job, &f->out, why, sizeof(why));
	assert_float_equal(collector_value_of(&f->out, 7, "cpu.cores"), 0, 1e-9);
	assert_float_equal(collector_value_of(&f->out, 7, "cpu.thread_max_cores"), 0.19, 1e-9);
	assert_true(collector_value_of(&f->out, 7, "cpu.allowed") == 2);
}

/* Writes one of the busy process's /proc/PID files (status, cgroup), as the kernel would show it. */
static void
write_busy_file(const struct fx *f, const char *name, const char *text)
{
	char path[400];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%d/%s", f->link, BUSY_PID, name);
	assert_non_null(fp = fopen(path, "w"));
	fputs(text, fp);
	fclose(fp);
}

/*
 * A job met mid-launch (`taskset -c 1 python3 ...` registered by its pid):
 * the first read is of taskset before it bound itself, on the node's CPUs;
 * the CPU it runs the job's program on shows at the next detail tick, not a
 * minute on (an underuses_cpus verdict for a job of one CPU came of that),
 * and so does a later change (taskset -p), beside the cgroup's limits.
 */
static void
cpu_affinity_read_on_every_detail_tick(void **state)
{
	struct fx *f = *state;
	char why[128] = "";

	collector_proc.job_gone(f->ctx, 7);
	point_at(f, "proc-t0");
	write_busy_file(f, "status", "Name:\ttaskset\nCpus_allowed_list:\t0-1\n");
	collector_out_reset(&f->out, 7000.0, 70.0);
	f->out.detail = 0;
	collector_proc.sample_job(f->ctx, &busy_job, &f->out, why, sizeof(why));
	assert_true(collector_value_of(&f->out, 7, "cpu.allowed") == 2);
	/* taskset binds itself and runs the program. */
	write_busy_file(f, "status", "Name:\tpython3\nCpus_allowed_list:\t1\n");
	collector_out_reset(&f->out, 7000.25, 70.25);
	f->out.detail = 0;
	collector_proc.sample_job(f->ctx, &busy_job, &f->out, why, sizeof(why));
	assert_true(isnan(collector_value_of(&f->out, 7, "cpu.allowed")));
	collector_out_reset(&f->out, 7000.5, 70.5);
	collector_proc.sample_job(f->ctx, &busy_job, &f->out, why, sizeof(why));
	assert_true(collector_value_of(&f->out, 7, "cpu.allowed") == 1);
	assert_true(collector_value_of(&f->out, 7, "cpu.cpuset_cpus") == 4);
	assert_true(collector_value_of(&f->out, 7, "cpu.quota_cores") == 4);
	write_busy_file(f, "status", "Name:\tpython3\nCpus_allowed_list:\t0-1\n");
	collector_out_reset(&f->out, 7001.5, 71.5);
	collector_proc.sample_job(f->ctx, &busy_job, &f->out, why, sizeof(why));
	assert_true(collector_value_of(&f->out, 7, "cpu.allowed") == 2);
	assert_true(collector_value_of(&f->out, 7, "cpu.cpuset_cpus") == 4);
	point_at(f, "proc-t0");  /* the real status back for the tests after */
}

/* Limits that could not be read at a job's first sight are read again at the next tick, not a minute on. */
static void
cpu_limits_unread_are_read_again(void **state)
{
	struct fx *f = *state;
	char why[128] = "";

	collector_proc.job_gone(f->ctx, 7);
	point_at(f, "proc-t0");
	/* Met mid-start: its status does not say its CPUs yet. */
	write_busy_file(f, "status", "Name:\tbusy\n");
	collector_out_reset(&f->out, 8000.0, 80.0);
	collector_proc.sample_job(f->ctx, &busy_job, &f->out, why, sizeof(why));
	assert_true(isnan(collector_value_of(&f->out, 7, "cpu.allowed")));
	write_busy_file(f, "status", "Name:\tbusy\nCpus_allowed_list:\t1\n");
	collector_out_reset(&f->out, 8000.5, 80.5);
	collector_proc.sample_job(f->ctx, &busy_job, &f->out, why, sizeof(why));
	assert_true(collector_value_of(&f->out, 7, "cpu.allowed") == 1);
	point_at(f, "proc-t0");  /* the real status back for the tests after */
}

/* A job whose lowest pid has exited: its limits come from the first process still alive. */
static void
cpu_limits_from_a_live_process(void **state)
{
	static const pid_t pids[] = {4242, BUSY_PID};   /* 4242: not in the fixture, gone */
	const struct collector_job job = {8, pids, 2, NULL, 0};
	struct fx *f = *state;
	char why[128] = "";

	point_at(f, "proc-t0");
	collector_out_reset(&f->out, 9000.0, 90.0);
	collector_proc.sample_job(f->ctx, &job, &f->out, why, sizeof(why));
	assert_true(collector_value_of(&f->out, 8, "cpu.processes") == 1);
	assert_true(collector_value_of(&f->out, 8, "cpu.allowed") == 2);
	collector_proc.job_gone(f->ctx, 8);
}

#define TASK_CGROUP "0::/system.slice/slurmstepd.scope/job_4242/step_0/user/task_0\n"

/*
 * A job in a limited memory cgroup carries its limit (the job's, 8 GiB, over
 * its task's "max") from its very first sample, whichever tick that is: here
 * a cheap tick between detail ones, for several jobs met in turn.
 */
static void
memory_limit_from_the_first_sample(void **state)
{
	struct fx *f = *state;
	char why[128] = "";
	int k;

	point_at(f, "proc-t0");
	write_busy_file(f, "cgroup", TASK_CGROUP);
	for (k = 0; k < 3; k++) {
		collector_proc.job_gone(f->ctx, 7);
		collector_out_reset(&f->out, 10000.0 + k, 100.0 + k);
		f->out.detail = 0;
		assert_int_equal(collector_proc.sample_job(f->ctx, &busy_job, &f->out, why, sizeof(why)), COLLECTOR_OK);
		assert_true(collector_value_of(&f->out, 7, "mem.limit_bytes") == 8589934592.0);
		assert_true(collector_value_of(&f->out, 7, "cpu.allowed") == 2);
		/* The next cheap tick gives the per-tick figures only; detail ticks give the limits again. */
		collector_out_reset(&f->out, 10000.25 + k, 100.25 + k);
		f->out.detail = 0;
		collector_proc.sample_job(f->ctx, &busy_job, &f->out, why, sizeof(why));
		assert_true(isnan(collector_value_of(&f->out, 7, "mem.limit_bytes")));
		collector_out_reset(&f->out, 10000.5 + k, 100.5 + k);
		collector_proc.sample_job(f->ctx, &busy_job, &f->out, why, sizeof(why));
		assert_true(collector_value_of(&f->out, 7, "mem.limit_bytes") == 8589934592.0);
	}
	point_at(f, "proc-t0");  /* the real cgroup file back for the tests after */
}

/*
 * A process moved into a limited memory cgroup after the job was first seen
 * (its CPUs were read, so the minute's timer runs): the limit comes at the
 * next detail tick, and goes when the process leaves the cgroup.
 */
static void
memory_limit_of_a_cgroup_joined_later(void **state)
{
	struct fx *f = *state;
	char why[128] = "";

	collector_proc.job_gone(f->ctx, 7);
	point_at(f, "proc-t0");
	write_busy_file(f, "cgroup", "0::/\n");
	collector_out_reset(&f->out, 11000.0, 110.0);
	collector_proc.sample_job(f->ctx, &busy_job, &f->out, why, sizeof(why));
	assert_true(collector_value_of(&f->out, 7, "cpu.allowed") == 2);
	assert_true(isnan(collector_value_of(&f->out, 7, "mem.limit_bytes")));
	write_busy_file(f, "cgroup", TASK_CGROUP);
	collector_out_reset(&f->out, 11000.5, 110.5);
	collector_proc.sample_job(f->ctx, &busy_job, &f->out, why, sizeof(why));
	assert_true(collector_value_of(&f->out, 7, "mem.limit_bytes") == 8589934592.0);
	write_busy_file(f, "cgroup", "0::/\n");
	collector_out_reset(&f->out, 11001.0, 111.0);
	collector_proc.sample_job(f->ctx, &busy_job, &f->out, why, sizeof(why));
	assert_true(isnan(collector_value_of(&f->out, 7, "mem.limit_bytes")));
	point_at(f, "proc-t0");
}

/* With schedstat: per-thread CPU in nanoseconds, time waiting for a CPU and slices. */
static void
schedstat_waits_and_switches(void **state)
{
	static const pid_t pids[] = {SCHED_PID};
	const struct collector_job job = {9, pids, 1, NULL, 0};
	struct fx *f = *state;
	struct collector_env env;
	char why[256] = "";
	void *ctx;

	point_at(f, "proc-sched-t0");
	env = (struct collector_env){f->link, "/nonexistent-dlprof-sys", NULL, 1.0};
	ctx = collector_proc.init(&env, why, sizeof(why));
	assert_non_null(ctx);
	collector_out_reset(&f->out, 6000.0, 60.0);
	assert_int_equal(collector_proc.sample_job(ctx, &job, &f->out, why, sizeof(why)), COLLECTOR_OK);
	point_at(f, "proc-sched-t1");
	collector_out_reset(&f->out, 6001.0, 61.0);
	assert_int_equal(collector_proc.sample_job(ctx, &job, &f->out, why, sizeof(why)), COLLECTOR_OK);
	/* utime 31 -> 40, stime 278 -> 378 (the spin reads the thread CPU clock: a system call). */
	assert_float_equal(collector_value_of(&f->out, 9, "cpu.cores"), 1.09, 1e-9);
	assert_float_equal(collector_value_of(&f->out, 9, "cpu.system_cores"), 1.00, 1e-9);
	/* schedstat CPU ns: +378211101, +367244539, +371369012: all three busy. */
	assert_true(collector_value_of(&f->out, 9, "cpu.busy_threads") == 3);
	/* Nanoseconds over the interval, kept to the 10 us a second the interval is known to. */
	assert_true(collector_value_of(&f->out, 9, "cpu.thread_max_cores") == 0.37821);
	/* The three busy threads' 1116824652 ns, summed before rounding. */
	assert_float_equal(collector_value_of(&f->out, 9, "cpu.busy_thread_cores"), 1.11682, 1e-9);
	/* Waits +58537156 + 91819187 + 80335878 ns; slices +253 + 309 + 266. */
	assert_true(collector_value_of(&f->out, 9, "sched.wait_cores") == 0.23069);
	assert_float_equal(collector_value_of(&f->out, 9, "sched.switches_per_s"), 828, 1e-9);
	collector_proc.fini(ctx);
}

static void
vanished_job_is_ok_and_silent(void **state)
{
	struct fx *f = *state;
	static const pid_t none[] = {999999};
	const struct collector_job gone = {8, none, 1, NULL, 0};
	char why[128] = "";

	collector_out_reset(&f->out, 3000.0, 30.0);
	assert_int_equal(collector_proc.sample_job(f->ctx, &gone, &f->out, why, sizeof(why)), COLLECTOR_OK);
	assert_int_equal(f->out.n, 0);
}

static void
node_figures(void **state)
{
	struct fx *f = *state;
	char why[128] = "";
	double cores;

	point_at(f, "proc-t0");
	collector_out_reset(&f->out, 4000.0, 40.0);
	assert_int_equal(collector_proc.sample_node(f->ctx, &f->out, why, sizeof(why)), COLLECTOR_OK);
	assert_true(collector_value_of(&f->out, 0, "cpu.count") == 2);
	assert_true(collector_value_of(&f->out, 0, "mem.total_bytes") > 0);
	assert_true(collector_value_of(&f->out, 0, "mem.used_bytes") > 0);
	assert_false(isnan(collector_value_of(&f->out, 0, "load.1")));
	point_at(f, "proc-t1");
	collector_out_reset(&f->out, 4001.0, 41.0);
	assert_int_equal(collector_proc.sample_node(f->ctx, &f->out, why, sizeof(why)), COLLECTOR_OK);
	cores = collector_value_of(&f->out, 0, "cpu.cores");
	assert_true(cores >= 0 && cores <= 2);
}

/* The label collector_put_label gave key for job, or NULL when it gave none this tick. */
static const char *
label_of(const struct collector_out *out, int64_t job, const char *key)
{
	for (size_t i = 0; i < out->nlabels; i++)
		if (out->labels[i].job_id == job && strcmp(out->labels[i].key, key) == 0)
			return out->labels[i].text;
	return NULL;
}

/* Writes a thread's name where the kernel keeps it (the fixtures have none: the test names the threads). */
static void
name_thread(struct fx *f, int tid, const char *name)
{
	char path[400];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%d/task/%d/comm", f->link, SCHED_PID, tid);
	assert_non_null(fp = fopen(path, "w"));
	fprintf(fp, "%s\n", name);
	fclose(fp);
}

/*
 * Each thread gets its own CPU series on detail ticks (thread.PID.TID.cores,
 * the schedstat nanoseconds over the interval) and its name as the series'
 * label: when first seen, and again only when a minute's re-read finds it
 * changed.  A name of bytes outside printable ASCII is kept readable.
 */
static void
each_thread_has_a_series_and_a_name(void **state)
{
	static const pid_t pids[] = {SCHED_PID};
	const struct collector_job job = {9, pids, 1, NULL, 0};
	struct fx *f = *state;
	struct collector_env env;
	char why[256] = "";
	void *ctx;

	point_at(f, "proc-sched-t0");
	name_thread(f, 8585, "spawn_jobs");
	name_thread(f, 8586, "worker-a");
	name_thread(f, 8587, "pt\001worker");
	env = (struct collector_env){f->link, "/nonexistent-dlprof-sys", NULL, 1.0};
	assert_non_null(ctx = collector_proc.init(&env, why, sizeof(why)));
	collector_out_reset(&f->out, 6000.0, 60.0);
	assert_int_equal(collector_proc.sample_job(ctx, &job, &f->out, why, sizeof(why)), COLLECTOR_OK);
	/* A baseline only: no values yet, but the names. */
	assert_true(isnan(collector_value_of(&f->out, 9, "thread.8585.8586.cores")));
	assert_int_equal(f->out.nlabels, 3);
	assert_string_equal(label_of(&f->out, 9, "thread.8585.8585"), "spawn_jobs");
	assert_string_equal(label_of(&f->out, 9, "thread.8585.8586"), "worker-a");
	assert_string_equal(label_of(&f->out, 9, "thread.8585.8587"), "pt?worker");
	point_at(f, "proc-sched-t1");
	collector_out_reset(&f->out, 6001.0, 61.0);
	assert_int_equal(collector_proc.sample_job(ctx, &job, &f->out, why, sizeof(why)), COLLECTOR_OK);
	/* schedstat CPU ns +378211101, +367244539, +371369012 over one second, to 10 us a second. */
	assert_true(collector_value_of(&f->out, 9, "thread.8585.8585.cores") == 0.37821);
	assert_true(collector_value_of(&f->out, 9, "thread.8585.8586.cores") == 0.36724);
	assert_true(collector_value_of(&f->out, 9, "thread.8585.8587.cores") == 0.37137);
	assert_int_equal(f->out.nlabels, 0);
	/* Renamed; the names are read again a minute after the last full read. */
	name_thread(f, 8586, "renamed");
	collector_out_reset(&f->out, 6030.0, 90.0);
	collector_proc.sample_job(ctx, &job, &f->out, why, sizeof(why));
	assert_int_equal(f->out.nlabels, 0);
	collector_out_reset(&f->out, 6060.0, 120.0);
	collector_proc.sample_job(ctx, &job, &f->out, why, sizeof(why));
	assert_int_equal(f->out.nlabels, 1);
	assert_string_equal(label_of(&f->out, 9, "thread.8585.8586"), "renamed");
	/* Between detail ticks, no thread series. */
	collector_out_reset(&f->out, 6060.5, 120.5);
	f->out.detail = 0;
	collector_proc.sample_job(ctx, &job, &f->out, why, sizeof(why));
	assert_true(isnan(collector_value_of(&f->out, 9, "thread.8585.8585.cores")));
	collector_proc.fini(ctx);
}

static void
unavailable_without_procfs(void **state)
{
	struct collector_env env = {"/nonexistent-dlprof-proc", "/sys", NULL, 1.0};
	char why[256] = "";

	(void)state;
	assert_null(collector_proc.init(&env, why, sizeof(why)));
	assert_non_null(strstr(why, "cannot read /nonexistent-dlprof-proc/stat"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(job_rates_match_the_snapshots),
		cmocka_unit_test(half_interval_doubles_the_rate),
		cmocka_unit_test(cpu_seconds_stay_exact),
		cmocka_unit_test(thread_figures_only_on_detail_ticks),
		cmocka_unit_test(schedstat_waits_and_switches),
		cmocka_unit_test(each_thread_has_a_series_and_a_name),
		cmocka_unit_test(cpu_affinity_read_on_every_detail_tick),
		cmocka_unit_test(cpu_limits_unread_are_read_again),
		cmocka_unit_test(cpu_limits_from_a_live_process),
		cmocka_unit_test(memory_limit_from_the_first_sample),
		cmocka_unit_test(memory_limit_of_a_cgroup_joined_later),
		cmocka_unit_test(vanished_job_is_ok_and_silent),
		cmocka_unit_test(node_figures),
		cmocka_unit_test(unavailable_without_procfs),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
