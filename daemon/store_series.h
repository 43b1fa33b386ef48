/*
 * The store functions the sampler, job discovery and the series and metrics
 * handlers need: running jobs with their pids, a job by external id,
 * downsampled series, and the upkeep of the compressed history.  Same
 * conventions as store.h.
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

/* Raw points are flushed into one block per series and span of this many seconds. */
#define STORE_BLOCK_S 600

struct store_series_answer {
	json_t *points;            /* [[t, mean], ...], t the mean time of the bucket's points */
	json_t *bands;             /* [[min, max], ...], one per point */
	const char *tier;          /* what was read: "raw", "block" (summaries) or "hour" */
	double from, to;           /* the range used */
};

/*
 * One series over a range, from the tier that fits it, with the staged
 * points not yet in blocks: raw points while at most STORE_SERIES_MAX_POINTS
 * fall in the range (and no step is asked), otherwise buckets of
 * max(step, (to - from) / STORE_SERIES_MAX_POINTS) seconds.  Without
 * from/to: the job's whole life (the node: the last hour).  The caller
 * owns out's arrays.  STORE_ENOTFOUND when the job does not exist.
 */
int store_series(struct store *st, const struct store_series_query *q, struct store_series_answer *out);

/* One name and phase of a job in one bucket (see store_series_buckets). */
struct store_bucket {
	const char *name;
	const char *phase;         /* "" for none */
	int64_t bucket;            /* (t - from) / width, rounded down */
	double t;                  /* the mean time of the values in the bucket */
	double mean, sum, count;   /* of the values in the bucket */
	double last;               /* the latest of them: a sparse series' value after the bucket */
};
typedef void (*store_bucket_fn)(const struct store_bucket *b, void *arg);

/* Names of the per-thread series (thread.PID.TID.cores, collectors/proc.c). */
#define STORE_THREAD_PREFIX "thread."

/*
 * Series of a job over [from, to), raw and rolled up, in buckets of width
 * seconds: fn is called once per name, phase and bucket that holds samples
 * (strings valid during the call only).  prefix: the names that start
 * with it ("" every one); NULL: every series but the per-thread ones,
 * which only a read that names them needs (a job may have hundreds).
 */
int store_series_buckets(struct store *st, int64_t job_id, const char *prefix, double from, double to, double width,
			 store_bucket_fn fn, void *arg);

/*
 * The series' upkeep (store_blocks.c, store_tiers.c), run once a minute:
 * staged samples and the sampler's points of closed spans are encoded into
 * blocks (dense series: raw points and per-second summaries) and added to
 * the hour tier; then each tier keeps what its limit allows as of now
 * (store_limits), and the store keeps to its budget.  Queued (returns at
 * once, the writer logs failures), or with wait, committed when it returns.
 */
int store_series_maintain(struct store *st, double now, bool wait);

/* Marks the tiered store (sql/016): benches built against older stores as well test it. */
#define STORE_SERIES_TIERS 1

/* The tiers of the series, finest first (store_tiers.c). */
enum store_tier_id { STORE_TIER_RAW, STORE_TIER_SECOND, STORE_TIER_MINUTE, STORE_TIER_HOUR, STORE_TIERS };
extern const char *const store_tier_names[STORE_TIERS];

struct store_tier {
	bool any;                  /* it holds something */
	double from, to;           /* the span it holds: its oldest data's span start, its newest's end */
	double keep_s;             /* how long it keeps data (0: kept) */
};

/* What the store takes on disk and what each tier holds now. */
struct store_usage {
	int64_t bytes;             /* on disk: the database, WAL and shared-memory files */
	int64_t file_bytes;        /* the database file */
	int64_t free_bytes;        /* its free pages (reused before it grows) */
	int64_t wal_bytes;         /* the WAL and shared-memory files */
	int64_t page_size;
	int64_t budget;            /* 0: none */
	struct store_tier tier[STORE_TIERS];
};
int store_usage(struct store *st, struct store_usage *u);

#endif
