/*
 * A trial in progress: the measurements of one job (and phase) running one
 * config, in the samples' own time order.  The first steps after a switch
 * are dropped (thread pools respawn, caches refill), the rest are averaged
 * (Welford), and the trial is complete once its standard error is small or
 * it has run long enough.  Pure: decisions depend on the steps alone, never
 * on when they arrived, so a replay at any speed learns the same.
 */
#ifndef DLPROF_TUNER_TRIAL_H
#define DLPROF_TUNER_TRIAL_H

#include <stdbool.h>

#define TRIAL_WARMUP_START 3    /* steps dropped at a job's start (allocation, JIT, page faults) */
#define TRIAL_WARMUP_SWITCH 2   /* steps dropped after a config switch */
#define TRIAL_MIN_STEPS 5       /* measured steps before a trial may complete */
#define TRIAL_MAX_STEPS 12      /* a trial completes after this many, however noisy (a job is seconds of steps) */
#define TRIAL_REL_SE 0.015      /* ... or once its standard error is this share of its mean */
#define TRIAL_LONG_STEPS 200    /* a trial of the config a job settled on: one row per this many steps */
#define TRIAL_CUT_MIN_STEPS 3   /* measured steps before a losing proposal may be cut short */
#define TRIAL_CUT_Z 2.0         /* ... when its mean is this many standard errors ... */
#define TRIAL_CUT_MARGIN 0.03   /* ... below this share under the best value */
#define TRIAL_CUT_FAR 0.5       /* a step below this share of the best value is far below it ... */
#define TRIAL_CUT_FAR_STEPS 2   /* ... and this many in a row, warm-up included, end a proposal */

struct trial_acc {
	int cand;          /* the candidate measured; -1 when none */
	int warm_left;     /* steps still to drop */
	long length;       /* 0: complete by TRIAL_MIN_STEPS/REL_SE/MAX_STEPS; else after this many steps */
	long n;            /* measured steps */
	double mean, m2;   /* Welford's running mean and sum of squared deviations */
	double t_start;    /* time of the first measured step */
	double t_end;      /* time of the last step seen */
};

/* Starts measuring cand, dropping the first warmup steps; length as in struct trial_acc. */
void trial_begin(struct trial_acc *a, int cand, int warmup, long length);
/* Adds one step's objective value at time t; true when the trial is complete. */
bool trial_step(struct trial_acc *a, double t, double value);
bool trial_complete(const struct trial_acc *a);
/* The variance of the trial's mean (0 with fewer than two steps). */
double trial_var_mean(const struct trial_acc *a);
/*
 * Whether the trial is clearly worse than value (the best config's): after
 * TRIAL_CUT_MIN_STEPS, its mean plus TRIAL_CUT_Z standard errors is still
 * TRIAL_CUT_MARGIN below value.  A sequential test on the steps: a losing
 * proposal stops costing the job as soon as it is plain that it loses.
 */
bool trial_clearly_below(const struct trial_acc *a, double value);

#endif
