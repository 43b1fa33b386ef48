/*
 * The proc collector: what /proc and the cgroup files say about the node and
 * about each job's processes.  Per job: CPU utilisation in cores (user and
 * system), CPU time per thread turned into how many threads really work,
 * thread and process counts, RSS, context switches and page faults per
 * second, and the CPUs the job may use (affinity, cpuset, cgroup quota).
 * Node-wide: busy cores, memory, load.  Rates come from differences between
 * two ticks; a process or thread seen for the first time counts from its own
 * start when it started after the previous tick, so nothing that ran before
 * dlprofd looked is counted into one interval.  Same arithmetic as top(1):
 * (utime + stime) difference over wall time.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "collector.h"
#include "jobstate.h"
#include "procfs.h"

/* A thread counts as busy above this share of one core over an interval. */
#define PROC_BUSY_THREAD_CORES 0.25

struct proc_task {
	pid_t tid;
	unsigned long long ticks;      /* utime + stime */
	unsigned long long vcs, ivcs;  /* voluntary, involuntary context switches */
};

struct proc_pid {
	pid_t pid;
	unsigned long long starttime;  /* tells a reused pid apart */
	unsigned long long utime, stime, minflt, majflt;
};

struct proc_job {
	double last_mono;              /* monotonic time of the previous sample; 0: none */
	double last_unix;
	double cpu_seconds;            /* accumulated, so the counter never goes back */
	struct proc_pid *pids;
	size_t npids;
	struct proc_task *tasks;       /* ascending tid */
	size_t ntasks;
};

struct proc_ctx {
	char proc_root[256];
	char sys_root[256];
	long hz;
	long page;
	long long btime;
	struct procfs_cpu prev_cpu;
	int have_prev_cpu;
	struct jobstate_table jobs;    /* struct proc_job per job */
};

/* What one tick adds up over a job's processes and threads. */
struct proc_tally {
	double user_s, system_s;
	unsigned long long dvcs, divcs, dminflt, dmajflt;
	long threads, processes, busy_threads;
	double max_thread_cores;
	long long rss_pages;
	struct proc_task *tasks;       /* this tick's tasks, to become the job's */
	size_t ntasks, cap_tasks;
	struct proc_pid *pids;
	size_t npids;
};

static void
proc_job_clear(void *state)
{
	struct proc_job *j = state;

	free(j->pids);
	free(j->tasks);
}

static void *
proc_init(const struct collector_env *env, char *why, size_t why_len)
{
	struct proc_ctx *c;
	char buf[4096];

	if (procfs_readf(buf, sizeof(buf), "%s/stat", env->proc_root) < 0) {
		snprintf(why, why_len, "cannot read %s/stat: %s (is procfs mounted?)", env->proc_root, strerror(errno));
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		snprintf(why, why_len, "out of memory");
		return NULL;
	}
	snprintf(c->proc_root, sizeof(c->proc_root), "%s", env->proc_root);
	snprintf(c->sys_root, sizeof(c->sys_root), "%s", env->sys_root);
	c->hz = procfs_hz();
	c->page = procfs_page_size();
	if (procfs_parse_cpu(buf, &c->prev_cpu) == 0)
		c->btime = c->prev_cpu.btime;
	jobstate_init(&c->jobs, sizeof(struct proc_job), NULL, proc_job_clear);
	return c;
}

static void
proc_fini(void *ctx)
{
	struct proc_ctx *c = ctx;

	jobstate_free_all(&c->jobs);
	free(c);
}

static void
proc_job_gone(void *ctx, int64_t job_id)
{
	struct proc_ctx *c = ctx;

	jobstate_drop(&c->jobs, job_id);
}

static int
proc_sample_node(void *ctx, struct collector_out *out, char *why, size_t why_len)
{
	struct proc_ctx *c = ctx;
	struct procfs_cpu cpu;
	struct procfs_mem mem;
	struct procfs_load load;
	unsigned long long busy, idle, pbusy, pidle;
	char buf[16384];

	if (procfs_readf(buf, sizeof(buf), "%s/stat", c->proc_root) < 0 || procfs_parse_cpu(buf, &cpu) < 0) {
		snprintf(why, why_len, "cannot read %s/stat: %s", c->proc_root, strerror(errno));
		return COLLECTOR_TRANSIENT;
	}
	busy = cpu.user + cpu.nice + cpu.system + cpu.irq + cpu.softirq + cpu.steal;
	idle = cpu.idle + cpu.iowait;
	if (c->have_prev_cpu) {
		pbusy = c->prev_cpu.user + c->prev_cpu.nice + c->prev_cpu.system + c->prev_cpu.irq +
			c->prev_cpu.softirq + c->prev_cpu.steal;
		pidle = c->prev_cpu.idle + c->prev_cpu.iowait;
		/* Shares of all CPUs' ticks, times the CPUs: immune to tick jitter. */
		if (busy + idle > pbusy + pidle && busy >= pbusy) {
			double total = (double)(busy + idle - pbusy - pidle);

			collector_put(out, 0, (double)(busy - pbusy) / total * cpu.ncpu, "cpu.cores");
			collector_put(out, 0, (double)(cpu.steal - c->prev_cpu.steal) / total * cpu.ncpu, "cpu.steal_cores");
			collector_put(out, 0, (double)(cpu.iowait - c->prev_cpu.iowait) / total * cpu.ncpu,
				      "cpu.iowait_cores");
		}
	}
	collector_put(out, 0, (double)busy / (double)c->hz, "cpu.busy_seconds");
	collector_put(out, 0, cpu.ncpu, "cpu.count");
	c->prev_cpu = cpu;
	c->have_prev_cpu = 1;
	if (procfs_readf(buf, sizeof(buf), "%s/meminfo", c->proc_root) >= 0 && procfs_parse_meminfo(buf, &mem) == 0) {
		collector_put(out, 0, mem.total_kb * 1024.0, "mem.total_bytes");
		collector_put(out, 0, mem.available_kb * 1024.0, "mem.available_bytes");
		collector_put(out, 0, (mem.total_kb - mem.available_kb) * 1024.0, "mem.used_bytes");
	}
	if (procfs_readf(buf, sizeof(buf), "%s/loadavg", c->proc_root) >= 0 && procfs_parse_loadavg(buf, &load) == 0) {
		collector_put(out, 0, load.load1, "load.1");
		collector_put(out, 0, load.load5, "load.5");
		collector_put(out, 0, load.load15, "load.15");
		collector_put(out, 0, (double)load.running, "sched.runnable");
	}
	return COLLECTOR_OK;
}

static int
cmp_task(const void *a, const void *b)
{
	pid_t x = ((const struct proc_task *)a)->tid, y = ((const struct proc_task *)b)->tid;

	return (x > y) - (x < y);
}

/* Whether a task that started at starttime (ticks after boot) began after the previous sample. */
static int
proc_started_since(const struct proc_ctx *c, const struct proc_job *j, unsigned long long starttime)
{
	if (j->last_mono == 0 || c->btime <= 0)
		return 0;
	return (double)c->btime + (double)starttime / (double)c->hz > j->last_unix;
}

/* One thread: CPU share over the interval and its context switches. */
static void
proc_tally_task(struct proc_ctx *c, struct proc_job *j, pid_t pid, pid_t tid, double elapsed, struct proc_tally *t)
{
	struct procfs_stat st;
	struct proc_task key, *prev, *nt;
	char buf[4096];
	long long v;
	double cores;

	if (procfs_readf(buf, sizeof(buf), "%s/%d/task/%d/stat", c->proc_root, (int)pid, (int)tid) < 0 ||
	    procfs_parse_stat(buf, &st) < 0)
		return;
	key.tid = tid;
	key.ticks = st.utime + st.stime;
	key.vcs = key.ivcs = 0;
	if (procfs_readf(buf, sizeof(buf), "%s/%d/task/%d/status", c->proc_root, (int)pid, (int)tid) >= 0) {
		if ((v = procfs_status_int(buf, "voluntary_ctxt_switches")) >= 0)
			key.vcs = (unsigned long long)v;
		if ((v = procfs_status_int(buf, "nonvoluntary_ctxt_switches")) >= 0)
			key.ivcs = (unsigned long long)v;
	}
	t->threads++;
	prev = j->ntasks ? bsearch(&key, j->tasks, j->ntasks, sizeof(key), cmp_task) : NULL;
	if (prev == NULL && proc_started_since(c, j, st.starttime)) {
		static const struct proc_task zero;

		prev = (struct proc_task *)&zero;
	}
	if (prev != NULL && elapsed > 0 && key.ticks >= prev->ticks) {
		cores = (double)(key.ticks - prev->ticks) / (double)c->hz / elapsed;
		if (cores >= PROC_BUSY_THREAD_CORES)
			t->busy_threads++;
		if (cores > t->max_thread_cores)
			t->max_thread_cores = cores;
		if (key.vcs >= prev->vcs && key.ivcs >= prev->ivcs) {
			t->dvcs += key.vcs - prev->vcs;
			t->divcs += key.ivcs - prev->ivcs;
		}
	}
	if (t->ntasks == t->cap_tasks) {
		size_t cap = t->cap_tasks ? t->cap_tasks * 2 : 64;

		nt = realloc(t->tasks, cap * sizeof(*nt));
		if (nt == NULL)
			return;
		t->tasks = nt;
		t->cap_tasks = cap;
	}
	t->tasks[t->ntasks++] = key;
}

static const struct proc_pid *
proc_prev_pid(const struct proc_job *j, pid_t pid, unsigned long long starttime)
{
	size_t i;

	for (i = 0; i < j->npids; i++)
		if (j->pids[i].pid == pid && j->pids[i].starttime == starttime)
			return &j->pids[i];
	return NULL;
}

/* One process: whole-process CPU time and faults, then each of its threads. */
static void
proc_tally_pid(struct proc_ctx *c, struct proc_job *j, pid_t pid, double elapsed, struct proc_tally *t)
{
	static const struct proc_pid zero;
	struct procfs_stat st;
	const struct proc_pid *prev;
	struct proc_pid *cur;
	pid_t *tids = NULL;
	ssize_t n, i;
	char buf[4096];

	if (procfs_readf(buf, sizeof(buf), "%s/%d/stat", c->proc_root, (int)pid) < 0 || procfs_parse_stat(buf, &st) < 0)
		return;
	cur = &t->pids[t->npids++];
	cur->pid = pid;
	cur->starttime = st.starttime;
	cur->utime = st.utime;
	cur->stime = st.stime;
	cur->minflt = st.minflt;
	cur->majflt = st.majflt;
	t->processes++;
	t->rss_pages += st.rss_pages;
	prev = proc_prev_pid(j, pid, st.starttime);
	if (prev == NULL && proc_started_since(c, j, st.starttime))
		prev = &zero;
	if (prev != NULL && st.utime >= prev->utime && st.stime >= prev->stime) {
		t->user_s += (double)(st.utime - prev->utime) / (double)c->hz;
		t->system_s += (double)(st.stime - prev->stime) / (double)c->hz;
		if (st.minflt >= prev->minflt && st.majflt >= prev->majflt) {
			t->dminflt += st.minflt - prev->minflt;
			t->dmajflt += st.majflt - prev->majflt;
		}
	}
	snprintf(buf, sizeof(buf), "%s/%d/task", c->proc_root, (int)pid);
	n = procfs_list_ids(buf, &tids);
	for (i = 0; i < n; i++)
		proc_tally_task(c, j, pid, tids[i], elapsed, t);
	free(tids);
}

/* The CPUs the job may use: affinity of its first process, then its cgroup's limits. */
static void
proc_put_limits(struct proc_ctx *c, const struct collector_job *job, struct collector_out *out)
{
	struct cgroup_slurm cg;
	char buf[8192], list[4096];
	double quota;
	int cpus;

	if (job->npids > 0 &&
	    procfs_readf(buf, sizeof(buf), "%s/%d/status", c->proc_root, (int)job->pids[0]) >= 0 &&
	    procfs_status_str(buf, "Cpus_allowed_list", list, sizeof(list)) == 0 &&
	    (cpus = procfs_cpulist_count(list)) > 0)
		collector_put(out, job->id, cpus, "cpu.allowed");
	if (job->cgroup == NULL)
		return;
	memset(&cg, 0, sizeof(cg));
	snprintf(cg.path, sizeof(cg.path), "%s", job->cgroup);
	cg.version = job->cgroup_version;
	if (cgroup_cpu_limits(c->sys_root, &cg, &quota, &cpus) < 0)
		return;
	if (quota > 0)
		collector_put(out, job->id, quota, "cpu.quota_cores");
	if (cpus > 0)
		collector_put(out, job->id, cpus, "cpu.cpuset_cpus");
}

static void
proc_put_job(const struct collector_job *job, const struct proc_tally *t, double elapsed, double cpu_seconds,
	     long page, struct collector_out *out)
{
	int64_t id = job->id;

	collector_put(out, id, (double)t->processes, "cpu.processes");
	collector_put(out, id, (double)t->threads, "cpu.threads");
	collector_put(out, id, (double)t->rss_pages * (double)page, "mem.rss_bytes");
	collector_put(out, id, cpu_seconds, "cpu.seconds");
	if (elapsed <= 0)
		return;
	collector_put(out, id, (t->user_s + t->system_s) / elapsed, "cpu.cores");
	collector_put(out, id, t->user_s / elapsed, "cpu.user_cores");
	collector_put(out, id, t->system_s / elapsed, "cpu.system_cores");
	collector_put(out, id, (double)t->busy_threads, "cpu.busy_threads");
	collector_put(out, id, t->max_thread_cores, "cpu.thread_max_cores");
	collector_put(out, id, (double)t->dvcs / elapsed, "sched.voluntary_switches_per_s");
	collector_put(out, id, (double)t->divcs / elapsed, "sched.involuntary_switches_per_s");
	collector_put(out, id, (double)t->dminflt / elapsed, "mem.minor_faults_per_s");
	collector_put(out, id, (double)t->dmajflt / elapsed, "mem.major_faults_per_s");
}

static int
proc_sample_job(void *ctx, const struct collector_job *job, struct collector_out *out, char *why, size_t why_len)
{
	struct proc_ctx *c = ctx;
	struct proc_job *j;
	struct proc_tally t;
	double elapsed;
	size_t i;

	j = jobstate_get(&c->jobs, job->id);
	memset(&t, 0, sizeof(t));
	t.pids = calloc(job->npids ? job->npids : 1, sizeof(*t.pids));
	if (j == NULL || t.pids == NULL) {
		free(t.pids);
		snprintf(why, why_len, "out of memory");
		return COLLECTOR_TRANSIENT;
	}
	elapsed = j->last_mono > 0 ? out->mono - j->last_mono : 0;
	for (i = 0; i < job->npids; i++)
		proc_tally_pid(c, j, job->pids[i], elapsed, &t);
	if (t.ntasks > 1)
		qsort(t.tasks, t.ntasks, sizeof(*t.tasks), cmp_task);
	if (elapsed > 0)
		j->cpu_seconds += t.user_s + t.system_s;
	if (t.processes > 0) {
		proc_put_job(job, &t, elapsed, j->cpu_seconds, c->page, out);
		proc_put_limits(c, job, out);
	}
	free(j->tasks);
	free(j->pids);
	j->tasks = t.tasks;
	j->ntasks = t.ntasks;
	j->pids = t.pids;
	j->npids = t.npids;
	j->last_mono = out->mono;
	j->last_unix = out->t;
	return COLLECTOR_OK;
}

const struct collector collector_proc = {
	.version = COLLECTOR_VERSION,
	.name = "proc",
	.init = proc_init,
	.sample_node = proc_sample_node,
	.sample_job = proc_sample_job,
	.job_gone = proc_job_gone,
	.describe = NULL,
	.fini = proc_fini,
};
