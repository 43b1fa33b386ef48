/*
 * Pollux's goodput: throughput times statistical efficiency.  The gradient
 * noise scale phi = tr(Sigma) / |G|^2 (McCandlish et al. 2018, "An
 * Empirical Model of Large-Batch Training", appendix A) is estimated from
 * pairs of squared gradient norms at two batch sizes b < B; the efficiency
 * of a global batch M against a baseline M0 is E(M) = (phi + M0) / (phi + M).
 * Pure: no I/O, no lock; the tuner (tuner_goodput.c) holds the state.
 */
#ifndef DLPROF_GOODPUT_H
#define DLPROF_GOODPUT_H

/* Steps of noise figures before the noise scale is taken as known. */
#define GOODPUT_MIN_STEPS 8

/*
 * The unbiased per-step estimates of |G|^2 and tr(Sigma), summed: their
 * ratio is the noise scale (a ratio of averages, since both are noisy and
 * a single step's |G|^2 estimate may even be negative).
 */
struct goodput_noise {
	double g2_sum;        /* |G|^2 estimates ... */
	double s_sum;         /* tr(Sigma) estimates ... */
	long n;               /* ... summed over this many steps */
};

/*
 * Adds one step: sq_small = |g_b|^2, the squared norm of the mean gradient
 * over b samples, and sq_large = |g_B|^2 over B samples (B > b > 0, both
 * norms finite and >= 0).  Returns 0, or -1 (nothing added) for figures
 * that cannot be such a pair.
 */
int goodput_noise_add(struct goodput_noise *acc, double b, double sq_small, double B, double sq_large);

/*
 * The noise scale phi (> 0), or NAN while it is not known: fewer than
 * GOODPUT_MIN_STEPS steps, or estimates whose sums are not both positive
 * (too noisy yet to say anything).
 */
double goodput_noise_scale(const struct goodput_noise *acc);

/* E(M) = (phi + m0) / (phi + m); NAN when phi is unknown or a batch is not positive. */
double goodput_efficiency(double phi, double m0, double m);

#endif
