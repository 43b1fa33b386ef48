/*
 * The online tuner: per workload and phase it learns which config of the
 * knobs gives the best objective, proposes configs for running jobs to try at
 * step boundaries, and recommends a config for new jobs.  Thread-safe: route
 * handlers call it concurrently; it guards its state with its own lock and
 * persists what it learns through the store.
 */
#ifndef DLPROF_TUNER_H
#define DLPROF_TUNER_H

#include <jansson.h>
#include <stdint.h>

#include "store.h"

struct tuner;
struct node_info;

struct tuner_options {
	double gain_threshold;    /* stop exploring when expected gain is below this (0.01) */
};

/* Loads what was learned from the store; NULL after logging why. */
struct tuner *tuner_open(struct store *st, const struct node_info *node, const struct tuner_options *opt);
void tuner_close(struct tuner *t);

/*
 * A job registered: decides the config it starts with.  job_knobs is the
 * knobs object the job declared (or NULL).  Returns a new JSON object
 * (the config) or NULL after logging why.
 */
json_t *tuner_job_start(struct tuner *t, int64_t job_id, const char *workload, const char *params_json,
			enum objective objective, const json_t *job_knobs);

/*
 * Samples of a running job were committed: the tuner learns from them
 * (attributing them to reported_config, what the job ran with while producing
 * them, or NULL when it did not say) and
 * returns the config the job should run from now on, per phase, as a new JSON
 * object: {"intra_threads": 4, ..., "phases": {"lstm": {"intra_threads": 2}}}.
 */
json_t *tuner_job_observe(struct tuner *t, int64_t job_id, const struct sample *s, size_t n,
			  const json_t *reported_config);

/*
 * Why the config last answered for job_id (tuner_job_start,
 * tuner_job_observe) is what it is, for the job's timeline: "exploring" (a
 * proposal being measured), "drift" (a proposal after the workload's best
 * stopped giving what it had: the search reopened), "best" (the best
 * measured plan while the search goes on, the job's exploration budget
 * spent), "settled" (the best, the search over).  A static string; NULL
 * for a job the tuner does not follow.
 */
const char *tuner_job_why(struct tuner *t, int64_t job_id);

/*
 * Within how many steps job_id should report the steps it runs, or 0 when
 * it may keep its own pace.  While the job measures a proposal, its trial
 * may be decided (cut short, or completed) from the proposal's
 * TRIAL_CUT_FAR_STEPS-th step on: every step the job runs past that point
 * before it reports is one more step of a losing config.  A job reporting
 * once a second at dozens of steps a second otherwise runs a whole report's
 * worth of steps on each proposal, however soon it loses.
 */
long tuner_job_report_within(struct tuner *t, int64_t job_id);

/* The job ended; its open trials are closed. */
void tuner_job_end(struct tuner *t, int64_t job_id);

/*
 * The config to start a new job of workload name with params (an object of
 * strings or numbers; NULL for none) under objective, as
 * a new JSON object: {"workload","params","objective","config","source":
 * "learned"|"similar"|"other_class"|"node"|"default","expected":{"value","std"}|null,
 * "expected_gain" (over the topology default, a fraction)|null,
 * "remaining_gain","confidence" (0..1),"confident","trials","configs_tried",
 * "jobs","explanation"}; confidence is 1 / (1 + remaining_gain / gain_threshold).
 * Answers from memory in well under a millisecond once the model is fitted.
 */
json_t *tuner_recommend(struct tuner *t, const char *name, const json_t *params, enum objective objective);

/*
 * Rendered recommend answers, cached so a repeated query is a lookup.  key
 * (klen bytes, any content) is the caller's canonical form of everything
 * the answer depends on besides the tuner's state.  tuner_answer_get
 * returns a malloc'd NUL-terminated copy of the body (*len its length) or
 * NULL, and sets *gen either way; on a miss the caller computes the answer
 * and offers it with tuner_answer_put(..., gen), which stores it only if
 * the tuner learned nothing since (so a stale answer is never cached) and
 * only within the cache's bounds (long keys or bodies are not cached).
 */
#define TUNER_ANSWER_KEY_MAX 1024
char *tuner_answer_get(struct tuner *t, const char *key, size_t klen, size_t *len, uint64_t *gen);
void tuner_answer_put(struct tuner *t, const char *key, size_t klen, const char *body, size_t len, uint64_t gen);
/* Entries currently valid (for tests). */
size_t tuner_cache_count(struct tuner *t);

/* {"workloads":[...]}: each workload with its best config, confidence and trials. */
json_t *tuner_workloads(struct tuner *t);

/*
 * One workload's learned surface: the variant with params (or, for NULL,
 * the one with most trials) with every tried config (mean, std, n), the
 * model's prediction over all candidates, the best and the confidence, and
 * the other variants, of objective (NULL: of any).  NULL when no workload
 * has that name.
 */
json_t *tuner_workload(struct tuner *t, const char *name, const json_t *params, const enum objective *objective);

/* A trial measured on another node of this hardware class (cluster.c). */
struct tuner_remote_trial {
	const char *workload;
	const json_t *params;         /* object */
	enum objective objective;
	const char *phase;            /* "" for the whole job */
	const char *config;           /* JSON text as the node stored it */
	const char *declared_json;    /* the knobs its workload was declared with there, or NULL */
	long n;                       /* measured steps */
	double mean, m2, t_start;
};

/* Learns r as if measured here; -1 when it cannot be used (too short, bad numbers). */
int tuner_learn_remote(struct tuner *t, const struct tuner_remote_trial *r);

/*
 * Other hardware classes as a prior (tuner_other_class.c).  A workload variant
 * that has no trials of this node's class when a job of it starts or it is
 * recommended is asked about through ask (cluster.c queues the question for
 * its thread and returns at once; it is called without the tuner's lock).
 * The answer comes back through tuner_learn_other_class.  fn NULL: nobody
 * to ask (no cluster store); set before requests are served, cleared after.
 */
typedef void tuner_other_ask_fn(void *ctx, const char *workload, const json_t *params, enum objective objective);
void tuner_set_other_ask(struct tuner *t, tuner_other_ask_fn *fn, void *ctx);

/*
 * What other classes measured of a workload: rows, a JSON array of
 * {"params" (JSON text),"hw_class","config" (JSON text),"trials","steps",
 * "sum","sumsq","sum_var","nodes","declared" (JSON text or null)}, the
 * whole-job trials of each variant, class and config pooled (sums of the
 * trials' means, of their squares and of their variances of the mean);
 * "declared" the knobs the workload was last declared with there.  Rows of
 * the variant params (compared as the tuner canonicalises params) are
 * used; the class with the most trials becomes the variant's prior.  -1
 * when nothing in rows can be used.
 */
struct tuner_other_answer {
	const char *workload;
	const json_t *params;         /* object */
	enum objective objective;
	const json_t *rows;
};
int tuner_learn_other_class(struct tuner *t, const struct tuner_other_answer *a);

#endif
