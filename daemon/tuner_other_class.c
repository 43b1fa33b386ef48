/*
 * Other hardware classes as a prior (see tuner.h).  A node learns from the
 * trials of its own class as if they were its own; another class's trials
 * say little about this node beyond the shape of the surface (a thread
 * count that is best on 64 cores is not on 2), so they are never pooled:
 * they give a workload variant without trials of this class its prior
 * shape, as a similar workload's surface does (tuner_prior_similar), and
 * this node's own trials take over from its first one.
 *
 * Precedence, for a phase without trials: a similar workload of this class
 * (same name and objective, other parameters), then another class's
 * measurements of this very variant, then the topology.  Only the whole-job
 * surface is carried over, from configs without per-phase overrides.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "invariant.h"
#include "log.h"
#include "tuner_internal.h"

const char *tuner_prior_name(enum tuner_prior p)
{
	if (p == TUNER_PRIOR_SIMILAR)
		return "similar";
	if (p == TUNER_PRIOR_OTHER_CLASS)
		return "other_class";
	if (p == TUNER_PRIOR_NODE)
		return "node";
	return "topology";
}

void tuner_other_free(struct tuner_other *o)
{
	size_t i;

	if (!o)
		return;
	for (i = 0; i < o->npools; i++)
		json_decref(o->pools[i].config);
	free(o->pools);
	free(o);
}

bool tuner_has_trials(const struct tuner_workload *w)
{
	size_t i;
	int p;

	if (!w)
		return false;
	for (p = 0; p < w->nphases; p++)
		if (w->phases[p].l->ntrials > 0)
			return true;
	for (i = 0; i < w->npools; i++)
		if (w->pools[i].fresh.trials + w->pools[i].stale.trials > 0)
			return true;
	return false;
}

void tuner_prior_apply(struct tuner *t, struct tuner_workload *w, struct tuner_phase *ph)
{
	tuner_prior_similar(t, w, ph);
	tuner_prior_other_class(t, w, ph);
	tuner_prior_node(t, w, ph);
}

/*
 * The other class's surface over this space: a learner fitted to its trials
 * of the configs this space can express (this node's topology prior fills
 * in between them, as for the node's own trials).  NULL when none maps.
 */
static double *other_surface(const struct tuner_workload *w)
{
	struct learner *l = learner_new(&w->sp);
	double *shape = NULL, mu, sd, lo = INFINITY;
	size_t i;
	int c;

	if (!l)
		return NULL;
	for (i = 0; i < w->other->npools; i++)
		learner_add_pooled(l, knobs_candidate_of(&w->sp, w->other->pools[i].config, -1),
				   &w->other->pools[i].s, false);
	if (l->ntrials > 0 && (shape = calloc((size_t)w->sp.ncand, sizeof(double)))) {
		for (c = 0; c < w->sp.ncand; c++) {
			learner_predict(l, c, &mu, &sd);
			shape[c] = mu;
			if (mu < lo)
				lo = mu;
		}
		/* A shape is relative and positive (learner_set_shape); a surface crossing zero is no use. */
		if (!(isfinite(lo) && lo > 0.0)) {
			free(shape);
			shape = NULL;
		}
	}
	learner_free(l);
	return shape;
}

void tuner_prior_other_class(struct tuner *t, struct tuner_workload *w, struct tuner_phase *ph)
{
	double *shape;

	(void)t; /* only the assert reads it */
	assert(lock_held(&t->lock));
	if (!w->other || ph->name[0] || ph->l->ntrials > 0 || ph->prior == TUNER_PRIOR_SIMILAR ||
	    tuner_has_trials(w) || !(shape = other_surface(w)))
		return;
	learner_set_shape(ph->l, shape);
	ph->prior = TUNER_PRIOR_OTHER_CLASS;
	snprintf(ph->prior_from, sizeof(ph->prior_from), "%s", w->other->hw_class);
	free(shape);
}

void tuner_set_other_ask(struct tuner *t, tuner_other_ask_fn *fn, void *ctx)
{
	pthread_mutex_lock(&t->lock);
	t->other_ask = fn;
	t->other_ask_ctx = ctx;
	pthread_mutex_unlock(&t->lock);
}

/* The class with the most trials in rows, or NULL. */
static const char *most_trials(const json_t *rows)
{
	json_t *row, *per = json_object();
	const char *best = NULL, *cls;
	json_int_t most = 0, n;
	size_t i;

	json_array_foreach(rows, i, row) {
		if (!(cls = json_string_value(json_object_get(row, "hw_class"))))
			continue;
		n = json_integer_value(json_object_get(per, cls)) + json_integer_value(json_object_get(row, "trials"));
		json_object_set_new(per, cls, json_integer(n));
		if (n > most || (n == most && best && strcmp(cls, best) < 0)) {
			most = n;
			best = json_string_value(json_object_get(row, "hw_class")); /* rows outlive per */
		}
	}
	json_decref(per);
	return best;
}

/* One row of rows as a pool; false when it cannot be used (no config, overrides, bad numbers). */
static bool other_pool(const json_t *row, struct tuner_other_pool *p)
{
	const char *text = json_string_value(json_object_get(row, "config"));
	json_t *config = text ? json_loads(text, 0, NULL) : NULL;

	memset(p, 0, sizeof(*p));
	p->s.trials = (int)json_integer_value(json_object_get(row, "trials"));
	p->s.steps = (long)json_integer_value(json_object_get(row, "steps"));
	p->s.sum = json_number_value(json_object_get(row, "sum"));
	p->s.sumsq = json_number_value(json_object_get(row, "sumsq"));
	p->s.sum_var = json_number_value(json_object_get(row, "sum_var"));
	if (!json_is_object(config) || json_object_get(config, "phases") || p->s.trials <= 0 ||
	    !isfinite(p->s.sum) || !isfinite(p->s.sumsq) || !isfinite(p->s.sum_var) || p->s.sum_var < 0.0) {
		json_decref(config);
		return false;
	}
	p->config = config;
	return true;
}

/* The pools of class cls in rows; NULL when none can be used or out of memory. */
static struct tuner_other *other_new(const json_t *rows, const char *cls)
{
	struct tuner_other *o = calloc(1, sizeof(*o));
	const json_t *row;
	size_t i;

	if (!o || !(o->pools = calloc(json_array_size(rows), sizeof(*o->pools)))) {
		free(o);
		return NULL;
	}
	snprintf(o->hw_class, sizeof(o->hw_class), "%s", cls);
	json_array_foreach(rows, i, row) {
		const char *c = json_string_value(json_object_get(row, "hw_class"));
		long nodes = (long)json_integer_value(json_object_get(row, "nodes"));
		if (!c || strcmp(c, cls) != 0 || !other_pool(row, &o->pools[o->npools]))
			continue;
		o->trials += o->pools[o->npools].s.trials;
		if (nodes > o->nodes)
			o->nodes = nodes;   /* a lower bound: per config, not distinct over configs */
		o->npools++;
	}
	if (o->npools == 0) {
		tuner_other_free(o);
		return NULL;
	}
	return o;
}

/* The rows of the variant canon, as a new array. */
static json_t *variant_rows(const json_t *rows, const json_t *canon)
{
	json_t *out = json_array(), *row, *params, *rc;
	size_t i;

	json_array_foreach(rows, i, row) {
		const char *text = json_string_value(json_object_get(row, "params"));
		params = text ? json_loads(text, 0, NULL) : NULL;
		rc = json_is_object(params) ? tuner_params_canonical(params) : NULL;
		if (rc && json_equal(rc, (json_t *)canon))
			json_array_append(out, row);
		json_decref(rc);
		json_decref(params);
	}
	return out;
}

/* The workload of the answer, created with the knobs class cls declared when new; NULL when it cannot be. */
static struct tuner_workload *other_workload(struct tuner *t, const struct tuner_other_answer *a, const json_t *canon,
					     const json_t *rows, const char *cls)
{
	struct tuner_workload *w = tuner_workload_find(t, a->workload, canon, a->objective);
	const char *text = NULL;
	json_t *row, *decl;
	size_t i;

	if (w)
		return w;
	json_array_foreach(rows, i, row) {
		const char *c = json_string_value(json_object_get(row, "hw_class"));
		if (!text && c && strcmp(c, cls) == 0)
			text = json_string_value(json_object_get(row, "declared"));
	}
	decl = text ? json_loads(text, 0, NULL) : NULL;
	w = tuner_workload_create(t, a->workload, canon, a->objective, json_is_object(decl) ? decl : NULL);
	json_decref(decl);
	return w;
}

int tuner_learn_other_class(struct tuner *t, const struct tuner_other_answer *a)
{
	json_t *canon = tuner_params_canonical(a->params), *rows = variant_rows(a->rows, canon);
	struct tuner_workload *w;
	struct tuner_other *o = NULL;
	struct tuner_phase *ph0;
	const char *cls = most_trials(rows);
	int rc = -1;

	if (!canon || !cls || !(o = other_new(rows, cls)))
		goto done;
	pthread_mutex_lock(&t->lock);
	if ((w = other_workload(t, a, canon, rows, cls))) {
		tuner_other_free(w->other);
		w->other = o;
		o = NULL;
		/* A prior from an earlier answer gives way to this one. */
		if ((ph0 = tuner_phase_get(w, "", true)) && ph0->prior == TUNER_PRIOR_OTHER_CLASS &&
		    !tuner_has_trials(w)) {
			learner_set_shape(ph0->l, NULL);
			ph0->prior = TUNER_PRIOR_TOPOLOGY;
		}
		if (ph0)
			tuner_prior_apply(t, w, ph0);
		tuner_cache_changed(t);
		rc = 0;
	}
	pthread_mutex_unlock(&t->lock);
done:
	tuner_other_free(o);
	json_decref(rows);
	json_decref(canon);
	return rc;
}

/*
 * Called at a job start or a recommendation, without the lock: asks about a
 * variant without trials of this class.  The asker bounds how often.
 */
void tuner_other_ask(struct tuner *t, const char *name, const json_t *canon, enum objective objective)
{
	tuner_other_ask_fn *fn;
	void *ctx;
	bool want;

	pthread_mutex_lock(&t->lock);
	fn = t->other_ask;
	ctx = t->other_ask_ctx;
	want = fn && !tuner_has_trials(tuner_workload_find(t, name, canon, objective));
	pthread_mutex_unlock(&t->lock);
	if (want)
		fn(ctx, name, canon, objective);
}
