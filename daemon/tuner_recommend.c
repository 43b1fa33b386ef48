/*
 * Which config the tuner recommends for a new job, and why (tuner_recommend):
 * learned, from a similar workload, from another hardware class, from what
 * this node's other workloads measured, or the topology default; and the
 * views of what it learned (the list of workloads, one workload's surface).
 * Everything is answered from memory under the tuner's lock; a model refits
 * only when trials came in since its last fit.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tuner_internal.h"

/* Most predicted configs one surface answer lists. */
#define VIEW_MAX_PREDICTED 512

static const char *unit_of(enum objective objective)
{
	if (objective == OBJECTIVE_GOODPUT)
		return "samples/s x phi/(phi+M)";
	if (objective == OBJECTIVE_EFFICIENCY)
		return "samples/s per core or GPU";
	return "samples/s";
}

/*
 * The candidates a new job may start with now (the node's CPUs and the free
 * GPUs), or, for the learned surface, on this node at all (every GPU).
 */
static void node_filter(struct tuner *t, const struct tuner_workload *w, const struct knob_space *sp,
			struct knob_filter *f)
{
	struct knob_topology topo;

	tuner_topology(t, w ? w->objective == OBJECTIVE_EFFICIENCY : false, &topo);
	knobs_filter_all(sp, f);
	(void)knobs_filter_topology(sp, f, &topo);
}

static void surface_filter(struct tuner *t, const struct tuner_workload *w, struct knob_filter *f)
{
	struct knob_topology topo;

	tuner_topology(t, w->objective == OBJECTIVE_EFFICIENCY, &topo);
	topo.gpus_free = topo.gpus_total;
	knobs_filter_all(&w->sp, f);
	(void)knobs_filter_topology(&w->sp, f, &topo);
}

static double confidence_of(const struct tuner *t, double remaining)
{
	return 1.0 / (1.0 + remaining / t->opt.gain_threshold);
}

/* Whole-job trials of plans with overrides (uniform plans' are the whole-job learner's). */
static int plan_trials(const struct tuner_workload *w)
{
	size_t i;
	int n = 0;

	for (i = 0; i < w->npools; i++)
		if (!w->pools[i].phase[0] && !w->pools[i].uniform)
			n += w->pools[i].fresh.trials + w->pools[i].stale.trials;
	return n;
}

/* Distinct plans with whole-job trials. */
static int plans_measured(const struct tuner_workload *w)
{
	size_t i;
	int n = 0;

	for (i = 0; i < w->npools; i++)
		n += !w->pools[i].phase[0] && w->pools[i].fresh.trials + w->pools[i].stale.trials > 0;
	return n;
}

/* A plan in words: "intra_threads=2,interop_threads=2; in fork intra_threads=1". */
static void plan_words(const struct tuner_workload *w, const struct tuner_plan *p, const json_t *config, char *buf,
		       size_t len)
{
	const char *phase, *knob;
	json_t *over, *v;
	size_t used;

	knobs_config_text(&w->sp, p->top, buf, len);
	json_object_foreach(json_object_get(config, "phases"), phase, over) {
		used = strlen(buf);
		snprintf(buf + used, len - used, "; in %s", phase);
		json_object_foreach(over, knob, v) {
			used = strlen(buf);
			if (json_is_string(v))
				snprintf(buf + used, len - used, " %s=%s", knob, json_string_value(v));
			else
				snprintf(buf + used, len - used, " %s=%" JSON_INTEGER_FORMAT, knob, json_integer_value(v));
		}
	}
}

static json_t *recommend_learned(struct tuner *t, struct tuner_workload *w, struct tuner_phase *ph0)
{
	struct tuner_plan_choice ch;
	struct tuner_plan dflt;
	struct tuner_plan_est d;
	struct knob_filter f;
	double gain;
	char text[400], dtext[200], line[1024];
	json_t *config;

	node_filter(t, w, &w->sp, &f);
	if (tuner_plan_choose(t, w, &f, &ch) < 0 || !ch.any_measured)
		return NULL;
	tuner_plan_uniform(&dflt, knobs_prior_candidate(&w->sp));
	tuner_plan_estimate(t, w, &dflt, &d);
	gain = d.mu > 0.0 ? ch.best_est.mu / d.mu - 1.0 : NAN;
	config = tuner_plan_json(w, &ch.best);
	plan_words(w, &ch.best, config, text, sizeof(text));
	knobs_config_text(&w->sp, dflt.top, dtext, sizeof(dtext));
	snprintf(line, sizeof(line), "best of %d plans measured in %d whole-job trials of this workload: %s gives %.4g %s (+- %.2g)",
		 plans_measured(w), ph0->l->ntrials + plan_trials(w), text, ch.best_est.mu, unit_of(w->objective),
		 ch.best_est.sd);
	if (isfinite(gain) && !tuner_plan_equal(w, &ch.best, &dflt)) {
		size_t len = strlen(line);
		snprintf(line + len, sizeof(line) - len, ", %+.0f%% over the topology default %s", 100.0 * gain,
			 dtext);
	}
	return json_pack("{s:o, s:s, s:{s:f, s:f}, s:o, s:f, s:f, s:b, s:i, s:i, s:I, s:s}", "config", config,
			 "source", "learned", "expected", "value", ch.best_est.mu, "std", ch.best_est.sd, "expected_gain",
			 isfinite(gain) ? json_real(gain) : json_null(), "remaining_gain", ch.gain, "confidence",
			 confidence_of(t, ch.gain), "confident", ch.gain < t->opt.gain_threshold, "trials",
			 ph0->l->ntrials + plan_trials(w), "configs_tried", plans_measured(w), "jobs", (json_int_t)w->jobs,
			 "explanation", line);
}

/* A space for a workload not learned yet: the node's, with the knobs a similar one declared. */
static int fresh_space(struct tuner *t, const json_t *declared, enum objective objective, struct knob_space *sp)
{
	struct knob_topology topo;
	char err[200];

	tuner_topology(t, objective == OBJECTIVE_EFFICIENCY, &topo);
	if (knobs_space_build(sp, &topo, declared, err, sizeof(err)) == 0)
		return 0;
	return knobs_space_build(sp, &topo, NULL, err, sizeof(err));
}

static json_t *recommend_similar(struct tuner *t, struct tuner_workload *o, enum objective objective)
{
	struct tuner_phase *oph = tuner_phase_get(o, "", false);
	struct knob_space sp;
	struct knob_filter f;
	char text[200], ptext[200], line[1024], *params;
	double mu, sd;
	json_t *cfg;
	int ob, c;

	if (!oph || fresh_space(t, o->declared, objective, &sp) < 0)
		return NULL;
	node_filter(t, o, &o->sp, &f);
	if ((ob = learner_best(oph->l, &f)) < 0)
		return NULL;
	cfg = knobs_config_json(&o->sp, ob);
	c = knobs_candidate_of(&sp, cfg, -1);
	json_decref(cfg);
	if (c < 0)
		return NULL;
	learner_predict(oph->l, ob, &mu, &sd);
	knobs_config_text(&sp, c, text, sizeof(text));
	params = json_dumps(o->params, JSON_COMPACT | JSON_SORT_KEYS);
	snprintf(ptext, sizeof(ptext), "%s", params ? params : "{}");
	free(params);
	snprintf(line, sizeof(line), "no trials with these parameters yet: %s is the best of %d trials of %s %s",
		 text[0] ? text : "the config", oph->l->ntrials, o->name, ptext);
	return json_pack("{s:o, s:s, s:n, s:n, s:n, s:f, s:b, s:i, s:s, s:{s:o, s:f, s:f}}", "config",
			 knobs_config_json(&sp, c), "source", "similar", "expected", "expected_gain", "remaining_gain",
			 "confidence", 0.0, "confident", 0, "trials", 0, "explanation", line, "similar", "params",
			 json_incref(o->params), "value", mu, "std", sd);
}

/*
 * A variant without trials of this class that another class measured: the
 * prior's pick (its surface read at this node's candidates).  No expected
 * value: the other class's figures are of other hardware.
 */
static json_t *recommend_other_class(struct tuner *t, struct tuner_workload *w, struct tuner_phase *ph0)
{
	struct knob_filter f;
	char text[200], line[1024];
	int c;

	if (!w->other || ph0->prior != TUNER_PRIOR_OTHER_CLASS)
		return NULL;
	node_filter(t, w, &w->sp, &f);
	if ((c = learner_best(ph0->l, &f)) < 0)
		return NULL;
	knobs_config_text(&w->sp, c, text, sizeof(text));
	snprintf(line, sizeof(line),
		 "no trials on this hardware class yet: %s is the best of %d whole-job trials of this workload on %s, "
		 "read at this node's configs",
		 text[0] ? text : "the config", w->other->trials, w->other->hw_class);
	return json_pack("{s:o, s:s, s:n, s:n, s:n, s:f, s:b, s:i, s:s, s:{s:s, s:i, s:I}}", "config",
			 knobs_config_json(&w->sp, c), "source", "other_class", "expected", "expected_gain",
			 "remaining_gain", "confidence", 0.0, "confident", 0, "trials", 0, "explanation", line,
			 "other_class", "hw_class", w->other->hw_class, "trials", w->other->trials, "nodes",
			 (json_int_t)w->other->nodes);
}

/*
 * A workload without trials of its own or of a similar or other-class
 * variant: the best of what this node's other workloads measured, read at
 * its candidates (tuner_node.c).  NULL when no other workload has trials enough.
 */
static json_t *recommend_node(struct tuner *t, const struct tuner_workload *w, const char *name,
			      enum objective objective)
{
	struct knob_space sp;
	char text[200], line[1024];
	double *shape;
	int c, best, from;

	if (fresh_space(t, w ? w->declared : NULL, objective, &sp) < 0 ||
	    !(shape = tuner_node_shape(t, w, name, objective, &sp, &from)))
		return NULL;
	for (best = knobs_prior_candidate(&sp), c = 0; c < sp.ncand; c++)
		if (shape[c] > shape[best])
			best = c;
	free(shape);
	knobs_config_text(&sp, best, text, sizeof(text));
	snprintf(line, sizeof(line), "no trials of this workload yet: %s is best by what %d other workload%s measured "
		 "on this node, with the topology's rules", text[0] ? text : "the config", from, from == 1 ? "" : "s");
	return json_pack("{s:o, s:s, s:n, s:n, s:n, s:f, s:b, s:i, s:s, s:{s:i}}", "config", knobs_config_json(&sp, best),
			 "source", "node", "expected", "expected_gain", "remaining_gain", "confidence", 0.0, "confident", 0,
			 "trials", 0, "explanation", line, "node", "workloads", from);
}

static json_t *recommend_default(struct tuner *t, const struct tuner_workload *w, enum objective objective)
{
	struct knob_topology topo;
	struct knob_space sp;
	char text[200], line[1024];
	int c;

	if (fresh_space(t, w ? w->declared : NULL, objective, &sp) < 0)
		return NULL;
	tuner_topology(t, objective == OBJECTIVE_EFFICIENCY, &topo);
	c = knobs_prior_candidate(&sp);
	knobs_config_text(&sp, c, text, sizeof(text));
	snprintf(line, sizeof(line),
		 "no trials yet: the topology default (%s) from %d physical cores of %d allowed CPUs, "
		 "%d cores per NUMA domain, %d free GPUs",
		 text[0] ? text : "fixed knobs", topo.cores_allowed, topo.cpus_allowed, topo.numa_cores, topo.gpus_free);
	return json_pack("{s:o, s:s, s:n, s:n, s:n, s:f, s:b, s:i, s:s}", "config", knobs_config_json(&sp, c),
			 "source", "default", "expected", "expected_gain", "remaining_gain", "confidence", 0.0,
			 "confident", 0, "trials", 0, "explanation", line);
}

json_t *tuner_recommend(struct tuner *t, const char *name, const json_t *params, enum objective obj)
{
	json_t *canon = tuner_params_canonical(params), *rec = NULL;
	struct tuner_workload *w, *o;
	struct tuner_phase *ph0;

	pthread_mutex_lock(&t->lock);
	w = tuner_workload_find(t, name, canon, obj);
	ph0 = w ? tuner_phase_get(w, "", false) : NULL;
	if (ph0 && ph0->l->ntrials > 0)
		rec = recommend_learned(t, w, ph0);
	if (rec && w->objective == OBJECTIVE_GOODPUT)
		json_object_set_new(rec, "goodput", tuner_goodput_json(w));
	if (!rec && (o = tuner_similar(t, w, name, canon, obj)))
		rec = recommend_similar(t, o, obj);
	if (!rec && ph0 && !tuner_has_trials(w))
		rec = recommend_other_class(t, w, ph0);
	if (!rec && !tuner_has_trials(w))
		rec = recommend_node(t, w, name, obj);
	if (!rec)
		rec = recommend_default(t, w, obj);
	pthread_mutex_unlock(&t->lock);
	tuner_other_ask(t, name, canon, obj);
	if (rec) {
		json_object_set_new(rec, "workload", json_string(name));
		json_object_set_new(rec, "params", canon);
		json_object_set_new(rec, "objective", json_string(config_objective_name(obj)));
	} else {
		json_decref(canon);
	}
	return rec;
}

/* A phase's best and confidence: {"phase","config","mean","std","n","trials","confident",...}. */
static json_t *phase_best(struct tuner *t, struct tuner_workload *w, struct tuner_phase *ph)
{
	struct knob_filter f;
	double mu, sd, mean, std, remaining;
	long steps;
	int best, trials;

	surface_filter(t, w, &f);
	best = learner_best(ph->l, &f);
	if (best < 0 || ph->l->ntrials == 0)
		return json_null();
	learner_predict(ph->l, best, &mu, &sd);
	learner_tried(ph->l, best, &mean, &std, &trials, &steps);
	remaining = learner_gain(ph->l, &f);
	return json_pack("{s:s, s:o, s:f, s:f, s:I, s:i, s:f, s:f, s:f, s:b, s:b, s:f, s:s}", "phase", ph->name,
			 "config", knobs_config_json(&w->sp, best), "mean", mean, "std", std, "n", (json_int_t)steps,
			 "trials", trials, "predicted", mu, "predicted_std", sd, "confidence",
			 confidence_of(t, remaining), "confident", remaining < t->opt.gain_threshold, "settled",
			 ph->settled, "drift_t", ph->drift_t, "prior", tuner_prior_name(ph->prior));
}

static int phase_trials(const struct tuner_workload *w)
{
	int i, n = plan_trials(w);

	for (i = 0; i < w->nphases; i++)
		n += w->phases[i].l->ntrials;
	return n;
}

/*
 * The workload's best plan, the whole-job counterpart of phase_best: its
 * config (with per-phase overrides) and its measured whole-job value.
 */
static json_t *plan_best(struct tuner *t, struct tuner_workload *w, struct tuner_phase *ph0)
{
	struct tuner_plan_choice ch;
	struct knob_filter f;

	surface_filter(t, w, &f);
	if (tuner_plan_choose(t, w, &f, &ch) < 0 || !ch.any_measured)
		return json_null();
	return json_pack("{s:s, s:o, s:f, s:f, s:i, s:f, s:f, s:f, s:b, s:b, s:f, s:s}", "phase", "", "config",
			 tuner_plan_json(w, &ch.best), "mean", ch.best_est.mu, "std", ch.best_est.sd, "trials",
			 ch.best_est.trials, "predicted", ch.best_est.mu, "predicted_std", ch.best_est.sd, "confidence",
			 confidence_of(t, ch.gain), "confident", ch.gain < t->opt.gain_threshold, "settled", ph0->settled,
			 "drift_t", ph0->drift_t, "prior", tuner_prior_name(ph0->prior));
}

static json_t *workload_summary(struct tuner *t, struct tuner_workload *w)
{
	struct tuner_phase *ph0 = tuner_phase_get(w, "", false);
	json_t *best = ph0 ? plan_best(t, w, ph0) : json_null(), *phases = json_array();
	json_t *o;
	int i;

	for (i = 0; i < w->nphases; i++)
		if (w->phases[i].l->ntrials > 0)
			json_array_append_new(phases, json_string(w->phases[i].name));
	o = json_pack("{s:s, s:O, s:s, s:s, s:i, s:I, s:o, s:o, s:s}", "name", w->name, "params", w->params,
		      "objective", config_objective_name(w->objective), "hw_class", t->node.hw_class,
		      "trials", phase_trials(w), "jobs", (json_int_t)w->jobs, "phases", phases, "best", best, "source",
		      json_is_object(best) ? "learned"
		      : ph0 && (ph0->prior == TUNER_PRIOR_OTHER_CLASS || ph0->prior == TUNER_PRIOR_NODE)
			      ? tuner_prior_name(ph0->prior) : "default");
	/* Where the prior of a variant without trials here came from (and stays, under its first trials). */
	if (ph0 && ph0->prior == TUNER_PRIOR_OTHER_CLASS && w->other)
		json_object_set_new(o, "other_class", json_pack("{s:s, s:i, s:I}", "hw_class", w->other->hw_class,
								 "trials", w->other->trials, "nodes",
								 (json_int_t)w->other->nodes));
	if (json_is_object(best)) {
		json_object_set(o, "confidence", json_object_get(best, "confidence"));
		json_object_set(o, "confident", json_object_get(best, "confident"));
	}
	return o;
}

json_t *tuner_workloads(struct tuner *t)
{
	struct tuner_workload *w;
	json_t *list = json_array();

	pthread_mutex_lock(&t->lock);
	for (w = t->workloads; w; w = w->next)
		json_array_append_new(list, workload_summary(t, w));
	pthread_mutex_unlock(&t->lock);
	return json_pack("{s:o}", "workloads", list);
}

/* Every tried config of every phase, with the model's prediction there. */
static json_t *tried_list(struct tuner_workload *w)
{
	json_t *list = json_array();
	int i, c;

	for (i = 0; i < w->nphases; i++) {
		struct learner *l = w->phases[i].l;
		for (c = 0; c < w->sp.ncand; c++) {
			double mean, std, mu, sd;
			long steps;
			int trials;
			learner_tried(l, c, &mean, &std, &trials, &steps);
			if (trials == 0)
				continue;
			learner_predict(l, c, &mu, &sd);
			json_array_append_new(list, json_pack("{s:s, s:o, s:f, s:f, s:I, s:i, s:f, s:f}", "phase",
							      w->phases[i].name, "config", knobs_config_json(&w->sp, c),
							      "mean", mean, "std", std, "n", (json_int_t)steps, "trials",
							      trials, "predicted", mu, "predicted_std", sd));
		}
	}
	return list;
}

/* The model's prediction over the candidates a new job may run, per phase (at most VIEW_MAX_PREDICTED). */
static json_t *predicted_list(struct tuner *t, struct tuner_workload *w)
{
	struct knob_filter f;
	json_t *list = json_array();
	int i, c, shown = 0;

	surface_filter(t, w, &f);
	for (i = 0; i < w->nphases; i++) {
		struct learner *l = w->phases[i].l;
		if (l->ntrials == 0)
			continue;
		for (c = 0; c < w->sp.ncand && shown < VIEW_MAX_PREDICTED; c++) {
			double mu, sd;
			if (!knobs_filter_pass(&w->sp, &f, c))
				continue;
			learner_predict(l, c, &mu, &sd);
			json_array_append_new(list, json_pack("{s:s, s:o, s:f, s:f}", "phase", w->phases[i].name, "config",
							      knobs_config_json(&w->sp, c), "mean", mu, "std", sd));
			shown++;
		}
	}
	return list;
}

/* The overrides phase i runs under plan p (an object), or null when it runs the top level's. */
static json_t *phase_setting(const struct tuner_workload *w, const struct tuner_plan *p, int i)
{
	json_t *config = tuner_plan_json(w, p);
	json_t *o = json_object_get(json_object_get(config, "phases"), w->phases[i].name);

	o = o ? json_incref(o) : json_null();
	json_decref(config);
	return o;
}

/*
 * Every plan with whole-job trials, and per phase the settings adopted (the
 * best plan's) and rejected (the overrides of measured plans that lost to
 * it), each with its whole-job evidence: the plan's measured value against
 * the best plan's and against the best uniform plan of the same static knobs.
 */
static void plans_view(struct tuner *t, struct tuner_workload *w, json_t *o)
{
	struct tuner_plan_choice ch, uni;
	struct tuner_plan_est e;
	struct knob_filter f, pinned;
	json_t *plans = json_array(), *settings = json_array();
	size_t k;
	int i;

	surface_filter(t, w, &f);
	if (tuner_plan_choose(t, w, &f, &ch) < 0 || !ch.any_measured) {
		json_object_set_new(o, "plans", plans);
		json_object_set_new(o, "phase_settings", settings);
		return;
	}
	/* The best uniform plan of the best plan's static knobs: what overrides must beat. */
	pinned = f;
	knobs_filter_pin_static(&w->sp, &pinned, ch.best.top);
	tuner_plan_uniform(&uni.best, learner_best(tuner_phase_get(w, "", true)->l, &pinned));
	tuner_plan_estimate(t, w, &uni.best, &uni.best_est);
	for (k = 0; k < w->npools; k++) {
		const struct tuner_pool *pool = &w->pools[k];
		if (pool->phase[0] || pool->plan.top < 0 || pool->fresh.trials + pool->stale.trials == 0)
			continue;
		tuner_plan_estimate(t, w, &pool->plan, &e);
		json_array_append_new(plans, json_pack("{s:o, s:b, s:f, s:f, s:i, s:I, s:f, s:s}", "config",
						       tuner_plan_json(w, &pool->plan), "uniform", pool->uniform, "mean",
						       e.mu, "std", e.sd, "trials", e.trials, "n",
						       (json_int_t)(pool->fresh.steps + pool->stale.steps), "vs_best",
						       e.mu / ch.best_est.mu, "status",
						       tuner_plan_equal(w, &pool->plan, &ch.best) ? "best" : "measured"));
	}
	for (i = 0; i < w->nphases; i++) {
		json_t *rejected;
		if (!w->phases[i].name[0])
			continue;
		rejected = json_array();
		for (k = 0; k < w->npools; k++) {
			const struct tuner_pool *pool = &w->pools[k];
			json_t *set;
			if (pool->phase[0] || pool->uniform || pool->plan.top < 0 || pool->plan.over[i] < 0 ||
			    pool->fresh.trials + pool->stale.trials == 0 || tuner_plan_equal(w, &pool->plan, &ch.best))
				continue;
			set = phase_setting(w, &pool->plan, i);
			tuner_plan_estimate(t, w, &pool->plan, &e);
			json_array_append_new(rejected, json_pack("{s:o, s:o, s:f, s:f, s:i, s:f}", "setting", set,
								  "plan", tuner_plan_json(w, &pool->plan), "plan_mean",
								  e.mu, "best_mean", ch.best_est.mu, "trials", e.trials,
								  "vs_best", e.mu / ch.best_est.mu));
		}
		json_array_append_new(settings,
				      json_pack("{s:s, s:o, s:f, s:f, s:o, s:o}", "phase", w->phases[i].name, "adopted",
						phase_setting(w, &ch.best, i), "plan_mean", ch.best_est.mu,
						"uniform_mean", uni.best_est.mu, "uniform_config",
						tuner_plan_json(w, &uni.best), "rejected", rejected));
	}
	json_object_set_new(o, "plans", plans);
	json_object_set_new(o, "phase_settings", settings);
}

static json_t *workload_detail(struct tuner *t, struct tuner_workload *w)
{
	json_t *o = workload_summary(t, w), *phases = json_array();
	int i;

	for (i = 0; i < w->nphases; i++)
		if (w->phases[i].name[0] && w->phases[i].l->ntrials > 0)
			json_array_append_new(phases, phase_best(t, w, &w->phases[i]));
	json_object_set_new(o, "phases", phases);
	json_object_set_new(o, "knobs", knobs_space_json(&w->sp));
	json_object_set_new(o, "default", json_pack("{s:o}", "config",
						    knobs_config_json(&w->sp, knobs_prior_candidate(&w->sp))));
	json_object_set_new(o, "candidates", json_integer(w->sp.ncand));
	json_object_set_new(o, "tried", tried_list(w));
	json_object_set_new(o, "predicted", predicted_list(t, w));
	plans_view(t, w, o);
	if (w->objective == OBJECTIVE_GOODPUT)
		json_object_set_new(o, "goodput", tuner_goodput_json(w));
	return o;
}

json_t *tuner_workload(struct tuner *t, const char *name, const json_t *params, const enum objective *objective)
{
	json_t *canon = params ? tuner_params_canonical(params) : NULL, *o = NULL, *variants;
	struct tuner_workload *w, *pick = NULL;

	pthread_mutex_lock(&t->lock);
	variants = json_array();
	for (w = t->workloads; w; w = w->next) {
		if (strcmp(w->name, name) != 0 || (objective && w->objective != *objective))
			continue;
		json_array_append_new(variants, json_pack("{s:O, s:s, s:i, s:I}", "params", w->params, "objective",
							  config_objective_name(w->objective), "trials", phase_trials(w), "jobs",
							  (json_int_t)w->jobs));
		if (canon ? json_equal(canon, w->params) && (!pick || phase_trials(w) > phase_trials(pick))
			  : !pick || phase_trials(w) > phase_trials(pick))
			pick = w;
	}
	if (pick) {
		o = workload_detail(t, pick);
		json_object_set_new(o, "variants", variants);
	} else {
		json_decref(variants);
	}
	pthread_mutex_unlock(&t->lock);
	json_decref(canon);
	return o;
}
