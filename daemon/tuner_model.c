/*
 * Gaussian-process regression for the tuner (see tuner_model.h): the kernel,
 * a Cholesky fit, prediction and expected improvement.  Sizes are small (at
 * most a few dozen tried configs per workload), so plain O(n^3) linear
 * algebra on fixed arrays is fast and needs no library.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tuner_model.h"

/*
 * Before there are enough trials to choose: a doubling of a count may change
 * the objective by about a third, the typical slope of thread scaling and
 * oversubscription curves (bench/tuner chose these: a longer lengthscale or
 * a smaller spread made the second and third trials too timid).
 */
void gp_hyper_default(struct gp_hyper *h)
{
	h->lengthscale = 1.0;
	h->signal_sd = 0.3;
	h->nugget_sd = 0.02;
	h->additive = 0.0;
}

static double matern52(double r)
{
	double s = sqrt(5.0) * r;

	return (1.0 + s + s * s / 3.0) * exp(-s);
}

/*
 * Matern 5/2 over the distance between two candidates, plus, with weight
 * h->additive, the mean of the same kernel along each coordinate alone:
 * candidates that share a thread count stay alike whatever their batch size
 * or loader count, so what one static setting taught about threads carries
 * to the others (an additive part, as in additive Gaussian processes).
 */
static double kernel(const struct gp_hyper *h, const double *a, const double *b, int dim)
{
	double r2 = 0.0, add = 0.0, w = h->additive;
	int i;

	for (i = 0; i < dim; i++) {
		r2 += (a[i] - b[i]) * (a[i] - b[i]);
		add += matern52(fabs(a[i] - b[i]) / h->lengthscale);
	}
	add = dim > 0 ? add / dim : 0.0;
	return h->signal_sd * h->signal_sd * ((1.0 - w) * matern52(sqrt(r2) / h->lengthscale) + w * add);
}

/* In-place lower Cholesky factor of the n x n matrix a; -1 if not positive definite. */
static int cholesky(double *a, int n)
{
	int i, j, k;

	for (j = 0; j < n; j++) {
		double d = a[j * n + j];
		for (k = 0; k < j; k++)
			d -= a[j * n + k] * a[j * n + k];
		if (!(d > 1e-12))
			return -1;
		d = sqrt(d);
		a[j * n + j] = d;
		for (i = j + 1; i < n; i++) {
			double s = a[i * n + j];
			for (k = 0; k < j; k++)
				s -= a[i * n + k] * a[j * n + k];
			a[i * n + j] = s / d;
		}
		for (i = 0; i < j; i++)
			a[i * n + j] = 0.0;
	}
	return 0;
}

/* Solves L z = b (forward) in place. */
static void solve_lower(const double *l, int n, double *b)
{
	int i, k;

	for (i = 0; i < n; i++) {
		double s = b[i];
		for (k = 0; k < i; k++)
			s -= l[i * n + k] * b[k];
		b[i] = s / l[i * n + i];
	}
}

/* Solves L^T z = b (backward) in place. */
static void solve_upper_t(const double *l, int n, double *b)
{
	int i, k;

	for (i = n - 1; i >= 0; i--) {
		double s = b[i];
		for (k = i + 1; k < n; k++)
			s -= l[k * n + i] * b[k];
		b[i] = s / l[i * n + i];
	}
}

int gp_fit(struct gp *gp, const struct gp_data *d, const struct gp_hyper *h)
{
	int n = d->n, dim = d->dim, i, j;
	double z[GP_MAX_OBS], logdet = 0.0, quad = 0.0;

	gp->n = 0;
	gp->h = *h;
	if (n > GP_MAX_OBS || dim > GP_MAX_DIM || n < 0)
		return -1;
	if (n > gp->cap) {
		double *x = realloc(gp->x, sizeof(double) * (size_t)(n * GP_MAX_DIM));
		if (x)
			gp->x = x;
		double *c = realloc(gp->chol, sizeof(double) * (size_t)(n * n));
		if (c)
			gp->chol = c;
		double *al = realloc(gp->alpha, sizeof(double) * (size_t)n);
		if (al)
			gp->alpha = al;
		if (!x || !c || !al)
			return -1;
		gp->cap = n;
	}
	gp->dim = dim;
	if (n == 0) {
		gp->lml = 0.0;
		return 0;
	}
	memcpy(gp->x, d->x, sizeof(double) * (size_t)(n * dim));
	for (i = 0; i < n; i++) {
		for (j = 0; j <= i; j++) {
			double k = kernel(h, d->x + i * dim, d->x + j * dim, dim);
			gp->chol[i * n + j] = k;
			gp->chol[j * n + i] = k;
		}
		gp->chol[i * n + i] += d->noise_var[i] + h->nugget_sd * h->nugget_sd / (d->reps[i] > 0 ? d->reps[i] : 1)
				       + 1e-9;
	}
	if (cholesky(gp->chol, n) < 0)
		return -1;
	gp->n = n;
	for (i = 0; i < n; i++) {
		z[i] = d->y[i];
		logdet += 2.0 * log(gp->chol[i * n + i]);
	}
	solve_lower(gp->chol, n, z);
	for (i = 0; i < n; i++)
		quad += z[i] * z[i];
	memcpy(gp->alpha, z, sizeof(double) * (size_t)n);
	solve_upper_t(gp->chol, n, gp->alpha);
	gp->lml = -0.5 * quad - 0.5 * logdet - 0.5 * n * log(2.0 * M_PI);
	return 0;
}

int gp_hyper_grid(struct gp_hyper *out, double *log_prior, int max)
{
	static const double ls[] = { 0.7, 1.2, 2.0, 3.5 };
	static const double sd[] = { 0.05, 0.15, 0.4 };
	static const double ng[] = { 0.01, 0.04 };
	static const double ad[] = { 0.0, 0.5 };
	size_t a, b, c, e;
	int n = 0;

	for (a = 0; a < sizeof(ls) / sizeof(ls[0]); a++)
		for (b = 0; b < sizeof(sd) / sizeof(sd[0]); b++)
			for (c = 0; c < sizeof(ng) / sizeof(ng[0]); c++)
				for (e = 0; e < sizeof(ad) / sizeof(ad[0]) && n < max; e++) {
					/* A weak log-normal prior around a lengthscale of 1.5 doublings. */
					double lp = log(ls[a] / 1.5);
					out[n] = (struct gp_hyper){ .lengthscale = ls[a], .signal_sd = sd[b],
								   .nugget_sd = ng[c], .additive = ad[e] };
					log_prior[n++] = -0.5 * lp * lp / 0.5;
				}
	return n;
}

int gp_fit_select(struct gp *gp, const struct gp_data *d)
{
	struct gp_hyper grid[GP_HYPER_GRID], best_h;
	double prior[GP_HYPER_GRID], best = -INFINITY;
	int i, n;

	gp_hyper_default(&best_h);
	if (d->n >= 4) {
		n = gp_hyper_grid(grid, prior, GP_HYPER_GRID);
		for (i = 0; i < n; i++)
			if (gp_fit(gp, d, &grid[i]) == 0 && gp->lml + prior[i] > best) {
				best = gp->lml + prior[i];
				best_h = grid[i];
			}
	}
	return gp_fit(gp, d, &best_h);
}

void gp_free(struct gp *gp)
{
	free(gp->x);
	free(gp->chol);
	free(gp->alpha);
	memset(gp, 0, sizeof(*gp));
}

void gp_predict(const struct gp *gp, const double *x, double *mu, double *var)
{
	double k[GP_MAX_OBS], m = 0.0, v;
	int i, n = gp->n;

	for (i = 0; i < n; i++) {
		k[i] = kernel(&gp->h, x, gp->x + i * gp->dim, gp->dim);
		m += k[i] * gp->alpha[i];
	}
	solve_lower(gp->chol, n, k);
	v = gp->h.signal_sd * gp->h.signal_sd;
	for (i = 0; i < n; i++)
		v -= k[i] * k[i];
	*mu = m;
	*var = v > 1e-12 ? v : 1e-12;
}

double gp_expected_improvement(double mu, double sd, double best)
{
	double z, cdf, pdf;

	if (sd <= 1e-12)
		return mu > best ? mu - best : 0.0;
	z = (mu - best) / sd;
	cdf = 0.5 * erfc(-z / sqrt(2.0));
	pdf = exp(-0.5 * z * z) / sqrt(2.0 * M_PI);
	return (mu - best) * cdf + sd * pdf;
}
