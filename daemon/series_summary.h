/*
 * Summaries of a series over fixed buckets (a second, a minute): how many
 * points, their sum, least, greatest and latest value.  The store keeps a
 * reported series' steps as per-second summaries once its raw window has
 * passed, and every series as per-minute summaries after that
 * (store_blocks.c, store_tiers.c); readers take the mean as sum / n.
 *
 * Sums are exact where the values allow: while every value added is an
 * integer over 10^d (d <= 6: microseconds, counts, rates at their
 * resolution) the sum is kept as that integer and given back as the double
 * nearest k / 10^d, which series_codec stores as an integer again instead
 * of the full double a float sum drifts to (0.1 + 0.2).
 * Pure functions: no state, no logging, any thread.
 */
#ifndef DLPROF_SERIES_SUMMARY_H
#define DLPROF_SERIES_SUMMARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The columns of a summary block, in series_codec's column order after the times. */
enum series_summary_col { SUMMARY_N, SUMMARY_SUM, SUMMARY_MIN, SUMMARY_MAX, SUMMARY_LAST, SUMMARY_COLS };

struct series_summary {
	double t;                  /* the bucket's start (unix seconds) */
	double n, sum, min, max;
	double last;               /* the value of the bucket's latest point */
};

/* A sum kept exact while its addends are decimals (see the file's comment). */
struct exact_sum {
	double plain;              /* the floating sum, for when exactness is lost */
	int64_t k;                 /* the sum times 10^d while exact */
	int d;
	bool exact;
};

void exact_sum_start(struct exact_sum *s);
void exact_sum_add(struct exact_sum *s, double v);
double exact_sum_value(const struct exact_sum *s);

/* A summary being built: the summary and its sum's exact form, and its latest time. */
struct summary_acc {
	struct series_summary s;
	struct exact_sum sum;
	double tlast;
};

/* Starts an empty bucket at t. */
void summary_acc_start(struct summary_acc *a, double t);
/*
 * Adds n values whose sum, min, max and latest value (at time tlast) are
 * given (a point: n 1, all of them its value).  A later or equal tlast
 * gives the bucket its last.
 */
void summary_acc_add(struct summary_acc *a, double n, double sum, double min, double max, double last,
		     double tlast);
/* The bucket as a summary (its sum exact where it can be). */
struct series_summary summary_acc_get(const struct summary_acc *a);

/*
 * The n points (t ascending, values v) summarized per second: *out (malloc'd)
 * holds one summary a second that has points, in time order; -1 when out of
 * memory.
 */
int series_per_second(const double *t, const double *v, size_t n, struct series_summary **out, size_t *nout);

/*
 * Summaries as series_codec columns (n, sum, min, max, last) at their
 * times, and back: cols points at SUMMARY_COLS arrays of n doubles.
 */
void series_summary_split(const struct series_summary *s, size_t n, double *t, double *const *cols);
void series_summary_join(const double *t, const double *const *cols, size_t n, struct series_summary *s);

#endif
