/*
 * The sampler thread: every interval it finds the jobs to sample (registered
 * ones and those discovered from Slurm cgroups and environments), runs the
 * available collectors over them and posts the samples to the store.  It owns
 * the collectors' contexts; other threads only read its published status.
 */
#ifndef DLPROF_SAMPLER_H
#define DLPROF_SAMPLER_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "collector.h"

struct jobs;
struct sampler;
struct store;

struct sampler_options {
	double interval_s;        /* sampling period */
	double store_interval_s;  /* per-thread detail this often; at least interval_s */
	double discovery_interval_s;  /* scans all processes this often; 0: every tick */
	const char *proc_root;    /* "/proc", or a fixture tree in tests */
	const char *sys_root;     /* "/sys" */
	double probe_retry_s;     /* first wait before probing an unavailable collector again; 0: 60 s */
};

/*
 * Starts the thread over the parts it works with and nothing else: the
 * store it posts each tick to and keeps the series of, and jobs, through
 * which discovery registers and ends the jobs it finds (jobs.h).  Both
 * outlive the sampler.  NULL after logging why.
 */
struct sampler *sampler_start(struct store *store, struct jobs *jobs, const struct sampler_options *opt);
/* As sampler_start, over another table of collectors (ending with NULL): for tests. */
struct sampler *sampler_start_with(struct store *store, struct jobs *jobs, const struct sampler_options *opt,
				   const struct collector *const *table);
/*
 * fn(ctx) is called on the sampler's thread after each tick is published
 * (sampler_snapshot_get sees it), outside the sampler's lock; main.c wakes
 * the live streams with it.  NULL fn: none.  A call may still be running
 * when the hook is replaced, so ctx must outlive the sampler.
 */
typedef void sampler_tick_fn(void *ctx);
void sampler_set_tick_hook(struct sampler *s, sampler_tick_fn *fn, void *ctx);
/* Stops the thread and frees everything; NULL is fine. */
void sampler_stop(struct sampler *s);
/*
 * Whether the sampler thread is making progress: still probing collectors
 * after start, or its last tick ended within a few intervals.  Feeds the
 * systemd watchdog and /healthz.
 */
bool sampler_alive(struct sampler *s);
/* Applies new sampling, store and discovery intervals (SIGHUP). */
void sampler_set_interval(struct sampler *s, double interval_s, double store_interval_s, double discovery_interval_s);
/*
 * The collectors' status as a JSON array of {"name","status","reason"}:
 * status is "available" or "unavailable".  A new reference.
 */
json_t *sampler_collectors_json(struct sampler *s);

/*
 * The time a tick's values are stored at, on the interval's grid (as
 * Netdata aligns its collections) in whole milliseconds, so the block codec
 * stores a regular tick's times in no bits instead of ~9 for the jitter
 * (series_codec.h).  A cadence's first tick takes the multiple of the
 * interval nearest the clock; each next one its place on the cadence
 * (scheduled, the monotonic time it was due), so a late tick keeps its
 * own stamp.  Rounding each tick's own clock reading gave two ticks one
 * stamp and left a gap after them whenever the cadence's phase sat near
 * half an interval and a tick was a little late (test_sampling: gaps of 0
 * and 1 s at 0.5 s).  A new cadence (after a slow tick, a new interval) or
 * a stamp more than an interval off the clock (the clock was set) anchors
 * again, never onto the last stamp or just before it (a clock set back
 * further is followed).  g starts zeroed; the sampler's thread owns it.
 */
struct tick_grid {
	double anchor_t, anchor_mono;    /* the cadence's first stamp and when it was due */
	double interval;                 /* the cadence's */
	double last;                     /* the last stamp given */
};
double tick_grid_stamp(struct tick_grid *g, double interval, double now, double scheduled);

/* What the sampler spent on one job in the last tick. */
struct sampler_job_cost {
	int64_t id;
	char workload[128];
	double cpu_s;                  /* sampler thread CPU spent on it in the last detail tick */
	long threads;                  /* its threads */
};

struct sampler_collector_stat {
	char name[16];
	bool available;                /* up and not failing */
	unsigned long long failures;   /* sampling failures since start */
	double cpu_s;                  /* sampler thread CPU spent in it since start */
};

/* The last tick, as /metrics shows it: values, per-job cost, the sampler's own cost. */
struct sampler_snapshot {
	double t;                      /* the tick's unix time; 0 before the first tick */
	struct collector_value *values;
	size_t nvalues;
	struct sampler_job_cost *jobs; /* the jobs sampled (running, with processes) */
	size_t njobs;
	struct sampler_collector_stat cols[8];
	size_t ncols;
	unsigned long long ticks;
	double cpu_seconds_total;      /* sampler thread CPU since start */
	double last_tick_cpu_s;
	double last_tick_wall_s;
	long threads;                  /* threads sampled in the last tick, all jobs */
};

/*
 * What the NVML collector last saw of each GPU, into gpus (at most max):
 * its index and UUID as the collector describes them, and the last tick's
 * utilisation, memory and processes (its gpu.N.* node samples, read with
 * the catalogue's metric_split_gpu), mig set where MIG is on.  How many;
 * 0 while NVML is not up.  Thread-safe: a copy made under the sampler's
 * lock, nothing allocated (job_env.c hands it to gpu_pick).
 */
struct gpu_seen;
size_t sampler_gpus(struct sampler *s, struct gpu_seen *gpus, size_t max);

/* A private copy of the last tick (free it with sampler_snapshot_free); -1 when out of memory. */
int sampler_snapshot_get(struct sampler *s, struct sampler_snapshot *out);
void sampler_snapshot_free(struct sampler_snapshot *snap);

#endif
