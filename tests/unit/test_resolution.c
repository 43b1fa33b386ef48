/*
 * A value at its measurement's resolution (collectors/resolution.c): a rate
 * of integer counts over a jittered interval moves by no more than half its
 * quantum and still gives back its count, values it cannot round come back
 * as they were, and a rate series, once rounded, codes in a few bytes a
 * point instead of the ~7 of full-precision doubles.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "collector.h"
#include "series_codec.h"

#define BLOCK 600

static unsigned
next_rand(unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return *seed >> 8;
}

/* An interval near nominal, off by up to +-3 ms as the sampler's ticks are. */
static double
jittered(unsigned *seed, double nominal)
{
	return nominal + ((double)(next_rand(seed) % 6001) - 3000) * 1e-6;
}

static void
moves_less_than_half_quantum(void **state)
{
	static const double per_unit[] = {1, 100, 250, 1000};   /* events; jiffies at three USER_HZ */
	static const double nominal[] = {0.01, 0.1, 0.25, 0.5, 1, 2, 10, 60};
	unsigned seed = 11;
	long checked = 0;

	(void)state;
	for (size_t u = 0; u < sizeof(per_unit) / sizeof(per_unit[0]); u++)
		for (size_t i = 0; i < sizeof(nominal) / sizeof(nominal[0]); i++)
			for (int k = 0; k < 2000; k++) {
				double elapsed = jittered(&seed, nominal[i]), q = 1 / (per_unit[u] * elapsed);
				double count = k < 1000 ? (double)k : (double)(next_rand(&seed) % 10000000);
				double v = count / per_unit[u] / elapsed, r = collector_resolved(v, q);

				assert_true(fabs(r - v) <= q / 2);
				/* What was counted is still there: the count comes back exactly. */
				assert_true(llround(r / q) == (long long)count);
				checked++;
			}
	assert_int_equal(checked, 4 * 8 * 2000);
}

static void
steps_are_decimal(void **state)
{
	(void)state;
	/* Jiffies at 100 Hz over a little more than 1 s: a quantum just under 0.01 cores, kept to 0.005. */
	assert_true(collector_resolved(397.0 / 100 / 1.0023, 1 / (100 * 1.0023)) == 3960.0 / 1000);
	assert_true(collector_resolved(398.0 / 100 / 1.0023, 1 / (100 * 1.0023)) == 3970.0 / 1000);
	/* A little less than 1 s: just over 0.01, kept to 0.01. */
	assert_true(collector_resolved(397.0 / 100 / 0.9981, 1 / (100 * 0.9981)) == 398.0 / 100);
	/* Switches over ~1 s: a quantum of ~1, kept to whole switches. */
	assert_true(collector_resolved(2345.0 / 0.9981, 1 / 0.9981) == 2349);
	/* Over 0.25 s: a quantum of ~4, still whole switches; over 10 s: just under 0.1, steps of 0.05. */
	assert_true(collector_resolved(2345.0 / 0.2503, 1 / 0.2503) == 9369);
	assert_true(collector_resolved(2345.0 / 10.002, 1 / 10.002) == 23445.0 / 100);
	/* A quantum of 0.0231: steps of 0.02. */
	assert_true(collector_resolved(1.2345, 0.0231) == 124.0 / 100);
	/* Never coarser than whole units, however coarse the quantum. */
	assert_true(collector_resolved(12345.6, 40) == 12346);
	assert_true(collector_resolved(-2.5004, 0.01) == -2.5);
}

static void
keeps_what_it_cannot_round(void **state)
{
	static const double values[] = {3.14159265358979, -0.0, 1e300, 7.0};
	uint64_t a, b;
	double r;

	(void)state;
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		/* Nanosecond clocks (finer than 10^-6), no quantum, a quantum that is not a number. */
		static const double quanta[] = {1e-9, 0, -1, NAN, INFINITY};
		for (size_t j = 0; j < sizeof(quanta) / sizeof(quanta[0]); j++) {
			r = collector_resolved(values[i], quanta[j]);
			memcpy(&a, &values[i], sizeof(a));
			memcpy(&b, &r, sizeof(b));
			assert_true(a == b);
		}
	}
	assert_true(isnan(collector_resolved(NAN, 0.01)));
	assert_true(isinf(collector_resolved(INFINITY, 0.01)));
	/* Too large for an exact integer count of steps: left alone. */
	assert_true(collector_resolved(1e17 + 0.5, 0.01) == 1e17 + 0.5);
}

/* A block of cores-used rates (jiffies over a jittered ~1 s), rounded or not; its bytes a point. */
static double
rate_block_bytes(int rounded)
{
	struct series_point p[BLOCK], *back;
	unsigned seed = 5;
	unsigned char *buf;
	size_t len, n;

	for (int i = 0; i < BLOCK; i++) {
		double elapsed = jittered(&seed, 1.0), jiffies = 380 + next_rand(&seed) % 40;
		double v = jiffies / 100 / elapsed;

		p[i] = (struct series_point){1767225600.0 + i, rounded ? collector_resolved(v, 1 / (100 * elapsed)) : v};
	}
	assert_int_equal(series_encode(p, BLOCK, &buf, &len), 0);
	assert_int_equal(series_decode(buf, len, &back, &n), 0);
	assert_int_equal(n, BLOCK);
	for (int i = 0; i < BLOCK; i++)
		assert_true(back[i].v == p[i].v);
	free(back);
	free(buf);
	return (double)len / BLOCK;
}

static void
rate_series_codes_small(void **state)
{
	double full = rate_block_bytes(0), resolved = rate_block_bytes(1);

	(void)state;
	print_message("cores-used rate, bytes a point: %.3f full precision, %.3f at its resolution\n", full, resolved);
	assert_true(full > 5);
	assert_true(resolved < 1.2);
}

/*
 * A nanosecond clock's rate: six decimals of a core at most, fewer when
 * the interval is short (10 us over 0.25 s is 4e-5 cores: steps of 2e-5),
 * and never further than the interval's uncertainty from the exact rate.
 */
static void
clock_rates_at_the_interval_resolution(void **state)
{
	double v;

	(void)state;
	v = collector_clock_cores(3782111017.0, 10.0);          /* 0.3782111017 cores over a detail interval */
	assert_true(v == 0.378211);
	v = collector_clock_cores(378211101.0, 1.0);             /* quantum 1e-5: five decimals */
	assert_true(v == 0.37821);
	v = collector_clock_cores(94552775.0, 0.25);            /* quantum 4e-5: steps of 2e-5 */
	assert_true(v == 0.37822);
	for (double ns = 1; ns < 2e9; ns = ns * 1.37 + 11) {
		v = collector_clock_cores(ns, 1.003);
		assert_true(fabs(v - ns / 1e9 / 1.003) <= 0.5e-5 / 1.003 + 1e-12);
		/* On steps of 5e-6, the coarsest not above the quantum of 1e-5 / 1.003. */
		assert_true(fabs(v * 2e5 - round(v * 2e5)) < 1e-6);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(moves_less_than_half_quantum),
		cmocka_unit_test(steps_are_decimal),
		cmocka_unit_test(keeps_what_it_cannot_round),
		cmocka_unit_test(rate_series_codes_small),
		cmocka_unit_test(clock_rates_at_the_interval_resolution),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
