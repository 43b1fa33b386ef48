/*
 * A job's diagnosis report: reads the job's windowed figures from the
 * store, runs the rules of diagnosis.h over them, prices a fix for each
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

#include "diagnosis.h"

struct app;
struct diag;

struct diag_options {
	struct diag_thresholds th;
	double window_s;           /* the narrowest window: the store interval */
	double lookback_s;         /* a running job is diagnosed over this much of its past */
};

/* NULL after logging why. */
struct diag *diag_new(const struct diag_options *opt);
void diag_free(struct diag *d);
/* New thresholds or intervals (SIGHUP); the cache is dropped. */
void diag_set_options(struct diag *d, const struct diag_options *opt);

/*
 * The report of job id as a new JSON object in *out: {"job","workload",
 * "state","from","to","headline","verdicts":[{"kind","since","until",
 * "active","evidence":{"from","to","figures":{...}},"hint","fix"?}],
 * "undecided":[...]}.  Returns STORE_OK or a store error (STORE_ENOTFOUND:
 * no such job).
 */
int diag_report(struct app *app, int64_t id, json_t **out);

/*
 * Every verdict of job id's whole life, as a new JSON array in *out of
 * diag_report's verdict objects (the straggler first): each with since and,
 * unless it holds now, until.  Verdicts are not stored as they happen:
 * this is what the rules and thresholds in force say of the stored series
 * (a running job from its start, not only its last lookback_s).
 * STORE_ENOTFOUND: no such job, or the diagnosis is off.
 */
int diag_history(struct app *app, int64_t id, json_t **out);

/*
 * The kinds of verdict active now for running job id, as bits (1 << kind),
 * computed at most once per window_s.  Returns STORE_OK or a store error.
 */
int diag_active(struct app *app, int64_t id, unsigned *kinds);

#endif
