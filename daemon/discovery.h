/*
 * Job discovery: which processes make up each job, refreshed every sampler
 * tick (all processes scanned every rescan interval, see discovery.c).  Jobs come from the store (registered with a pid: that process and
 * its descendants) and from Slurm (processes in a cgroup with a job_N
 * segment, or with SLURM_JOB_ID in an environment dlprofd may read); a Slurm
 * job not yet in the store is registered as source "slurm".  A job whose
 * processes are all gone is ended.  Registrations and ends go through
 * jobs.c, which decides them.  Used by the sampler thread only.
 */
#ifndef DLPROF_DISCOVERY_H
#define DLPROF_DISCOVERY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct jobs;
struct discovery;

struct discovery_job {
	int64_t id;
	char workload[128];
	pid_t *pids;                 /* ascending */
	size_t npids;
	char cgroup[512];            /* "" when none */
	int cgroup_version;
	long threads;                /* sum of num_threads over its processes */
};

struct discovery *discovery_new(struct jobs *jobs, const char *proc_root);
void discovery_free(struct discovery *d);
/*
 * Scan every process at most every seconds (0, the default: every update);
 * new jobs and exited processes still cause a scan at once.
 */
void discovery_set_rescan(struct discovery *d, double seconds);

/*
 * Rescans /proc and the store's running jobs.  *jobs: the jobs with at least
 * one process; *gone: ids sampled last time and not now (ended here or
 * elsewhere).  Both stay valid until the next call.  -1 after logging when
 * /proc cannot be read.  stamp is the time the tick's values are stored at
 * (sampler.h's grid: up to an interval before now): a job registered after
 * it, and by now, is left to the next update, since a point stamped before
 * its start is outside its life, where its series are not read.
 */
int discovery_update(struct discovery *d, double now, double stamp, const struct discovery_job **jobs, size_t *njobs,
		     const int64_t **gone, size_t *ngone);

#endif
