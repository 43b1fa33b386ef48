/*
 * This node's other workloads as a prior (see tuner_internal.h).  A workload
 * nobody measured -- no trials of its own, no similar workload (same name,
 * other parameters), no other hardware class's trials of it -- still runs on
 * a machine other workloads have taught the tuner about: where its threads
 * stop paying, whether its SMT siblings help, where oversubscription turns
 * into a cliff.  Trials other nodes of this hardware class shared through the
 * cluster store are pooled here as their own workloads, so they count too.
 *
 * The prior is the geometric mean, over the workloads of the same objective
 * with enough whole-job trials, of each one's predicted surface relative to
 * its own best, read at the new workload's candidates through the knobs of
 * the machine they share (threads, binding, allocator; the other knobs at
 * that workload's best), times the topology rules' shape, which also orders
 * the knobs that are the workload's own (batch size, loader, GPUs).  It orders the first trials; the workload's own first trial takes over
 * as it does from any prior shape.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "invariant.h"
#include "tuner_internal.h"

/* Whole-job trials a workload needs before its surface informs others. */
#define NODE_PRIOR_MIN_TRIALS 3

/* Whether o's surface may inform a prior for w (NULL: a workload not seen yet) of objective obj. */
static bool informs(const struct tuner_workload *o, const struct tuner_workload *w, const char *name,
		    enum objective obj)
{
	struct tuner_phase *ph;

	if (o == w || o->objective != obj || strcmp(o->name, name) == 0)
		return false;
	ph = tuner_phase_get((struct tuner_workload *)o, "", false);
	return ph && ph->l->ntrials >= NODE_PRIOR_MIN_TRIALS;
}

/*
 * The knobs whose effect is the machine's more than the workload's: how
 * many threads it runs well and how it binds and allocates.  A batch size,
 * a loader count or a GPU count is the workload's own (and under goodput
 * its statistics'): another workload's best says nothing of them.
 */
static const enum knob_id machine_knobs[] = {KNOB_INTRA_THREADS, KNOB_INTEROP_THREADS, KNOB_RANKS, KNOB_AFFINITY,
					     KNOB_ALLOCATOR, KNOB_OTHER};

/*
 * Adds to logsum (and counts in n) log of o's predicted surface over its
 * best, at sp's candidates: their machine knobs, o's others at its best.
 */
static void add_surface(struct tuner_workload *o, const struct knob_space *sp, double *logsum, int *n)
{
	struct tuner_phase *oph = tuner_phase_get(o, "", false);
	int *map = malloc(sizeof(int) * (size_t)sp->ncand), c;
	double top = 0.0, mu, sd;
	struct knob_filter all;

	if (!map)
		return;
	knobs_filter_all(&o->sp, &all);
	knobs_map(sp, &o->sp, learner_best(oph->l, &all), machine_knobs, map);
	for (c = 0; c < o->sp.ncand; c++) {
		learner_predict(oph->l, c, &mu, &sd);
		top = fmax(top, mu);
	}
	for (c = 0; c < sp->ncand && top > 0.0; c++) {
		if (map[c] < 0)
			continue;
		learner_predict(oph->l, map[c], &mu, &sd);
		if (mu > 0.0) {
			logsum[c] += log(mu / top);
			n[c]++;
		}
	}
	free(map);
}

double *tuner_node_shape(struct tuner *t, const struct tuner_workload *w, const char *name, enum objective obj,
			 const struct knob_space *sp, int *from)
{
	double *logsum = calloc((size_t)sp->ncand, sizeof(double)), lo = 0.0;
	int *n = calloc((size_t)sp->ncand, sizeof(int)), c;
	struct tuner_workload *o;

	assert(lock_held(&t->lock));
	*from = 0;
	if (!logsum || !n)
		goto none;
	for (o = t->workloads; o; o = o->next)
		if (informs(o, w, name, obj)) {
			add_surface(o, sp, logsum, n);
			(*from)++;
		}
	if (*from == 0)
		goto none;
	for (c = 0; c < sp->ncand; c++)
		if (n[c] > 0)
			lo = fmin(lo, logsum[c] / n[c]);
	/* Candidates no workload could be read at: as low as the lowest read, then the rules. */
	for (c = 0; c < sp->ncand; c++)
		logsum[c] = exp(n[c] > 0 ? logsum[c] / n[c] : lo) * knobs_prior_shape(sp, c);
	free(n);
	return logsum;
none:
	free(logsum);
	free(n);
	return NULL;
}

void tuner_prior_node(struct tuner *t, struct tuner_workload *w, struct tuner_phase *ph)
{
	double *shape;
	int from;

	assert(lock_held(&t->lock));
	if (ph->name[0] || ph->l->ntrials > 0 || ph->prior != TUNER_PRIOR_TOPOLOGY || tuner_has_trials(w) ||
	    !(shape = tuner_node_shape(t, w, w->name, w->objective, &w->sp, &from)))
		return;
	learner_set_shape(ph->l, shape);
	ph->prior = TUNER_PRIOR_NODE;
	snprintf(ph->prior_from, sizeof(ph->prior_from), "%d workloads", from);
	free(shape);
}
