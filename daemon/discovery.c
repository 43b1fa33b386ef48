/*
 * Job discovery (see discovery.h).  A scan reads /proc/PID/stat of every
 * process (as top does) for the parent links, start times and thread
 * counts; a process seen for the first time (pid and start time) is also
 * classified once: its cgroup path (Slurm job_N, v1 or v2) or, failing that,
 * SLURM_JOB_ID in its environment.  A job's processes are its seeds (the
 * registered pid, the members of its Slurm job, and last tick's members that
 * still live, which keeps orphans reparented to init in the job) and all
 * their descendants.
 *
 * Scanning every process is the costliest thing a tick does (1.7 ms for
 * ~500 processes on a VM), so between scans the last table is reused: a
 * scan runs every rescan interval, and at once when a running job is new
 * or one of the jobs' processes has exited, so new jobs are found and ended
 * ones noticed within a tick; only new children of a running job wait for
 * the next periodic scan.  Exits are watched through a pidfd per member
 * process, all polled at once: a kill(pid, 0) per member and tick showed
 * at 6% of the sampler's time.
 */

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "array.h"
#include "cgroup.h"
#include "clock.h"
#include "discovery.h"
#include "jobs.h"
#include "log.h"
#include "procfs.h"
#include "store.h"
#include "store_series.h"

/* Seconds a registered pid's process may have started after the job: clock granularity. */
#define DISCOVERY_START_SLACK_S 2.0

/* What a process's cgroup or environment says, read once per process. */
struct disc_info {
	int64_t slurm_job;           /* 0: none */
	struct cgroup_slurm cg;      /* cg.job != 0 when found from the cgroup */
	char job_name[64];           /* SLURM_JOB_NAME when readable */
};

struct disc_proc {
	pid_t pid, ppid;
	unsigned long long starttime;
	double start_unix;
	long threads;
	char comm[64];
	struct disc_info *info;      /* owned; moves from tick to tick */
	int mark;                    /* expansion pass that last took it */
};

/* A job's members of the last tick, to keep orphans and notice the end. */
struct disc_member {
	pid_t pid;
	unsigned long long starttime;
	int pidfd;                   /* readable once the process exits; -1: none (checked by pid) */
};

struct disc_edge {
	pid_t ppid;
	size_t idx;                  /* the child, in procs */
};

struct disc_state {
	int64_t id;
	struct disc_member *m;
	size_t n;
	bool seen;                   /* had processes once */
};

struct discovery {
	struct jobs *jobs_owner;     /* decides registrations and ends */
	char proc_root[256];
	long hz;
	double btime;
	struct disc_proc *procs;     /* this tick's processes, ascending pid */
	size_t nprocs;
	struct disc_edge *by_ppid;   /* parent links, ascending ppid */
	struct disc_state *states;
	size_t nstates;
	struct discovery_job *jobs;  /* this tick's answer; the arrays are kept from tick to tick */
	size_t njobs, jobs_cap;
	int64_t *gone;
	size_t ngone, gone_cap;
	int pass;
	struct store_running_job *running;  /* the store's running jobs, as of running_gen */
	size_t nrunning;
	struct store_rank_pid *ranks;       /* their ranks' processes, by job id */
	size_t nranks;
	unsigned long running_gen;
	bool have_running;
	double rescan_s;             /* 0: scan every update */
	double scan_mono;            /* last scan; 0: none yet */
	bool live_proc;              /* proc_root is this system's /proc: kill(pid, 0) tells liveness */
};

struct discovery *
discovery_new(struct jobs *jobs, const char *proc_root)
{
	struct discovery *d = calloc(1, sizeof(*d));
	struct procfs_cpu cpu;
	char buf[16384];

	if (d == NULL) {
		log_warn("%s: calloc", __func__);
		return NULL;
	}
	d->jobs_owner = jobs;
	snprintf(d->proc_root, sizeof(d->proc_root), "%s", proc_root);
	d->live_proc = strcmp(proc_root, "/proc") == 0;
	d->hz = procfs_hz();
	if (procfs_readf(buf, sizeof(buf), "%s/stat", proc_root) >= 0 && procfs_parse_cpu(buf, &cpu) == 0)
		d->btime = (double)cpu.btime;
	return d;
}

/* Empties the answer, keeping its array for the next tick. */
static void
clear_jobs(struct discovery *d)
{
	size_t i;

	for (i = 0; i < d->njobs; i++)
		free(d->jobs[i].pids);
	d->njobs = 0;
}

static void
close_members(struct disc_member *m, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (m[i].pidfd >= 0)
			close(m[i].pidfd);
	free(m);
}

static void
free_procs(struct disc_proc *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(p[i].info);
	free(p);
}

void
discovery_free(struct discovery *d)
{
	size_t i;

	if (d == NULL)
		return;
	clear_jobs(d);
	free(d->jobs);
	free_procs(d->procs, d->nprocs);
	free(d->by_ppid);
	for (i = 0; i < d->nstates; i++)
		close_members(d->states[i].m, d->states[i].n);
	free(d->states);
	free(d->gone);
	free(d->running);
	free(d->ranks);
	free(d);
}

/* Reads what a new process's cgroup and environment say about Slurm. */
static struct disc_info *
classify(struct discovery *d, pid_t pid)
{
	struct disc_info *info = calloc(1, sizeof(*info));
	char buf[16384], val[32];
	ssize_t n;

	if (info == NULL)
		return NULL;
	if (procfs_readf(buf, sizeof(buf), "%s/%d/cgroup", d->proc_root, (int)pid) >= 0 &&
	    cgroup_parse_slurm(buf, &info->cg) == 1)
		info->slurm_job = info->cg.job;
	/* The environment is readable for our own user's processes, or with privilege. */
	n = procfs_readf(buf, sizeof(buf), "%s/%d/environ", d->proc_root, (int)pid);
	/*
	 * slurmd runs its Prolog and Epilog with the job's SLURM_JOB_ID and
	 * SLURM_SCRIPT_CONTEXT set: they work for the job but are not part of it,
	 * and an Epilog that outlives the job's end would register it again.
	 */
	if (n > 0 && procfs_environ_get(buf, (size_t)n, "SLURM_SCRIPT_CONTEXT", val, sizeof(val)) == 0) {
		info->slurm_job = 0;
		return info;
	}
	if (n > 0) {
		if (info->slurm_job == 0 && procfs_environ_get(buf, (size_t)n, "SLURM_JOB_ID", val, sizeof(val)) == 0)
			info->slurm_job = strtoll(val, NULL, 10);
		procfs_environ_get(buf, (size_t)n, "SLURM_JOB_NAME", info->job_name, sizeof(info->job_name));
	}
	return info;
}

static int
cmp_proc(const void *a, const void *b)
{
	pid_t x = ((const struct disc_proc *)a)->pid, y = ((const struct disc_proc *)b)->pid;

	return (x > y) - (x < y);
}

static struct disc_proc *
find_proc(struct disc_proc *v, size_t n, pid_t pid)
{
	struct disc_proc key = {.pid = pid};

	return n ? bsearch(&key, v, n, sizeof(key), cmp_proc) : NULL;
}

/* One process into the new table; its classification carried over when known. */
static void
scan_one(struct discovery *d, pid_t pid, struct disc_proc *np, size_t *nn)
{
	struct procfs_stat st;
	struct disc_proc *old, *p;
	char buf[4096];

	if (procfs_readf(buf, sizeof(buf), "%s/%d/stat", d->proc_root, (int)pid) < 0 ||
	    procfs_parse_stat(buf, &st) < 0 || st.state == 'Z' || st.state == 'X')
		return;  /* gone, or a zombie: it runs no more */
	p = &np[(*nn)++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->ppid = st.ppid;
	p->starttime = st.starttime;
	p->start_unix = d->btime + (double)st.starttime / (double)d->hz;
	p->threads = st.num_threads;
	snprintf(p->comm, sizeof(p->comm), "%s", st.comm);
	old = find_proc(d->procs, d->nprocs, pid);
	if (old != NULL && old->starttime == st.starttime && old->info != NULL) {
		p->info = old->info;
		old->info = NULL;
	} else if (pid != 2 && st.ppid != 2) {
		/* Kernel threads (children of kthreadd) belong to no job. */
		p->info = classify(d, pid);
	}
}

static int
cmp_edge(const void *a, const void *b)
{
	pid_t x = ((const struct disc_edge *)a)->ppid, y = ((const struct disc_edge *)b)->ppid;

	return (x > y) - (x < y);
}

static int
scan_procs(struct discovery *d)
{
	struct disc_proc *np;
	pid_t *pids;
	ssize_t n, i;
	size_t nn = 0, k;

	n = procfs_list_ids(d->proc_root, &pids);
	if (n < 0) {
		log_warn("%s: %s", __func__, d->proc_root);
		return -1;
	}
	np = calloc((size_t)n + 1, sizeof(*np));
	if (np == NULL) {
		free(pids);
		log_warn("%s: calloc", __func__);
		return -1;
	}
	for (i = 0; i < n; i++)
		scan_one(d, pids[i], np, &nn);
	free(pids);
	free_procs(d->procs, d->nprocs);
	d->procs = np;
	d->nprocs = nn;
	free(d->by_ppid);
	d->by_ppid = calloc(nn + 1, sizeof(*d->by_ppid));
	if (d->by_ppid == NULL)
		return -1;
	for (k = 0; k < nn; k++)
		d->by_ppid[k] = (struct disc_edge){np[k].ppid, k};
	qsort(d->by_ppid, nn, sizeof(*d->by_ppid), cmp_edge);
	return 0;
}

/* A growing list of process indices for one job. */
struct disc_set {
	size_t *idx;
	size_t n, cap;
};

static int
set_add(struct disc_set *s, size_t idx)
{
	size_t *nv;

	if (s->n == s->cap) {
		nv = array_grow(s->idx, &s->cap, s->n + 1, sizeof(*nv));
		if (nv == NULL)
			return -1;
		s->idx = nv;
	}
	s->idx[s->n++] = idx;
	return 0;
}

/* Adds a seed process unless this pass took it already. */
static void
seed(struct discovery *d, struct disc_set *s, struct disc_proc *p)
{
	if (p == NULL || p->mark == d->pass)
		return;
	p->mark = d->pass;
	set_add(s, (size_t)(p - d->procs));
}

/* Adds every descendant of the set's processes (breadth first, over the ppid index). */
static void
expand(struct discovery *d, struct disc_set *s)
{
	struct disc_edge key;
	struct disc_edge *e, *end = d->by_ppid + d->nprocs;
	size_t i, lo, hi, mid;

	for (i = 0; i < s->n; i++) {
		key.ppid = d->procs[s->idx[i]].pid;
		lo = 0;
		hi = d->nprocs;
		while (lo < hi) {
			mid = (lo + hi) / 2;
			if (d->by_ppid[mid].ppid < key.ppid)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (e = d->by_ppid + lo; e < end && e->ppid == key.ppid; e++)
			seed(d, s, &d->procs[e->idx]);
	}
}

static struct disc_state *
state_find(struct discovery *d, int64_t id, bool create)
{
	struct disc_state *ns;
	size_t i;

	for (i = 0; i < d->nstates; i++)
		if (d->states[i].id == id)
			return &d->states[i];
	if (!create)
		return NULL;
	ns = realloc(d->states, (d->nstates + 1) * sizeof(*ns));
	if (ns == NULL)
		return NULL;
	d->states = ns;
	memset(&ns[d->nstates], 0, sizeof(*ns));
	ns[d->nstates].id = id;
	return &ns[d->nstates++];
}

/* The registered job's own process, unless its pid now names a later process. */
static struct disc_proc *
registered_root(struct discovery *d, const struct store_running_job *rj)
{
	struct disc_proc *p;

	if (rj->pid <= 0)
		return NULL;
	p = find_proc(d->procs, d->nprocs, (pid_t)rj->pid);
	if (p == NULL || p->start_unix > rj->started + DISCOVERY_START_SLACK_S)
		return NULL;
	return p;
}

/*
 * The processes of a distributed job's ranks that joined here: started
 * together by a launcher (srun, spawn), they need not descend from the
 * job's pid, and the job lives while any of them does.
 */
static void
seed_ranks(struct discovery *d, int64_t id, struct disc_set *s)
{
	struct disc_proc *p;
	size_t i;

	for (i = 0; i < d->nranks; i++) {
		if (d->ranks[i].job_id != id)
			continue;
		p = find_proc(d->procs, d->nprocs, (pid_t)d->ranks[i].pid);
		if (p != NULL && p->start_unix <= d->ranks[i].joined + DISCOVERY_START_SLACK_S)
			seed(d, s, p);
	}
}

static void
seed_members(struct discovery *d, struct disc_state *stt, struct disc_set *s)
{
	struct disc_proc *p;
	size_t i;

	for (i = 0; stt != NULL && i < stt->n; i++) {
		p = find_proc(d->procs, d->nprocs, stt->m[i].pid);
		if (p != NULL && p->starttime == stt->m[i].starttime)
			seed(d, s, p);
	}
}

static void
seed_slurm(struct discovery *d, int64_t slurm_job, struct disc_set *s, struct discovery_job *out)
{
	size_t i;

	for (i = 0; slurm_job > 0 && i < d->nprocs; i++) {
		if (d->procs[i].info == NULL || d->procs[i].info->slurm_job != slurm_job)
			continue;
		if (out->cgroup[0] == '\0' && d->procs[i].info->cg.job == slurm_job) {
			snprintf(out->cgroup, sizeof(out->cgroup), "%s", d->procs[i].info->cg.path);
			out->cgroup_version = d->procs[i].info->cg.version;
		}
		seed(d, s, &d->procs[i]);
	}
}

static int64_t
slurm_of(const struct store_running_job *rj)
{
	if (strncmp(rj->external_id, "slurm:", 6) != 0)
		return 0;
	return strtoll(rj->external_id + 6, NULL, 10);
}

/* Registers a Slurm job found on the node; appends it to the running list. */
static void
register_slurm(struct discovery *d, int64_t slurm_job, double now, struct store_running_job **running, size_t *n)
{
	const struct disc_proc *first = NULL;
	struct store_running_job *nr, *rj;
	struct job_spec spec;
	char ext[64], name[128];
	const char *src;
	size_t i, o = 0;
	int64_t id;

	for (i = 0; i < d->nprocs; i++)
		if (d->procs[i].info != NULL && d->procs[i].info->slurm_job == slurm_job &&
		    (first == NULL || d->procs[i].start_unix < first->start_unix ||
		     (first->info->job_name[0] == '\0' && d->procs[i].info->job_name[0] != '\0')))
			first = &d->procs[i];
	if (first == NULL)
		return;
	/* The Slurm job name when readable, else the command: printable text only. */
	src = first->info->job_name[0] != '\0' ? first->info->job_name : first->comm;
	for (i = 0; src[i] != '\0' && o + 1 < sizeof(name); i++)
		if ((unsigned char)src[i] >= 0x20 && src[i] != 0x7f)
			name[o++] = src[i];
	name[o] = '\0';
	snprintf(ext, sizeof(ext), "slurm:%lld", (long long)slurm_job);
	memset(&spec, 0, sizeof(spec));
	spec.workload = name[0] != '\0' ? name : "slurm-job";
	spec.params_json = "{}";
	spec.external_id = ext;
	spec.objective = OBJECTIVE_THROUGHPUT;
	spec.command = first->comm;
	spec.started = first->start_unix > 0 ? first->start_unix : now;
	if (jobs_register_found(d->jobs_owner, &spec, first->pid, &id) != STORE_OK)
		return;
	log_info("%s: Slurm job %lld registered as job %lld (%s)", __func__, (long long)slurm_job, (long long)id,
		 spec.workload);
	nr = realloc(*running, (*n + 1) * sizeof(*nr));
	if (nr == NULL)
		return;
	*running = nr;
	rj = &nr[(*n)++];
	memset(rj, 0, sizeof(*rj));
	rj->id = id;
	rj->started = spec.started;
	snprintf(rj->external_id, sizeof(rj->external_id), "%s", ext);
	snprintf(rj->workload, sizeof(rj->workload), "%s", spec.workload);
	snprintf(rj->source, sizeof(rj->source), "slurm");
}

/* Registers the Slurm jobs on the node that the store does not know yet. */
static void
register_new_slurm_jobs(struct discovery *d, double now, struct store_running_job **running, size_t *n)
{
	int64_t job, done[64];
	size_t i, k, ndone = 0;

	for (i = 0; i < d->nprocs; i++) {
		if (d->procs[i].info == NULL || (job = d->procs[i].info->slurm_job) <= 0)
			continue;
		for (k = 0; k < ndone && done[k] != job; k++)
			;
		if (k < ndone)
			continue;
		if (ndone < sizeof(done) / sizeof(done[0]))
			done[ndone++] = job;
		for (k = 0; k < *n && slurm_of(&(*running)[k]) != job; k++)
			;
		if (k == *n)
			register_slurm(d, job, now, running, n);
	}
}

static int
cmp_pid_t(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/*
 * The member's pidfd: taken over from the job's last members (the slot is
 * marked moved), or opened now.  Only on the live system: a fixture tree's
 * pids are not this machine's processes.
 */
static int
member_pidfd(const struct discovery *d, struct disc_state *stt, const struct disc_proc *p)
{
	size_t i;
	int fd;

	for (i = 0; i < stt->n; i++)
		if (stt->m[i].pid == p->pid && stt->m[i].starttime == p->starttime && stt->m[i].pidfd >= 0) {
			fd = stt->m[i].pidfd;
			stt->m[i].pidfd = -1;
			return fd;
		}
	if (!d->live_proc)
		return -1;
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, p->pid, 0);
#else
	return -1;
#endif
}

/* Turns a job's process set into its answer row and its remembered members. */
static int
publish_job(struct discovery *d, const struct store_running_job *rj, struct disc_state *stt,
	    const struct disc_set *s, struct discovery_job *out)
{
	struct disc_member *m;
	size_t i;

	out->id = rj->id;
	snprintf(out->workload, sizeof(out->workload), "%s", rj->workload);
	out->pids = calloc(s->n, sizeof(*out->pids));
	m = calloc(s->n, sizeof(*m));
	if (out->pids == NULL || m == NULL) {
		free(out->pids);
		free(m);
		out->pids = NULL;
		return -1;
	}
	for (i = 0; i < s->n; i++) {
		const struct disc_proc *p = &d->procs[s->idx[i]];

		out->pids[i] = p->pid;
		out->threads += p->threads;
		m[i] = (struct disc_member){p->pid, p->starttime, member_pidfd(d, stt, p)};
	}
	out->npids = s->n;
	qsort(out->pids, out->npids, sizeof(*out->pids), cmp_pid_t);
	close_members(stt->m, stt->n);
	stt->m = m;
	stt->n = s->n;
	stt->seen = true;
	return 0;
}

/* One running job: its processes now, or its end. */
static void
assemble_job(struct discovery *d, const struct store_running_job *rj, double now)
{
	struct disc_state *stt = state_find(d, rj->id, true);
	struct discovery_job *out = &d->jobs[d->njobs];
	struct disc_set s = {0};

	memset(out, 0, sizeof(*out));
	d->pass++;
	seed(d, &s, registered_root(d, rj));
	seed_ranks(d, rj->id, &s);
	seed_members(d, stt, &s);
	seed_slurm(d, slurm_of(rj), &s, out);
	expand(d, &s);
	if (s.n > 0 && stt != NULL) {
		if (publish_job(d, rj, stt, &s, out) == 0)
			d->njobs++;
	} else if (rj->pid > 0 || (stt != NULL && stt->seen)) {
		jobs_end_gone(d->jobs_owner, rj->id, now);
	}
	free(s.idx);
}

static bool
has_job(const struct discovery *d, int64_t id)
{
	size_t i;

	for (i = 0; i < d->njobs; i++)
		if (d->jobs[i].id == id)
			return true;
	return false;
}

/*
 * Keeps the states of jobs with processes now, and of running jobs never seen
 * yet (a Slurm job registered by its prologue before its processes appear);
 * fills the gone list with last tick's jobs that have no processes now.
 */
static void
settle(struct discovery *d, const int64_t *prev, size_t nprev, const struct store_running_job *running, size_t n)
{
	size_t i, k, keep = 0;
	bool in_running;

	for (i = 0; i < d->nstates; i++) {
		for (k = 0, in_running = false; k < n && !in_running; k++)
			in_running = running[k].id == d->states[i].id;
		if (has_job(d, d->states[i].id) || (in_running && !d->states[i].seen))
			d->states[keep++] = d->states[i];
		else
			close_members(d->states[i].m, d->states[i].n);
	}
	d->nstates = keep;
	d->ngone = 0;
	for (i = 0; i < nprev; i++)
		if (!has_job(d, prev[i]))
			d->gone[d->ngone++] = prev[i];
}

void
discovery_set_rescan(struct discovery *d, double seconds)
{
	d->rescan_s = seconds > 0 ? seconds : 0;
}

/* Whether a process is still there, without a path lookup on the live system. */
static bool
pid_alive(const struct discovery *d, pid_t pid)
{
	char path[300];

	if (d->live_proc)
		return kill(pid, 0) == 0 || errno != ESRCH;
	snprintf(path, sizeof(path), "%s/%d", d->proc_root, (int)pid);
	return access(path, F_OK) == 0;
}

/* Whether a member of a job has exited: its pidfd polls readable, or (no pidfd) its pid is gone. */
static bool
member_exited(struct discovery *d)
{
	struct pollfd *fds;
	size_t i, k, n = 0, total = 0;
	bool exited = false;

	for (i = 0; i < d->nstates; i++)
		total += d->states[i].n;
	fds = calloc(total + 1, sizeof(*fds));
	for (i = 0; i < d->nstates && !exited; i++)
		for (k = 0; k < d->states[i].n && !exited; k++) {
			const struct disc_member *m = &d->states[i].m[k];

			if (m->pidfd >= 0 && fds != NULL)
				fds[n++] = (struct pollfd){.fd = m->pidfd, .events = POLLIN};
			else if (m->pidfd < 0 && !pid_alive(d, m->pid))
				exited = true;
		}
	if (!exited && n > 0 && poll(fds, (nfds_t)n, 0) > 0)
		exited = true;
	free(fds);
	return exited;
}

/* Whether this update must scan /proc rather than reuse the last table. */
static bool
scan_due(struct discovery *d, const struct store_running_job *running, size_t n)
{
	size_t i;

	if (d->scan_mono == 0 || d->rescan_s == 0 || clock_mono_s() - d->scan_mono >= d->rescan_s)
		return true;
	for (i = 0; i < n; i++)
		if (state_find(d, running[i].id, false) == NULL)
			return true;
	return member_exited(d);
}

/* The store's running jobs, read again only when they changed. */
static void
refresh_running(struct discovery *d)
{
	unsigned long gen = jobs_generation(d->jobs_owner);
	struct store_running_job *running = NULL;
	struct store_rank_pid *ranks = NULL;
	size_t n = 0, nranks = 0;

	if (d->have_running && gen == d->running_gen)
		return;
	if (jobs_running(d->jobs_owner, &running, &n) != STORE_OK)
		return;  /* keep the last list; the store said why */
	if (jobs_running_ranks(d->jobs_owner, &ranks, &nranks) != STORE_OK) {
		free(running);
		return;
	}
	free(d->ranks);
	d->ranks = ranks;
	d->nranks = nranks;
	free(d->running);
	d->running = running;
	d->nrunning = n;
	d->running_gen = gen;
	d->have_running = true;
}

/*
 * Whether the job was registered after the tick's stamp (see discovery.h),
 * a moment ago: its start beyond now by more than the slack is a clock set
 * back, and waiting for it would lose the job's samples until then.
 */
static bool
registered_after(const struct store_running_job *rj, double now, double stamp)
{
	return rj->started > stamp && rj->started <= now + DISCOVERY_START_SLACK_S;
}

int
discovery_update(struct discovery *d, double now, double stamp, const struct discovery_job **jobs, size_t *njobs,
		 const int64_t **gone, size_t *ngone)
{
	struct discovery_job *nj;
	int64_t *prev = NULL, *ng;
	size_t nprev = d->njobs, i;

	refresh_running(d);
	if (scan_due(d, d->running, d->nrunning)) {
		if (scan_procs(d) < 0)
			return -1;
		d->scan_mono = clock_mono_s();
	}
	/* A job registered here bumps the store's generation: the list is read again next time. */
	register_new_slurm_jobs(d, now, &d->running, &d->nrunning);
	prev = calloc(nprev + 1, sizeof(*prev));
	for (i = 0; prev != NULL && i < nprev; i++)
		prev[i] = d->jobs[i].id;
	clear_jobs(d);
	/*
	 * The answer's arrays are kept from tick to tick: freeing and
	 * allocating its ~35 KiB anew (50 jobs) cost a madvise and fresh page
	 * faults each time, as the allocator returns freed pages at once.
	 */
	nj = prev != NULL ? array_grow(d->jobs, &d->jobs_cap, d->nrunning + 1, sizeof(*d->jobs)) : NULL;
	if (nj != NULL)
		d->jobs = nj;
	ng = nj != NULL ? array_grow(d->gone, &d->gone_cap, nprev + 1, sizeof(*d->gone)) : NULL;
	if (ng == NULL) {
		free(prev);
		log_warn("%s: out of memory", __func__);
		return -1;
	}
	d->gone = ng;
	for (i = 0; i < d->nrunning; i++)
		if (!registered_after(&d->running[i], now, stamp))
			assemble_job(d, &d->running[i], now);
	settle(d, prev, nprev, d->running, d->nrunning);
	free(prev);
	*jobs = d->jobs;
	*njobs = d->njobs;
	*gone = d->gone;
	*ngone = d->ngone;
	return 0;
}
