/*
 * The proc collector: what /proc and the cgroup files say about the node and
 * about each job's processes.  Every tick, per job: CPU utilisation in cores
 * (user and system), thread and process counts, RSS and page faults per
 * second, from one read of each process's /proc/PID/stat (the kernel sums
 * the threads).  On detail ticks (collector_out.detail: when the sampler
 * stores), also per thread: how many threads really work and the busiest
 * one, how often they were put on a CPU and how long they waited for one
 * (task/TID/schedstat), each thread's own CPU in cores
 * (thread.PID.TID.cores, for the dashboard's heatmap) with its name as the
 * series' label (task/TID/comm, read when the thread is new and once a
 * minute), and the CPUs the job may use (affinity, cpuset, cgroup quota).
 * Thread figures are over the time since the last detail tick, so nothing
 * is lost between them: the counters are cumulative.
 *
 * The files read every tick stay open and are re-read with pread (see
 * procfs_openf): on a VM the path lookup costs five times the read.  Rates
 * come from differences between two reads; a process or thread seen for the
 * first time counts from its own start when it started after the previous
 * read, so nothing that ran before dlprofd looked is counted into one
 * interval.  Same arithmetic as top(1): CPU time difference over wall time.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "collector.h"
#include "jobstate.h"
#include "procfs.h"

/* A thread counts as busy above this share of one core over an interval. */
#define PROC_BUSY_THREAD_CORES 0.25
/* Threads of one job whose files stay open; the rest are opened at each read. */
#define PROC_MAX_OPEN_THREADS 1024
/*
 * How often a job's cgroup limits (its cpuset, quota and memory limit) are
 * read again; between, the last figures are given again.  Slurm sets them
 * once, at the job's start.  What the job's first process says of itself is
 * read on every detail tick (its status costs about 10 us, near what its
 * cgroup file does): the CPUs it may use, because a launcher (taskset,
 * numactl, a binding srun or mpirun) binds it just before it runs the job's
 * program, so a job met mid-launch shows the node's CPUs at first sight;
 * and the memory cgroup it lives in, so a process moved into a limited one
 * after it was first seen gets its limit at the next tick, not a minute on.
 */
#define PROC_LIMITS_EVERY_S 60.0
/* How often every thread's name is read again (a new thread's is read at once). */
#define PROC_NAMES_EVERY_S 60.0
/*
 * Threads of one job with a series of their own (thread.PID.TID.cores):
 * the first this many in pid and tid order; a job that makes threads
 * without end would otherwise make series without end.
 */
#define PROC_MAX_THREAD_SERIES 1024

struct proc_task {
	pid_t tid;
	int fd;                        /* task/TID/schedstat (or stat), kept open; -1: by path */
	unsigned long long cpu_ns;     /* from schedstat, or stat's ticks in ns */
	unsigned long long wait_ns, slices;  /* schedstat only */
	char comm[16];                 /* its name as last read; "" not yet */
};

struct proc_proc {
	pid_t pid;
	int stat_fd;                   /* /proc/PID/stat, kept open */
	unsigned long long starttime;
	unsigned long long utime, stime, minflt, majflt;
	long num_threads;
	long long rss_pages;
	struct proc_task *tasks;       /* ascending tid, as of the last detail read */
	size_t ntasks;
	int listed;                    /* tasks hold a detail read */
	int gone;                      /* exited: its pid may be reused, never reopen */
	int live;                      /* read this tick */
};

struct proc_job {
	double last_mono;              /* previous read of the processes; 0: none */
	double last_unix;
	double detail_mono;            /* previous detail read; 0: none */
	double detail_unix;
	unsigned long long cpu_jiffies; /* accumulated, so the counter never goes back; whole, so it stays exact */
	struct proc_proc *procs;       /* ascending pid */
	size_t nprocs;
	size_t open_threads;           /* task descriptors held */
	double limits_mono;            /* when the cgroup limits were read; 0: never */
	double names_mono;             /* when every thread's name was last read; 0: never */
	int cpuset;                    /* CPUs of the cgroup's cpuset; 0: unknown */
	double quota;                  /* cores; 0: none */
	double mem_limit;              /* bytes, its first process's memory cgroup; 0: none */
	char mem_cgroup[512];          /* that cgroup's path, as /proc/PID/cgroup names it; "": none read */
	int mem_version;               /* its hierarchy: 1, 2; 0: none */
	int limits_given;              /* a sample has carried the limits */
};

struct proc_ctx {
	char proc_root[256];
	char sys_root[256];
	long hz;
	long page;
	long long btime;
	int schedstat;                 /* the kernel has task/TID/schedstat */
	int node_fd[3];                /* stat, meminfo, loadavg */
	struct procfs_cpu prev_cpu;
	int have_prev_cpu;
	struct jobstate_table jobs;    /* struct proc_job per job */
};

/* What one tick adds up over a job's processes. */
struct proc_tally {
	unsigned long long user_ticks, system_ticks;   /* CPU time, in clock ticks */
	unsigned long long dminflt, dmajflt;
	long threads, processes;
	long long rss_pages;
};

/* What a detail read adds up over a job's threads, and where their own series go. */
struct proc_detail {
	struct collector_out *out;
	int64_t job_id;
	pid_t pid;                     /* the process whose threads are being read */
	int names;                     /* read every thread's name again */
	size_t thread_series;          /* threads given a series so far */
	long busy_threads;
	double max_thread_ns;          /* the busiest thread's CPU time in the interval */
	double busy_thread_ns;         /* the busy threads' CPU time in the interval, summed */
	unsigned long long dwait_ns, dslices;
	int have_sched;
};

static void
proc_tasks_close(struct proc_proc *p, struct proc_job *j)
{
	size_t i;

	for (i = 0; i < p->ntasks; i++)
		if (p->tasks[i].fd >= 0) {
			close(p->tasks[i].fd);
			j->open_threads--;
		}
	free(p->tasks);
	p->tasks = NULL;
	p->ntasks = 0;
}

static void
proc_proc_close(struct proc_proc *p, struct proc_job *j)
{
	if (p->stat_fd >= 0)
		close(p->stat_fd);
	p->stat_fd = -1;
	proc_tasks_close(p, j);
}

static void
proc_job_clear(void *state)
{
	struct proc_job *j = state;
	size_t i;

	for (i = 0; i < j->nprocs; i++)
		proc_proc_close(&j->procs[i], j);
	free(j->procs);
}

static void *
proc_init(const struct collector_env *env, char *why, size_t why_len)
{
	static const char *const node_files[] = {"stat", "meminfo", "loadavg"};
	struct proc_ctx *c;
	char buf[4096];
	int k;

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
	/* CONFIG_SCHED_INFO: without it a thread's CPU comes from its stat, with no waits. */
	c->schedstat = procfs_readf(buf, sizeof(buf), "%s/self/schedstat", env->proc_root) > 0;
	for (k = 0; k < 3; k++)
		c->node_fd[k] = procfs_openf("%s/%s", env->proc_root, node_files[k]);
	jobstate_init(&c->jobs, sizeof(struct proc_job), NULL, proc_job_clear);
	return c;
}

static void
proc_fini(void *ctx)
{
	struct proc_ctx *c = ctx;
	int k;

	jobstate_free_all(&c->jobs);
	for (k = 0; k < 3; k++)
		if (c->node_fd[k] >= 0)
			close(c->node_fd[k]);
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

	if (procfs_reread(c->node_fd[0], buf, sizeof(buf)) < 0 || procfs_parse_cpu(buf, &cpu) < 0) {
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
			double total = (double)(busy + idle - pbusy - pidle), tick = cpu.ncpu / total;

			/* Counts of ticks: each share is a multiple of one tick's (collector_resolved). */
			collector_put(out, 0, collector_resolved((double)(busy - pbusy) * tick, tick), "cpu.cores");
			collector_put(out, 0, collector_resolved((double)(cpu.steal - c->prev_cpu.steal) * tick, tick),
				      "cpu.steal_cores");
			collector_put(out, 0, collector_resolved((double)(cpu.iowait - c->prev_cpu.iowait) * tick, tick),
				      "cpu.iowait_cores");
		}
	}
	collector_put(out, 0, (double)busy / (double)c->hz, "cpu.busy_seconds");
	collector_put(out, 0, cpu.ncpu, "cpu.count");
	c->prev_cpu = cpu;
	c->have_prev_cpu = 1;
	if (procfs_reread(c->node_fd[1], buf, sizeof(buf)) >= 0 && procfs_parse_meminfo(buf, &mem) == 0) {
		collector_put(out, 0, mem.total_kb * 1024.0, "mem.total_bytes");
		collector_put(out, 0, mem.available_kb * 1024.0, "mem.available_bytes");
		collector_put(out, 0, (mem.total_kb - mem.available_kb) * 1024.0, "mem.used_bytes");
	}
	if (procfs_reread(c->node_fd[2], buf, sizeof(buf)) >= 0 && procfs_parse_loadavg(buf, &load) == 0) {
		collector_put(out, 0, load.load1, "load.1");
		collector_put(out, 0, load.load5, "load.5");
		collector_put(out, 0, load.load15, "load.15");
		collector_put(out, 0, (double)load.running, "sched.runnable");
	}
	return COLLECTOR_OK;
}

/* Whether a task that started at starttime (ticks after boot) began after since_unix. */
static int
proc_started_since(const struct proc_ctx *c, double since_unix, unsigned long long starttime)
{
	if (since_unix <= 0 || c->btime <= 0)
		return 0;
	return (double)c->btime + (double)starttime / (double)c->hz > since_unix;
}

/*
 * Carries the job's process entries over to this tick's pids (both
 * ascending): kept ones keep their descriptors and last figures, new ones
 * start empty, those not in the job any more are closed.
 */
static int
proc_merge_pids(struct proc_job *j, const struct collector_job *job)
{
	struct proc_proc *np;
	size_t i, k = 0;

	/* Most ticks a job has the same processes as last time: nothing to carry over. */
	for (i = 0; i < job->npids && j->nprocs == job->npids && j->procs[i].pid == job->pids[i]; i++)
		;
	if (i == job->npids && j->nprocs == job->npids)
		return 0;
	np = calloc(job->npids ? job->npids : 1, sizeof(*np));
	if (np == NULL)
		return -1;
	for (i = 0; i < job->npids; i++) {
		while (k < j->nprocs && j->procs[k].pid < job->pids[i])
			proc_proc_close(&j->procs[k++], j);
		if (k < j->nprocs && j->procs[k].pid == job->pids[i]) {
			np[i] = j->procs[k++];
		} else {
			np[i].pid = job->pids[i];
			np[i].stat_fd = -1;
		}
	}
	while (k < j->nprocs)
		proc_proc_close(&j->procs[k++], j);
	free(j->procs);
	j->procs = np;
	j->nprocs = job->npids;
	return 0;
}

/* One process: whole-process CPU time and faults since the previous tick. */
static int
proc_read_pid(struct proc_ctx *c, struct proc_job *j, struct proc_proc *p, struct proc_tally *t)
{
	struct procfs_stat st;
	char buf[4096];
	int first = p->stat_fd < 0;

	if (p->gone || (first && (p->stat_fd = procfs_openf("%s/%d/stat", c->proc_root, (int)p->pid)) < 0))
		return -1;
	/* A kept descriptor of a process that exited reads ESRCH, never a new process with its pid. */
	if (procfs_reread(p->stat_fd, buf, sizeof(buf)) < 0 || procfs_parse_stat(buf, &st) < 0 || st.state == 'Z') {
		proc_proc_close(p, j);
		p->gone = 1;
		return -1;
	}
	t->processes++;
	t->threads += st.num_threads;
	t->rss_pages += st.rss_pages;
	if (first && !proc_started_since(c, j->last_unix, st.starttime)) {
		/* Seen for the first time and older than the last tick: a baseline only. */
	} else if (st.utime >= p->utime && st.stime >= p->stime) {
		t->user_ticks += st.utime - p->utime;
		t->system_ticks += st.stime - p->stime;
		if (st.minflt >= p->minflt && st.majflt >= p->majflt) {
			t->dminflt += st.minflt - p->minflt;
			t->dmajflt += st.majflt - p->majflt;
		}
	}
	p->starttime = st.starttime;
	p->utime = st.utime;
	p->stime = st.stime;
	p->minflt = st.minflt;
	p->majflt = st.majflt;
	p->num_threads = st.num_threads;
	return 0;
}

/* Reads one thread's CPU time (and, with schedstat, its waits and slices) into key. */
static int
proc_read_task(struct proc_ctx *c, struct proc_job *j, pid_t pid, struct proc_task *key)
{
	const char *file = c->schedstat ? "schedstat" : "stat";
	struct procfs_schedstat ss;
	struct procfs_stat st;
	char buf[4096];
	ssize_t n;

	if (key->fd < 0 && j->open_threads < PROC_MAX_OPEN_THREADS &&
	    (key->fd = procfs_openf("%s/%d/task/%d/%s", c->proc_root, (int)pid, (int)key->tid, file)) >= 0)
		j->open_threads++;
	if (key->fd >= 0)
		n = procfs_reread(key->fd, buf, sizeof(buf));
	else
		n = procfs_readf(buf, sizeof(buf), "%s/%d/task/%d/%s", c->proc_root, (int)pid, (int)key->tid, file);
	if (n < 0)
		return -1;
	if (c->schedstat) {
		if (procfs_parse_schedstat(buf, &ss) < 0)
			return -1;
		key->cpu_ns = ss.cpu_ns;
		key->wait_ns = ss.wait_ns;
		key->slices = ss.slices;
		return 0;
	}
	if (procfs_parse_stat(buf, &st) < 0)
		return -1;
	key->cpu_ns = (st.utime + st.stime) * (1000000000ULL / (unsigned long long)c->hz);
	return 0;
}

/*
 * Adds one thread's figures since old (NULL: no baseline) to the detail
 * tally; returns its CPU time in the interval in ns, or -1 without a baseline.
 */
static double
proc_tally_task(const struct proc_ctx *c, const struct proc_task *old, const struct proc_task *cur, double elapsed,
		struct proc_detail *d)
{
	double ns;           /* the thread's CPU time in the interval */

	if (old == NULL || elapsed <= 0 || cur->cpu_ns < old->cpu_ns)
		return -1;
	ns = (double)(cur->cpu_ns - old->cpu_ns);
	if (ns / 1e9 / elapsed >= PROC_BUSY_THREAD_CORES) {
		d->busy_threads++;
		d->busy_thread_ns += ns;
	}
	if (ns > d->max_thread_ns)
		d->max_thread_ns = ns;
	if (c->schedstat && cur->wait_ns >= old->wait_ns && cur->slices >= old->slices) {
		d->dwait_ns += cur->wait_ns - old->wait_ns;
		d->dslices += cur->slices - old->slices;
		d->have_sched = 1;
	}
	return ns;
}

/* CPU time ns over elapsed seconds, in cores: nanoseconds with schedstat, else jiffies (proc_read_task). */
static double
proc_thread_cores(const struct proc_ctx *c, double ns, double elapsed)
{
	return c->schedstat ? collector_clock_cores(ns, elapsed)
			    : collector_resolved(ns / 1e9 / elapsed, 1.0 / (double)c->hz / elapsed);
}

/*
 * A thread's own series: its CPU in cores over the interval (ns < 0: no
 * baseline yet, no value) and, when it is new, renamed, or the names are
 * due again, its name (task/TID/comm) as the series' label.  A thread
 * that cannot be named keeps its tid alone.
 */
static void
proc_thread_out(const struct proc_ctx *c, struct proc_detail *d, struct proc_task *task, double ns, double elapsed)
{
	char key[64], buf[64];
	ssize_t n;

	if (d->thread_series >= PROC_MAX_THREAD_SERIES)
		return;
	d->thread_series++;
	snprintf(key, sizeof(key), "thread.%d.%d", (int)d->pid, (int)task->tid);
	if (ns >= 0 && elapsed > 0)
		collector_put(d->out, d->job_id, proc_thread_cores(c, ns, elapsed), "%s.cores", key);
	if (task->comm[0] != '\0' && !d->names)
		return;
	n = procfs_readf(buf, sizeof(buf), "%s/%d/task/%d/comm", c->proc_root, (int)d->pid, (int)task->tid);
	if (n <= 0)
		return;
	buf[strcspn(buf, "\n")] = '\0';
	/* The kernel's comm holds 15 bytes; a longer read is not a name. */
	if (buf[0] == '\0' || strlen(buf) >= sizeof(task->comm) || strcmp(buf, task->comm) == 0)
		return;
	snprintf(task->comm, sizeof(task->comm), "%.15s", buf);
	collector_put_label(d->out, d->job_id, key, task->comm);
}

/*
 * The threads of the last list read again through their kept descriptors,
 * when the process still has as many: a thread that exited reads ESRCH, so
 * one gone and one new in between cannot pass for the same set.  Listing
 * /proc/PID/task costs as much as reading ten threads.  0 when every one
 * read; -1 (nothing tallied, nothing changed) to list them instead.
 */
static int
proc_reread_tasks(struct proc_ctx *c, struct proc_job *j, struct proc_proc *p, double elapsed, struct proc_detail *d)
{
	struct proc_task *nt;
	size_t k;

	if (!p->listed || p->ntasks == 0 || (long)p->ntasks != p->num_threads)
		return -1;
	if ((nt = malloc(p->ntasks * sizeof(*nt))) == NULL)
		return -1;
	memcpy(nt, p->tasks, p->ntasks * sizeof(*nt));
	for (k = 0; k < p->ntasks; k++)
		if (nt[k].fd < 0 || proc_read_task(c, j, p->pid, &nt[k]) < 0) {
			free(nt);  /* the descriptors are still p->tasks' */
			return -1;
		}
	for (k = 0; k < p->ntasks; k++)
		proc_thread_out(c, d, &nt[k], proc_tally_task(c, &p->tasks[k], &nt[k], elapsed, d), elapsed);
	free(p->tasks);
	p->tasks = nt;
	return 0;
}

/*
 * A detail read of one process's threads: lists them, reads each (kept
 * descriptors carried over by tid) and adds the differences since the last
 * detail read.  A thread not in the last list of a listed process started
 * since, so it counts from zero; in a newly listed process, threads only
 * give a baseline unless the process itself started since the last read.
 */
static void
proc_detail_pid(struct proc_ctx *c, struct proc_job *j, struct proc_proc *p, double elapsed, struct proc_detail *d)
{
	static const struct proc_task zero;
	struct proc_task *nt, *old;
	pid_t *tids = NULL;
	ssize_t n, i;
	size_t k = 0, m = 0;
	int counts_new = p->listed || proc_started_since(c, j->detail_unix, p->starttime);
	char dir[512];
	double ns;

	if (proc_reread_tasks(c, j, p, elapsed, d) == 0)
		return;
	snprintf(dir, sizeof(dir), "%s/%d/task", c->proc_root, (int)p->pid);
	n = procfs_list_ids(dir, &tids);
	nt = n > 0 ? calloc((size_t)n, sizeof(*nt)) : NULL;
	if (nt == NULL) {
		free(tids);
		return;
	}
	for (i = 0; i < n; i++) {
		while (k < p->ntasks && p->tasks[k].tid < tids[i])
			k++;
		old = k < p->ntasks && p->tasks[k].tid == tids[i] ? &p->tasks[k] : NULL;
		nt[m] = old != NULL ? *old : (struct proc_task){.tid = tids[i], .fd = -1};
		if (old != NULL)
			old->fd = -1;  /* moved */
		if (proc_read_task(c, j, p->pid, &nt[m]) < 0) {
			if (nt[m].fd >= 0) {
				close(nt[m].fd);
				j->open_threads--;
			}
			continue;  /* exited between the listing and the read */
		}
		ns = proc_tally_task(c, old != NULL ? old : counts_new ? &zero : NULL, &nt[m], elapsed, d);
		proc_thread_out(c, d, &nt[m], ns, elapsed);
		m++;
	}
	free(tids);
	proc_tasks_close(p, j);
	p->tasks = nt;
	p->ntasks = m;
	p->listed = 1;
}

/* The job's first process still alive: the lowest pid may be one that already exited. */
static pid_t
proc_first_live(const struct proc_job *j, const struct collector_job *job)
{
	size_t i;

	for (i = 0; i < j->nprocs; i++)
		if (j->procs[i].live)
			return j->procs[i].pid;
	return job->npids > 0 ? job->pids[0] : 0;
}

/* The CPUs the job's first process may use (its affinity); 0: not said (a process met mid-start, or gone). */
static int
proc_read_affinity(const struct proc_ctx *c, pid_t first)
{
	char buf[8192], list[4096];
	int cpus;

	if (first > 0 && procfs_readf(buf, sizeof(buf), "%s/%d/status", c->proc_root, (int)first) >= 0 &&
	    procfs_status_str(buf, "Cpus_allowed_list", list, sizeof(list)) == 0 &&
	    (cpus = procfs_cpulist_count(list)) > 0)
		return cpus;
	return 0;
}

/* The CPU limits of the job's cgroup (cpuset, quota); none for a job without one. */
static void
proc_read_cgroup_cpu_limits(struct proc_ctx *c, struct proc_job *j, const struct collector_job *job)
{
	struct cgroup_slurm cg;
	double quota;
	int cpus;

	j->cpuset = 0;
	j->quota = 0;
	if (job->cgroup == NULL)
		return;
	memset(&cg, 0, sizeof(cg));
	snprintf(cg.path, sizeof(cg.path), "%s", job->cgroup);
	cg.version = job->cgroup_version;
	if (cgroup_cpu_limits(c->sys_root, &cg, &quota, &cpus) < 0)
		return;
	j->quota = quota > 0 ? quota : 0;
	j->cpuset = cpus > 0 ? cpus : 0;
}

/*
 * The memory limit the job's first process lives under, Slurm's or any
 * other cgroup's: its cgroup is read each time (a small file), the limit
 * again when that cgroup changed or when due.
 */
static void
proc_read_mem_limit(struct proc_ctx *c, struct proc_job *j, pid_t first, int due)
{
	char buf[8192], path[sizeof(j->mem_cgroup)];
	int version = 0;

	path[0] = '\0';
	if (first > 0 && procfs_readf(buf, sizeof(buf), "%s/%d/cgroup", c->proc_root, (int)first) >= 0)
		version = cgroup_parse_memory_path(buf, path, sizeof(path));
	if (version <= 0)
		path[0] = '\0';
	if (!due && version == j->mem_version && strcmp(path, j->mem_cgroup) == 0)
		return;
	j->mem_version = version > 0 ? version : 0;
	memcpy(j->mem_cgroup, path, sizeof(path));
	j->mem_limit = 0;
	if (version > 0)
		cgroup_memory_limit(c->sys_root, path, version, &j->mem_limit);
}

/*
 * The job's limits, read at its first sample whatever the tick (so its first
 * sample carries them) and on detail ticks after: its affinity each time,
 * its cgroup's limits when due (see PROC_LIMITS_EVERY_S).
 */
static void
proc_put_limits(struct proc_ctx *c, struct proc_job *j, const struct collector_job *job, struct collector_out *out)
{
	pid_t first = proc_first_live(j, job);
	int due = j->limits_mono == 0 || out->mono - j->limits_mono >= PROC_LIMITS_EVERY_S;
	int allowed = proc_read_affinity(c, first);

	if (due)
		proc_read_cgroup_cpu_limits(c, j, job);
	proc_read_mem_limit(c, j, first, due);
	if (due)
		j->limits_mono = out->mono;
	j->limits_given = 1;
	if (allowed > 0)
		collector_put(out, job->id, allowed, "cpu.allowed");
	if (j->quota > 0)
		collector_put(out, job->id, j->quota, "cpu.quota_cores");
	if (j->cpuset > 0)
		collector_put(out, job->id, j->cpuset, "cpu.cpuset_cpus");
	if (j->mem_limit > 0)
		collector_put(out, job->id, j->mem_limit, "mem.limit_bytes");
}

/*
 * The job's values; its rates are counts over elapsed seconds (jiffies of
 * jiffy_s, faults), kept at their own resolution (collector_resolved).
 */
static void
proc_put_job(const struct collector_job *job, const struct proc_tally *t, double elapsed, double cpu_seconds,
	     long page, double jiffy_s, struct collector_out *out)
{
	int64_t id = job->id;
	double cpu_q = jiffy_s / elapsed, count_q = 1 / elapsed;

	collector_put(out, id, (double)t->processes, "cpu.processes");
	collector_put(out, id, (double)t->threads, "cpu.threads");
	collector_put(out, id, (double)t->rss_pages * (double)page, "mem.rss_bytes");
	collector_put(out, id, cpu_seconds, "cpu.seconds");
	if (elapsed <= 0)
		return;
	collector_put(out, id, collector_resolved((double)(t->user_ticks + t->system_ticks) * jiffy_s / elapsed, cpu_q),
		      "cpu.cores");
	collector_put(out, id, collector_resolved((double)t->user_ticks * jiffy_s / elapsed, cpu_q), "cpu.user_cores");
	collector_put(out, id, collector_resolved((double)t->system_ticks * jiffy_s / elapsed, cpu_q), "cpu.system_cores");
	collector_put(out, id, collector_resolved((double)t->dminflt / elapsed, count_q), "mem.minor_faults_per_s");
	collector_put(out, id, collector_resolved((double)t->dmajflt / elapsed, count_q), "mem.major_faults_per_s");
}

/* The detail tick: every thread of every live process, then the CPU limits. */
static void
proc_detail_job(struct proc_ctx *c, struct proc_job *j, const struct collector_job *job, struct collector_out *out)
{
	struct proc_detail d;
	double elapsed = j->detail_mono > 0 ? out->mono - j->detail_mono : 0;
	size_t i;

	memset(&d, 0, sizeof(d));
	d.out = out;
	d.job_id = job->id;
	d.names = j->names_mono == 0 || out->mono - j->names_mono >= PROC_NAMES_EVERY_S;
	if (d.names)
		j->names_mono = out->mono;
	for (i = 0; i < j->nprocs; i++)
		if (j->procs[i].live) {
			d.pid = j->procs[i].pid;
			proc_detail_pid(c, j, &j->procs[i], elapsed, &d);
		}
	if (elapsed > 0) {
		collector_put(out, job->id, (double)d.busy_threads, "cpu.busy_threads");
		collector_put(out, job->id, proc_thread_cores(c, d.max_thread_ns, elapsed), "cpu.thread_max_cores");
		collector_put(out, job->id, proc_thread_cores(c, d.busy_thread_ns, elapsed), "cpu.busy_thread_cores");
		if (d.have_sched) {
			collector_put(out, job->id, collector_resolved((double)d.dslices / elapsed, 1 / elapsed),
				      "sched.switches_per_s");
			collector_put(out, job->id, collector_clock_cores((double)d.dwait_ns, elapsed), "sched.wait_cores");
		}
	}
	proc_put_limits(c, j, job, out);
	j->detail_mono = out->mono;
	j->detail_unix = out->t;
}

static int
proc_sample_job(void *ctx, const struct collector_job *job, struct collector_out *out, char *why, size_t why_len)
{
	struct proc_ctx *c = ctx;
	struct proc_job *j = jobstate_get(&c->jobs, job->id);
	struct proc_tally t;
	double elapsed;
	size_t i;

	if (j == NULL || proc_merge_pids(j, job) < 0) {
		snprintf(why, why_len, "out of memory");
		return COLLECTOR_TRANSIENT;
	}
	memset(&t, 0, sizeof(t));
	elapsed = j->last_mono > 0 ? out->mono - j->last_mono : 0;
	for (i = 0; i < j->nprocs; i++)
		j->procs[i].live = proc_read_pid(c, j, &j->procs[i], &t) == 0;
	if (elapsed > 0)
		j->cpu_jiffies += t.user_ticks + t.system_ticks;
	if (t.processes > 0) {
		proc_put_job(job, &t, elapsed, (double)j->cpu_jiffies / (double)c->hz, c->page, 1.0 / (double)c->hz, out);
		if (out->detail)
			proc_detail_job(c, j, job, out);
		else if (!j->limits_given)
			proc_put_limits(c, j, job, out);  /* first sight on a cheap tick: its limits now */
	}
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
