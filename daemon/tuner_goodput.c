/*
 * objective=goodput (Pollux): a config is worth its throughput times its
 * statistical efficiency, how much of a sample's worth of progress a
 * sample still makes at the config's global batch.  Jobs report per step
 * their global batch and two squared gradient norms (a rank's local one and
 * the all-reduced one, or a micro-batch's and the accumulated one); the
 * workload's noise scale comes from those (goodput_noise.c), and each step's
 * samples/s is weighed by it.  The tuner learns that weighted value like
 * any other objective; this file also keeps per config the raw throughput
 * and global batch, for the views' raw and learning speed-up.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "reported.h"
#include "tuner_internal.h"

/*
 * Steps of noise figures a workload's jobs wait, giving the tuner no value,
 * for the noise scale to become precise; beyond, they are ranked by
 * samples/s until it is.  The bench's jobs needed 64 to 256.
 */
#define GOODPUT_WAIT_STEPS 512

/* The figures of one step, as named in client/README.md and docs/API.md. */
struct step_figures {
	double global_batch, b, sq_b, B, sq_B;
};

static void figure_set(struct step_figures *f, const struct sample *s)
{
	switch (reported_of(s->name)) {
	case REPORTED_GLOBAL_BATCH: f->global_batch = s->value; break;
	case REPORTED_GRAD_BATCH_SMALL: f->b = s->value; break;
	case REPORTED_GRAD_SQNORM_SMALL: f->sq_b = s->value; break;
	case REPORTED_GRAD_BATCH_LARGE: f->B = s->value; break;
	case REPORTED_GRAD_SQNORM_LARGE: f->sq_B = s->value; break;
	default: break;
	}
}

void tuner_goodput_step(struct tuner_job *j, const struct sample *const *s, size_t n)
{
	struct step_figures f = {NAN, NAN, NAN, NAN, NAN};
	size_t i;

	for (i = 0; i < n && s[i]->t == s[0]->t; i++)
		if (!s[i]->phase || !*s[i]->phase)
			figure_set(&f, s[i]);
	if (f.global_batch > 0.0)
		j->gp_batch = f.global_batch;
	else if (f.B > 0.0)
		j->gp_batch = f.B; /* the all-reduced gradient is the whole step's */
	if (!isnan(f.sq_b) && goodput_noise_add(&j->w->gp.noise, f.b, f.sq_b, f.B, f.sq_B) == 0)
		j->gp_noise = true;
}

/* The config's entry, created when new; NULL when out of memory or beyond the bound. */
static struct tuner_goodput_config *config_get(struct tuner_goodput *gp, int cand)
{
	struct tuner_goodput_config *c;
	size_t i;

	for (i = 0; i < gp->nconfigs; i++)
		if (gp->configs[i].cand == cand)
			return &gp->configs[i];
	if (gp->nconfigs >= TUNER_MAX_PLANS)
		return NULL;
	if (!(c = array_grow(gp->configs, &gp->cap, gp->nconfigs + 1, sizeof(*c))))
		return NULL;
	gp->configs = c;
	c = &gp->configs[gp->nconfigs++];
	memset(c, 0, sizeof(*c));
	c->cand = cand;
	return c;
}

double tuner_goodput_value(struct tuner_job *j, const struct sample *s, int cand)
{
	struct tuner_goodput *gp = &j->w->gp;
	struct tuner_goodput_config *c;
	double sps, phi, m = j->gp_batch;
	enum reported what = reported_of(s->name);

	if (what == REPORTED_SAMPLES_PER_S) {
		j->has_sps = true;
		sps = s->value;
	} else if (what == REPORTED_STEP_TIME_S && !j->has_sps && s->value > 0.0 && m > 0.0) {
		sps = m / s->value; /* a job that counts no samples but says its global batch */
	} else {
		return NAN;
	}
	if (!(sps >= 0.0) || !isfinite(sps))
		return NAN;
	if (cand != j->gp_cand || j->gp_on == 0) {
		j->gp_cand = cand;
		j->gp_on = 0;
	}
	/* As the trials do, the first steps of a run of a config are warm-up, not its speed. */
	if (++j->gp_on > TRIAL_WARMUP_START && cand >= 0 && (c = config_get(gp, cand))) {
		c->sps_sum += sps;
		c->n++;
		if (m > 0.0)
			c->global_batch = m;
	}
	phi = goodput_noise_scale(&gp->noise);
	if (isnan(phi))
		/* Unknown efficiency: throughput, except while the noise figures that will give it come in. */
		return j->gp_noise && gp->noise.n < GOODPUT_WAIT_STEPS ? NAN : sps;
	if (!(m > 0.0))
		return NAN; /* the job says no global batch: its efficiency cannot be known */
	return sps * phi / (phi + m);
}

void tuner_goodput_free(struct tuner_goodput *gp)
{
	free(gp->configs);
	memset(gp, 0, sizeof(*gp));
}

/* ---- kept across restarts ---- */

static bool all_finite(const double *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return false;
	return true;
}

char *tuner_goodput_state(const struct tuner_workload *w)
{
	const struct goodput_noise *nz = &w->gp.noise;
	const double nv[] = {nz->mean_g2, nz->mean_s, nz->m2_g2, nz->m2_s, nz->c_gs};
	json_t *configs = json_array(), *state;
	char *out = NULL;
	size_t i;

	if (!configs || (nz->n == 0 && w->gp.nconfigs == 0) || !all_finite(nv, 5)) {
		json_decref(configs);
		return NULL;
	}
	for (i = 0; i < w->gp.nconfigs; i++) {
		const struct tuner_goodput_config *c = &w->gp.configs[i];
		const double cv[] = {c->global_batch, c->sps_sum};
		json_t *config;
		if (c->cand < 0 || !all_finite(cv, 2))
			continue;
		if ((config = knobs_config_json(&w->sp, c->cand)))
			json_array_append_new(configs, json_pack("{s:o, s:f, s:f, s:I}", "config", config, "global_batch",
								 c->global_batch, "sps_sum", c->sps_sum, "n",
								 (json_int_t)c->n));
	}
	state = json_pack("{s:{s:I, s:f, s:f, s:f, s:f, s:f}, s:o}", "noise", "n", (json_int_t)nz->n, "mean_g2",
			  nv[0], "mean_s", nv[1], "m2_g2", nv[2], "m2_s", nv[3], "c_gs", nv[4], "configs", configs);
	if (state)
		out = json_dumps(state, JSON_COMPACT);
	json_decref(state);
	return out;
}

void tuner_goodput_restore(struct tuner_workload *w, const json_t *state)
{
	const json_t *nz = json_object_get(state, "noise"), *row;
	struct tuner_goodput_config *c;
	size_t i;

	if (json_is_object(nz) && json_integer_value(json_object_get(nz, "n")) > 0) {
		w->gp.noise = (struct goodput_noise){
			.n = (long)json_integer_value(json_object_get(nz, "n")),
			.mean_g2 = json_number_value(json_object_get(nz, "mean_g2")),
			.mean_s = json_number_value(json_object_get(nz, "mean_s")),
			.m2_g2 = json_number_value(json_object_get(nz, "m2_g2")),
			.m2_s = json_number_value(json_object_get(nz, "m2_s")),
			.c_gs = json_number_value(json_object_get(nz, "c_gs")),
		};
	}
	json_array_foreach(json_object_get(state, "configs"), i, row) {
		int cand = knobs_candidate_of(&w->sp, json_object_get(row, "config"), -1);
		json_int_t n = json_integer_value(json_object_get(row, "n"));
		if (cand < 0 || n <= 0 || !(c = config_get(&w->gp, cand)))
			continue;
		c->global_batch = json_number_value(json_object_get(row, "global_batch"));
		c->sps_sum = json_number_value(json_object_get(row, "sps_sum"));
		c->n = (long)n;
	}
}

/*
 * The baseline raw and learning speed-up are measured against: the
 * default config (knobs_prior_candidate: each declared knob's "default",
 * else the topology prior) when it was measured with its global batch, else
 * the first config measured (what the workload's first job ran).
 */
static const struct tuner_goodput_config *baseline(const struct tuner_workload *w, const char **why)
{
	int dflt = knobs_prior_candidate(&w->sp);
	size_t i;

	for (i = 0; i < w->gp.nconfigs; i++)
		if (w->gp.configs[i].cand == dflt && w->gp.configs[i].n > 0 && w->gp.configs[i].global_batch > 0.0) {
			*why = "the default config: the declared default, else the topology's";
			return &w->gp.configs[i];
		}
	for (i = 0; i < w->gp.nconfigs; i++)
		if (w->gp.configs[i].n > 0 && w->gp.configs[i].global_batch > 0.0) {
			*why = "the first config measured (the default config was not)";
			return &w->gp.configs[i];
		}
	*why = "none: no config has reported its global batch";
	return NULL;
}

static json_t *number_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

struct ranked {
	double key;
	json_t *row;
};

static int cmp_ranked_desc(const void *a, const void *b)
{
	double x = ((const struct ranked *)a)->key, y = ((const struct ranked *)b)->key;

	return (x < y) - (x > y);
}

/* One config: {config, global_batch, samples_per_s, steps, efficiency, goodput, raw_speedup, learning_speedup}. */
static json_t *config_row(const struct tuner_workload *w, const struct tuner_goodput_config *c,
			  const struct tuner_goodput_config *base, double phi, double *key)
{
	double sps = c->sps_sum / (double)c->n, base_sps = base ? base->sps_sum / (double)base->n : NAN;
	double m = c->global_batch > 0.0 ? c->global_batch : NAN;
	double e = base ? goodput_efficiency(phi, base->global_batch, m) : NAN;
	double raw = base_sps > 0.0 ? sps / base_sps : NAN, learn = raw * e;

	*key = isfinite(learn) ? learn : isfinite(raw) ? raw : sps;
	return json_pack("{s:o, s:o, s:f, s:I, s:o, s:o, s:o, s:o}", "config", knobs_config_json(&w->sp, c->cand),
			 "global_batch", number_or_null(m), "samples_per_s", sps, "steps", (json_int_t)c->n,
			 "efficiency", number_or_null(e), "goodput", number_or_null(sps * e), "raw_speedup",
			 number_or_null(raw), "learning_speedup", number_or_null(learn));
}

/* Why configs are ranked as they are, into buf. */
static void ranking_note(const struct goodput_noise *noise, double phi, char *buf, size_t len)
{
	double est, rel_se;

	if (!isnan(phi))
		snprintf(buf, len, "configs are ranked by samples/s x E(M), E(M) = (phi + M0) / (phi + M)");
	else if (noise->n == 0)
		snprintf(buf, len, "efficiency unknown: no job reported gradient noise figures, so configs are "
				   "ranked by samples/s");
	else if (goodput_noise_estimate(noise, &est, &rel_se) < 0)
		snprintf(buf, len, "efficiency unknown: the noise scale's estimates are too noisy yet to be positive; "
				   "configs are ranked by samples/s");
	else
		snprintf(buf, len, "efficiency unknown: the noise scale's estimate, %.3g, is not yet precise (relative "
				   "standard error %.0f%%, at most %.0f%% needed); configs are ranked by samples/s",
			 est, 100.0 * rel_se, 100.0 * GOODPUT_MAX_REL_SE);
}

json_t *tuner_goodput_json(const struct tuner_workload *w)
{
	double phi = goodput_noise_scale(&w->gp.noise), est, rel_se;
	const char *why;
	char note[320];
	const struct tuner_goodput_config *base = baseline(w, &why);
	struct ranked *r = w->gp.nconfigs ? calloc(w->gp.nconfigs, sizeof(*r)) : NULL;
	json_t *rows = json_array(), *o;
	size_t i, k = 0;

	for (i = 0; r && i < w->gp.nconfigs; i++)
		if (w->gp.configs[i].n > 0)
			r[k].row = config_row(w, &w->gp.configs[i], base, phi, &r[k].key), k++;
	if (k)
		qsort(r, k, sizeof(*r), cmp_ranked_desc);
	for (i = 0; i < k; i++)
		json_array_append_new(rows, r[i].row);
	free(r);
	ranking_note(&w->gp.noise, phi, note, sizeof(note));
	o = json_pack("{s:s, s:o, s:I, s:s, s:s, s:o}", "model", "pollux", "noise_scale", number_or_null(phi),
		      "noise_steps", (json_int_t)w->gp.noise.n, "ranked_by", isnan(phi) ? "throughput" : "goodput",
		      "note", note, "configs", rows);
	json_object_set_new(o, "noise_estimate",
			    goodput_noise_estimate(&w->gp.noise, &est, &rel_se) == 0
				    ? json_pack("{s:f, s:f}", "value", est, "rel_se", rel_se)
				    : json_null());
	json_object_set_new(o, "baseline",
			    base ? json_pack("{s:o, s:f, s:f, s:s}", "config", knobs_config_json(&w->sp, base->cand),
					     "global_batch", base->global_batch, "samples_per_s",
					     base->sps_sum / (double)base->n, "why", why)
				 : json_pack("{s:n, s:s}", "config", "why", why));
	return o;
}
