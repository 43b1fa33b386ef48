/*
 * A measured value kept at its measurement's own resolution (see
 * collector_resolved in collector.h).  A rate is an integer count (jiffies,
 * context switches, faults) over a measured interval, so it can only be a
 * multiple of one quantum, 1 / (counts per unit x interval).  The double
 * that the division gives carries some 40 bits more, which say nothing
 * about what was counted; they are a function of the interval alone, which
 * is never the same twice, and they cost the store ~7 bytes a point.
 * Rounding to the largest power of ten that is not above half the quantum
 * moves a value by at most a quarter of the quantum, so the count is still
 * the value times the quantum's inverse, rounded: nothing that was measured
 * is lost, and the store's block codec codes the values as small integers
 * (series_codec.c's decimal variant).
 */
#include <math.h>

#include "collector.h"

/* The codec's finest decimal step (series_codec.c): a finer one would gain nothing. */
#define RESOLUTION_DECIMALS_MAX 6
#define EXACT_INT_MAX 9007199254740992.0 /* 2^53 */

static const double pow10s[RESOLUTION_DECIMALS_MAX + 1] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6};

double
collector_resolved(double value, double quantum)
{
	double x;
	int d;

	if (!isfinite(value) || !isfinite(quantum) || !(quantum > 0))
		return value;
	/* The coarsest step 10^-d with 10^-d <= quantum / 2; never coarser than 1. */
	for (d = 0; d <= RESOLUTION_DECIMALS_MAX && quantum * pow10s[d] < 2; d++)
		;
	if (d > RESOLUTION_DECIMALS_MAX)
		return value;
	x = value * pow10s[d];
	if (!(fabs(x) < EXACT_INT_MAX))
		return value;
	/* The same division the codec decodes with, so the block holds this double exactly. */
	return (double)llround(x) / pow10s[d];
}

double
collector_clock_cores(double ns, double elapsed)
{
	double quantum = COLLECTOR_CLOCK_QUANTUM_S / elapsed, finest = 2 / pow10s[RESOLUTION_DECIMALS_MAX];

	/* Not finer than the last decimal kept: rounding there moves a value by 5 us in 10 s at most. */
	return collector_resolved(ns / 1e9 / elapsed, quantum > finest ? quantum : finest);
}
