/*
 * A learner: what the tuner knows about one workload, phase and objective.
 * It pools the trials of each candidate config, fits the Gaussian-process
 * model over all candidates (around a prior shape: the topology prior, a
 * similar workload's surface, or the surface before a drift), and answers
 * the tuner's questions: which tried config is best, which candidate to try
 * next (expected improvement), how much a further search may still gain, and
 * whether a new measurement of the best contradicts the model (drift).
 * Pure: no I/O, no lock (the tuner holds its own); the benchmark links it.
 */
#ifndef DLPROF_TUNER_LEARNER_H
#define DLPROF_TUNER_LEARNER_H

#include <stdbool.h>

#include "knobs.h"
#include "tuner_model.h"

enum learner_acq {
	LEARNER_EI,    /* expected improvement over the best tried config (default) */
	LEARNER_UCB,   /* upper confidence bound, mean + 2 sd */
};

struct learner_stats {
	int trials;        /* independent runs of the config */
	long steps;        /* measurements behind them */
	double sum;        /* sum of the trials' means */
	double sumsq;      /* sum of their squares */
	double sum_var;    /* sum of the trials' variances of the mean */
};

struct learner {
	struct knob_space sp;
	enum learner_acq acq;
	struct learner_stats *fresh;   /* per candidate: trials since the last drift */
	struct learner_stats *stale;   /* per candidate: trials before it (weaker evidence) */
	double *shape;                 /* prior objective per candidate, relative (max 1) */
	double *shape_idle;            /* the same with idle inter-op threads (knob_space.interop_idle) */
	double *mu, *sd;               /* posterior per candidate, in objective units */
	bool dirty;                    /* trials added since the last fit */
	double scale;                  /* normalisation: largest |mean| tried */
	double prior_coef;             /* fitted multiplier of shape, normalised units */
	double idle_weight;            /* the last fit's weight of the idle inter-op hypothesis, 0..1 */
	int nobs;                      /* candidates with trials */
	int ntrials;
	long nsteps;
	struct gp gp;
};

/* A learner over a copy of sp with the topology prior shape; NULL when out of memory. */
struct learner *learner_new(const struct knob_space *sp);
void learner_free(struct learner *l);

/* Replaces the prior shape (ncand values, any positive scale), or the topology prior for NULL. */
void learner_set_shape(struct learner *l, const double *shape);

/*
 * Adds a trial of cand: steps measurements with mean and variance of the
 * mean var_mean.  stale: measured before a drift (counts less).  A trial
 * whose figures are not finite is ignored.
 */
void learner_add(struct learner *l, int cand, long steps, double mean, double var_mean, bool stale);
/* Adds trials of cand already pooled (what learner_stats_add gathered). */
void learner_add_pooled(struct learner *l, int cand, const struct learner_stats *s, bool stale);
/* Pools one trial into s, as learner_add would count it; false (s unchanged) when it would ignore it. */
bool learner_stats_add(struct learner_stats *s, long steps, double mean, double var_mean);
/* Pools the trials of from into s. */
void learner_stats_merge(struct learner_stats *s, const struct learner_stats *from);
/* Turns all trials so far into stale evidence (a drift was seen). */
void learner_mark_stale(struct learner *l);

/* Refits the model if trials came in since the last fit. */
void learner_refit(struct learner *l);

/* Posterior mean and standard deviation of cand (refits if needed). */
void learner_predict(struct learner *l, int cand, double *mu, double *sd);
/* Pooled measurements of cand: mean over trials, std of one trial, trials, steps. */
void learner_tried(const struct learner *l, int cand, double *mean, double *std, int *trials, long *steps);

/*
 * The recommended candidate among those passing f: the tried one with the
 * highest posterior mean, or the prior's pick when none passing was tried.
 * -1 when no candidate passes.
 */
int learner_best(struct learner *l, const struct knob_filter *f);
/* The next candidate to try among those passing f; -1 when none passes. */
int learner_propose(struct learner *l, const struct knob_filter *f);
/*
 * The expected gain of searching on among f: the largest expected
 * improvement over the best, relative to it (1.0 before any trial).
 */
double learner_gain(struct learner *l, const struct knob_filter *f);
/*
 * Whether a new trial of cand (mean, var_mean) lies so far from the model's
 * prediction that the workload must have changed.  Only judged for a config
 * measured at least twice before.
 */
bool learner_drifted(struct learner *l, int cand, double mean, double var_mean);

#endif
