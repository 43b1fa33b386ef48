/*
 * The perf collector: Linux perf_event_open counters on each thread of each
 * job.  Software events (task-clock, context switches, CPU migrations, page
 * faults) work wherever the kernel allows perf; hardware events (cycles,
 * instructions, LLC misses) only where a PMU exists, which most VMs lack.
 *
 * A thread's counters form two groups, software and hardware, each read
 * with one read() (PERF_FORMAT_GROUP): four reads a thread cost more than
 * the rest of a detail tick.  The groups are apart so that hardware events
 * the PMU cannot schedule never take the software counts down with them.
 *
 * Counters are opened per thread, without inherit, as the sampler discovers
 * threads (a thread's counts start when dlprofd first sees it).  They are
 * read, and new threads looked for, on detail ticks only (when the sampler
 * stores): the kernel keeps counting in between, so the figures span the
 * whole store interval, and the descriptors cost nothing meanwhile.  A thread
 * that exits is read one last time and closed.  When the kernel multiplexes
 * hardware counters, counts are scaled by time_enabled / time_running and
 * the job's samples say so (perf.multiplexed, perf.counted_share); a counter
 * that never ran gives no value rather than a zero.
 */

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collector.h"
#include "jobstate.h"
#include "log.h"
#include "perf_reason.h"
#include "procfs.h"
#include "threadset.h"

/* Bounds the descriptors one job may hold: threads beyond it are not counted. */
#define PERF_MAX_THREADS_PER_JOB 512

enum perf_ev { EV_TASK_CLOCK, EV_CS, EV_MIGRATIONS, EV_FAULTS, EV_CYCLES, EV_INSTRUCTIONS, EV_LLC_MISSES, EV_N };
#define EV_FIRST_HW EV_CYCLES
/* Group 0 is the software events (led by task-clock), group 1 the hardware ones (led by cycles). */
#define PERF_GROUPS 2

static const struct {
	uint32_t type;
	uint64_t config;
} perf_defs[EV_N] = {
	[EV_TASK_CLOCK] = {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
	[EV_CS] = {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
	[EV_MIGRATIONS] = {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
	[EV_FAULTS] = {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
	[EV_CYCLES] = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
	[EV_INSTRUCTIONS] = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
	[EV_LLC_MISSES] = {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
};

struct perf_thread {
	struct threadset_thread head;  /* tid, seen */
	int fd[EV_N];            /* -1: not open */
	double prev[EV_N];       /* scaled count at the previous read */
	/* Each group's events in the order the kernel reports them (its leader first). */
	signed char member[PERF_GROUPS][EV_N];
	int nmember[PERF_GROUPS];
};

struct perf_job {
	struct threadset threads;  /* struct perf_thread each */
	double last_mono;
	int warned;              /* logged that its threads cannot be attached */
};

struct perf_ctx {
	char proc_root[256];
	int nev;                 /* EV_FIRST_HW, or EV_N when hardware events work */
	int exclude_kernel;      /* perf_event_paranoid >= 2 and no privilege */
	struct jobstate_table jobs;  /* struct perf_job per job */
};

/* What one tick adds up over a job's threads. */
struct perf_tally {
	double delta[EV_N];
	int have[EV_N];
	double counted_share;    /* lowest time_running / time_enabled seen */
};

/* Opens one counter on a thread, as a group leader (group_fd -1) or a member of group_fd's group. */
static int
perf_open(pid_t tid, enum perf_ev ev, int exclude_kernel, int group_fd)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = perf_defs[ev].type;
	attr.config = perf_defs[ev].config;
	attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	attr.exclude_kernel = exclude_kernel ? 1 : 0;
	attr.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &attr, tid, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
}

static void
perf_thread_close(void *thread)
{
	struct perf_thread *t = thread;
	int e;

	for (e = 0; e < EV_N; e++)
		if (t->fd[e] >= 0)
			close(t->fd[e]);
}

static void
perf_job_init(void *state)
{
	struct perf_job *j = state;

	threadset_init(&j->threads, sizeof(struct perf_thread), PERF_MAX_THREADS_PER_JOB);
}

static void
perf_job_clear(void *state)
{
	struct perf_job *j = state;

	threadset_free(&j->threads, perf_thread_close);
}

static void *
perf_init(const struct collector_env *env, char *why, size_t why_len)
{
	struct perf_ctx *c;
	char buf[64];
	int paranoid = PERF_PARANOID_UNKNOWN, fd, err;

	if (procfs_readf(buf, sizeof(buf), "%s/sys/kernel/perf_event_paranoid", env->proc_root) >= 0)
		paranoid = atoi(buf);
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		snprintf(why, why_len, "out of memory");
		return NULL;
	}
	snprintf(c->proc_root, sizeof(c->proc_root), "%s", env->proc_root);
	jobstate_init(&c->jobs, sizeof(struct perf_job), perf_job_init, perf_job_clear);
	fd = perf_open(0, EV_TASK_CLOCK, 0, -1);
	if (fd < 0 && (errno == EACCES || errno == EPERM)) {
		/* paranoid 2 refuses kernel-side counting to the unprivileged: count user space only. */
		c->exclude_kernel = 1;
		fd = perf_open(0, EV_TASK_CLOCK, 1, -1);
	}
	if (fd < 0) {
		perf_reason_open(errno, paranoid, why, why_len);
		free(c);
		return NULL;
	}
	close(fd);
	c->nev = EV_FIRST_HW;
	fd = perf_open(0, EV_CYCLES, c->exclude_kernel, -1);
	err = errno;
	if (fd >= 0) {
		close(fd);
		c->nev = EV_N;
		why[0] = '\0';
	} else {
		perf_reason_hw(err, perf_core_pmu(env->sys_root), why, why_len);
	}
	return c;
}

static void
perf_fini(void *ctx)
{
	struct perf_ctx *c = ctx;

	jobstate_free_all(&c->jobs);
	free(c);
}

static void
perf_job_gone(void *ctx, int64_t job_id)
{
	struct perf_ctx *c = ctx;

	jobstate_drop(&c->jobs, job_id);
}

/* Reads one group of a thread with one read(), scaled; adds the differences to the tally. */
static void
perf_read_group(struct perf_thread *t, int g, struct perf_tally *tl)
{
	uint64_t v[3 + EV_N];  /* nr, time_enabled, time_running, then a value per member */
	int leader = t->member[g][0], k, e;
	double scaled, share = 1;
	ssize_t want;

	if (t->nmember[g] == 0 || t->fd[leader] < 0)
		return;
	want = (ssize_t)((3 + (size_t)t->nmember[g]) * sizeof(uint64_t));
	if (read(t->fd[leader], v, sizeof(v)) != want || v[0] != (uint64_t)t->nmember[g])
		return;
	if (v[1] > 0 && v[2] == 0) {
		/* Enabled but never scheduled on the PMU: unknown, not zero. */
		tl->counted_share = 0;
		return;
	}
	if (v[2] < v[1]) {
		share = (double)v[2] / (double)v[1];
		if (share < tl->counted_share)
			tl->counted_share = share;
	}
	for (k = 0; k < t->nmember[g]; k++) {
		e = t->member[g][k];
		scaled = (double)v[3 + k] / share;
		if (scaled >= t->prev[e]) {
			tl->delta[e] += scaled - t->prev[e];
			tl->have[e] = 1;
		}
		t->prev[e] = scaled;
	}
}

/* What the start callback needs, and what it found. */
struct perf_start {
	const struct perf_ctx *c;
	int open_errno;          /* the last refusal other than a vanished thread; 0: none */
};

/* Opens the counters of a new thread; a thread whose first counter cannot be opened is skipped. */
static enum threadset_start
perf_thread_start(void *thread, void *arg)
{
	struct perf_thread *t = thread;
	struct perf_start *ps = arg;
	int e, g, leader;

	for (e = 0; e < EV_N; e++)
		t->fd[e] = -1;
	for (e = 0; e < ps->c->nev; e++) {
		g = e < EV_FIRST_HW ? 0 : 1;
		/* A member joins its group's leader; a group whose leader failed gets no members. */
		leader = t->nmember[g] > 0 ? t->fd[t->member[g][0]] : -1;
		if (e != 0 && e != EV_FIRST_HW && leader < 0)
			continue;
		t->fd[e] = perf_open(t->head.tid, (enum perf_ev)e, ps->c->exclude_kernel, leader);
		if (t->fd[e] >= 0) {
			t->member[g][t->nmember[g]++] = (signed char)e;
			continue;
		}
		if (e > 0)
			continue;
		if (errno == EMFILE || errno == ENFILE || errno == ENOMEM)
			return THREADSET_STOP;
		if (errno != ESRCH)
			ps->open_errno = errno;
		return THREADSET_SKIPPED;
	}
	return THREADSET_STARTED;
}

static void
perf_put(const struct perf_ctx *c, int64_t id, const struct perf_tally *tl, double elapsed, struct collector_out *out)
{
	/*
	 * Events are counted one by one (scaled up when multiplexed, which only
	 * coarsens them): a rate is a multiple of 1 / elapsed (collector_resolved).
	 * Task-clock counts nanoseconds, finer than the interval is known.
	 */
	double count_q = 1 / elapsed;

	if (tl->have[EV_TASK_CLOCK])
		collector_put(out, id, collector_clock_cores(tl->delta[EV_TASK_CLOCK], elapsed), "perf.task_clock_cores");
	if (tl->have[EV_CS])
		collector_put(out, id, collector_resolved(tl->delta[EV_CS] / elapsed, count_q), "perf.context_switches_per_s");
	if (tl->have[EV_MIGRATIONS])
		collector_put(out, id, collector_resolved(tl->delta[EV_MIGRATIONS] / elapsed, count_q), "perf.cpu_migrations_per_s");
	if (tl->have[EV_FAULTS])
		collector_put(out, id, collector_resolved(tl->delta[EV_FAULTS] / elapsed, count_q), "perf.page_faults_per_s");
	if (c->nev < EV_N)
		return;
	if (tl->have[EV_CYCLES])
		collector_put(out, id, collector_resolved(tl->delta[EV_CYCLES] / elapsed, count_q), "perf.cycles_per_s");
	if (tl->have[EV_INSTRUCTIONS])
		collector_put(out, id, collector_resolved(tl->delta[EV_INSTRUCTIONS] / elapsed, count_q), "perf.instructions_per_s");
	if (tl->have[EV_CYCLES] && tl->have[EV_INSTRUCTIONS] && tl->delta[EV_CYCLES] > 0)
		collector_put(out, id, tl->delta[EV_INSTRUCTIONS] / tl->delta[EV_CYCLES], "perf.ipc");
	if (tl->have[EV_LLC_MISSES])
		collector_put(out, id, collector_resolved(tl->delta[EV_LLC_MISSES] / elapsed, count_q), "perf.llc_misses_per_s");
	collector_put(out, id, tl->counted_share < 1 ? 1 : 0, "perf.multiplexed");
	collector_put(out, id, tl->counted_share, "perf.counted_share");
}

static int
perf_sample_job(void *ctx, const struct collector_job *job, struct collector_out *out, char *why, size_t why_len)
{
	struct perf_ctx *c = ctx;
	struct perf_job *j = jobstate_get(&c->jobs, job->id);
	struct perf_start ps = {c, 0};
	struct perf_tally tl;
	size_t i;
	int g;

	/* Counts accumulate in the kernel: reading them only when the sampler stores loses nothing. */
	if (!out->detail)
		return COLLECTOR_OK;
	/* Follow the job's threads: counters on new ones; out of descriptors or memory is transient. */
	if (j == NULL || threadset_track(&j->threads, c->proc_root, job, perf_thread_start, &ps) < 0) {
		snprintf(why, why_len, "cannot open more perf counters: %s", strerror(j ? errno : ENOMEM));
		return COLLECTOR_TRANSIENT;
	}
	if (ps.open_errno != 0 && !j->warned) {
		log_warnx("%s: job %lld: cannot count its threads: %s", __func__, (long long)job->id,
			  strerror(ps.open_errno));
		j->warned = 1;
	}
	memset(&tl, 0, sizeof(tl));
	tl.counted_share = 1;
	/* Read every thread, including those that just exited (their final counts), then drop the gone. */
	for (i = 0; i < j->threads.n; i++)
		for (g = 0; g < PERF_GROUPS; g++)
			perf_read_group(threadset_at(&j->threads, i), g, &tl);
	threadset_sweep(&j->threads, perf_thread_close);
	if (j->last_mono > 0 && out->mono > j->last_mono)
		perf_put(c, job->id, &tl, out->mono - j->last_mono, out);
	j->last_mono = out->mono;
	return COLLECTOR_OK;
}

const struct collector collector_perf = {
	.version = COLLECTOR_VERSION,
	.name = "perf",
	.init = perf_init,
	.sample_node = NULL,
	.sample_job = perf_sample_job,
	.job_gone = perf_job_gone,
	.describe = NULL,
	.fini = perf_fini,
};
