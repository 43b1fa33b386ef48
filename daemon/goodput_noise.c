/*
 * The gradient noise scale and the statistical efficiency it gives (see
 * goodput_noise.h).  From McCandlish et al. 2018, appendix A: with |g_b|^2 and
 * |g_B|^2 the squared norms of mean gradients over b < B samples,
 *   |G|^2 ~ (B |g_B|^2 - b |g_b|^2) / (B - b)
 *   tr(Sigma) ~ (|g_b|^2 - |g_B|^2) / (1/b - 1/B)
 * are unbiased, and phi = B_simple = tr(Sigma) / |G|^2.
 */
#include <math.h>

#include "goodput_noise.h"

int goodput_noise_add(struct goodput_noise *acc, double b, double sq_small, double B, double sq_large)
{
	double g2, s, dg, ds;

	if (!(b > 0.0) || !(B > b) || !isfinite(B) || !(sq_small >= 0.0) || !(sq_large >= 0.0) ||
	    !isfinite(sq_small) || !isfinite(sq_large))
		return -1;
	g2 = (B * sq_large - b * sq_small) / (B - b);
	s = (sq_small - sq_large) / (1.0 / b - 1.0 / B);
	if (!isfinite(g2) || !isfinite(s))
		return -1;
	acc->n++;
	dg = g2 - acc->mean_g2;
	ds = s - acc->mean_s;
	acc->mean_g2 += dg / (double)acc->n;
	acc->mean_s += ds / (double)acc->n;
	acc->m2_g2 += dg * (g2 - acc->mean_g2);
	acc->m2_s += ds * (s - acc->mean_s);
	acc->c_gs += dg * (s - acc->mean_s);
	return 0;
}

int goodput_noise_estimate(const struct goodput_noise *acc, double *phi, double *rel_se)
{
	double n = (double)acc->n, g = acc->mean_g2, s = acc->mean_s, var;

	if (acc->n < 2 || !(g > 0.0) || !(s > 0.0))
		return -1;
	/* Var(s/g) ~ (Var s / g^2 + s^2 Var g / g^4 - 2 s Cov / g^3) / n, with sample (co)variances. */
	var = (acc->m2_s / (g * g) + s * s * acc->m2_g2 / (g * g * g * g) - 2.0 * s * acc->c_gs / (g * g * g)) /
	      ((n - 1.0) * n);
	*phi = s / g;
	*rel_se = sqrt(fmax(var, 0.0)) / *phi;
	return 0;
}

double goodput_noise_scale(const struct goodput_noise *acc)
{
	double phi, rel_se;

	if (acc->n < GOODPUT_MIN_STEPS || goodput_noise_estimate(acc, &phi, &rel_se) < 0 ||
	    !(rel_se <= GOODPUT_MAX_REL_SE))
		return NAN;
	return phi;
}

double goodput_efficiency(double phi, double m0, double m)
{
	if (!(phi > 0.0) || !(m0 > 0.0) || !(m > 0.0) || !isfinite(phi))
		return NAN;
	return (phi + m0) / (phi + m);
}
