/*
 * The gradient noise scale and the statistical efficiency it gives (see
 * goodput.h).  From McCandlish et al. 2018, appendix A: with |g_b|^2 and
 * |g_B|^2 the squared norms of mean gradients over b < B samples,
 *   |G|^2 ~ (B |g_B|^2 - b |g_b|^2) / (B - b)
 *   tr(Sigma) ~ (|g_b|^2 - |g_B|^2) / (1/b - 1/B)
 * are unbiased, and phi = B_simple = tr(Sigma) / |G|^2.
 */
#include <math.h>

#include "goodput.h"

int goodput_noise_add(struct goodput_noise *acc, double b, double sq_small, double B, double sq_large)
{
	double g2, s;

	if (!(b > 0.0) || !(B > b) || !isfinite(B) || !(sq_small >= 0.0) || !(sq_large >= 0.0) ||
	    !isfinite(sq_small) || !isfinite(sq_large))
		return -1;
	g2 = (B * sq_large - b * sq_small) / (B - b);
	s = (sq_small - sq_large) / (1.0 / b - 1.0 / B);
	if (!isfinite(g2) || !isfinite(s))
		return -1;
	acc->g2_sum += g2;
	acc->s_sum += s;
	acc->n++;
	return 0;
}

double goodput_noise_scale(const struct goodput_noise *acc)
{
	if (acc->n < GOODPUT_MIN_STEPS || !(acc->g2_sum > 0.0) || !(acc->s_sum > 0.0))
		return NAN;
	return acc->s_sum / acc->g2_sum;
}

double goodput_efficiency(double phi, double m0, double m)
{
	if (!(phi > 0.0) || !(m0 > 0.0) || !(m > 0.0) || !isfinite(phi))
		return NAN;
	return (phi + m0) / (phi + m);
}
