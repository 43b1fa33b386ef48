/*
 * The per-workload learner (see tuner_learner.h).  Objective values are
 * normalised by the largest tried mean so that the model's hyperparameters
 * mean the same for a workload doing 10 samples/s and one doing 10,000; the
 * prior shape is scaled to the data by least squares and the Gaussian
 * process models what the prior misses.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tuner_learner.h"

/* Extra spread of evidence from before a drift, relative. */
#define LEARNER_STALE_SD 0.10
/* A drift is a difference of more than this many standard deviations ... */
#define LEARNER_DRIFT_Z 4.0
/* ... and more than this share of the prediction. */
#define LEARNER_DRIFT_REL 0.08

struct learner *learner_new(const struct knob_space *sp)
{
	struct learner *l = calloc(1, sizeof(*l));
	size_t n = (size_t)sp->ncand;

	if (!l)
		return NULL;
	l->sp = *sp;
	l->acq = LEARNER_EI;
	l->fresh = calloc(n, sizeof(*l->fresh));
	l->stale = calloc(n, sizeof(*l->stale));
	l->shape = calloc(n, sizeof(double));
	l->shape_idle = calloc(n, sizeof(double));
	l->mu = calloc(n, sizeof(double));
	l->sd = calloc(n, sizeof(double));
	if (!l->fresh || !l->stale || !l->shape || !l->shape_idle || !l->mu || !l->sd) {
		learner_free(l);
		return NULL;
	}
	learner_set_shape(l, NULL);
	return l;
}

void learner_free(struct learner *l)
{
	if (!l)
		return;
	free(l->fresh);
	free(l->stale);
	free(l->shape);
	free(l->shape_idle);
	free(l->mu);
	free(l->sd);
	gp_free(&l->gp);
	free(l);
}

/* shape (or the topology prior of sp) into out, relative to its largest. */
static void shape_relative(const struct knob_space *sp, const double *shape, double *out)
{
	double max = 0.0;
	int c;

	for (c = 0; c < sp->ncand; c++) {
		out[c] = shape ? shape[c] : knobs_prior_shape(sp, c);
		if (out[c] > max)
			max = out[c];
	}
	for (c = 0; c < sp->ncand && max > 0.0; c++)
		out[c] /= max;
}

void learner_set_shape(struct learner *l, const double *shape)
{
	struct knob_space idle = l->sp;

	idle.interop_idle = true;
	shape_relative(&l->sp, shape, l->shape);
	shape_relative(&idle, shape, l->shape_idle);
	l->dirty = true;
}

bool learner_stats_add(struct learner_stats *s, long steps, double mean, double var_mean)
{
	if (!isfinite(mean) || !isfinite(var_mean))
		return false;
	s->trials++;
	s->steps += steps;
	s->sum += mean;
	s->sumsq += mean * mean;
	s->sum_var += var_mean > 0.0 ? var_mean : 0.0;
	return true;
}

void learner_stats_merge(struct learner_stats *s, const struct learner_stats *from)
{
	s->trials += from->trials;
	s->steps += from->steps;
	s->sum += from->sum;
	s->sumsq += from->sumsq;
	s->sum_var += from->sum_var;
}

void learner_add_pooled(struct learner *l, int cand, const struct learner_stats *s, bool stale)
{
	if (cand < 0 || cand >= l->sp.ncand || s->trials <= 0)
		return;
	learner_stats_merge(stale ? &l->stale[cand] : &l->fresh[cand], s);
	l->ntrials += s->trials;
	l->nsteps += s->steps;
	l->dirty = true;
}

void learner_add(struct learner *l, int cand, long steps, double mean, double var_mean, bool stale)
{
	struct learner_stats s = {0};

	if (learner_stats_add(&s, steps, mean, var_mean))
		learner_add_pooled(l, cand, &s, stale);
}

void learner_mark_stale(struct learner *l)
{
	int c;

	for (c = 0; c < l->sp.ncand; c++) {
		learner_stats_merge(&l->stale[c], &l->fresh[c]);
		memset(&l->fresh[c], 0, sizeof(l->fresh[c]));
	}
	l->dirty = true;
}

/* Observations for the model: one per candidate and freshness; returns their count. */
static int collect(struct learner *l, const struct knob_space *sp, double *x, double *y, double *nv, int *reps, int *cands,
		   int dim_out[1])
{
	int c, k, n = 0, dim = 0;

	l->scale = 0.0;
	for (c = 0; c < l->sp.ncand; c++)
		for (k = 0; k < 2; k++) {
			const struct learner_stats *s = k ? &l->stale[c] : &l->fresh[c];
			if (s->trials > 0 && fabs(s->sum / s->trials) > l->scale)
				l->scale = fabs(s->sum / s->trials);
		}
	if (l->scale <= 0.0)
		l->scale = 1.0;
	for (c = 0; c < l->sp.ncand && n < GP_MAX_OBS; c++)
		for (k = 0; k < 2 && n < GP_MAX_OBS; k++) {
			const struct learner_stats *s = k ? &l->stale[c] : &l->fresh[c];
			if (s->trials == 0)
				continue;
			dim = knobs_features(sp, c, x + n * GP_MAX_DIM);
			y[n] = s->sum / s->trials / l->scale;
			nv[n] = s->sum_var / ((double)s->trials * s->trials) / (l->scale * l->scale);
			if (k)
				nv[n] += LEARNER_STALE_SD * LEARNER_STALE_SD / s->trials;
			reps[n] = s->trials;
			cands[n] = c;
			n++;
		}
	dim_out[0] = dim;
	return n;
}

/* Weights below this share of the largest are left out of the average. */
#define LEARNER_AVERAGE_MIN_WEIGHT 1e-3

/*
 * The posterior at every candidate averaged over the hyperparameter grid,
 * each fit weighted by its marginal likelihood times its prior (Bayesian
 * model averaging), into l->mu and l->sd.  The single best fit is
 * overconfident where the data say little: measurements that are flat
 * along the one knob a job could vary make a small spread and a long
 * lengthscale most likely, and that fit then rules out what no trial
 * looked at (another data-loader count, an untried batch size); the
 * average keeps the other fits' doubt in proportion to their evidence.
 * -1 (nothing written) when no fit succeeds or memory runs out.
 */
static int predict_averaged(const struct learner *l, const struct knob_space *sp, const struct gp_data *d,
			    const double *shape, double coef, double *mu, double *sd, double *evidence)
{
	struct gp_hyper grid[GP_HYPER_GRID];
	double prior[GP_HYPER_GRID], score[GP_HYPER_GRID], top = -INFINITY, wsum = 0.0, all = 0.0;
	double *feat = malloc(sizeof(double) * (size_t)l->sp.ncand * GP_MAX_DIM);
	double *m1 = calloc((size_t)l->sp.ncand, sizeof(double)), *m2 = calloc((size_t)l->sp.ncand, sizeof(double));
	struct gp g = {0};
	int ng = gp_hyper_grid(grid, prior, GP_HYPER_GRID), h, c, rc = -1;

	if (!feat || !m1 || !m2)
		goto done;
	for (c = 0; c < l->sp.ncand; c++)
		knobs_features(sp, c, feat + (size_t)c * GP_MAX_DIM);
	for (h = 0; h < ng; h++) {
		score[h] = gp_fit(&g, d, &grid[h]) == 0 ? g.lml + prior[h] : -INFINITY;
		top = fmax(top, score[h]);
	}
	for (h = 0; h < ng && isfinite(top); h++)
		all += exp(score[h] - top);
	*evidence = isfinite(top) ? top + log(all) : -INFINITY;
	for (h = 0; h < ng && isfinite(top); h++) {
		double w = exp(score[h] - top);
		if (!(w >= LEARNER_AVERAGE_MIN_WEIGHT) || gp_fit(&g, d, &grid[h]) < 0)
			continue;
		wsum += w;
		for (c = 0; c < l->sp.ncand; c++) {
			double m, v;
			gp_predict(&g, feat + (size_t)c * GP_MAX_DIM, &m, &v);
			m1[c] += w * m;
			m2[c] += w * (v + m * m);
		}
	}
	if (!(wsum > 0.0))
		goto done;
	for (c = 0; c < l->sp.ncand; c++) {
		double m = m1[c] / wsum, v = fmax(m2[c] / wsum - m * m, 1e-12);
		mu[c] = (coef * shape[c] + m) * l->scale;
		sd[c] = sqrt(v) * l->scale;
	}
	rc = 0;
done:
	gp_free(&g);
	free(feat);
	free(m1);
	free(m2);
	return rc;
}

/* Whether cand keeps more threads busy than the CPUs (an oversubscribed regime). */
static bool over(const struct knob_space *sp, int cand)
{
	return sp->cpus > 0 && knobs_threads_in_flight(sp, cand) > sp->cpus;
}

/* Doubt kept by a config never measured: what lies between measured ones may still be a narrow peak. */
#define LEARNER_UNTRIED_SD 0.05

/*
 * Per knob and value: the nearest value measured (itself when measured; -1
 * when the knob has none) and how far it is in model units; per knob,
 * whether the trials measured more than one of its values.
 */
static void nearest_measured(const struct learner *l, int near[KNOB_MAX][KNOB_MAX_VALUES],
			     double dist[KNOB_MAX][KNOB_MAX_VALUES], bool varied[KNOB_MAX])
{
	uint32_t seen[KNOB_MAX] = {0};
	struct knob_config cf;
	int c, k, v, u;

	for (c = 0; c < l->sp.ncand; c++) {
		if (l->fresh[c].trials + l->stale[c].trials == 0)
			continue;
		knobs_decode(&l->sp, c, &cf);
		for (k = 0; k < l->sp.nknobs; k++)
			seen[k] |= 1u << cf.idx[k];
	}
	for (k = 0; k < l->sp.nknobs; k++) {
		const struct knob *kn = &l->sp.knobs[k];
		varied[k] = (seen[k] & (seen[k] - 1)) != 0;
		for (v = 0; v < kn->nvalues; v++) {
			near[k][v] = -1;
			dist[k][v] = INFINITY;
			for (u = 0; u < kn->nvalues; u++) {
				double d;
				if (!(seen[k] & (1u << u)))
					continue;
				/* u == v first: a knob of one value has no feature (knobs_value_feature). */
				if (u == v)
					d = 0.0;
				else if (kn->type == KNOB_INT)
					d = fabs(knobs_value_feature(kn, kn->ivalues[v]) - knobs_value_feature(kn, kn->ivalues[u]));
				else
					d = INFINITY; /* one-hot: no value says anything of another */
				if (near[k][v] < 0 || d < dist[k][v] || (u == kn->prior && d <= dist[k][v])) {
					near[k][v] = u;
					dist[k][v] = d;
				}
			}
		}
	}
}

/*
 * What the fit cannot see.  Its one lengthscale is shared by all knobs, so
 * measurements that vary along the knob a job could change and not along
 * the others (a static knob, fixed through a job) make it extrapolate the
 * first knob's slopes into the others: a batch size never measured reverts
 * to the average of the thread counts measured, and measurements flat in
 * threads (a job bound by its data loader) make an unmeasured loader count
 * look settled.  So a config whose value of some knob lies more than a
 * doubling from every value of that knob measured (for a categorical knob:
 * any value never measured) keeps the spread the model starts with, and
 * where that knob was never varied (or is categorical) it is presumed as
 * good as the config with the measured value instead, as a model with a
 * lengthscale per knob would presume of a knob it knows nothing about.  A config never measured keeps at least LEARNER_UNTRIED_SD,
 * the room for a narrow peak between measured ones.
 */
static void keep_unseen_doubt(struct learner *l)
{
	int near[KNOB_MAX][KNOB_MAX_VALUES];
	bool varied[KNOB_MAX], oversubscribed = false;
	double dist[KNOB_MAX][KNOB_MAX_VALUES], *mu = malloc(sizeof(double) * (size_t)l->sp.ncand);
	struct knob_config cf;
	struct gp_hyper h;
	int c, k;

	if (!mu)
		return;
	memcpy(mu, l->mu, sizeof(double) * (size_t)l->sp.ncand);
	nearest_measured(l, near, dist, varied);
	gp_hyper_default(&h);
	for (c = 0; c < l->sp.ncand; c++)
		oversubscribed = oversubscribed || (l->fresh[c].trials + l->stale[c].trials > 0 && over(&l->sp, c));
	for (c = 0; c < l->sp.ncand; c++) {
		double floor = l->fresh[c].trials + l->stale[c].trials == 0 ? LEARNER_UNTRIED_SD : 0.0;
		bool unknown = false;
		/* Past the CPUs is a regime of its own, unknown until a config in it is measured. */
		if (!oversubscribed && over(&l->sp, c))
			floor = h.signal_sd;
		knobs_decode(&l->sp, c, &cf);
		for (k = 0; k < l->sp.nknobs; k++) {
			int v = cf.idx[k];
			if (l->sp.knobs[k].nvalues <= 1 || !(dist[k][v] > 1.0) || near[k][v] < 0)
				continue;
			floor = h.signal_sd;
			/* A knob varied in the trials has slopes the fit may extrapolate; one never varied has none. */
			if (l->sp.knobs[k].type == KNOB_CAT || !varied[k]) {
				unknown = true;
				cf.idx[k] = near[k][v];
			}
		}
		if (unknown) {
			int p = knobs_encode(&l->sp, &cf);
			if (l->shape[p] > 0.0)
				l->mu[c] = fmax(l->mu[c], mu[p] * l->shape[c] / l->shape[p]);
		}
		l->sd[c] = fmax(l->sd[c], floor * l->scale);
	}
	free(mu);
}

/*
 * The fit of one hypothesis (sp, its prior shape) into mu and sd, and its
 * log evidence (the marginal likelihood summed over the hyperparameter
 * grid; -INFINITY: not averaged).  The primary one (the space as declared)
 * also keeps its best fit in l->gp, for drifts and small data.
 */
static void fit_hypothesis(struct learner *l, const struct knob_space *sp, const double *shape, bool primary,
			   double *mu, double *sd, double *evidence)
{
	static const int cap = GP_MAX_OBS;
	double *x = NULL, y[GP_MAX_OBS], nv[GP_MAX_OBS], xs[GP_MAX_DIM], ss = 0.0, sy = 0.0, coef;
	int reps[GP_MAX_OBS], cands[GP_MAX_OBS], n, i, c, dim;
	struct gp_data d;

	*evidence = -INFINITY;
	x = calloc((size_t)cap * GP_MAX_DIM, sizeof(double));
	if (!x)
		return;
	n = collect(l, sp, x, y, nv, reps, cands, &dim);
	/* Packs the rows to the space's dimension. */
	for (i = 0; i < n; i++)
		memmove(x + i * dim, x + i * GP_MAX_DIM, sizeof(double) * (size_t)dim);
	for (i = 0; i < n; i++) {
		sy += y[i] * shape[cands[i]];
		ss += shape[cands[i]] * shape[cands[i]];
	}
	coef = n > 0 && ss > 0.0 ? sy / ss : 1.0;
	for (i = 0; i < n; i++)
		y[i] -= coef * shape[cands[i]];
	d = (struct gp_data){ .n = n, .dim = dim, .x = x, .y = y, .noise_var = nv, .reps = reps };
	if (primary) {
		l->nobs = n;
		l->prior_coef = coef;
		if (gp_fit_select(&l->gp, &d) < 0) {
			struct gp_hyper h;
			gp_hyper_default(&h);
			h.nugget_sd = 0.1;
			(void)gp_fit(&l->gp, &d, &h); /* on failure the model predicts the prior alone */
		}
	}
	if (n < 4 || predict_averaged(l, sp, &d, shape, coef, mu, sd, evidence) < 0) {
		*evidence = -INFINITY;
		for (c = 0; primary && c < l->sp.ncand; c++) {
			double m, v;
			knobs_features(sp, c, xs);
			gp_predict(&l->gp, xs, &m, &v);
			mu[c] = (coef * shape[c] + m) * l->scale;
			sd[c] = sqrt(v) * l->scale;
		}
	}
	free(x);
}

/*
 * The idle hypothesis's prior weight: trying a config it alone favours
 * costs a whole job (inter-op threads are fixed at process start), and on
 * a job that forks that job runs past a cliff, so it must earn its weight
 * from measurements rather than be given half of it.  The benchmark chose
 * it: at a half, syn-cliff's runs went past its cliff for a whole job; at a
 * quarter, the cliff family lost a quarter more steps.
 */
#define LEARNER_IDLE_PRIOR 0.1

/*
 * Whether a job's inter-op threads each run an intra-op team (it forks work
 * onto them) decides where oversubscription starts, and nothing declared
 * says which: a job that never forks leaves them idle, and then 2 intra-op
 * x 2 inter-op threads on 2 CPUs is no oversubscription at all.  So the
 * model is averaged over both, each weighted by its evidence: measurements
 * past the CPUs that did not fall make the idle hypothesis likely, a cliff
 * the other, and where the two disagree on a config never measured, its
 * spread holds the doubt.
 */
void learner_refit(struct learner *l)
{
	struct knob_space idle = l->sp;
	double ev, ev_idle, w, *mu = NULL, *sd = NULL;
	int k = knobs_find_id(&l->sp, KNOB_INTEROP_THREADS), c;

	if (!l->dirty)
		return;
	l->dirty = false;
	l->idle_weight = 0.0;
	fit_hypothesis(l, &l->sp, l->shape, true, l->mu, l->sd, &ev);
	idle.interop_idle = true;
	if (isfinite(ev) && k >= 0 && l->sp.knobs[k].nvalues > 1 && l->sp.cpus > 0 &&
	    (mu = malloc(sizeof(double) * (size_t)l->sp.ncand)) != NULL &&
	    (sd = malloc(sizeof(double) * (size_t)l->sp.ncand)) != NULL) {
		fit_hypothesis(l, &idle, l->shape_idle, false, mu, sd, &ev_idle);
		w = isfinite(ev_idle) ? 1.0 / (1.0 + exp(ev - ev_idle) * (1.0 - LEARNER_IDLE_PRIOR) / LEARNER_IDLE_PRIOR) : 0.0;
		for (c = 0; c < l->sp.ncand && w > 0.0; c++) {
			double m = (1.0 - w) * l->mu[c] + w * mu[c];
			double v = (1.0 - w) * (l->sd[c] * l->sd[c] + l->mu[c] * l->mu[c]) + w * (sd[c] * sd[c] + mu[c] * mu[c]);
			l->mu[c] = m;
			l->sd[c] = sqrt(fmax(v - m * m, 0.0));
		}
		l->idle_weight = w;
	}
	free(mu);
	free(sd);
	if (l->nobs > 0)
		keep_unseen_doubt(l);
}

void learner_predict(struct learner *l, int cand, double *mu, double *sd)
{
	learner_refit(l);
	*mu = l->mu[cand];
	*sd = l->sd[cand];
}

void learner_tried(const struct learner *l, int cand, double *mean, double *std, int *trials, long *steps)
{
	const struct learner_stats *f = &l->fresh[cand], *s = &l->stale[cand];
	int k = f->trials + s->trials;
	double m = k ? (f->sum + s->sum) / k : 0.0;
	double var = k > 1 ? ((f->sumsq + s->sumsq) - k * m * m) / (k - 1) : 0.0;

	/* One trial: its standard error stands for the spread of a run. */
	if (k == 1)
		var = (f->sum_var + s->sum_var) * (double)(f->steps + s->steps);
	*mean = m;
	*std = var > 0.0 ? sqrt(var) : 0.0;
	*trials = k;
	*steps = f->steps + s->steps;
}

static bool tried(const struct learner *l, int c)
{
	return l->fresh[c].trials + l->stale[c].trials > 0;
}

int learner_best(struct learner *l, const struct knob_filter *f)
{
	int c, best = -1, prior = -1, p0 = knobs_prior_candidate(&l->sp);

	learner_refit(l);
	for (c = 0; c < l->sp.ncand; c++) {
		if (!knobs_filter_pass(&l->sp, f, c))
			continue;
		if (tried(l, c) && (best < 0 || l->mu[c] > l->mu[best]))
			best = c;
		/* The prior's pick: the highest shape, the topology's candidate on ties. */
		if (prior < 0 || l->shape[c] > l->shape[prior] || (l->shape[c] == l->shape[prior] && c == p0))
			prior = c;
	}
	return best >= 0 ? best : prior;
}

static double acquisition(const struct learner *l, int c, double best_mu)
{
	if (l->acq == LEARNER_UCB)
		return l->mu[c] + 2.0 * l->sd[c];
	return gp_expected_improvement(l->mu[c], l->sd[c], best_mu);
}

int learner_propose(struct learner *l, const struct knob_filter *f)
{
	int c, pick = -1, best = learner_best(l, f);
	double a, top = -INFINITY;

	if (best < 0 || l->nobs == 0)
		return best;
	for (c = 0; c < l->sp.ncand; c++) {
		if (!knobs_filter_pass(&l->sp, f, c))
			continue;
		a = acquisition(l, c, l->mu[best]);
		if (a > top) {
			top = a;
			pick = c;
		}
	}
	return pick;
}

double learner_gain(struct learner *l, const struct knob_filter *f)
{
	int c, best = learner_best(l, f);
	double g = 0.0, ei;

	if (best < 0 || l->nobs == 0 || !tried(l, best))
		return 1.0;
	for (c = 0; c < l->sp.ncand; c++) {
		if (!knobs_filter_pass(&l->sp, f, c))
			continue;
		ei = gp_expected_improvement(l->mu[c], l->sd[c], l->mu[best]);
		if (ei > g)
			g = ei;
	}
	return fabs(l->mu[best]) > 0.0 ? g / fabs(l->mu[best]) : 1.0;
}

bool learner_drifted(struct learner *l, int cand, double mean, double var_mean)
{
	double mu, sd, diff, spread;

	if (cand < 0 || cand >= l->sp.ncand || l->fresh[cand].trials < 2)
		return false;
	learner_predict(l, cand, &mu, &sd);
	diff = fabs(mean - mu);
	spread = sqrt(sd * sd + var_mean + pow(l->gp.h.nugget_sd * l->scale, 2));
	return diff > LEARNER_DRIFT_Z * spread && diff > LEARNER_DRIFT_REL * fabs(mu);
}
