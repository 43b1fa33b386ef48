/*
 * Pollux's goodput: throughput times statistical efficiency.  The gradient
 * noise scale phi = tr(Sigma) / |G|^2 (McCandlish et al. 2018, "An
 * Empirical Model of Large-Batch Training", appendix A) is estimated from
 * pairs of squared gradient norms at two batch sizes b < B; the efficiency
 * of a global batch M against a baseline M0 is E(M) = (phi + M0) / (phi + M).
 * Pure: no I/O, no lock; the tuner (tuner_goodput.c) holds the state.
 */
#ifndef DLPROF_GOODPUT_NOISE_H
#define DLPROF_GOODPUT_NOISE_H

/* Steps of noise figures before the noise scale may be taken as known ... */
#define GOODPUT_MIN_STEPS 8
/* ... and the most its relative standard error may then be. */
#define GOODPUT_MAX_REL_SE 0.25

/*
 * The unbiased per-step estimates of |G|^2 and tr(Sigma), their means and
 * (co)variances (Welford).  phi is the ratio of the means: a ratio of
 * averages, since both are noisy and one step's |G|^2 estimate may even be
 * negative.  A single step's estimates are very noisy (the difference of
 * two close norms), so phi counts as known only once precise.
 */
struct goodput_noise {
	long n;                       /* steps */
	double mean_g2, mean_s;       /* of the |G|^2 and tr(Sigma) estimates */
	double m2_g2, m2_s, c_gs;     /* sums of squared deviations and of their products */
};

/*
 * Adds one step: sq_small = |g_b|^2, the squared norm of the mean gradient
 * over b samples, and sq_large = |g_B|^2 over B samples (B > b > 0, both
 * norms finite and >= 0).  Returns 0, or -1 (nothing added) for figures
 * that cannot be such a pair.
 */
int goodput_noise_add(struct goodput_noise *acc, double b, double sq_small, double B, double sq_large);

/*
 * The estimate of phi so far and its relative standard error (delta
 * method); -1 when there is none (fewer than 2 steps, or means that are
 * not both positive).
 */
int goodput_noise_estimate(const struct goodput_noise *acc, double *phi, double *rel_se);

/*
 * The noise scale phi (> 0) to rank by, or NAN while it is not known: fewer
 * than GOODPUT_MIN_STEPS steps, no estimate, or a relative standard error
 * above GOODPUT_MAX_REL_SE.
 */
double goodput_noise_scale(const struct goodput_noise *acc);

/* E(M) = (phi + m0) / (phi + m); NAN when phi is unknown or a batch is not positive. */
double goodput_efficiency(double phi, double m0, double m);

#endif
