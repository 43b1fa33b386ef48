/*
 * The daemon's long-lived parts, handed to every route handler.  Each part
 * owns its own state and lock; this struct only ties them together for the
 * handlers: the parts themselves are handed what they use by main.c (the
 * sampler its store and jobs, the diagnosis its sources), never this.
 */
#ifndef DLPROF_APP_H
#define DLPROF_APP_H

#include <stdatomic.h>
#include <stddef.h>

struct store;
struct node_info;
struct tuner;
struct jobs;
struct sampler;
struct daemon_stats;
struct diag;
struct live;
struct cluster;
struct gpu_leases;
struct job_views;

/*
 * Limits that handlers read on every request.  Copied from the configuration
 * at start and on reload (atomics: a reload may race a request).
 */
struct app_limits {
	_Atomic size_t max_samples;       /* samples in one ingest request */
	_Atomic double max_sample_age_s;  /* oldest accepted sample timestamp, seconds before now */
	_Atomic double max_sample_skew_s; /* newest accepted, seconds after now */
};

struct app {
	struct store *store;
	struct node_info *node;
	struct tuner *tuner;           /* NULL until the tuner exists */
	struct jobs *jobs;             /* decides every job's lifecycle (jobs.h) */
	struct sampler *sampler;       /* NULL when sampling is off */
	struct daemon_stats *stats;
	struct diag *diag;             /* job diagnosis: thresholds and /metrics' cache; NULL: off */
	struct live *live;             /* the live event streams (live.h); NULL: off */
	struct cluster *cluster;       /* the shared store's link; NULL: cluster_store unset */
	struct gpu_leases *gpu_leases; /* GPUs handed to jobs lately (gpu_pick.h); NULL: none verified */
	struct job_views *job_views;   /* rendered job views (job_view.h); NULL: each rendered anew */
	struct app_limits limits;
	const char *web_root;          /* owned by the configuration in force */
};

#endif
