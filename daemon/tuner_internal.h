/*
 * What the tuner's own files (tuner.c, tuner_plan.c, tuner_recommend.c) share:
 * the state behind struct tuner.  Workloads hold a learner per phase, the
 * trials they were fitted to and the whole-job trials of each plan; jobs
 * hold their trials in progress.  Everything here is guarded by tuner->lock.
 */
#ifndef DLPROF_TUNER_INTERNAL_H
#define DLPROF_TUNER_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>

#include "config.h"
#include "goodput_noise.h"
#include "knobs.h"
#include "node.h"
#include "tuner.h"
#include "tuner_learner.h"
#include "tuner_trial.h"

#define TUNER_MAX_PHASES 16
#define TUNER_PHASE_MAX 64
#define TUNER_NAME_MAX 128

/* Where a learner's prior shape came from. */
enum tuner_prior {
	TUNER_PRIOR_TOPOLOGY,   /* the node's cores and GPUs */
	TUNER_PRIOR_SIMILAR,    /* a workload of the same name with other parameters */
	TUNER_PRIOR_OTHER_CLASS, /* this very workload measured on another hardware class (tuner_other_class.c) */
	TUNER_PRIOR_NODE,       /* the other workloads this node (and its class) measured (tuner_node.c) */
};

/* The prior's name in the views: "topology", "similar", "other_class" or "node". */
const char *tuner_prior_name(enum tuner_prior p);

struct tuner_phase {
	char name[TUNER_PHASE_MAX];   /* "": the whole job */
	struct learner *l;
	bool settled;                 /* has had a confident best (exploration is budgeted since) */
	double drift_t;               /* trials that started before this are stale; 0: no drift */
	enum tuner_prior prior;
	char prior_from[TUNER_NAME_MAX]; /* params of the similar workload (JSON text), or the other class */
};

/*
 * A plan: what a whole job runs, a candidate at the top level (which fixes
 * the static knobs) and, per phase of the workload, the candidate the phase
 * runs (the same static knobs, other runtime ones).  A uniform plan runs
 * its top candidate everywhere.  Plans are judged by the whole-job
 * objective alone: per-phase times only predict which plans to measure.
 */
struct tuner_plan {
	int top;                          /* candidate; -1: none */
	int over[TUNER_MAX_PHASES];       /* per w->phases index: the phase's candidate; -1: top's */
};

/* Most plans (pools of phase "") a workload keeps; beyond, new plans are not learned. */
#define TUNER_MAX_PLANS 512

/*
 * The trials of one config in one phase, pooled: what the phase's learner
 * is rebuilt from when the workload's space changes.  One per config tried,
 * not one per trial, so a workload's memory stays bounded by its space
 * however long its jobs run (every trial is in the store).  The pools of
 * phase "" are the whole-job trials of plans: a uniform plan's config has
 * no "phases" and also teaches the whole-job learner; a plan with
 * overrides is judged by its pool alone.
 */
struct tuner_pool {
	char phase[TUNER_PHASE_MAX];
	char *config;                 /* canonical JSON text; for phase "", the plan (with "phases") */
	struct tuner_plan plan;       /* phase "": the plan config denotes; plan.top -1 when the space cannot */
	bool uniform;                 /* phase "": config has no overrides */
	struct learner_stats fresh;   /* since the phase's last drift */
	struct learner_stats stale;   /* before it */
};

/*
 * What objective=goodput knows of a workload (tuner_goodput.c): its
 * gradient noise scale and, per config measured, the global batch and the
 * raw throughput, so the view can show raw and learning speed-up.  In
 * memory only: after a restart it is measured again from the next steps.
 */
struct tuner_goodput_config {
	int cand;                     /* top-level candidate */
	double global_batch;          /* M: the latest the config reported */
	double sps_sum;               /* samples_per_s summed ... */
	long n;                       /* ... over this many steps, each run's first TRIAL_WARMUP_START left out */
};

struct tuner_goodput {
	struct goodput_noise noise;
	struct tuner_goodput_config *configs;
	size_t nconfigs, cap;         /* at most TUNER_MAX_PLANS configs */
};

struct tuner_workload {
	int64_t id;                   /* workloads.id; 0 until a job of it is seen */
	char name[TUNER_NAME_MAX];
	json_t *params;               /* object, canonical numbers */
	enum objective objective;
	json_t *declared;             /* the knobs its latest job declared, or NULL */
	struct knob_space sp;
	struct tuner_phase phases[TUNER_MAX_PHASES];
	int nphases;
	struct tuner_pool *pools;
	size_t npools, pools_cap;
	long jobs;                    /* jobs seen */
	long steps;                   /* whole-job steps seen (after a restart: those its trials measured) */
	double kappa_sum;             /* objective x step time (x resources for efficiency), summed ... */
	long kappa_n;                 /* ... over this many steps: turns a value into a step time */
	double switch_s, switch_var;  /* seconds a phase's thread switch costs a step, and its variance (tuner_plan.c) */
	struct tuner_other *other;    /* what another hardware class measured of it (tuner_other_class.c); NULL: nothing */
	struct tuner_goodput gp;      /* objective=goodput only */
	struct tuner_workload *next;
};

struct tuner_job_phase {
	char name[TUNER_PHASE_MAX];
	struct trial_acc acc;         /* the trial in progress; for phase "", acc.cand is a pool index */
};

struct tuner_job {
	int64_t id;
	struct tuner_workload *w;
	struct knob_filter allowed;   /* what this job can run */
	int start_cand;               /* the config it started with (fixes the static knobs) */
	int gpus;                     /* GPUs counted as given to it */
	struct tuner_plan plan;       /* the plan last answered */
	int plan_pool;                /* its pool (phase ""); -1: none */
	bool pending;                 /* plan is a proposal whose trial has not completed */
	long pending_steps;           /* steps seen when it was proposed */
	int inc_pool;                 /* the best measured plan at the last decision; -1: none */
	double inc_value;             /* its whole-job value then; 0: none */
	long steps;                   /* steps seen */
	long cut_trials;              /* proposals cut short as clearly worse */
	int far_below;                /* consecutive steps of the proposal far below the best */
	bool has_sps;                 /* reports samples_per_s (step_time_s is then ignored) */
	double gp_batch;              /* goodput: the global batch of its latest step; 0: not reported */
	int gp_cand;                  /* goodput: the config of its latest steps ... */
	long gp_on;                   /* ... and how many in a row (the first are warm-up) */
	bool gp_noise;                /* goodput: it reports gradient noise figures */
	json_t *answer;               /* the config last answered */
	struct tuner_job_phase phases[TUNER_MAX_PHASES];
	int nphases;
	struct tuner_job *next;
};

/* ---- objective=goodput (tuner_goodput.c) ---- */

/*
 * Notes the goodput figures of the step that starts at s[0] (the samples
 * up to the first of another time): its global batch and gradient norms.
 */
void tuner_goodput_step(struct tuner_job *j, const struct sample *const *s, size_t n);
/*
 * The goodput of one whole-job sample measured under cand: samples/s x
 * phi / (phi + M), the efficiency against the smallest batches, which ranks
 * configs as (phi + M0) / (phi + M) does for any baseline M0.  Plain
 * samples/s while the workload has no precise noise scale, unless the job
 * reports noise figures and the workload has had fewer than
 * GOODPUT_WAIT_STEPS of them (then NAN: it waits); NAN for other samples.
 */
double tuner_goodput_value(struct tuner_job *j, const struct sample *s, int cand);
/* The workload's goodput view (noise scale, baseline, per config raw and learning speed-up). */
json_t *tuner_goodput_json(const struct tuner_workload *w);
void tuner_goodput_free(struct tuner_goodput *gp);
/*
 * What objective=goodput measured of w (its noise accumulator, per config
 * samples/s and global batch) as JSON text to keep across restarts
 * (sql/012), to free(); NULL when there is nothing (or no memory).
 */
char *tuner_goodput_state(const struct tuner_workload *w);
/* Takes back such a state; configs the workload's space cannot express are dropped. */
void tuner_goodput_restore(struct tuner_workload *w, const json_t *state);

/* Rendered recommend answers (tuner_cache.c); bounded: 64 x (1 KiB key + 16 KiB body) at most. */
#define TUNER_CACHE_SLOTS 64
#define TUNER_CACHE_KEY_MAX TUNER_ANSWER_KEY_MAX
#define TUNER_CACHE_BODY_MAX 16384

struct tuner_cached {
	char *key;                    /* NULL: a free slot */
	size_t klen;
	char *body;
	size_t blen;
	uint64_t hash;
	uint64_t used;               /* tick of the last use, for LRU */
};

struct tuner_cache {
	struct tuner_cached e[TUNER_CACHE_SLOTS];
	uint64_t gen;                /* bumped by every change of what the tuner knows */
	uint64_t filled_gen;         /* the generation the entries were rendered in */
	uint64_t tick;
};

struct tuner {
	pthread_mutex_t lock;
	struct tuner_cache cache;
	struct store *st;             /* NULL in unit tests: nothing persisted */
	struct node_info node;
	struct tuner_options opt;
	struct tuner_workload *workloads;
	struct tuner_job *jobs;
	int gpus_given;               /* GPUs of running jobs */
	tuner_other_ask_fn *other_ask; /* asks what other classes measured (cluster.c); NULL: no cluster */
	void *other_ask_ctx;
};

/* ---- shared by tuner.c and tuner_recommend.c (lock held) ---- */

/* The node's limits as knobs see them; efficiency objectives start small. */
void tuner_topology(const struct tuner *t, bool efficiency, struct knob_topology *out);
struct tuner_workload *tuner_workload_find(struct tuner *t, const char *name, const json_t *params,
					   enum objective objective);
/* The phase's learner, created when create is set; NULL when absent or out of room. */
struct tuner_phase *tuner_phase_get(struct tuner_workload *w, const char *phase, bool create);
/*
 * Gives a phase without trials the shape of a similar workload (same name
 * and objective, other parameters, most trials), if there is one.
 */
void tuner_prior_similar(struct tuner *t, struct tuner_workload *w, struct tuner_phase *ph);
/*
 * Gives a phase without trials its prior, in the order of precedence: a
 * similar workload of this class (tuner_prior_similar), else what another
 * hardware class measured of this workload (tuner_prior_other_class), else
 * what this node's other workloads measured (tuner_prior_node).
 */
void tuner_prior_apply(struct tuner *t, struct tuner_workload *w, struct tuner_phase *ph);
/* ---- other hardware classes (tuner_other_class.c, lock held) ---- */

/* One uniform whole-job config's trials on another hardware class, pooled. */
struct tuner_other_pool {
	json_t *config;               /* as that class ran it */
	struct learner_stats s;
};

/* What the class that measured a workload most measured of it: a prior, never pooled as trials. */
struct tuner_other {
	char hw_class[TUNER_NAME_MAX];
	struct tuner_other_pool *pools;
	size_t npools;
	int trials;                   /* whole-job trials behind it */
	long nodes;                   /* nodes of that class that measured it */
};

void tuner_other_free(struct tuner_other *o);
/*
 * Gives the whole-job phase ph of w, while it has no trials and no similar
 * workload's prior, the surface the other class measured, read at this
 * space's candidates (configs mapped by knob values; those this space
 * cannot run are left out).
 */
void tuner_prior_other_class(struct tuner *t, struct tuner_workload *w, struct tuner_phase *ph);
/* ---- this node's other workloads (tuner_node.c, lock held) ---- */

/*
 * The prior shape, over sp's candidates, that the other workloads of
 * objective obj measured on this node (w: the workload it is for, name its
 * name; w NULL when not seen yet): a new array of sp->ncand, or NULL when no
 * workload has trials enough; *from says how many informed it.
 */
double *tuner_node_shape(struct tuner *t, const struct tuner_workload *w, const char *name, enum objective obj,
			 const struct knob_space *sp, int *from);
/* Gives the whole-job phase of w, while it has no trials and no other prior, the node's shape. */
void tuner_prior_node(struct tuner *t, struct tuner_workload *w, struct tuner_phase *ph);

/* Whether w (NULL: not seen here) has trials of this node's class. */
bool tuner_has_trials(const struct tuner_workload *w);
/*
 * Asks the cluster (tuner_set_other_ask) about a variant without trials of
 * this class; called without the lock, at a job start or a recommendation.
 */
void tuner_other_ask(struct tuner *t, const char *name, const json_t *canon, enum objective objective);
/* A workload not seen yet, with the knobs declared (NULL: none); NULL after logging why. */
struct tuner_workload *tuner_workload_create(struct tuner *t, const char *name, const json_t *params,
					     enum objective objective, const json_t *declared);
/* The most-trialled similar workload, or NULL. */
struct tuner_workload *tuner_similar(struct tuner *t, const struct tuner_workload *w, const char *name,
				     const json_t *params, enum objective objective);
/* ---- plans (tuner_plan.c, lock held) ---- */

/* The estimate of a plan's whole-job value. */
struct tuner_plan_est {
	double mu, sd;        /* objective units */
	bool measured;        /* from its own whole-job trials (else predicted) */
	int trials;
};

/* The outcome of ranking a job's (or a new job's) plans. */
struct tuner_plan_choice {
	struct tuner_plan best;       /* the best measured plan (the prior's pick before any) */
	struct tuner_plan next;       /* the plan of highest expected improvement */
	struct tuner_plan_est best_est, next_est;
	double gain;                  /* largest expected improvement, relative to best (1.0 before any) */
	bool any_measured;
	bool survey;                  /* next is an unmeasured static group's survey (measured whatever it costs) */
};

void tuner_plan_uniform(struct tuner_plan *p, int top);
bool tuner_plan_is_uniform(const struct tuner_workload *w, const struct tuner_plan *p);
bool tuner_plan_equal(const struct tuner_workload *w, const struct tuner_plan *a, const struct tuner_plan *b);
/* The config of a plan: top's knobs with "phases" overrides (runtime knobs that differ); new reference. */
json_t *tuner_plan_json(const struct tuner_workload *w, const struct tuner_plan *p);
/*
 * The plan a config denotes (a reported or stored one): top from its knobs
 * (base fills the knobs it lacks), each phase from its "phases" entry;
 * phases it names are added to the workload.  -1 when the space cannot
 * express it.
 */
int tuner_plan_of_config(struct tuner_workload *w, const json_t *config, int base, struct tuner_plan *out);
/* The pool (phase "") of a plan, created when absent; -1 when out of room. */
int tuner_plan_pool(struct tuner_workload *w, const struct tuner_plan *p);
/* Re-derives a "" pool's plan from its config text (after the space changed). */
void tuner_plan_pool_parse(struct tuner_workload *w, struct tuner_pool *pool);
/* The whole-job value of p: measured when it was, else predicted from the phases' times. */
void tuner_plan_estimate(struct tuner *t, struct tuner_workload *w, const struct tuner_plan *p,
			 struct tuner_plan_est *e);
/* Ranks the plans whose candidates pass f (static knobs free or pinned by f). */
int tuner_plan_choose(struct tuner *t, struct tuner_workload *w, const struct knob_filter *f,
		      struct tuner_plan_choice *out);
/* Whether a trial (mean, variance of its mean) of a plan's pool departs from what the pool measured (mu +- sd). */
bool tuner_pool_drifted(const struct tuner_workload *w, int pool, double mean, double var_mean, double *mu, double *sd);
/* Resources a config holds, for the efficiency objective: GPUs, or else cores. */
double tuner_resources(const struct knob_space *sp, int cand);

/* What the tuner knows changed: every cached answer is stale (lock held). */
void tuner_cache_changed(struct tuner *t);
void tuner_cache_free(struct tuner *t);

/* Copies params with integral reals as integers and numeric strings as numbers. */
json_t *tuner_params_canonical(const json_t *params);

#endif
