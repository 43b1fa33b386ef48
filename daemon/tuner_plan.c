/*
 * Plans (see tuner_internal.h): which whole-job configs a job of a workload
 * may run, what each is worth, and which to run next.
 *
 * A knob fixed at process start (inter-op threads, GPUs, allocator) is only
 * as good as the best plan it allows: inter-op 2 may lose with every
 * uniform thread count and win once the forked phase runs 1 intra-op thread
 * and the sequential one 2.  So plans are ranked jointly over the static
 * knobs and the per-phase runtime settings.  A plan's value is its measured
 * whole-job objective where it has trials; otherwise it is predicted from
 * the uniform plan of its top candidate (the whole-job learner) corrected by
 * the time each phase saves under its own candidate (the phase learners)
 * and what the workload's switches were measured to cost, with a model
 * error, since phases interact.
 * The prediction only decides what to measure: a plan with overrides is
 * adopted only when its own whole-job trials beat the best measured plan,
 * and one that lost stays measured, so it is not proposed again.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "invariant.h"
#include "tuner_internal.h"

/* Relative error of a predicted plan (switching costs, phases interacting). */
#define PLAN_MODEL_SD 0.04
/* Run-to-run spread of a plan measured once, relative. */
#define PLAN_RUN_SD 0.02
/* Extra spread of a plan's trials from before a drift, relative (as LEARNER_STALE_SD). */
#define PLAN_STALE_SD 0.10
/* A plan's trial drifted when this many standard errors and this share away from its value. */
#define PLAN_DRIFT_Z 4.0
#define PLAN_DRIFT_REL 0.08
/* Most candidate plans ranked at one decision. */
#define PLAN_MAX_RANKED 512
/* Most static groups (distinct values of the static knobs) ranked at once. */
#define PLAN_MAX_GROUPS 64
/*
 * Up to this many static groups, each is measured once (its most promising
 * plan) before a workload settles: a group is only as good
 * as its best plan, and models fitted on the other groups cannot say what a
 * static knob does to the phases (an inter-op pool turns the forked phase's
 * preference around).  Beyond it, surveying would cost more jobs than the
 * models save.
 */
#define PLAN_SURVEY_GROUPS 4

double tuner_resources(const struct knob_space *sp, int cand)
{
	long g = knobs_int_value(sp, cand, KNOB_GPUS, 0), th = knobs_int_value(sp, cand, KNOB_INTRA_THREADS, 1);

	return g > 0 ? (double)g : (double)(th > 0 ? th : 1);
}

void tuner_plan_uniform(struct tuner_plan *p, int top)
{
	int i;

	p->top = top;
	for (i = 0; i < TUNER_MAX_PHASES; i++)
		p->over[i] = -1;
}

/* Whether candidates a and b differ in a runtime knob (they share the static ones in a plan). */
static bool runtime_differs(const struct knob_space *sp, int a, int b)
{
	struct knob_config x, y;
	int i;

	if (a == b)
		return false;
	knobs_decode(sp, a, &x);
	knobs_decode(sp, b, &y);
	for (i = 0; i < sp->nknobs; i++)
		if (sp->knobs[i].runtime && x.idx[i] != y.idx[i])
			return true;
	return false;
}

/* The candidate phase i runs under p. */
static int plan_phase_cand(const struct tuner_plan *p, int i)
{
	return p->over[i] >= 0 ? p->over[i] : p->top;
}

#ifndef NDEBUG /* the invariants below are asked by asserts alone: a release build has none */
/*
 * What a plan of w is, as everything below relies on: a top candidate of
 * the space (or -1, none) and overrides only where there is a top, each a
 * candidate of the space for one of the workload's phases.
 */
static bool plan_holds(const struct tuner_workload *w, const struct tuner_plan *p)
{
	if (p->top < -1 || p->top >= w->sp.ncand)
		return false;
	for (int i = 0; i < TUNER_MAX_PHASES; i++)
		if (p->over[i] < -1 || p->over[i] >= w->sp.ncand || (p->over[i] >= 0 && (p->top < 0 || i >= w->nphases)))
			return false;
	return true;
}

/* Whether candidates a and b share every static knob (a plan switches only runtime ones between phases). */
static bool statics_shared(const struct knob_space *sp, int a, int b)
{
	struct knob_config x, y;

	knobs_decode(sp, a, &x);
	knobs_decode(sp, b, &y);
	for (int i = 0; i < sp->nknobs; i++)
		if (!sp->knobs[i].runtime && x.idx[i] != y.idx[i])
			return false;
	return true;
}

/* A plan the ranking built: a top, and overrides a job can switch to at a phase boundary. */
static bool plan_runnable(const struct tuner_workload *w, const struct tuner_plan *p)
{
	if (!plan_holds(w, p) || p->top < 0)
		return false;
	for (int i = 0; i < w->nphases; i++)
		if (p->over[i] >= 0 && !statics_shared(&w->sp, p->over[i], p->top))
			return false;
	return true;
}

/* Whether every candidate p runs passes f. */
static bool plan_passes(const struct tuner_workload *w, const struct tuner_plan *p, const struct knob_filter *f)
{
	for (int i = 0; i < w->nphases; i++)
		if (!knobs_filter_pass(&w->sp, f, plan_phase_cand(p, i)))
			return false;
	return knobs_filter_pass(&w->sp, f, p->top);
}

#endif

/* Drops overrides that change nothing, so that one plan has one form. */
static void plan_normalize(const struct tuner_workload *w, struct tuner_plan *p)
{
	int i;

	assert(plan_holds(w, p));
	for (i = 0; i < TUNER_MAX_PHASES; i++)
		if (i >= w->nphases || !w->phases[i].name[0] || p->over[i] < 0 ||
		    !runtime_differs(&w->sp, p->over[i], p->top))
			p->over[i] = -1;
}

bool tuner_plan_is_uniform(const struct tuner_workload *w, const struct tuner_plan *p)
{
	int i;

	for (i = 0; i < w->nphases; i++)
		if (p->over[i] >= 0 && runtime_differs(&w->sp, p->over[i], p->top))
			return false;
	return true;
}

bool tuner_plan_equal(const struct tuner_workload *w, const struct tuner_plan *a, const struct tuner_plan *b)
{
	int i;

	if (a->top != b->top)
		return false;
	for (i = 0; i < w->nphases; i++)
		if (plan_phase_cand(a, i) != plan_phase_cand(b, i))
			return false;
	return true;
}

json_t *tuner_plan_json(const struct tuner_workload *w, const struct tuner_plan *p)
{
	json_t *config = knobs_config_json(&w->sp, p->top), *phases = NULL;
	struct knob_config a, b;
	int i, k;

	if (!config)
		return NULL;
	assert(plan_holds(w, p) && p->top >= 0);
	knobs_decode(&w->sp, p->top, &b);
	for (i = 0; i < w->nphases; i++) {
		json_t *o = NULL;
		if (!w->phases[i].name[0] || p->over[i] < 0)
			continue;
		knobs_decode(&w->sp, p->over[i], &a);
		for (k = 0; k < w->sp.nknobs; k++) {
			const struct knob *kn = &w->sp.knobs[k];
			if (!kn->runtime || a.idx[k] == b.idx[k])
				continue;
			if (!o)
				o = json_object();
			json_object_set_new(o, kn->name, kn->type == KNOB_INT ? json_integer(kn->ivalues[a.idx[k]])
									    : json_string(kn->svalues[a.idx[k]]));
		}
		if (!o)
			continue;
		if (!phases)
			phases = json_object();
		json_object_set_new(phases, w->phases[i].name, o);
	}
	if (phases)
		json_object_set_new(config, "phases", phases);
	return config;
}

int tuner_plan_of_config(struct tuner_workload *w, const json_t *config, int base, struct tuner_plan *out)
{
	json_t *phases, *over;
	const char *name;
	int top = knobs_candidate_of(&w->sp, config, base);

	if (top < 0)
		return -1;
	tuner_plan_uniform(out, top);
	phases = json_object_get(config, "phases");
	json_object_foreach(phases, name, over) {
		struct tuner_phase *ph;
		int c;
		if (!json_is_object(over) || !*name || !(ph = tuner_phase_get(w, name, true)))
			continue;
		if ((c = knobs_candidate_of(&w->sp, over, top)) < 0)
			return -1;
		out->over[ph - w->phases] = c;
	}
	plan_normalize(w, out);
	return 0;
}

/* The canonical text of a plan, malloc'd; NULL when out of memory. */
static char *plan_text(const struct tuner_workload *w, const struct tuner_plan *p)
{
	json_t *config = tuner_plan_json(w, p);
	char *text = config ? json_dumps(config, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

	json_decref(config);
	return text;
}

void tuner_plan_pool_parse(struct tuner_workload *w, struct tuner_pool *pool)
{
	json_t *config = json_loads(pool->config, 0, NULL);

	if (!config || tuner_plan_of_config(w, config, -1, &pool->plan) < 0)
		tuner_plan_uniform(&pool->plan, -1);
	pool->uniform = !json_object_get(config, "phases");
	json_decref(config);
}

int tuner_plan_pool(struct tuner_workload *w, const struct tuner_plan *p)
{
	struct tuner_pool *pool;
	size_t i, plans = 0;
	char *text;

	for (i = 0; i < w->npools; i++)
		if (!w->pools[i].phase[0]) {
			if (tuner_plan_equal(w, &w->pools[i].plan, p))
				return (int)i;
			plans++;
		}
	if (plans >= TUNER_MAX_PLANS || !(text = plan_text(w, p)))
		return -1;
	if (w->npools == w->pools_cap) {
		if (!(pool = array_grow(w->pools, &w->pools_cap, w->npools + 1, sizeof(*pool)))) {
			free(text);
			return -1;
		}
		w->pools = pool;
	}
	assert(w->npools < w->pools_cap && plans < TUNER_MAX_PLANS);
	pool = &w->pools[w->npools];
	memset(pool, 0, sizeof(*pool));
	pool->config = text;
	pool->plan = *p;
	plan_normalize(w, &pool->plan);
	pool->uniform = tuner_plan_is_uniform(w, p);
	return (int)w->npools++;
}

/* The pool of a plan with overrides, if it has one, else NULL. */
static const struct tuner_pool *plan_pool_find(const struct tuner_workload *w, const struct tuner_plan *p)
{
	size_t i;

	for (i = 0; i < w->npools; i++)
		if (!w->pools[i].phase[0] && !w->pools[i].uniform && tuner_plan_equal(w, &w->pools[i].plan, p))
			return &w->pools[i];
	return NULL;
}

/* The mean of some trials and its variance. */
static void stats_estimate(const struct learner_stats *s, double *mean, double *var)
{
	double between, within;

	assert(s->trials > 0);
	*mean = s->sum / s->trials;
	within = s->sum_var / ((double)s->trials * s->trials);
	between = s->trials > 1 ? (s->sumsq - s->trials * *mean * *mean) / (s->trials - 1) / s->trials : 0.0;
	*var = fmax(between, within) + pow(PLAN_RUN_SD * *mean, 2) / s->trials;
}

/*
 * A pool's value and its standard error: its trials since the last drift
 * and those before it, weighted by their precision, the older ones with
 * the extra spread of stale evidence (as the learners weigh them).
 */
static void pool_estimate(const struct tuner_pool *pool, struct tuner_plan_est *e)
{
	double mf = 0.0, vf = 0.0, ms = 0.0, vs = 0.0;

	assert(!pool->phase[0] && pool->fresh.trials + pool->stale.trials > 0);
	if (pool->fresh.trials > 0)
		stats_estimate(&pool->fresh, &mf, &vf);
	if (pool->stale.trials > 0) {
		stats_estimate(&pool->stale, &ms, &vs);
		vs += pow(PLAN_STALE_SD * ms, 2) / pool->stale.trials;
	}
	if (pool->fresh.trials > 0 && pool->stale.trials > 0) {
		double wf = 1.0 / fmax(vf, 1e-300), ws = 1.0 / fmax(vs, 1e-300);
		e->mu = (wf * mf + ws * ms) / (wf + ws);
		e->sd = sqrt(1.0 / (wf + ws));
	} else {
		e->mu = pool->fresh.trials > 0 ? mf : ms;
		e->sd = sqrt(pool->fresh.trials > 0 ? vf : vs);
	}
	e->measured = true;
	e->trials = pool->fresh.trials + pool->stale.trials;
}

bool tuner_pool_drifted(const struct tuner_workload *w, int pool, double mean, double var_mean, double *mu, double *sd)
{
	const struct tuner_pool *p;
	struct tuner_plan_est e;
	double diff;

	if (pool < 0 || (size_t)pool >= w->npools || (p = &w->pools[pool])->fresh.trials < 2)
		return false;
	pool_estimate(p, &e);
	*mu = e.mu;
	*sd = e.sd;
	diff = fabs(mean - e.mu);
	return diff > PLAN_DRIFT_Z * sqrt(e.sd * e.sd + var_mean) && diff > PLAN_DRIFT_REL * fabs(e.mu);
}

/* Seconds per step of a value v under candidate cand, or NAN while unknown. */
static double step_time_of(const struct tuner_workload *w, int cand, double v)
{
	double kappa;

	if (w->kappa_n == 0 || !(v > 0.0))
		return NAN;
	kappa = w->kappa_sum / (double)w->kappa_n;
	if (w->objective == OBJECTIVE_EFFICIENCY)
		kappa /= tuner_resources(&w->sp, cand);
	return kappa / v;
}

/* What a plan with overrides would take a step if switching threads cost nothing (plan_time_unswitched). */
struct plan_time {
	double mu_u, sd_u;            /* the value of its top's uniform plan */
	double step;                  /* that uniform plan's step time */
	double left;                  /* the step time once each overridden phase saved its share */
	double var;                   /* the variance of those savings */
	int nsw;                      /* switches a step makes: into and out of each overridden phase */
};

/* Fills *pt for plan p; false while something it needs is unknown. */
static bool plan_time_unswitched(struct tuner_workload *w, const struct tuner_plan *p, struct plan_time *pt)
{
	struct tuner_phase *ph0 = tuner_phase_get(w, "", false);
	double saved = 0.0;
	int i;

	pt->var = 0.0;
	pt->nsw = 0;
	if (!ph0)
		return false;
	learner_predict(ph0->l, p->top, &pt->mu_u, &pt->sd_u);
	pt->step = step_time_of(w, p->top, pt->mu_u);
	if (!isfinite(pt->step))
		return false;
	for (i = 0; i < w->nphases; i++) {
		struct learner *l = w->phases[i].l;
		double ma, sa, mb, sb;
		if (p->over[i] < 0 || !w->phases[i].name[0])
			continue;
		if (l->ntrials == 0)
			return false;
		learner_predict(l, p->top, &ma, &sa);
		learner_predict(l, p->over[i], &mb, &sb);
		if (!(ma > 0.0) || !(mb > 0.0))
			return false;
		/* The phase learners learn 1 / phase time. */
		saved += 1.0 / ma - 1.0 / mb;
		pt->var += pow(sa / (ma * ma), 2) + pow(sb / (mb * mb), 2);
		pt->nsw += 2;
	}
	pt->left = fmax(pt->step - saved, 0.2 * pt->step);
	return true;
}

/*
 * What a thread switch costs this workload's steps, learned from its
 * measured plans with overrides: per plan, the step time measured beyond
 * the one its phases predict, per switch.  Switching threads may cost
 * nothing or, with OpenMP and OpenBLAS resizing their pools, milliseconds:
 * more than a short phase saves.  One plan that lost so says the same of
 * every plan that switches as often, where the phases alone would predict
 * each of them as good as the best.  The mean is taken with one plan of
 * no cost beside the measured ones (one plan may lose to how its own
 * phases interact, not to switching), and never below nothing: a plan
 * that beat its prediction says nothing of the others' switches.
 */
static void switch_cost_learn(struct tuner_workload *w)
{
	double sum = 0.0, sumsq = 0.0;
	int n = 0;

	for (size_t k = 0; k < w->npools; k++) {
		const struct tuner_pool *pool = &w->pools[k];
		struct tuner_plan_est e;
		struct plan_time pt;
		double r;
		if (pool->phase[0] || pool->uniform || pool->plan.top < 0 || pool->fresh.trials + pool->stale.trials == 0)
			continue;
		if (!plan_time_unswitched(w, &pool->plan, &pt) || pt.nsw == 0)
			continue;
		pool_estimate(pool, &e);
		if (!isfinite(r = step_time_of(w, pool->plan.top, e.mu)))
			continue;
		r = (r - pt.left) / pt.nsw;
		sum += r;
		sumsq += r * r;
		n++;
	}
	w->switch_s = fmax(sum / (n + 1), 0.0);
	w->switch_var = sumsq / (n + 1) / (n + 1);
}

/*
 * The prediction for a plan with overrides: the uniform plan of its top,
 * minus the time each overridden phase saves, plus what its switches cost.
 */
static void plan_predict(struct tuner_workload *w, const struct tuner_plan *p, struct tuner_plan_est *e)
{
	struct plan_time pt;
	double left, var;

	e->measured = false;
	e->trials = 0;
	e->mu = NAN;
	e->sd = NAN;
	if (!plan_time_unswitched(w, p, &pt))
		return;
	left = pt.left + pt.nsw * w->switch_s;
	var = pt.var + pt.nsw * pt.nsw * w->switch_var;
	e->mu = pt.mu_u * pt.step / left;
	e->sd = e->mu * sqrt(pow(pt.sd_u / pt.mu_u, 2) + var / (left * left) + PLAN_MODEL_SD * PLAN_MODEL_SD);
	/* A phase saves at most four fifths of a step: the plan is worth at most five times its top. */
	assert(!isfinite(e->mu) || e->mu <= 5.0 * pt.mu_u * (1.0 + 1e-9));
}

void tuner_plan_estimate(struct tuner *t, struct tuner_workload *w, const struct tuner_plan *p,
			 struct tuner_plan_est *e)
{
	struct tuner_phase *ph0 = tuner_phase_get(w, "", false);
	const struct tuner_pool *pool;

	(void)t;
	if (tuner_plan_is_uniform(w, p)) {
		double mean, std;
		long steps;
		if (!ph0) {
			e->mu = e->sd = NAN;
			e->measured = false;
			e->trials = 0;
			return;
		}
		learner_predict(ph0->l, p->top, &e->mu, &e->sd);
		learner_tried(ph0->l, p->top, &mean, &std, &e->trials, &steps);
		e->measured = e->trials > 0;
		return;
	}
	if ((pool = plan_pool_find(w, p)) && pool->fresh.trials + pool->stale.trials > 0) {
		pool_estimate(pool, e);
		return;
	}
	plan_predict(w, p, e);
}

/* ---- ranking ---- */

/* One static group: the candidates sharing their static knobs, and what each phase prefers there. */
struct plan_group {
	int rep;                      /* a candidate of the group */
	struct knob_filter f;         /* the caller's filter pinned to the group's static knobs */
	int best[TUNER_MAX_PHASES];   /* per phase: its best candidate in the group; -1: none */
	int propose[TUNER_MAX_PHASES];/* per phase: its next candidate to try in the group */
};

struct plan_ranking {
	struct tuner_plan plans[PLAN_MAX_RANKED];
	int n;
};

static void ranking_add(const struct tuner_workload *w, struct plan_ranking *r, struct tuner_plan *p)
{
	int i, same = -2;

	plan_normalize(w, p);
	/*
	 * Every phase overridden to one candidate: its uniform plan runs the
	 * same phases without switching threads twice per phase and step
	 * (which costs milliseconds with OpenMP and OpenBLAS).
	 */
	for (i = 0; i < w->nphases && same != -1; i++)
		if (w->phases[i].name[0])
			same = same == -2 || same == p->over[i] ? p->over[i] : -1;
	if (same >= 0)
		tuner_plan_uniform(p, same);
	assert(plan_runnable(w, p));
	for (i = 0; i < r->n; i++)
		if (tuner_plan_equal(w, &r->plans[i], p))
			return;
	if (r->n < PLAN_MAX_RANKED)
		r->plans[r->n++] = *p;
	assert(r->n <= PLAN_MAX_RANKED);
}

static int groups_of(struct tuner_workload *w, const struct knob_filter *f, struct plan_group *g)
{
	int c, n = 0, k, i;

	for (c = 0; c < w->sp.ncand && n < PLAN_MAX_GROUPS; c++) {
		struct knob_filter pinned = *f;
		if (!knobs_filter_pass(&w->sp, f, c))
			continue;
		knobs_filter_pin_static(&w->sp, &pinned, c);
		for (k = 0; k < n && memcmp(&g[k].f, &pinned, sizeof(pinned)) != 0; k++)
			;
		if (k < n)
			continue;
		assert(n < PLAN_MAX_GROUPS && knobs_filter_pass(&w->sp, &pinned, c));
		g[n].rep = c;
		g[n].f = pinned;
		for (i = 0; i < TUNER_MAX_PHASES; i++) {
			struct learner *l = i < w->nphases ? w->phases[i].l : NULL;
			bool use = l && w->phases[i].name[0] && l->ntrials > 0;
			g[n].best[i] = use ? learner_best(l, &pinned) : -1;
			g[n].propose[i] = use ? learner_propose(l, &pinned) : -1;
		}
		n++;
	}
	return n;
}

/*
 * The plans worth ranking in a group: every uniform one, each top with
 * every phase at its best, the best uniform top with one phase at its
 * proposal (the others at their best), and the measured plans.
 */
static void group_plans(struct tuner_workload *w, const struct plan_group *g, struct plan_ranking *r)
{
	struct tuner_phase *ph0 = tuner_phase_get(w, "", false);
	struct tuner_plan p;
	size_t k;
	int c, i, top = ph0 ? learner_best(ph0->l, &g->f) : -1;

	for (c = 0; c < w->sp.ncand; c++) {
		bool owned = c == top;
		if (!knobs_filter_pass(&w->sp, &g->f, c))
			continue;
		tuner_plan_uniform(&p, c);
		ranking_add(w, r, &p);
		/*
		 * Every phase at its best, under a top level that is the best
		 * uniform one or some phase's best: a top no phase wants only adds
		 * switches (it still runs the time outside the phases).
		 */
		for (i = 0; i < w->nphases; i++) {
			p.over[i] = g->best[i];
			owned = owned || g->best[i] == c;
		}
		if (owned)
			ranking_add(w, r, &p);
	}
	for (i = 0; top >= 0 && i < w->nphases; i++) {
		int j;
		if (g->propose[i] < 0)
			continue;
		tuner_plan_uniform(&p, top);
		for (j = 0; j < w->nphases; j++)
			p.over[j] = j == i ? g->propose[i] : g->best[j];
		ranking_add(w, r, &p);
	}
	for (k = 0; k < w->npools; k++) {
		const struct tuner_pool *pool = &w->pools[k];
		bool fits;
		if (pool->phase[0] || pool->uniform || pool->plan.top < 0 ||
		    pool->fresh.trials + pool->stale.trials == 0)
			continue;
		fits = knobs_filter_pass(&w->sp, &g->f, pool->plan.top);
		for (i = 0; fits && i < w->nphases; i++)
			fits = pool->plan.over[i] < 0 || knobs_filter_pass(&w->sp, &g->f, pool->plan.over[i]);
		if (fits) {
			p = pool->plan;
			ranking_add(w, r, &p);
		}
	}
}

/*
 * The plan to survey a static group none of whose plans is measured: its
 * most promising, the highest predicted value (ei: per ranked plan, -1
 * where unknown), since a group is as good as its best plan and the survey
 * asks whether that beats the other groups'.  Not the plan of highest
 * expected improvement, which is the group's least known corner: a whole
 * job oversubscribed, when an inter-op pool locks the plan in.  -1: none.
 */
static int survey_plan(const struct tuner_workload *w, const struct plan_group *groups, int ng,
		       const struct plan_ranking *r, const struct tuner_plan_est *est, const double *ei)
{
	int g, i;

	for (g = 0; g < ng; g++) {
		int pick = -1;
		bool measured = false;
		for (i = 0; i < r->n && !measured; i++) {
			if (!knobs_filter_pass(&w->sp, &groups[g].f, r->plans[i].top))
				continue;
			measured = est[i].measured;
			if (ei[i] >= 0.0 && (pick < 0 || est[i].mu > est[pick].mu))
				pick = i;
		}
		if (!measured && pick >= 0)
			return pick;
	}
	return -1;
}

int tuner_plan_choose(struct tuner *t, struct tuner_workload *w, const struct knob_filter *f,
		      struct tuner_plan_choice *out)
{
	struct tuner_phase *ph0 = tuner_phase_get(w, "", true);
	struct plan_group *groups = calloc(PLAN_MAX_GROUPS, sizeof(*groups));
	struct plan_ranking *r = calloc(1, sizeof(*r));
	struct tuner_plan_est *est = NULL;
	double inc = -INFINITY, top_ei = -1.0, *ei = NULL;
	int ng, i, best = -1, next = -1;

	memset(out, 0, sizeof(*out));
	if (!ph0 || !groups || !r)
		goto fail;
	switch_cost_learn(w);
	ng = groups_of(w, f, groups);
	for (i = 0; i < ng; i++)
		group_plans(w, &groups[i], r);
	if (r->n == 0 || !(est = calloc((size_t)r->n, sizeof(*est))) || !(ei = calloc((size_t)r->n, sizeof(*ei))))
		goto fail;
	for (i = 0; i < r->n; i++) {
		tuner_plan_estimate(t, w, &r->plans[i], &est[i]);
		if (est[i].measured && est[i].mu > inc) {
			inc = est[i].mu;
			best = i;
		}
	}
	out->any_measured = best >= 0;
	if (best < 0) {
		/* Nothing measured where f allows: the whole-job learner's pick (the prior's). */
		int c = learner_propose(ph0->l, f);
		if (c < 0)
			goto fail;
		tuner_plan_uniform(&out->best, c);
		out->next = out->best;
		tuner_plan_estimate(t, w, &out->best, &out->best_est);
		out->next_est = out->best_est;
		out->gain = 1.0;
		goto done;
	}
	for (i = 0; i < r->n; i++) {
		ei[i] = -1.0;
		if (!isfinite(est[i].mu) || !isfinite(est[i].sd))
			continue;
		ei[i] = gp_expected_improvement(est[i].mu, est[i].sd, inc);
		if (ei[i] > top_ei) {
			top_ei = ei[i];
			next = i;
		}
	}
	out->gain = inc > 0.0 ? fmax(top_ei, 0.0) / inc : 1.0;
	if (ng > 1 && ng <= PLAN_SURVEY_GROUPS && (i = survey_plan(w, groups, ng, r, est, ei)) >= 0) {
		next = i;
		out->gain = fmax(out->gain, t->opt.gain_threshold);
		out->survey = true;
	}
	out->best = r->plans[best];
	out->best_est = est[best];
	out->next = next >= 0 ? r->plans[next] : r->plans[best];
	out->next_est = next >= 0 ? est[next] : est[best];
	/* What a job is answered runs where f lets it: every plan ranked came from f's groups. */
	assert(out->best_est.measured && plan_passes(w, &out->best, f) && plan_passes(w, &out->next, f));
done:
	assert(plan_runnable(w, &out->best) && plan_runnable(w, &out->next) && out->gain >= 0.0);
	free(ei);
	free(est);
	free(r);
	free(groups);
	return 0;
fail:
	free(ei);
	free(est);
	free(r);
	free(groups);
	return -1;
}
