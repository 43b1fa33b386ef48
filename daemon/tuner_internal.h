/*
 * What the tuner's own files (tuner.c, tuner_view.c) share: the state behind
 * struct tuner.  Workloads hold a learner per phase and the trials they were
 * fitted to; jobs hold their trials in progress.  Everything here is guarded
 * by tuner->lock.
 */
#ifndef DLPROF_TUNER_INTERNAL_H
#define DLPROF_TUNER_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>

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
};

struct tuner_phase {
	char name[TUNER_PHASE_MAX];   /* "": the whole job */
	struct learner *l;
	bool settled;                 /* has had a confident best (exploration is budgeted since) */
	double drift_t;               /* trials that started before this are stale; 0: no drift */
	enum tuner_prior prior;
	char prior_from[TUNER_NAME_MAX]; /* params of the similar workload, as JSON text */
};

/*
 * The trials of one config in one phase, pooled: what the phase's learner
 * is rebuilt from when the workload's space changes.  One per config tried,
 * not one per trial, so a workload's memory stays bounded by its space
 * however long its jobs run (every trial is in the store).
 */
struct tuner_pool {
	char phase[TUNER_PHASE_MAX];
	char *config;                 /* the knobs' values (no "phases"): canonical JSON text */
	struct learner_stats fresh;   /* since the phase's last drift */
	struct learner_stats stale;   /* before it */
};

struct tuner_workload {
	int64_t id;                   /* workloads.id; 0 until a job of it is seen */
	char name[TUNER_NAME_MAX];
	json_t *params;               /* object, canonical numbers */
	char objective[16];
	json_t *declared;             /* the knobs its latest job declared, or NULL */
	struct knob_space sp;
	struct tuner_phase phases[TUNER_MAX_PHASES];
	int nphases;
	struct tuner_pool *pools;
	size_t npools, pools_cap;
	long jobs;                    /* jobs seen */
	struct tuner_workload *next;
};

struct tuner_job_phase {
	char name[TUNER_PHASE_MAX];
	struct trial_acc acc;         /* the trial in progress */
	int next;                     /* the candidate last answered; -1: none */
	bool pending;                 /* waiting for a trial of next to complete */
};

struct tuner_job {
	int64_t id;
	struct tuner_workload *w;
	struct knob_filter allowed;   /* what this job can run */
	int start_cand;               /* the config it started with (fixes the static knobs) */
	int gpus;                     /* GPUs counted as given to it */
	long steps;                   /* steps seen */
	long explore_steps;           /* of which on configs not believed best */
	bool has_sps;                 /* reports samples_per_s (step_time_s is then ignored) */
	bool has_loss;
	double last_loss, last_loss_t;
	json_t *answer;               /* the config last answered */
	struct tuner_job_phase phases[TUNER_MAX_PHASES];
	int nphases;
	struct tuner_job *next;
};

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
};

/* ---- shared by tuner.c and tuner_view.c (lock held) ---- */

/* The node's limits as knobs see them; efficiency objectives start small. */
void tuner_topology(const struct tuner *t, bool efficiency, struct knob_topology *out);
struct tuner_workload *tuner_workload_find(struct tuner *t, const char *name, const json_t *params,
					   const char *objective);
/* The phase's learner, created when create is set; NULL when absent or out of room. */
struct tuner_phase *tuner_phase_get(struct tuner_workload *w, const char *phase, bool create);
/*
 * Gives a phase without trials the shape of a similar workload (same name
 * and objective, other parameters, most trials), if there is one.
 */
void tuner_prior_similar(struct tuner *t, struct tuner_workload *w, struct tuner_phase *ph);
/* The most-trialled similar workload, or NULL. */
struct tuner_workload *tuner_similar(struct tuner *t, const struct tuner_workload *w, const char *name,
				     const json_t *params, const char *objective);
/* What the tuner knows changed: every cached answer is stale (lock held). */
void tuner_cache_changed(struct tuner *t);
void tuner_cache_free(struct tuner *t);

/* Copies params with integral reals as integers and numeric strings as numbers. */
json_t *tuner_params_canonical(const json_t *params);
bool tuner_is_efficiency(const char *objective);

#endif
