/*
 * The online tuner (see tuner.h): workloads and their learners, jobs and
 * their trials in progress, and the decisions taken at job start and at
 * each ingest.  What a job runs is a plan (tuner_plan.c): the static knobs,
 * chosen across jobs, and per phase the runtime knobs.  Each decision ranks
 * the plans by their whole-job objective, measured or predicted, and runs
 * the best measured one or the one of highest expected improvement; a
 * proposal that is clearly losing is cut short, and a proposal is measured
 * only when what it is expected to teach pays for what measuring it is
 * expected to cost (explore_pays).  Exploration stops when the expected gain
 * falls below gain_threshold.  What is learned is written through the store
 * outside the lock; the recommendation views live in tuner_recommend.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "invariant.h"
#include "log.h"
#include "reported.h"
#include "store_tuner.h"
#include "tuner_internal.h"

/* A write queued under the lock and done after it (store calls may block). */
struct tuner_write {
	enum { WRITE_TRIAL, WRITE_PHASE, WRITE_DECLARED, WRITE_GOODPUT } kind;
	int64_t job_id;
	enum objective objective;
	char phase[TUNER_PHASE_MAX];
	char *text;                   /* config (trial), declared knobs or goodput state; owned */
	long n;
	double mean, m2, t_start, t_end;
	bool settled;
	double drift_t;
	struct tuner_write *next;
};

static void writes_push(struct tuner_write **list, struct tuner_write *w)
{
	struct tuner_write **p = list;

	while (*p)
		p = &(*p)->next;
	*p = w;
}

/* Runs and frees queued writes (lock not held). */
static void writes_flush(struct tuner *t, struct tuner_write *w)
{
	while (w) {
		struct tuner_write *next = w->next;
		int rc = STORE_OK;
		if (t->st && w->kind == WRITE_TRIAL) {
			struct store_trial tr = {w->job_id, w->phase, w->text, config_objective_name(w->objective), w->n,
						 w->mean, w->m2, w->t_start, w->t_end};
			rc = store_trial_add(t->st, &tr);
		} else if (t->st && w->kind == WRITE_PHASE) {
			rc = store_tuner_phase_save(t->st, w->job_id, config_objective_name(w->objective), w->phase, w->settled, w->drift_t);
		} else if (t->st && w->kind == WRITE_DECLARED) {
			rc = store_tuner_declared_save(t->st, w->job_id, config_objective_name(w->objective), w->text);
		} else if (t->st && w->kind == WRITE_GOODPUT) {
			rc = store_tuner_goodput_save(t->st, w->job_id, config_objective_name(w->objective), w->text);
		}
		if (rc != STORE_OK && rc != STORE_ENOTFOUND)
			log_warnx("%s: job %lld: %s", __func__, (long long)w->job_id, store_strerror(rc));
		free(w->text);
		free(w);
		w = next;
	}
}

static struct tuner_write *write_new(int kind, int64_t job_id, const struct tuner_workload *w, const char *phase)
{
	struct tuner_write *wr = calloc(1, sizeof(*wr));

	if (!wr)
		return NULL;
	wr->kind = kind;
	wr->job_id = job_id;
	wr->objective = w->objective;
	snprintf(wr->phase, sizeof(wr->phase), "%s", phase ? phase : "");
	return wr;
}

static void queue_phase_state(struct tuner_write **wl, int64_t job_id, const struct tuner_workload *w,
			      const struct tuner_phase *ph)
{
	struct tuner_write *wr = write_new(WRITE_PHASE, job_id, w, ph->name);

	if (!wr)
		return;
	wr->settled = ph->settled;
	wr->drift_t = ph->drift_t;
	writes_push(wl, wr);
}

/*
 * What objective=goodput measured, saved as each job of the workload ends,
 * so a restart keeps the noise scale and the speed-ups (the trials are
 * kept anyway).  Only for jobs that added to it.
 */
static void queue_goodput_state(struct tuner_write **wl, const struct tuner_job *j)
{
	struct tuner_write *wr;
	char *state;

	if (j->w->objective != OBJECTIVE_GOODPUT || !(state = tuner_goodput_state(j->w)))
		return;
	if (!(wr = write_new(WRITE_GOODPUT, j->id, j->w, ""))) {
		free(state);
		return;
	}
	wr->text = state;
	writes_push(wl, wr);
}

/* ---- topology, objectives, parameters ---- */


void tuner_topology(const struct tuner *t, bool efficiency, struct knob_topology *out)
{
	int i, numa = 0;

	for (i = 0; i < t->node.numa_nodes && i < NODE_MAX_NUMA; i++)
		if (t->node.numa_cores[i] > numa)
			numa = t->node.numa_cores[i];
	memset(out, 0, sizeof(*out));
	out->cpus_allowed = t->node.cpus_allowed > 0 ? t->node.cpus_allowed : t->node.cpus_online;
	out->cores_allowed = t->node.cores_allowed > 0 ? t->node.cores_allowed : t->node.cores;
	out->numa_cores = numa;
	out->gpus_total = t->node.gpus;
	out->gpus_free = t->node.gpus - t->gpus_given > 0 ? t->node.gpus - t->gpus_given : 0;
	out->efficiency = efficiency;
}

json_t *tuner_params_canonical(const json_t *params)
{
	json_t *out = json_object(), *v;
	const char *key;

	if (!json_is_object(params))
		return out;
	json_object_foreach((json_t *)params, key, v) {
		json_t *c = NULL;
		if (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)) &&
		    fabs(json_real_value(v)) < 9e15) {
			c = json_integer((json_int_t)json_real_value(v));
		} else if (json_is_string(v)) {
			const char *s = json_string_value(v);
			char *end;
			long long iv = strtoll(s, &end, 10);
			if (*s && *end == '\0')
				c = json_integer(iv);
			else if (strcmp(s, "true") == 0 || strcmp(s, "false") == 0)
				c = json_boolean(s[0] == 't');
			else if (*s && (strtod(s, &end), *end == '\0'))
				c = json_real(strtod(s, NULL));
		}
		json_object_set_new(out, key, c ? c : json_incref(v));
	}
	return out;
}

/* ---- workloads and their phases ---- */

struct tuner_workload *tuner_workload_find(struct tuner *t, const char *name, const json_t *params,
					   enum objective objective)
{
	struct tuner_workload *w;

	assert(lock_held(&t->lock));
	for (w = t->workloads; w; w = w->next)
		if (strcmp(w->name, name) == 0 && w->objective == objective &&
		    json_equal(w->params, (json_t *)params))
			return w;
	return NULL;
}

struct tuner_phase *tuner_phase_get(struct tuner_workload *w, const char *phase, bool create)
{
	struct tuner_phase *ph;
	int i;

	for (i = 0; i < w->nphases; i++)
		if (strcmp(w->phases[i].name, phase) == 0)
			return &w->phases[i];
	if (!create || w->nphases >= TUNER_MAX_PHASES || strlen(phase) >= TUNER_PHASE_MAX)
		return NULL;
	ph = &w->phases[w->nphases];
	memset(ph, 0, sizeof(*ph));
	snprintf(ph->name, sizeof(ph->name), "%s", phase);
	if (!(ph->l = learner_new(&w->sp)))
		return NULL;
	w->nphases++;
	return ph;
}

/* The pool of a config in a phase, created empty when new; NULL when out of memory. */
static struct tuner_pool *pool_get(struct tuner_workload *w, const char *phase, const char *config)
{
	struct tuner_pool *p;
	size_t i;

	for (i = 0; i < w->npools; i++)
		if (strcmp(w->pools[i].phase, phase) == 0 && strcmp(w->pools[i].config, config) == 0)
			return &w->pools[i];
	if (w->npools == w->pools_cap) {
		if (!(p = array_grow(w->pools, &w->pools_cap, w->npools + 1, sizeof(*p))))
			return NULL;
		w->pools = p;
	}
	p = &w->pools[w->npools];
	memset(p, 0, sizeof(*p));
	if (!(p->config = strdup(config)))
		return NULL;
	snprintf(p->phase, sizeof(p->phase), "%s", phase);
	w->npools++;
	if (!phase[0])
		tuner_plan_pool_parse(w, p);
	return p;
}

/* The candidate of a config (JSON text) in the workload's space; -1 when the space cannot express it. */
static int config_candidate(const struct tuner_workload *w, const char *text)
{
	json_t *config = json_loads(text, 0, NULL);
	int cand = config ? knobs_candidate_of(&w->sp, config, -1) : -1;

	json_decref(config);
	return cand;
}

/*
 * Pools trials of a config in a phase and teaches them to the phase's
 * learner; a plan with overrides (phase "") is judged by its pool alone.
 * A phase the workload cannot hold (too many, name too long) gets no pool
 * either, which keeps the pools as bounded as the phases.
 */
static void pool_learn(struct tuner_workload *w, const char *phase, const char *config, int cand,
		       const struct learner_stats *s, bool stale)
{
	struct tuner_phase *ph = tuner_phase_get(w, phase, true);
	struct tuner_pool *p;

	if (!ph)
		return;
	if ((p = pool_get(w, phase, config)))
		learner_stats_merge(stale ? &p->stale : &p->fresh, s);
	if (!phase[0] && (!p || !p->uniform))
		return;
	learner_add_pooled(ph->l, cand, s, stale);
}

/* A drift in a phase: what its pools hold becomes stale evidence, as in its learner. */
static void pools_mark_stale(struct tuner_workload *w, const char *phase)
{
	size_t i;

	for (i = 0; i < w->npools; i++)
		if (strcmp(w->pools[i].phase, phase) == 0) {
			learner_stats_merge(&w->pools[i].stale, &w->pools[i].fresh);
			memset(&w->pools[i].fresh, 0, sizeof(w->pools[i].fresh));
		}
}

/*
 * (Re)builds the workload's space from the node and the declared knobs, and
 * its learners from its trials (a trial whose config the new space cannot
 * express no longer informs the model).  -1 with err when the declaration is bad.
 */
static int workload_build(struct tuner *t, struct tuner_workload *w, const json_t *declared, char *err,
			  size_t err_len)
{
	struct knob_topology topo;
	struct knob_space sp;
	size_t i;
	int p;

	tuner_topology(t, w->objective == OBJECTIVE_EFFICIENCY, &topo);
	topo.gpus_free = topo.gpus_total; /* the space spans all GPUs; jobs are filtered to the free ones */
	if (knobs_space_build(&sp, &topo, declared, err, err_len) < 0)
		return -1;
	w->sp = sp;
	json_decref(w->declared);
	w->declared = declared ? json_deep_copy(declared) : NULL;
	for (p = 0; p < w->nphases; p++) {
		struct learner *l = learner_new(&w->sp);
		if (!l)
			return -1;
		learner_free(w->phases[p].l);
		w->phases[p].l = l;
		w->phases[p].prior = TUNER_PRIOR_TOPOLOGY;
	}
	for (i = 0; i < w->npools; i++) {
		struct tuner_pool *pool = &w->pools[i];
		struct tuner_phase *ph = tuner_phase_get(w, pool->phase, true);
		int cand = config_candidate(w, pool->config);
		if (!pool->phase[0]) {
			tuner_plan_pool_parse(w, pool);
			if (!pool->uniform)
				continue;
		}
		if (ph && cand >= 0) {
			learner_add_pooled(ph->l, cand, &pool->fresh, false);
			learner_add_pooled(ph->l, cand, &pool->stale, true);
		}
	}
	return 0;
}

static void workload_free(struct tuner_workload *w)
{
	size_t i;
	int p;

	for (p = 0; p < w->nphases; p++)
		learner_free(w->phases[p].l);
	for (i = 0; i < w->npools; i++)
		free(w->pools[i].config);
	free(w->pools);
	tuner_goodput_free(&w->gp);
	json_decref(w->params);
	json_decref(w->declared);
	tuner_other_free(w->other);
	free(w);
}

static struct tuner_workload *workload_new(struct tuner *t, int64_t id, const char *name, const json_t *params,
					   enum objective objective, const json_t *declared)
{
	struct tuner_workload *w = calloc(1, sizeof(*w));
	char err[200];

	if (!w)
		return NULL;
	w->id = id;
	snprintf(w->name, sizeof(w->name), "%s", name);
	w->params = tuner_params_canonical(params);
	w->objective = objective;
	if (workload_build(t, w, declared, err, sizeof(err)) < 0 &&
	    workload_build(t, w, NULL, err, sizeof(err)) < 0) {
		log_warnx("%s: workload %s: %s", __func__, name, err);
		workload_free(w);
		return NULL;
	}
	w->next = t->workloads;
	t->workloads = w;
	return w;
}

struct tuner_workload *tuner_workload_create(struct tuner *t, const char *name, const json_t *params,
					     enum objective objective, const json_t *declared)
{
	return workload_new(t, 0, name, params, objective, declared);
}

struct tuner_workload *tuner_similar(struct tuner *t, const struct tuner_workload *w, const char *name,
				     const json_t *params, enum objective objective)
{
	struct tuner_workload *o, *best = NULL;
	struct tuner_phase *ph;

	assert(lock_held(&t->lock));
	for (o = t->workloads; o; o = o->next) {
		if (o == w || strcmp(o->name, name) != 0 || o->objective != objective ||
		    json_equal(o->params, (json_t *)params))
			continue;
		ph = tuner_phase_get(o, "", false);
		if (ph && ph->l->ntrials > 0 && (!best || ph->l->ntrials > tuner_phase_get(best, "", false)->l->ntrials))
			best = o;
	}
	return best;
}

void tuner_prior_similar(struct tuner *t, struct tuner_workload *w, struct tuner_phase *ph)
{
	struct tuner_workload *o;
	struct tuner_phase *oph;
	double *shape, lo = INFINITY, mu, sd;
	int c, oc;
	char *text;

	assert(lock_held(&t->lock));
	if (ph->l->ntrials > 0 || ph->prior == TUNER_PRIOR_SIMILAR)
		return;
	if (!(o = tuner_similar(t, w, w->name, w->params, w->objective)))
		return;
	oph = tuner_phase_get(o, ph->name, false);
	if (!oph || oph->l->ntrials == 0 || !(shape = calloc((size_t)w->sp.ncand, sizeof(double))))
		return;
	/* The other workload's predicted surface, read at this space's candidates. */
	for (c = 0; c < w->sp.ncand; c++) {
		json_t *cfg = knobs_config_json(&w->sp, c);
		oc = knobs_candidate_of(&o->sp, cfg, -1);
		json_decref(cfg);
		shape[c] = NAN;
		if (oc >= 0) {
			learner_predict(oph->l, oc, &mu, &sd);
			shape[c] = mu;
			if (mu < lo)
				lo = mu;
		}
	}
	for (c = 0; c < w->sp.ncand; c++)
		if (isnan(shape[c]))
			shape[c] = isfinite(lo) ? lo : 1.0;
	if (isfinite(lo) && lo > 0.0) {
		learner_set_shape(ph->l, shape);
		ph->prior = TUNER_PRIOR_SIMILAR;
		text = json_dumps(o->params, JSON_COMPACT | JSON_SORT_KEYS);
		snprintf(ph->prior_from, sizeof(ph->prior_from), "%s", text ? text : "{}");
		free(text);
	}
	free(shape);
}

/* ---- jobs ---- */

static struct tuner_job *job_find(struct tuner *t, int64_t id)
{
	struct tuner_job *j;

	for (j = t->jobs; j; j = j->next)
		if (j->id == id)
			return j;
	return NULL;
}

static void job_free(struct tuner_job *j)
{
	json_decref(j->answer);
	free(j);
}

static struct tuner_job_phase *job_phase(struct tuner_job *j, const char *phase)
{
	struct tuner_job_phase *jp;
	int i;

	for (i = 0; i < j->nphases; i++)
		if (strcmp(j->phases[i].name, phase) == 0)
			return &j->phases[i];
	if (j->nphases >= TUNER_MAX_PHASES || strlen(phase) >= TUNER_PHASE_MAX)
		return NULL;
	jp = &j->phases[j->nphases++];
	memset(jp, 0, sizeof(*jp));
	snprintf(jp->name, sizeof(jp->name), "%s", phase);
	trial_begin(&jp->acc, -1, 0, 0);
	return jp;
}

/* What the job may run; -1 (logged) when a knob had no possible value. */
static void job_filter(struct tuner *t, struct tuner_job *j)
{
	struct knob_topology topo;

	tuner_topology(t, j->w->objective == OBJECTIVE_EFFICIENCY, &topo);
	knobs_filter_all(&j->w->sp, &j->allowed);
	if (knobs_filter_topology(&j->w->sp, &j->allowed, &topo) < 0)
		log_warnx("%s: job %lld: a declared range leaves no value that fits this node "
			  "(%d CPUs, %d GPUs free); holding it at its smallest", __func__, (long long)j->id,
			  topo.cpus_allowed, topo.gpus_free);
}

static struct tuner_job *job_new(struct tuner *t, int64_t id, struct tuner_workload *w)
{
	struct tuner_job *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->id = id;
	j->w = w;
	j->start_cand = -1;
	j->plan_pool = j->inc_pool = -1;
	tuner_plan_uniform(&j->plan, -1);
	job_filter(t, j);
	w->jobs++;
	j->next = t->jobs;
	t->jobs = j;
	return j;
}

static void job_unlink(struct tuner *t, struct tuner_job *j)
{
	struct tuner_job **p;

	for (p = &t->jobs; *p; p = &(*p)->next)
		if (*p == j) {
			*p = j->next;
			break;
		}
	t->gpus_given -= j->gpus;
	if (t->gpus_given < 0)
		t->gpus_given = 0;
}

/* The filter for a job's phase: its allowed values with the static knobs as it started. */
static void phase_filter(const struct tuner_job *j, int static_from, struct knob_filter *f)
{
	*f = j->allowed;
	if (static_from >= 0)
		knobs_filter_pin_static(&j->w->sp, f, static_from);
}

/* Whether a and b agree on every knob that cannot change while a job runs. */
static bool same_static(const struct knob_space *sp, int a, int b)
{
	struct knob_config x, y;
	int i;

	if (a < 0 || b < 0)
		return a == b;
	knobs_decode(sp, a, &x);
	knobs_decode(sp, b, &y);
	for (i = 0; i < sp->nknobs; i++)
		if (!sp->knobs[i].runtime && x.idx[i] != y.idx[i])
			return false;
	return true;
}

/* Steps of a proposal after which it is given up even if its trial never completed (the job never ran it). */
#define PLAN_PENDING_MAX_STEPS (3 * TRIAL_MAX_STEPS)
/* Steps a proposal costs when it can be switched away from: its warm-up and the fewest a trial measures. */
#define EXPLORE_TRIAL_STEPS (TRIAL_WARMUP_SWITCH + TRIAL_MIN_STEPS)

/*
 * Whether measuring the plan estimated as next pays for itself against
 * the best measured plan (value inc): its expected improvement, over the
 * steps that will run on what it teaches, against its expected shortfall
 * below the best, over the steps measuring it costs (cost_steps).  What
 * it teaches serves the rest of this job and the workload's next jobs: by
 * the rule that a process which has run so long is likely to run as long
 * again, as many steps as the workload has run, plus a job's worth.  So
 * exploration shrinks to nothing once nothing better is likely, and a
 * workload far below what the model thinks possible explores most of a
 * job; a long-lived workload is worth more exploring than a new one, and
 * a static setting (a whole job on it) must promise more than a runtime
 * one (a trial of a few steps, cut short when it loses).
 */
static bool explore_pays(const struct tuner_workload *w, const struct tuner_plan_est *next, double inc,
			 double cost_steps)
{
	double ei, shortfall, per_job;

	if (!(inc > 0.0) || !isfinite(next->mu) || !isfinite(next->sd))
		return false;
	ei = gp_expected_improvement(next->mu, next->sd, inc);
	shortfall = ei - (next->mu - inc); /* E[max(0, inc - value)] */
	per_job = w->jobs > 0 ? (double)w->steps / (double)w->jobs : 0.0;
	return ei * ((double)w->steps + per_job) >= shortfall * cost_steps;
}

/* Steps a job that starts on plan p risks on it: the whole job when it cannot switch away, else a trial. */
static double start_cost_steps(const struct tuner_workload *w, const struct tuner_plan *p, const struct tuner_plan *best,
			       bool fixed)
{
	if (fixed || !same_static(&w->sp, p->top, best->top))
		return w->jobs > 0 ? fmax((double)w->steps / (double)w->jobs, EXPLORE_TRIAL_STEPS) : EXPLORE_TRIAL_STEPS;
	return EXPLORE_TRIAL_STEPS;
}

/* Sets the plan the job runs from now on; pending when it is a proposal to measure. */
static void job_set_plan(struct tuner_job *j, const struct tuner_plan *p, bool pending)
{
	j->plan = *p;
	j->plan_pool = tuner_plan_pool(j->w, p);
	j->pending = pending && j->plan_pool >= 0;
	j->pending_steps = j->steps;
	j->far_below = 0;
}

/* Notes the best measured plan of a choice, what exploration is measured against. */
static void job_note_best(struct tuner_job *j, const struct tuner_plan_choice *ch)
{
	if (!ch->any_measured)
		return;
	j->inc_pool = tuner_plan_pool(j->w, &ch->best);
	j->inc_value = ch->best_est.mu;
}

/* A workload is settled once no plan of any static knobs this job could run is worth trying. */
static void maybe_settle(struct tuner *t, struct tuner_job *j, struct tuner_phase *ph0, struct tuner_write **wl)
{
	struct tuner_plan_choice all;

	if (ph0->settled || tuner_plan_choose(t, j->w, &j->allowed, &all) < 0 || all.gain >= t->opt.gain_threshold)
		return;
	ph0->settled = true;
	log_info("tuner: workload %s: confident after %d whole-job trials", j->w->name, ph0->l->ntrials);
	queue_phase_state(wl, j->id, j->w, ph0);
}

/*
 * Whether a job runs its first plan to its end.  With an inter-op pool
 * (inter-op threads > 1) PyTorch's pool threads take the intra-op count in
 * force when they are created, at the job's first fork, and keep it: a
 * later switch of the threads reaches the main thread's phases but not the
 * forked work, so a plan switched to mid-job would be credited with what
 * the first plan's forked work did.  Such a job measures one plan, honestly.
 */
static bool plan_fixed(const struct tuner_job *j)
{
	return knobs_int_value(&j->w->sp, j->start_cand, KNOB_INTEROP_THREADS, 1) > 1;
}

/*
 * The config a job should run from now on.  A proposal stays until its
 * trial completes (or is cut short); then the plans of the job's static
 * knobs are ranked again: the best measured one when nothing is worth
 * trying or the job's exploration budget is spent, else the plan of
 * highest expected improvement.
 */
static json_t *job_answer(struct tuner *t, struct tuner_job *j, struct tuner_write **wl)
{
	struct tuner_workload *w = j->w;
	struct tuner_phase *ph0 = tuner_phase_get(w, "", true);
	struct tuner_plan_choice ch;
	struct knob_filter f;

	if (!ph0)
		return j->answer ? json_deep_copy(j->answer) : NULL;
	if (j->pending && j->steps - j->pending_steps > PLAN_PENDING_MAX_STEPS)
		j->pending = false; /* the job never ran it: stop waiting */
	if (j->pending)
		return tuner_plan_json(w, &j->plan);
	if (plan_fixed(j)) {
		maybe_settle(t, j, ph0, wl);
		return tuner_plan_json(w, &j->plan);
	}
	phase_filter(j, j->start_cand, &f);
	if (tuner_plan_choose(t, w, &f, &ch) < 0)
		return j->answer ? json_deep_copy(j->answer) : NULL;
	job_note_best(j, &ch);
	if (ch.gain < t->opt.gain_threshold) {
		maybe_settle(t, j, ph0, wl);
		job_set_plan(j, &ch.best, false);
	} else if (ch.any_measured && !explore_pays(w, &ch.next_est, ch.best_est.mu, EXPLORE_TRIAL_STEPS)) {
		job_set_plan(j, &ch.best, false);
	} else {
		job_set_plan(j, &ch.next, !ch.any_measured || !tuner_plan_equal(w, &ch.next, &ch.best));
	}
	return tuner_plan_json(w, &j->plan);
}

/* ---- learning from samples ---- */

/* A completed trial: checks it against the model (drift), learns it and queues its row. */
static void trial_record(struct tuner_job *j, const char *phase, struct trial_acc *a,
			 struct tuner_write **wl)
{
	struct tuner_workload *w = j->w;
	struct tuner_phase *ph = tuner_phase_get(w, phase, true);
	struct tuner_write *wr;
	struct knob_filter f;
	struct learner_stats pooled = {0};
	double var = trial_var_mean(a);
	const struct tuner_pool *plan = NULL;
	int cand = a->cand;
	double mu = NAN, sd = NAN;
	bool drifted;
	char *text;

	if (!ph || a->cand < 0 || a->n < 2)
		return;
	if (!phase[0]) {
		/* The whole job's trials are of plans: acc.cand is the plan's pool. */
		if ((size_t)a->cand >= w->npools)
			return;
		plan = &w->pools[a->cand];
		cand = plan->plan.top;
		if (cand < 0)
			return;
	}
	phase_filter(j, cand, &f);
	/*
	 * The best config or plan gives what contradicts what was measured of
	 * it (twice at least, beyond its spread): a drift.  Whether or not the
	 * workload has settled: exploring on does not make an outdated best right.
	 */
	if (plan && !plan->uniform)
		drifted = a->cand == j->inc_pool && tuner_pool_drifted(w, a->cand, a->mean, var, &mu, &sd);
	else if ((drifted = cand == learner_best(ph->l, &f) && learner_drifted(ph->l, cand, a->mean, var)))
		learner_predict(ph->l, cand, &mu, &sd);
	if (drifted) {
		log_info("tuner: workload %s phase \"%s\": the best %s now gives %.4g, the model expected "
			 "%.4g +- %.2g: reopening exploration", w->name, phase, plan ? "plan" : "config", a->mean, mu, sd);
		ph->drift_t = a->t_start;
		learner_mark_stale(ph->l);
		pools_mark_stale(w, phase);
		queue_phase_state(wl, j->id, w, ph);
	}
	if (plan) {
		text = strdup(plan->config);
	} else {
		json_t *cfg = knobs_config_json(&w->sp, cand);
		text = cfg ? json_dumps(cfg, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
		json_decref(cfg);
	}
	if (!text)
		return;
	if (learner_stats_add(&pooled, a->n, a->mean, var))
		pool_learn(w, phase, text, cand, &pooled, false);
	if (!(wr = write_new(WRITE_TRIAL, j->id, w, phase))) {
		free(text);
		return;
	}
	wr->text = text;
	wr->n = a->n;
	wr->mean = a->mean;
	wr->m2 = a->m2;
	wr->t_start = a->t_start;
	wr->t_end = a->t_end;
	writes_push(wl, wr);
}

/*
 * Feeds one step measured under cand (for phase "", a plan's pool).  A
 * proposal is measured until precise enough, or cut short once clearly
 * worse than the best measured plan; a phase is measured likewise while
 * the job explores.  Otherwise trials run in long stretches (one row per
 * TRIAL_LONG_STEPS), which still shows a drift.
 */
static void phase_step(struct tuner_job *j, struct tuner_job_phase *jp, int cand, double ts,
		       double value, struct tuner_write **wl)
{
	bool whole = jp->name[0] == '\0';
	bool proposal = j->pending && (!whole || cand == j->plan_pool);
	/*
	 * A proposal is cut short to switch away from it; a job that runs one
	 * plan cannot, so its trial is measured in full: a cut would record its
	 * pool's first, slow steps as the plan's value.
	 */
	bool cuttable = whole && proposal && cand != j->inc_pool && !plan_fixed(j);

	if (jp->acc.cand != cand) {
		bool first = jp->acc.cand < 0 && jp->acc.t_end == 0.0;
		if (trial_complete(&jp->acc) || jp->acc.n >= TRIAL_MIN_STEPS)
			trial_record(j, jp->name, &jp->acc, wl);
		trial_begin(&jp->acc, cand,
			    first && j->steps <= TRIAL_WARMUP_START ? TRIAL_WARMUP_START : TRIAL_WARMUP_SWITCH,
			    proposal ? 0 : TRIAL_LONG_STEPS);
	}
	/* Far below the best even while warming up: a plan that makes a step take several times as long. */
	if (cuttable && j->inc_value > 0.0)
		j->far_below = value < TRIAL_CUT_FAR * j->inc_value ? j->far_below + 1 : 0;
	if (trial_step(&jp->acc, ts, value)) {
		trial_record(j, jp->name, &jp->acc, wl);
		if (whole && proposal)
			j->pending = false;
		trial_begin(&jp->acc, cand, 0, TRIAL_LONG_STEPS);
	} else if (cuttable && j->far_below >= TRIAL_CUT_FAR_STEPS) {
		/* Nothing measured to learn from yet (warm-up): the plan is remembered as what it cost. */
		if (jp->acc.n < 2) {
			struct trial_acc far = jp->acc;
			far.n = 2;
			far.mean = value;
			far.m2 = 0.0;
			far.t_start = far.t_start > 0.0 ? far.t_start : ts;
			far.t_end = ts;
			trial_record(j, jp->name, &far, wl);
		} else {
			trial_record(j, jp->name, &jp->acc, wl);
		}
		j->pending = false;
		j->cut_trials++;
		j->far_below = 0;
		trial_begin(&jp->acc, cand, 0, TRIAL_LONG_STEPS);
	} else if (cuttable && trial_clearly_below(&jp->acc, j->inc_value)) {
		trial_record(j, jp->name, &jp->acc, wl);
		j->pending = false;
		j->cut_trials++;
		trial_begin(&jp->acc, cand, 0, TRIAL_LONG_STEPS);
	}
}

/* The config a phase ran with: the reported top level overlaid with its "phases" entry. */
static int reported_candidate(const struct tuner_job *j, const json_t *reported, const char *phase)
{
	const struct knob_space *sp = &j->w->sp;
	int top = knobs_candidate_of(sp, reported, j->start_cand);
	json_t *over;

	if (top < 0 || !phase || !*phase)
		return top;
	over = json_object_get(json_object_get(reported, "phases"), phase);
	return json_is_object(over) ? knobs_candidate_of(sp, over, top) : top;
}

static int cmp_sample_t(const void *a, const void *b)
{
	const struct sample *x = *(const struct sample *const *)a, *y = *(const struct sample *const *)b;

	return (x->t > y->t) - (x->t < y->t);
}

/* The whole-job objective value of one sample, or NAN when it carries none. */
static double job_step_value(struct tuner_job *j, const struct sample *s, int cand)
{
	enum objective obj = j->w->objective;
	double v = NAN;

	if (obj == OBJECTIVE_GOODPUT)
		return tuner_goodput_value(j, s, cand);
	switch (reported_of(s->name)) {
	case REPORTED_SAMPLES_PER_S:
		j->has_sps = true;
		v = s->value;
		break;
	case REPORTED_STEP_TIME_S:
		if (!j->has_sps && s->value > 0.0)
			v = 1.0 / s->value; /* steps per second when the job gives no sample count */
		break;
	default:
		break;
	}
	if (!isnan(v) && obj == OBJECTIVE_EFFICIENCY)
		v /= tuner_resources(&j->w->sp, cand);
	return v;
}

/*
 * One step's value and its time (its step_time_s, or else the sum of its
 * phases' times): their product, per workload, turns a predicted value into
 * a step time, which is what the phases' times add up to.
 */
static void learn_step_scale(struct tuner_job *j, double value, double step_time, int cand)
{
	struct tuner_workload *w = j->w;
	double kappa;

	if (w->objective == OBJECTIVE_GOODPUT || !(value > 0.0) || !(step_time > 0.0) || cand < 0)
		return;
	kappa = value * step_time;
	if (w->objective == OBJECTIVE_EFFICIENCY)
		kappa *= tuner_resources(&w->sp, cand);
	w->kappa_sum += kappa;
	w->kappa_n++;
}

/* One whole-job step under the plan of pool: counts it, and measures the plan. */
static void whole_step(struct tuner_job *j, int pool, const struct sample *x, double v, struct tuner_write **wl)
{
	struct tuner_job_phase *jp;

	j->steps++;
	j->w->steps++;
	if (pool >= 0 && (jp = job_phase(j, "")))
		phase_step(j, jp, pool, x->t, v, wl);
}

static void observe_batch(struct tuner_job *j, const struct sample *s, size_t n,
			  const json_t *reported, struct tuner_write **wl)
{
	const struct sample **order = malloc(n * sizeof(*order));
	struct tuner_plan plan;
	int top = reported_candidate(j, reported, ""), pool = -1;
	size_t i, end;

	if (!order) {
		free(order);
		return;
	}
	if (top >= 0 && !same_static(&j->w->sp, top, j->start_cand))
		j->start_cand = top; /* the job runs other static knobs than it was given: proposals follow them */
	if (top >= 0 && tuner_plan_of_config(j->w, reported, j->start_cand, &plan) == 0)
		pool = tuner_plan_pool(j->w, &plan);
	for (i = 0; i < n; i++)
		order[i] = &s[i];
	qsort(order, n, sizeof(*order), cmp_sample_t); /* the samples' own time, not arrival */
	for (i = 0; i < n; i = end) {
		/* One step: the samples that share its time. */
		double value = NAN, step_time = 0.0, phases = 0.0;
		if (j->w->objective == OBJECTIVE_GOODPUT)
			tuner_goodput_step(j, order + i, n - i);
		for (end = i; end < n && order[end]->t == order[i]->t; end++) {
			const struct sample *x = order[end];
			struct tuner_job_phase *jp;
			double v;
			int cand;
			if (!x->phase || !*x->phase) {
				if (reported_of(x->name) == REPORTED_STEP_TIME_S)
					step_time = x->value;
				v = job_step_value(j, x, top);
				if (!isnan(v)) {
					value = v;
					whole_step(j, pool, x, v, wl);
				}
			} else if (reported_of(x->name) == REPORTED_PHASE_TIME_S && x->value > 0.0) {
				phases += x->value;
				cand = reported_candidate(j, reported, x->phase);
				if (cand < 0 || !(jp = job_phase(j, x->phase)))
					continue;
				v = 1.0 / x->value;
				if (j->w->objective == OBJECTIVE_EFFICIENCY)
					v /= tuner_resources(&j->w->sp, cand);
				phase_step(j, jp, cand, x->t, v, wl);
			}
		}
		learn_step_scale(j, value, step_time > 0.0 ? step_time : phases, top);
	}
	free(order);
}

/* ---- public ---- */

/* Loads the trials (pooled by config), declared knobs and phase states written by earlier runs. */
static int tuner_load(struct tuner *t)
{
	json_t *all = NULL, *row;
	size_t i;
	int rc;

	if (!t->st)
		return 0;
	if ((rc = store_tuner_load(t->st, t->node.hw_class, &all)) != STORE_OK) {
		log_warnx("%s: %s", __func__, store_strerror(rc));
		return -1;
	}
	json_array_foreach(json_object_get(all, "workloads"), i, row) {
		json_t *decl = json_object_get(row, "declared"), *gp = json_object_get(row, "goodput");
		struct tuner_workload *w =
			workload_new(t, json_integer_value(json_object_get(row, "workload_id")),
				     json_string_value(json_object_get(row, "name")), json_object_get(row, "params"),
				     config_objective(json_string_value(json_object_get(row, "objective"))),
				     json_is_object(decl) ? decl : NULL);
		if (w && json_is_object(gp) && w->objective == OBJECTIVE_GOODPUT)
			tuner_goodput_restore(w, gp);
	}
	json_array_foreach(json_object_get(all, "phases"), i, row) {
		int64_t wid = json_integer_value(json_object_get(row, "workload_id"));
		enum objective obj = config_objective(json_string_value(json_object_get(row, "objective")));
		struct tuner_workload *w;
		for (w = t->workloads; w; w = w->next) {
			struct tuner_phase *ph;
			if (w->id != wid || w->objective != obj)
				continue;
			if ((ph = tuner_phase_get(w, json_string_value(json_object_get(row, "phase")), true))) {
				ph->settled = json_integer_value(json_object_get(row, "settled")) != 0;
				ph->drift_t = json_number_value(json_object_get(row, "drift_t"));
			}
		}
	}
	json_array_foreach(json_object_get(all, "pools"), i, row) {
		const char *name = json_string_value(json_object_get(row, "name"));
		enum objective obj = config_objective(json_string_value(json_object_get(row, "objective")));
		const char *config = json_string_value(json_object_get(row, "config")), *phase;
		json_t *params = json_object_get(row, "params"), *canon = tuner_params_canonical(params);
		struct tuner_workload *w = tuner_workload_find(t, name, canon, obj);
		struct learner_stats s = {
			.trials = (int)json_integer_value(json_object_get(row, "trials")),
			.steps = (long)json_integer_value(json_object_get(row, "steps")),
			.sum = json_number_value(json_object_get(row, "sum")),
			.sumsq = json_number_value(json_object_get(row, "sumsq")),
			.sum_var = json_number_value(json_object_get(row, "sum_var")),
		};
		json_decref(canon);
		if (!config || (!w && !(w = workload_new(t, json_integer_value(json_object_get(row, "workload_id")),
							    name, params, obj, NULL))))
			continue;
		phase = json_string_value(json_object_get(row, "phase"));
		pool_learn(w, phase ? phase : "", config, config_candidate(w, config), &s,
			   json_integer_value(json_object_get(row, "stale")) != 0);
	}
	json_array_foreach(json_object_get(all, "jobs"), i, row) {
		struct tuner_workload *w;
		for (w = t->workloads; w; w = w->next)
			if (w->id == json_integer_value(json_object_get(row, "workload_id")) &&
			    w->objective == config_objective(json_string_value(json_object_get(row, "objective"))))
				w->jobs = (long)json_integer_value(json_object_get(row, "jobs"));
	}
	json_decref(all);
	return 0;
}

struct tuner *tuner_open(struct store *st, const struct node_info *node, const struct tuner_options *opt)
{
	struct tuner *t = calloc(1, sizeof(*t));
	struct tuner_workload *w;
	long trials = 0;
	int nwork = 0, rc;

	if (!t) {
		log_warn("%s", __func__);
		return NULL;
	}
	pthread_mutex_init(&t->lock, NULL);
	t->st = st;
	t->node = *node;
	t->opt = *opt;
	if (!(t->opt.gain_threshold > 0.0))
		t->opt.gain_threshold = 0.01;
	/* Nobody sees t yet, but the load runs functions whose contract is "lock held". */
	pthread_mutex_lock(&t->lock);
	rc = tuner_load(t);
	pthread_mutex_unlock(&t->lock);
	if (rc < 0) {
		tuner_close(t);
		return NULL;
	}
	for (w = t->workloads; w; w = w->next) {
		size_t i;
		for (i = 0; i < w->npools; i++) {
			trials += w->pools[i].fresh.trials + w->pools[i].stale.trials;
			/* The steps its jobs ran, as far as its trials measured them (what explore_pays weighs). */
			if (!w->pools[i].phase[0])
				w->steps += w->pools[i].fresh.steps + w->pools[i].stale.steps;
		}
		nwork++;
	}
	log_info("tuner: %ld trials of %d workloads loaded", trials, nwork);
	return t;
}

void tuner_close(struct tuner *t)
{
	if (!t)
		return;
	while (t->jobs) {
		struct tuner_job *j = t->jobs;
		t->jobs = j->next;
		job_free(j);
	}
	while (t->workloads) {
		struct tuner_workload *w = t->workloads;
		t->workloads = w->next;
		workload_free(w);
	}
	tuner_cache_free(t);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

/* Whether two declarations (either may be NULL) are the same. */
static bool same_declared(const json_t *a, const json_t *b)
{
	if (!a || json_object_size(a) == 0)
		return !b || json_object_size(b) == 0;
	return b && json_equal((json_t *)a, (json_t *)b);
}

/* The workload of a new job, created or with its space rebuilt for new declarations. */
static struct tuner_workload *job_workload(struct tuner *t, int64_t wid, const char *name, const json_t *canon,
					   enum objective objective, const json_t *declared, int64_t job_id,
					   struct tuner_write **wl)
{
	struct tuner_workload *w = tuner_workload_find(t, name, canon, objective);
	struct tuner_write *wr;
	char err[200];

	if (!w) {
		if (!(w = workload_new(t, wid, name, canon, objective, declared)))
			return NULL;
	} else if (!same_declared(w->declared, declared)) {
		if (workload_build(t, w, declared, err, sizeof(err)) < 0) {
			log_warnx("%s: job %lld: knobs: %s; keeping the workload's earlier ones", __func__,
				  (long long)job_id, err);
			(void)workload_build(t, w, w->declared, err, sizeof(err));
			return w;
		}
	} else {
		return w;
	}
	if (wid)
		w->id = wid;
	if ((wr = write_new(WRITE_DECLARED, job_id, w, ""))) {
		wr->text = w->declared ? json_dumps(w->declared, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
		writes_push(wl, wr);
	}
	return w;
}

/*
 * Chooses the plan a new job starts with and remembers the job.  Its static
 * knobs are chosen here, across jobs: those of the best measured plan once
 * nothing is worth trying (static knobs cannot be explored within a job's
 * budget), else those of the plan of highest expected improvement.
 */
static json_t *job_begin(struct tuner *t, struct tuner_job *j)
{
	struct tuner_workload *w = j->w;
	struct tuner_phase *ph0 = tuner_phase_get(w, "", true);
	struct tuner_plan_choice ch;
	bool explore;

	if (!ph0 || !job_phase(j, ""))
		return NULL;
	tuner_prior_apply(t, w, ph0);
	if (tuner_plan_choose(t, w, &j->allowed, &ch) < 0)
		return NULL;
	explore = !ch.any_measured || ch.survey ||
		  (ch.gain >= t->opt.gain_threshold &&
		   explore_pays(w, &ch.next_est, ch.best_est.mu,
				start_cost_steps(w, &ch.next, &ch.best,
						 knobs_int_value(&w->sp, ch.next.top, KNOB_INTEROP_THREADS, 1) > 1)));
	job_note_best(j, &ch);
	job_set_plan(j, explore ? &ch.next : &ch.best, explore);
	j->start_cand = j->plan.top;
	j->gpus = (int)knobs_int_value(&j->w->sp, j->start_cand, KNOB_GPUS, 0);
	t->gpus_given += j->gpus;
	return tuner_plan_json(j->w, &j->plan);
}

json_t *tuner_job_start(struct tuner *t, int64_t job_id, const char *workload, const char *params_json,
			enum objective objective, const json_t *job_knobs)
{
	json_t *params = params_json ? json_loads(params_json, 0, NULL) : NULL;
	json_t *canon = tuner_params_canonical(params), *answer = NULL;
	struct tuner_write *wl = NULL;
	struct tuner_workload *w;
	struct tuner_job *j;
	struct job_brief b;
	int64_t wid = 0;

	json_decref(params);
	if (t->st && store_job_brief(t->st, job_id, &b) == STORE_OK)
		wid = b.workload_id;
	pthread_mutex_lock(&t->lock);
	if ((j = job_find(t, job_id))) { /* registered again under the same id: start afresh */
		job_unlink(t, j);
		job_free(j);
	}
	w = job_workload(t, wid, workload, canon, objective, json_is_object(job_knobs) ? job_knobs : NULL, job_id,
			 &wl);
	if (w && (j = job_new(t, job_id, w)) && (answer = job_begin(t, j)))
		j->answer = json_deep_copy(answer);
	tuner_cache_changed(t);
	pthread_mutex_unlock(&t->lock);
	writes_flush(t, wl);
	if (answer)
		tuner_other_ask(t, workload, canon, objective);
	json_decref(canon);
	if (!answer)
		log_warnx("%s: job %lld: no config could be chosen", __func__, (long long)job_id);
	return answer;
}

/* A running job the tuner did not see start (the daemon restarted): rebuilt from its row. */
static struct tuner_job *job_restore(struct tuner *t, int64_t job_id, const json_t *info)
{
	const char *name = json_string_value(json_object_get(info, "name"));
	json_t *canon = tuner_params_canonical(json_object_get(info, "params"));
	json_t *knobs = json_object_get(info, "knobs"), *config = json_object_get(info, "config");
	enum objective objective = config_objective(json_string_value(json_object_get(info, "objective")));
	struct tuner_workload *w;
	struct tuner_job *j = NULL;
	struct tuner_plan plan;
	int cand;

	if (!name || json_integer_value(json_object_get(info, "running")) != 1)
		goto done;
	w = tuner_workload_find(t, name, canon, objective);
	if (!w && !(w = workload_new(t, json_integer_value(json_object_get(info, "workload_id")), name, canon,
				     objective, json_is_object(knobs) ? knobs : NULL)))
		goto done;
	if (!(j = job_new(t, job_id, w)))
		goto done;
	cand = knobs_candidate_of(&w->sp, json_is_object(config) ? config : NULL, -1);
	j->start_cand = cand >= 0 ? cand : knobs_prior_candidate(&w->sp);
	j->gpus = (int)knobs_int_value(&w->sp, j->start_cand, KNOB_GPUS, 0);
	t->gpus_given += j->gpus;
	if (!json_is_object(config) || tuner_plan_of_config(w, config, j->start_cand, &plan) < 0)
		tuner_plan_uniform(&plan, j->start_cand);
	job_set_plan(j, &plan, false);
	j->answer = tuner_plan_json(w, &j->plan);
done:
	json_decref(canon);
	return j;
}

json_t *tuner_job_observe(struct tuner *t, int64_t job_id, const struct sample *s, size_t n,
			  const json_t *reported_config)
{
	struct tuner_write *wl = NULL;
	struct tuner_job *j;
	json_t *answer = NULL, *info = NULL;

	pthread_mutex_lock(&t->lock);
	if (!(j = job_find(t, job_id)) && t->st) {
		pthread_mutex_unlock(&t->lock);
		if (store_tuner_job(t->st, job_id, &info) != STORE_OK)
			return NULL;
		pthread_mutex_lock(&t->lock);
		if (!(j = job_find(t, job_id)))
			j = job_restore(t, job_id, info);
		json_decref(info);
	}
	if (j) {
		const json_t *reported = json_is_object(reported_config) ? reported_config : j->answer;
		observe_batch(j, s, n, reported, &wl);
		if ((answer = job_answer(t, j, &wl))) {
			json_decref(j->answer);
			j->answer = json_deep_copy(answer);
		}
	}
	tuner_cache_changed(t);
	pthread_mutex_unlock(&t->lock);
	writes_flush(t, wl);
	return answer;
}

const char *tuner_job_why(struct tuner *t, int64_t job_id)
{
	struct tuner_phase *ph0;
	struct tuner_job *j;
	const char *why = NULL;

	pthread_mutex_lock(&t->lock);
	if ((j = job_find(t, job_id)) && (ph0 = tuner_phase_get(j->w, "", false))) {
		if (j->pending)
			why = ph0->settled && ph0->drift_t > 0 ? "drift" : "exploring";
		else
			why = ph0->settled ? "settled" : "best";
	}
	pthread_mutex_unlock(&t->lock);
	return why;
}

long tuner_job_report_within(struct tuner *t, int64_t job_id)
{
	struct tuner_job *j;
	long within = 0;

	pthread_mutex_lock(&t->lock);
	if ((j = job_find(t, job_id)) && j->pending)
		within = TRIAL_CUT_FAR_STEPS;
	pthread_mutex_unlock(&t->lock);
	return within;
}

void tuner_job_end(struct tuner *t, int64_t job_id)
{
	struct tuner_write *wl = NULL;
	struct tuner_job *j;
	int i;

	pthread_mutex_lock(&t->lock);
	if ((j = job_find(t, job_id))) {
		/* A trial cut short by the end still counts once it has enough steps. */
		for (i = 0; i < j->nphases; i++)
			if (j->phases[i].acc.n >= TRIAL_MIN_STEPS)
				trial_record(j, j->phases[i].name, &j->phases[i].acc, &wl);
		queue_goodput_state(&wl, j);
		job_unlink(t, j);
		job_free(j);
	}
	tuner_cache_changed(t);
	pthread_mutex_unlock(&t->lock);
	writes_flush(t, wl);
}

/*
 * A trial of another node of this hardware class (cluster.c): pooled like
 * the node's own, so the next recommendation or job start uses it.  A
 * workload seen only elsewhere is created with the knobs declared there; a
 * workload this node already has keeps its own declaration.
 */
int tuner_learn_remote(struct tuner *t, const struct tuner_remote_trial *r)
{
	json_t *canon, *decl = r->declared_json ? json_loads(r->declared_json, 0, NULL) : NULL;
	struct tuner_workload *w;
	struct tuner_phase *ph;
	struct learner_stats s = {0};
	double var = r->n > 1 ? r->m2 / (double)(r->n - 1) / (double)r->n : NAN;
	int rc = -1;

	if (r->n < 2 || !learner_stats_add(&s, r->n, r->mean, var) || !r->phase ||
	    !(canon = tuner_params_canonical(r->params))) {
		json_decref(decl);
		return -1;
	}
	pthread_mutex_lock(&t->lock);
	if (!(w = tuner_workload_find(t, r->workload, canon, r->objective)))
		w = workload_new(t, 0, r->workload, canon, r->objective, json_is_object(decl) ? decl : NULL);
	if (w) {
		ph = tuner_phase_get(w, r->phase, false);
		pool_learn(w, r->phase, r->config, config_candidate(w, r->config), &s,
			   ph && r->t_start < ph->drift_t);
		tuner_cache_changed(t);
		rc = 0;
	}
	pthread_mutex_unlock(&t->lock);
	json_decref(canon);
	json_decref(decl);
	return rc;
}
