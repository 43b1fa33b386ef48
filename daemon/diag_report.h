/*
 * A job's diagnosis report: reads the job's windowed figures from the
 * store, runs the rules of diag_rules.h over them, prices a fix for each
 * verdict with the tuner's public calls, and renders the answer of
 * GET /api/v1/jobs/{id}/report.  Also keeps, for /metrics, each running
 * job's active verdicts for one store interval, so a scrape does not read
 * every job's samples again.  Thread-safe: handlers call it concurrently;
 * the options and the cache are guarded by one lock.
 */
#ifndef DLPROF_DIAG_REPORT_H
#define DLPROF_DIAG_REPORT_H

#include <jansson.h>
#include <stdint.h>

#include "diag_rules.h"

struct cluster_ranks;
struct diag;
struct sampler;
struct store;
struct tuner;

struct diag_options {
	struct diag_thresholds th;
	double window_s;           /* the narrowest window: the store interval */
	double lookback_s;         /* a running job is diagnosed over this much of its past */
};

struct config;
/* The options a configuration sets: its diag_* keys, windows of the store interval. */
struct diag_options diag_options_of(const struct config *cfg);

/*
 * What a report reads, given at creation (main.c, once the parts exist);
 * each outlives the diag.
 */
struct diag_sources {
	struct store *store;           /* the job, its windows and its ranks */
	struct tuner *tuner;           /* prices the fixes; NULL: none priced */
	struct cluster_ranks *ranks;   /* the ranks other nodes shared; NULL: no cluster store */
	struct sampler *sampler;       /* the collectors' reasons; NULL: sampling is off */
};

/* NULL after logging why. */
struct diag *diag_new(const struct diag_options *opt, const struct diag_sources *src);
void diag_free(struct diag *d);
/* New thresholds or intervals (SIGHUP); the cache is dropped. */
void diag_set_options(struct diag *d, const struct diag_options *opt);

/*
 * The report of job id as a new JSON object in *out: {"job","workload",
 * "state","from","to","headline","verdicts":[{"kind","since","until",
 * "active","evidence":{"from","to","figures":{...}},"hint","fix"?}],
 * "undecided":[...]}.  Returns STORE_OK or a store error (STORE_ENOTFOUND:
 * no such job, or d is NULL: no diagnosis).
 */
int diag_report(struct diag *d, int64_t id, json_t **out);

/*
 * Every verdict of job id's whole life, as a new JSON array in *out of
 * diag_report's verdict objects (the straggler first): each with since and,
 * unless it holds now, until.  Verdicts are not stored as they happen:
 * this is what the rules and thresholds in force say of the stored series
 * (a running job from its start, not only its last lookback_s).
 * STORE_ENOTFOUND: no such job, or d is NULL (the diagnosis is off).
 */
int diag_history(struct diag *d, int64_t id, json_t **out);

/*
 * The kinds of verdict active now for running job id, as bits (1 << kind),
 * computed at most once per window_s (none when d is NULL).  Returns
 * STORE_OK or a store error.
 */
int diag_active(struct diag *d, int64_t id, unsigned *kinds);

#endif
