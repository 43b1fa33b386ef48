/*
 * Trials in progress (see tuner_trial.h).
 */
#include <math.h>

#include "tuner_trial.h"

void trial_begin(struct trial_acc *a, int cand, int warmup, long length)
{
	a->cand = cand;
	a->length = length;
	a->warm_left = warmup;
	a->n = 0;
	a->mean = a->m2 = 0.0;
	a->t_start = a->t_end = 0.0;
}

bool trial_step(struct trial_acc *a, double t, double value)
{
	double d;

	if (a->cand < 0 || !isfinite(value))
		return false;
	a->t_end = t;
	if (a->warm_left > 0) {
		a->warm_left--;
		return false;
	}
	if (a->n == 0)
		a->t_start = t;
	a->n++;
	d = value - a->mean;
	a->mean += d / (double)a->n;
	a->m2 += d * (value - a->mean);
	return trial_complete(a);
}

double trial_var_mean(const struct trial_acc *a)
{
	if (a->n < 2)
		return 0.0;
	return a->m2 / (double)(a->n - 1) / (double)a->n;
}

bool trial_complete(const struct trial_acc *a)
{
	if (a->length > 0)
		return a->n >= a->length;
	if (a->n < TRIAL_MIN_STEPS)
		return false;
	if (a->n >= TRIAL_MAX_STEPS)
		return true;
	return sqrt(trial_var_mean(a)) <= TRIAL_REL_SE * fabs(a->mean);
}

bool trial_clearly_below(const struct trial_acc *a, double value)
{
	double se;

	if (a->n < TRIAL_CUT_MIN_STEPS || !(value > 0.0))
		return false;
	/* Few steps give a poor spread: never trust one below 1% of the mean. */
	se = fmax(sqrt(trial_var_mean(a)), 0.01 * fabs(a->mean));
	return a->mean + TRIAL_CUT_Z * se < value * (1.0 - TRIAL_CUT_MARGIN);
}
