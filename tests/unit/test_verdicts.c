/*
 * Every verdict end to end, deterministically.  Jobs built to have one
 * problem each, or none, are fixture trees the collectors read: a proc
 * root of their processes (stat, status, cgroup, each thread's schedstat),
 * a sys root with a memory cgroup's limit, the NVML double showing one
 * job's process on a GPU.  The collectors sample them tick by tick at fixed
 * times, the sampler's window turns each tick into rows, the store keeps
 * them as the sampler's points, and GET /api/v1/jobs/{id}/report through the
 * route table reads the windows back and judges.  Phase verdicts come from
 * samples POSTed as the client reports them; the counter verdicts
 * (memory_bound, compute_bound) from the values the perf collector puts,
 * since perf_event_open has no fixture tree.  The thresholds are the
 * configuration's defaults with 0.5 s windows and a 3 s sustain.
 *
 * No clock, scheduler or other load decides anything here, so nothing
 * skips: the real-process suite (tests/integration/test_diagnosis.py) may
 * skip a case its machine starved, this one proves each verdict anyway.
 */
#include <math.h>
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

#include "app.h"
#include "collector.h"
#include "collectors_fixture.h"
#include "config.h"
#include "diag_report.h"
#include "jobs.h"
#include "node.h"
#include "route_call.h"
#include "sample_window.h"
#include "stats.h"
#include "store.h"
#include "tuner.h"

#define T0 1700000000.0      /* the first tick, unix seconds */
#define TICK 0.5             /* the sampling and store interval */
#define TICKS 40             /* 20 s: the 3 s sustain several times over */
#define MAX_PROCS 9

struct proc_fx {
	pid_t pid;
	double cores, wait;          /* its share of a CPU each tick: running, and waiting for one */
	unsigned long long cpu_ns, wait_ns, slices;
};

struct job_fx {
	const char *workload;
	const char *cpus;            /* Cpus_allowed_list of its processes */
	const char *cgroup;          /* their /proc/PID/cgroup */
	double rss_mib;              /* its first process's resident size */
	struct proc_fx procs[MAX_PROCS];
	size_t nprocs;
	int phases;                  /* reports steps with phases: one of the PHASES_* below */
	int counters;                /* its perf figures: COUNTERS_* below */
	const char *expect[2];       /* the verdicts it must get, NULL-ended; none: healthy */
	int64_t id;
};

enum { PHASES_NONE, PHASES_INPUT, PHASES_COMM, PHASES_CHECKPOINT, PHASES_HEALTHY };
enum { COUNTERS_NONE, COUNTERS_MEMORY, COUNTERS_COMPUTE };

#define LIMITED "4:memory:/dlprof-e2e\n0::/\n"
#define UNLIMITED "4:memory:/\n0::/\n"

/* Processes are single-threaded (pid = tid); the first of a job is its registered pid. */
static struct job_fx jobs[] = {
	/* Eight busy threads on one CPU, each running an eighth of the time and waiting the rest. */
	{"oversubscribed", "0", UNLIMITED, 40, {{1000, 0, 0, 0, 0, 0}, {1001, .125, .875, 0, 0, 0},
	 {1002, .125, .875, 0, 0, 0}, {1003, .125, .875, 0, 0, 0}, {1004, .125, .875, 0, 0, 0},
	 {1005, .125, .875, 0, 0, 0}, {1006, .125, .875, 0, 0, 0}, {1007, .125, .875, 0, 0, 0},
	 {1008, .125, .875, 0, 0, 0}}, 9, PHASES_NONE, COUNTERS_NONE, {"oversubscribed", NULL}, 0},
	/* One busy thread allowed two CPUs. */
	{"underusing", "0-1", UNLIMITED, 40, {{1100, 0, 0, 0, 0, 0}, {1101, 1, 0, 0, 0, 0}}, 2, PHASES_NONE,
	 COUNTERS_NONE, {"underuses_cpus", NULL}, 0},
	/* One thread busy all the time, three 40% of it, on two CPUs. */
	{"imbalanced", "0-1", UNLIMITED, 40, {{1200, 0, 0, 0, 0, 0}, {1201, 1, 0, 0, 0, 0}, {1202, .4, 0, 0, 0, 0},
	 {1203, .4, 0, 0, 0, 0}, {1204, .4, 0, 0, 0, 0}}, 5, PHASES_NONE, COUNTERS_NONE, {"imbalanced_threads", NULL}, 0},
	/* 243 MiB resident under a 256 MiB limit (95%). */
	{"memory", "0", LIMITED, 243, {{1300, .5, 0, 0, 0, 0}}, 1, PHASES_NONE, COUNTERS_NONE,
	 {"memory_pressure", NULL}, 0},
	/* Its process on GPU 0 at 2% SM. */
	{"gpu-idle", "0", UNLIMITED, 40, {{1400, .3, 0, 0, 0, 0}}, 1, PHASES_NONE, COUNTERS_NONE, {"gpus_idle", NULL}, 0},
	/* A thread that keeps its one CPU busy, and nothing else: healthy. */
	{"healthy-cpu", "1", UNLIMITED, 40, {{1500, .95, .02, 0, 0, 0}}, 1, PHASES_NONE, COUNTERS_NONE, {NULL}, 0},
	/* Sessions: their steps and phases as the client reports them. */
	{"input-bound", "0", UNLIMITED, 40, {{1600, .4, 0, 0, 0, 0}}, 1, PHASES_INPUT, COUNTERS_NONE,
	 {"input_bound", NULL}, 0},
	{"comm-bound", "0", UNLIMITED, 40, {{1700, .5, 0, 0, 0, 0}}, 1, PHASES_COMM, COUNTERS_NONE,
	 {"communication_bound", NULL}, 0},
	{"checkpointing", "1", UNLIMITED, 40, {{1800, .6, 0, 0, 0, 0}}, 1, PHASES_CHECKPOINT, COUNTERS_NONE,
	 {"checkpoint_cost", NULL}, 0},
	{"healthy-phases", "1", UNLIMITED, 40, {{1900, .95, 0, 0, 0, 0}}, 1, PHASES_HEALTHY, COUNTERS_NONE, {NULL}, 0},
	/* Counted: low IPC with many cache misses, then high IPC with few. */
	{"memory-bound", "0", UNLIMITED, 40, {{2000, .95, 0, 0, 0, 0}}, 1, PHASES_NONE, COUNTERS_MEMORY,
	 {"memory_bound", NULL}, 0},
	{"compute-bound", "1", UNLIMITED, 40, {{2100, .95, 0, 0, 0, 0}}, 1, PHASES_NONE, COUNTERS_COMPUTE,
	 {"compute_bound", NULL}, 0},
};
#define NJOBS (sizeof(jobs) / sizeof(jobs[0]))
#define GPU_JOB 4

struct fx {
	char dir[64], proc[96], sys[96], db[96], conf[96];
	struct config *cfg;
	struct node_info node;
	struct app app;
	void *proc_ctx, *nvml_ctx;
	struct collector_out out;
	struct sample_window win;
	struct sample rows[4096];
};

static void
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");  /* in place: the collector keeps some files open */

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* One process's files as of now (its counters already advanced). */
static void
write_proc(const struct fx *f, const struct job_fx *j, const struct proc_fx *p, int first)
{
	char path[256], text[512];
	long hz = sysconf(_SC_CLK_TCK);
	unsigned long long ticks = p->cpu_ns / (1000000000ULL / (unsigned long long)hz);

	snprintf(path, sizeof(path), "%s/%d/task/%d", f->proc, (int)p->pid, (int)p->pid);
	mkdir(path, 0755);  /* and its parents, made by setup */
	snprintf(path, sizeof(path), "%s/%d/stat", f->proc, (int)p->pid);
	/* Started 1 s after boot, long before the first tick: its first sight is a baseline. */
	snprintf(text, sizeof(text),
		 "%d (job) R %d %d %d 0 -1 4194304 100 0 0 0 %llu 0 0 0 20 0 1 0 100 100000000 %lld\n", (int)p->pid,
		 first ? 1 : (int)j->procs[0].pid, (int)p->pid, (int)p->pid, ticks,
		 first ? (long long)(j->rss_mib * 1048576 / (double)sysconf(_SC_PAGESIZE)) : 1000LL);
	write_file(path, text);
	snprintf(path, sizeof(path), "%s/%d/task/%d/stat", f->proc, (int)p->pid, (int)p->pid);
	write_file(path, text);
	snprintf(path, sizeof(path), "%s/%d/task/%d/schedstat", f->proc, (int)p->pid, (int)p->pid);
	snprintf(text, sizeof(text), "%llu %llu %llu\n", p->cpu_ns, p->wait_ns, p->slices);
	write_file(path, text);
	snprintf(path, sizeof(path), "%s/%d/status", f->proc, (int)p->pid);
	snprintf(text, sizeof(text), "Name:\tjob\nPid:\t%d\nCpus_allowed_list:\t%s\n", (int)p->pid, j->cpus);
	write_file(path, text);
	snprintf(path, sizeof(path), "%s/%d/cgroup", f->proc, (int)p->pid);
	write_file(path, j->cgroup);
}

/* Advances every process by one tick and writes its files. */
static void
advance(struct fx *f)
{
	size_t i, k;

	for (i = 0; i < NJOBS; i++)
		for (k = 0; k < jobs[i].nprocs; k++) {
			struct proc_fx *p = &jobs[i].procs[k];

			p->cpu_ns += (unsigned long long)llround(p->cores * TICK * 1e9);
			p->wait_ns += (unsigned long long)llround(p->wait * TICK * 1e9);
			p->slices += p->cores > 0 ? 50 : 0;
			write_proc(f, &jobs[i], p, k == 0);
		}
}

/* The perf collector's figures for a counted job: IPC, instructions and LLC misses a second. */
static void
put_counters(struct collector_out *out, const struct job_fx *j)
{
	double ins = 2e9, ipc = j->counters == COUNTERS_MEMORY ? 0.4 : 2.2;
	double misses = j->counters == COUNTERS_MEMORY ? 40e6 : 1e6;  /* 20 and 0.5 per 1000 instructions */

	if (j->counters == COUNTERS_NONE)
		return;
	collector_put(out, j->id, ipc, "perf.ipc");
	collector_put(out, j->id, ins, "perf.instructions_per_s");
	collector_put(out, j->id, misses, "perf.llc_misses_per_s");
}

/* One tick at T0 + k * TICK: every collector over every job, then the window into the store. */
static void
tick(struct fx *f, int k)
{
	double t = T0 + k * TICK;
	char why[256] = "";
	size_t i, n;

	advance(f);
	collector_out_reset(&f->out, t, 1000.0 + k * TICK);
	assert_int_equal(collector_nvml.sample_node(f->nvml_ctx, &f->out, why, sizeof(why)), COLLECTOR_OK);
	for (i = 0; i < NJOBS; i++) {
		pid_t pids[MAX_PROCS];
		struct collector_job cj = {jobs[i].id, pids, jobs[i].nprocs, NULL, 0};

		for (n = 0; n < jobs[i].nprocs; n++)
			pids[n] = jobs[i].procs[n].pid;
		assert_int_equal(collector_proc.sample_job(f->proc_ctx, &cj, &f->out, why, sizeof(why)), COLLECTOR_OK);
		assert_int_equal(collector_nvml.sample_job(f->nvml_ctx, &cj, &f->out, why, sizeof(why)), COLLECTOR_OK);
		put_counters(&f->out, &jobs[i]);
	}
	assert_int_equal(sample_window_add(&f->win, f->out.v, f->out.n), 0);
	n = sample_window_rows(&f->win, t, f->rows);
	assert_true(n < sizeof(f->rows) / sizeof(f->rows[0]));
	assert_int_equal(store_samples_post(f->app.store, f->rows, n), STORE_OK);
	sample_window_next(&f->win, t - 2 * TICK);
}

/* Step and phase times of one step, in the client's JSON, appended at *o. */
static void
step_json(char *buf, size_t len, size_t *o, const struct job_fx *j, int step, double t)
{
	double data = 0.01, comm = 0, ckpt = 0, work = 0.09;

	switch (j->phases) {
	case PHASES_INPUT: data = 0.06, work = 0.04; break;
	case PHASES_COMM: comm = 0.05, work = 0.05, data = 0; break;
	case PHASES_CHECKPOINT: ckpt = step % 8 == 7 ? 0.3 : 0, work = 0.05, data = 0; break;
	default: break;
	}
	*o += (size_t)snprintf(buf + *o, len - *o,
			       "%s{\"t\":%.3f,\"name\":\"step_time_s\",\"value\":%g},"
			       "{\"t\":%.3f,\"name\":\"phase_time_s\",\"phase\":\"forward\",\"value\":%g}",
			       *o > 12 ? "," : "", t, data + comm + ckpt + work, t, work);
	if (data > 0)
		*o += (size_t)snprintf(buf + *o, len - *o, ",{\"t\":%.3f,\"name\":\"phase_time_s\",\"phase\":\"data\","
				       "\"value\":%g}", t, data);
	if (comm > 0)
		*o += (size_t)snprintf(buf + *o, len - *o, ",{\"t\":%.3f,\"name\":\"phase_time_s\",\"phase\":"
				       "\"allreduce\",\"value\":%g}", t, comm);
	if (ckpt > 0)
		*o += (size_t)snprintf(buf + *o, len - *o, ",{\"t\":%.3f,\"name\":\"phase_time_s\",\"phase\":"
				       "\"checkpoint\",\"value\":%g}", t, ckpt);
}

/* A session's steps over the whole run, POSTed a second at a time as the client batches them. */
static void
report_steps(struct fx *f, const struct job_fx *j)
{
	static char body[65536];
	char target[64];
	double t = T0;
	int step = 0;

	snprintf(target, sizeof(target), "/api/v1/jobs/%lld/metrics", (long long)j->id);
	while (t < T0 + (TICKS - 1) * TICK) {
		size_t o = (size_t)snprintf(body, sizeof(body), "{\"samples\":[");
		double until = t + 1.0;
		struct route_answer a;

		for (; t < until; step++) {
			step_json(body, sizeof(body), &o, j, step, t);
			t += j->phases == PHASES_CHECKPOINT && step % 8 == 7 ? 0.35 : 0.1;
		}
		snprintf(body + o, sizeof(body) - o, "]}");
		a = route_call(&f->app, "POST", target, body);
		if (a.status != 200)
			fail_msg("POST %s: %d %.*s", target, a.status, (int)a.len, a.body);
		free(a.body);
	}
}

static int
setup(void **state)
{
	static struct fx f;
	static const struct store_options sopt = {.queue_limit = 4096, .readers = 2};
	static const struct tuner_options topt = {.gain_threshold = 0.01};
	char path[256], why[256], dbl[512], pid[32];
	const char *build = getenv("DLPROF_BUILDDIR");
	char *argv[] = {"dlprofd", "--config", f.conf, "--interval", "0.5", "--store-interval", "0.5",
			"--diag-sustain", "3", NULL};
	struct collector_env env;
	struct diag_options dopt;
	size_t i, k;

	snprintf(f.dir, sizeof(f.dir), "/tmp/dlprof-verdicts-XXXXXX");
	if (mkdtemp(f.dir) == NULL)
		return -1;
	snprintf(f.proc, sizeof(f.proc), "%s/proc", f.dir);
	snprintf(f.sys, sizeof(f.sys), "%s/sys", f.dir);
	snprintf(f.db, sizeof(f.db), "%s/d.db", f.dir);
	snprintf(f.conf, sizeof(f.conf), "%s/none.conf", f.dir);
	write_file(f.conf, "# the defaults\n");
	/* The node's own files from a snapshot; schedstat on, as on a kernel with it. */
	if (fixture_install("proc-t0", f.proc) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/self", f.proc);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/self/schedstat", f.proc);
	write_file(path, "0 0 0\n");
	for (i = 0; i < NJOBS; i++)
		for (k = 0; k < jobs[i].nprocs; k++) {
			snprintf(path, sizeof(path), "%s/%d", f.proc, (int)jobs[i].procs[k].pid);
			mkdir(path, 0755);
			snprintf(path, sizeof(path), "%s/%d/task", f.proc, (int)jobs[i].procs[k].pid);
			mkdir(path, 0755);
		}
	/* A v1 memory cgroup limited to 256 MiB. */
	snprintf(path, sizeof(path), "%s/fs", f.sys);
	mkdir(f.sys, 0755);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/fs/cgroup", f.sys);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/fs/cgroup/memory", f.sys);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/fs/cgroup/memory/dlprof-e2e", f.sys);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/fs/cgroup/memory/dlprof-e2e/memory.limit_in_bytes", f.sys);
	write_file(path, "268435456\n");

	if (config_load(9, argv, &f.cfg) != CONFIG_OK)
		return -1;
	snprintf(f.node.hostname, sizeof(f.node.hostname), "e2e");
	snprintf(f.node.hw_class, sizeof(f.node.hw_class), "x86_64-test-2c-1numa-0gpu");
	f.node.cores = f.node.cores_allowed = f.node.cpus_online = f.node.cpus_allowed = 2;
	f.app.node = &f.node;
	if ((f.app.store = store_open(f.db, &sopt)) == NULL ||
	    (f.app.tuner = tuner_open(f.app.store, &f.node, &topt)) == NULL ||
	    (f.app.stats = stats_new(dlprof_routes)) == NULL ||
	    (f.app.jobs = jobs_new(f.app.store, f.app.tuner, f.node.hw_class, f.proc)) == NULL)
		return -1;
	dopt = diag_options_of(f.cfg);
	if ((f.app.diag = diag_new(&dopt, &(struct diag_sources){.store = f.app.store, .tuner = f.app.tuner})) == NULL)
		return -1;
	atomic_store(&f.app.limits.max_samples, 1000);
	atomic_store(&f.app.limits.max_sample_age_s, 1e10);
	atomic_store(&f.app.limits.max_sample_skew_s, 1e10);

	/* The collectors on the trees; the NVML double shows the GPU job's process at 2% SM. */
	snprintf(pid, sizeof(pid), "%d", (int)jobs[GPU_JOB].procs[0].pid);
	setenv("NVML_DOUBLE_PID", pid, 1);
	setenv("NVML_DOUBLE_PID_SM", "2", 1);
	snprintf(dbl, sizeof(dbl), "%s/tests/nvml_double/libnvml-double.so", build ? build : ".");
	env = (struct collector_env){f.proc, f.sys, dbl, TICK};
	if ((f.proc_ctx = collector_proc.init(&env, why, sizeof(why))) == NULL ||
	    (f.nvml_ctx = collector_nvml.init(&env, why, sizeof(why))) == NULL) {
		fprintf(stderr, "collector: %s\n", why);
		return -1;
	}
	sample_window_init(&f.win);
	*state = &f;
	return 0;
}

static int
teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	collector_proc.fini(f->proc_ctx);
	collector_nvml.fini(f->nvml_ctx);
	collector_out_free(&f->out);
	sample_window_free(&f->win);
	diag_free(f->app.diag);
	jobs_free(f->app.jobs);
	tuner_close(f->app.tuner);
	store_close(f->app.store);
	stats_free(f->app.stats);
	config_free(f->cfg);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* The jobs registered as the client registers them (their first pid), sampled and reported for 20 s, then ended. */
static void
run_jobs(void **state)
{
	struct fx *f = *state;
	struct sample barrier = {0, T0 + TICKS * TICK, "test.barrier", 1, NULL};
	size_t i;
	int k;

	for (i = 0; i < NJOBS; i++) {
		struct job_spec spec = {.workload = jobs[i].workload, .params_json = "{}", .hw_class = f->node.hw_class,
					.pid = jobs[i].procs[0].pid, .objective = OBJECTIVE_THROUGHPUT, .source = "registered",
					.started = T0 - TICK};

		assert_int_equal(store_job_register(f->app.store, &spec, &jobs[i].id), STORE_OK);
	}
	for (k = 0; k < TICKS; k++)
		tick(f, k);
	for (i = 0; i < NJOBS; i++)
		if (jobs[i].phases != PHASES_NONE)
			report_steps(f, &jobs[i]);
	/* The writer takes batches in order: once this one is committed, every posted tick is in. */
	assert_int_equal(store_samples_write(f->app.store, &barrier, 1), STORE_OK);
	for (i = 0; i < NJOBS; i++)
		assert_int_equal(store_job_end(f->app.store, jobs[i].id, T0 + (TICKS - 1) * TICK, true, 0), STORE_OK);
}

/* The report of job j, parsed; its verdicts' kinds as a set of names in kinds. */
static json_t *
report_of(struct fx *f, const struct job_fx *j)
{
	char target[64];
	struct route_answer a;
	json_t *r;

	snprintf(target, sizeof(target), "/api/v1/jobs/%lld/report", (long long)j->id);
	a = route_call(&f->app, "GET", target, NULL);
	if (a.status != 200)
		fail_msg("GET %s: %d %.*s", target, a.status, (int)a.len, a.body);
	r = json_loadb(a.body, a.len, 0, NULL);
	free(a.body);
	assert_non_null(r);
	return r;
}

static json_t *
verdict(json_t *report, const char *kind)
{
	size_t i;
	json_t *v;

	json_array_foreach(json_object_get(report, "verdicts"), i, v)
		if (strcmp(json_string_value(json_object_get(v, "kind")), kind) == 0)
			return v;
	return NULL;
}

static double
figure(json_t *v, const char *name)
{
	return json_number_value(json_object_get(json_object_get(json_object_get(v, "evidence"), "figures"), name));
}

/* Each job got exactly the verdicts it was built for; the healthy ones none. */
static void
each_job_gets_its_verdicts(void **state)
{
	struct fx *f = *state;
	size_t i, n, e;

	for (i = 0; i < NJOBS; i++) {
		json_t *r = report_of(f, &jobs[i]);
		json_t *vs = json_object_get(r, "verdicts");
		char *text = json_dumps(vs, JSON_COMPACT);

		for (n = 0; jobs[i].expect[n] != NULL; n++)
			if (verdict(r, jobs[i].expect[n]) == NULL)
				fail_msg("%s: no %s verdict; got %s", jobs[i].workload, jobs[i].expect[n], text);
		for (e = 0; e < json_array_size(vs); e++) {
			const char *kind = json_string_value(json_object_get(json_array_get(vs, e), "kind"));
			bool wanted = false;

			for (n = 0; jobs[i].expect[n] != NULL; n++)
				wanted = wanted || strcmp(kind, jobs[i].expect[n]) == 0;
			if (!wanted)
				fail_msg("%s: a %s verdict it was not built for; got %s", jobs[i].workload, kind, text);
		}
		free(text);
		json_decref(r);
	}
}

/* The evidence is what the fixtures hold, carried through the collectors, the store and the windows. */
static void
evidence_is_the_fixtures(void **state)
{
	struct fx *f = *state;
	json_t *r, *v;

	r = report_of(f, &jobs[0]);
	v = verdict(r, "oversubscribed");
	assert_non_null(v);
	assert_float_equal(figure(v, "allowed_cpus"), 1, 1e-9);
	assert_float_equal(figure(v, "runnable_threads"), 8, 0.05);   /* 1 core running + 7 waiting */
	json_decref(r);

	r = report_of(f, &jobs[1]);
	v = verdict(r, "underuses_cpus");
	assert_float_equal(figure(v, "allowed_cpus"), 2, 1e-9);
	assert_float_equal(figure(v, "cpu_cores"), 1, 0.05);
	json_decref(r);

	r = report_of(f, &jobs[2]);
	v = verdict(r, "imbalanced_threads");
	assert_float_equal(figure(v, "thread_max_cores"), 1, 1e-3);
	assert_float_equal(figure(v, "busy_threads"), 4, 1e-9);
	json_decref(r);

	/* The limit from the sys tree's cgroup, the resident size from stat. */
	r = report_of(f, &jobs[3]);
	v = verdict(r, "memory_pressure");
	assert_float_equal(figure(v, "memory_limit_bytes"), 268435456.0, 0.5);
	assert_float_equal(figure(v, "memory_share"), 243.0 / 256, 0.01);
	json_decref(r);

	r = report_of(f, &jobs[GPU_JOB]);
	v = verdict(r, "gpus_idle");
	assert_float_equal(figure(v, "gpus"), 1, 1e-9);
	assert_float_equal(figure(v, "gpu_util_percent"), 2, 1e-9);
	json_decref(r);
}

/* The first point of job j's series name, through GET /api/v1/jobs/{id}/series: [t, value]. */
static void
first_point(struct fx *f, const struct job_fx *j, const char *name, double *t, double *value)
{
	char target[128];
	struct route_answer a;
	json_t *r, *p;

	snprintf(target, sizeof(target), "/api/v1/jobs/%lld/series?name=%s", (long long)j->id, name);
	a = route_call(&f->app, "GET", target, NULL);
	assert_int_equal(a.status, 200);
	r = json_loadb(a.body, a.len, 0, NULL);
	free(a.body);
	p = json_array_get(json_object_get(r, "points"), 0);
	assert_non_null(p);
	*t = json_number_value(json_array_get(p, 0));
	*value = json_number_value(json_array_get(p, 1));
	json_decref(r);
}

/* The memory limit of a job in a memory cgroup is in its first sample, beside its first resident size. */
static void
memory_limit_from_the_first_sample(void **state)
{
	struct fx *f = *state;
	double t_limit, limit, t_rss, rss;

	first_point(f, &jobs[3], "mem.limit_bytes", &t_limit, &limit);
	first_point(f, &jobs[3], "mem.rss_bytes", &t_rss, &rss);
	assert_true(t_rss == T0);
	assert_true(t_limit == T0);
	assert_true(limit == 268435456.0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(run_jobs),
		cmocka_unit_test(each_job_gets_its_verdicts),
		cmocka_unit_test(evidence_is_the_fixtures),
		cmocka_unit_test(memory_limit_from_the_first_sample),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
