/*
 * The tuner's surrogate model: a Gaussian process with a Matern 5/2 kernel
 * over a candidate's features (log2 of thread and GPU counts, one coordinate
 * per categorical value), observations that each carry their own noise
 * variance (a trial's standard error, plus a nugget for the spread between
 * runs), and hyperparameters chosen by marginal likelihood over a small
 * grid.  Pure numerics: no I/O and no lock; a model owns its arrays.
 */
#ifndef DLPROF_TUNER_MODEL_H
#define DLPROF_TUNER_MODEL_H

#define GP_MAX_DIM 24
#define GP_MAX_OBS 160

struct gp_hyper {
	double lengthscale;   /* in feature units: 1.0 is a doubling of a count */
	double signal_sd;     /* prior spread of the residual, relative to the best objective */
	double nugget_sd;     /* spread between runs of the same config, relative */
	double additive;      /* weight of the kernel's additive part (0: the distance over all features alone) */
};

/* What the model is fitted to; arrays of n (x: n * dim), owned by the caller. */
struct gp_data {
	int n, dim;
	const double *x;
	const double *y;         /* residuals: objective minus prior mean, normalised */
	const double *noise_var; /* variance of each y from its own measurements */
	const int *reps;         /* independent runs behind each y (the nugget shrinks with them) */
};

/* Zero-initialise before the first fit; gp_free releases the arrays. */
struct gp {
	int n, dim;
	int cap;                               /* observations the arrays hold */
	struct gp_hyper h;
	double *x;                             /* n * dim inputs */
	double *chol;                          /* lower Cholesky factor of K + noise, n * n */
	double *alpha;                         /* (K + noise)^-1 y */
	double lml;                            /* log marginal likelihood of the fit */
};

/* The default hyperparameters, used while there are too few observations to choose. */
void gp_hyper_default(struct gp_hyper *h);

/*
 * Fits with given hyperparameters; -1 when the matrix is not positive
 * definite, n is too large or memory runs out.  A failed fit leaves a model
 * with no observations (it predicts the prior).
 */
int gp_fit(struct gp *gp, const struct gp_data *d, const struct gp_hyper *h);

/* Hyperparameters a fit chooses among: lengthscales x signal spreads x nuggets x additive weights. */
#define GP_HYPER_GRID 48
/*
 * The grid (at most max entries) and each entry's log prior (a weak
 * log-normal one favouring moderate lengthscales); returns the count.
 */
int gp_hyper_grid(struct gp_hyper *out, double *log_prior, int max);

/*
 * Fits with the hyperparameters of highest marginal likelihood plus log
 * prior on the grid; the defaults when n < 4.
 */
int gp_fit_select(struct gp *gp, const struct gp_data *d);

/* Posterior mean and variance of the residual at x. */
void gp_predict(const struct gp *gp, const double *x, double *mu, double *var);

void gp_free(struct gp *gp);

/* Expected improvement over best of a normal(mu, sd) value. */
double gp_expected_improvement(double mu, double sd, double best);

#endif
