/*
 * The store functions the sampler, job discovery and the series and metrics
 * handlers need: running jobs with their pids, a job by external id,
 * downsampled series, and retention (raw samples older than the retention
 * time rolled up per minute).  Same conventions as store.h.
 */
#ifndef DLPROF_STORE_SERIES_H
#define DLPROF_STORE_SERIES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct store;

/* The most points a series answer holds. */
#define STORE_SERIES_MAX_POINTS 1000

struct store_running_job {
	int64_t id;
	int64_t pid;               /* 0: none */
	double started;            /* unix seconds */
	char external_id[64];      /* "" when none */
	char workload[128];
	char source[16];
};

/* Running jobs, newest first, in a malloc'd array (*n may be 0). */
int store_jobs_running(struct store *st, struct store_running_job **out, size_t *n);
/* The running job with this external id; STORE_ENOTFOUND if none. */
int store_job_find_external(struct store *st, const char *external_id, int64_t *id);

struct store_series_query {
	int64_t job_id;            /* 0: the node */
	const char *name;
	const char *phase;         /* NULL: every phase */
	bool has_from, has_to, has_step;
	double from, to, step;     /* unix seconds; step in seconds */
};

/*
 * Points [[t, value], ...] of one series, raw and rolled up, averaged into
 * buckets of max(step, (to - from) / STORE_SERIES_MAX_POINTS) seconds; t is
 * the mean time of each bucket's samples.  Without from/to: the job's whole
 * life (the node: the last hour).  from_out and to_out receive the range used.
 * STORE_ENOTFOUND when the job does not exist.
 */
int store_series(struct store *st, const struct store_series_query *q, json_t **points, double *from_out,
		 double *to_out);

/* One name and phase of a job in one bucket (see store_series_buckets). */
struct store_bucket {
	const char *name;
	const char *phase;         /* "" for none */
	int64_t bucket;            /* (t - from) / width, rounded down */
	double mean, sum, count;   /* of the values in the bucket */
};
typedef void (*store_bucket_fn)(const struct store_bucket *b, void *arg);

/*
 * Every series of a job over [from, to), raw and rolled up, in buckets of
 * width seconds: fn is called once per name, phase and bucket that holds
 * samples (strings valid during the call only).  Series that repeat a value
 * are stored sparsely (sample_window.h), so a bucket may lack them.
 */
int store_series_buckets(struct store *st, int64_t job_id, double from, double to, double width, store_bucket_fn fn,
			 void *arg);

/*
 * Queues the rollup: raw samples before cutoff (rounded down to a minute)
 * become per-minute rows (n, mean, min, max) and are deleted.  Returns at
 * once; the writer logs what it did.
 */
int store_samples_rollup(struct store *st, double cutoff);

#endif
