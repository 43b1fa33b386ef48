/*
 * A measured value kept at its measurement's own resolution (see
 * collector_resolved in collector.h).  A rate is an integer count (jiffies,
 * context switches, faults) over a measured interval, so it can only be a
 * multiple of one quantum, 1 / (counts per unit x interval).  The double
 * that the division gives carries some 40 bits more, which say nothing
 * about what was counted; they are a function of the interval alone, which
 * is never the same twice, and they cost the store ~7 bytes a point.
 * Rounding to the coarsest step of 1, 2 or 5 x 10^-d that is not above the
 * quantum moves a value by at most half of it: less than one count, the
 * smallest difference the measurement can show, so the count is still the
 * value over the quantum, rounded.  A step of a quarter quantum kept the
 * interval's jitter as well, 2 to 3 bits a point that a reader could not
 * use: the interval is not stored.  The block codec codes the values as
 * small integers on their common step (series_codec.c).
 */
#include <math.h>
#include <stdbool.h>
#include <stddef.h>

#include "collector.h"

/* The codec's finest decimal step (series_codec.c): a finer one would gain nothing. */
#define RESOLUTION_DECIMALS_MAX 6
#define EXACT_INT_MAX 9007199254740992.0 /* 2^53 */

static const double pow10s[RESOLUTION_DECIMALS_MAX + 1] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6};

/* The coarsest step mantissa x 10^-decimals (1, 2 or 5; never above 1) not above quantum. */
static bool
coarsest_step(double quantum, double *mantissa, int *decimals)
{
	static const double mantissas[] = {5, 2, 1};

	for (int d = 0; d <= RESOLUTION_DECIMALS_MAX; d++)
		for (size_t i = d == 0 ? 2 : 0; i < sizeof(mantissas) / sizeof(mantissas[0]); i++)
			if (mantissas[i] <= quantum * pow10s[d]) {
				*mantissa = mantissas[i];
				*decimals = d;
				return true;
			}
	return false;
}

double
collector_resolved(double value, double quantum)
{
	double x, c;
	int d;

	if (!isfinite(value) || !isfinite(quantum) || !(quantum > 0) || !coarsest_step(quantum, &c, &d))
		return value;
	x = value * pow10s[d];
	if (!(fabs(x) < EXACT_INT_MAX))
		return value;
	/* The same division the codec decodes with, so the block holds this double exactly. */
	return (double)(llround(x / c) * (long long)c) / pow10s[d];
}

double
collector_clock_cores(double ns, double elapsed)
{
	double quantum = COLLECTOR_CLOCK_QUANTUM_S / elapsed, finest = 1 / pow10s[RESOLUTION_DECIMALS_MAX];

	/* Not finer than the last decimal kept: rounding there moves a value by 5 us in 10 s at most. */
	return collector_resolved(ns / 1e9 / elapsed, quantum > finest ? quantum : finest);
}
