/*
 * The gradient noise scale and statistical efficiency (daemon/goodput_noise.c) on
 * constructed figures: norms built from a known |G|^2 and tr(Sigma) give
 * them back, the noise scale is a ratio of averages, stays unknown until
 * enough steps, positive means and a small enough standard error (whose
 * value is checked), refuses figures that are no pair, and the
 * efficiency falls below 1 for a batch larger than the baseline.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <cmocka.h>

#include "goodput_noise.h"

/* E|g_b|^2 = |G|^2 + tr(Sigma) / b: the squared norm a batch of b samples has on average. */
static double sqnorm(double g2, double trace, double b)
{
	return g2 + trace / b;
}

static void test_exact_figures_give_the_noise_scale(void **state)
{
	struct goodput_noise acc = {0};
	int i;

	(void)state;
	for (i = 0; i < GOODPUT_MIN_STEPS; i++)
		assert_int_equal(goodput_noise_add(&acc, 10, sqnorm(4.0, 100.0, 10), 40, sqnorm(4.0, 100.0, 40)), 0);
	assert_float_equal(acc.mean_g2, 4.0, 1e-9);
	assert_float_equal(acc.mean_s, 100.0, 1e-9);
	assert_float_equal(goodput_noise_scale(&acc), 25.0, 1e-9);
}

static void test_ratio_of_averages(void **state)
{
	struct goodput_noise acc = {0};
	int i;

	(void)state;
	/* Steps alternate (|G|^2, S) = (1, 50) and (7, 150): 100 / 4 = 25, not the mean ratio 35.7. */
	for (i = 0; i < 2 * GOODPUT_MIN_STEPS; i++) {
		double g2 = i % 2 ? 7.0 : 1.0, s = i % 2 ? 150.0 : 50.0;
		assert_int_equal(goodput_noise_add(&acc, 8, sqnorm(g2, s, 8), 32, sqnorm(g2, s, 32)), 0);
	}
	assert_float_equal(goodput_noise_scale(&acc), 25.0, 1e-9);
}

static void test_unknown_until_enough(void **state)
{
	struct goodput_noise acc = {0}, neg = {0};
	int i;

	(void)state;
	assert_true(isnan(goodput_noise_scale(&acc)));
	for (i = 0; i < GOODPUT_MIN_STEPS - 1; i++)
		goodput_noise_add(&acc, 10, sqnorm(4.0, 100.0, 10), 40, sqnorm(4.0, 100.0, 40));
	assert_true(isnan(goodput_noise_scale(&acc)));
	goodput_noise_add(&acc, 10, sqnorm(4.0, 100.0, 10), 40, sqnorm(4.0, 100.0, 40));
	assert_false(isnan(goodput_noise_scale(&acc)));
	/* |g_B|^2 far below |g_b|^2: the |G|^2 estimates are negative, nothing can be said. */
	for (i = 0; i < 2 * GOODPUT_MIN_STEPS; i++)
		assert_int_equal(goodput_noise_add(&neg, 10, 10.0, 40, 1.0), 0);
	assert_true(neg.mean_g2 < 0.0);
	assert_true(isnan(goodput_noise_scale(&neg)));
}

/* |G|^2 = 100, tr(Sigma) estimates of -500 and 700 in turn (mean 100): imprecise at 16 steps, precise at 1000. */
static void test_unknown_until_precise(void **state)
{
	struct goodput_noise acc = {0};
	double phi, rel_se;
	int i;

	(void)state;
	for (i = 0; i < 1000; i++) {
		double s = i % 2 ? 700.0 : -500.0;
		assert_int_equal(goodput_noise_add(&acc, 8, sqnorm(100.0, s, 8), 32, sqnorm(100.0, s, 32)), 0);
		if (i == 15) {
			assert_int_equal(goodput_noise_estimate(&acc, &phi, &rel_se), 0);
			assert_float_equal(phi, 1.0, 1e-9);
			/* The standard error of the mean of +-600 over 16 steps (sample variance), of 100. */
			assert_float_equal(rel_se, 600.0 * sqrt(16.0 / 15.0) / 4.0 / 100.0, 1e-9);
			assert_true(isnan(goodput_noise_scale(&acc)));
		}
	}
	assert_int_equal(goodput_noise_estimate(&acc, &phi, &rel_se), 0);
	assert_float_equal(rel_se, 600.0 * sqrt(1000.0 / 999.0) / sqrt(1000.0) / 100.0, 1e-9);
	assert_true(rel_se < GOODPUT_MAX_REL_SE);
	assert_float_equal(goodput_noise_scale(&acc), 1.0, 1e-9);
}

static void test_bad_pairs_refused(void **state)
{
	struct goodput_noise acc = {0};

	(void)state;
	assert_int_equal(goodput_noise_add(&acc, 40, 1.0, 40, 1.0), -1);     /* b == B */
	assert_int_equal(goodput_noise_add(&acc, 40, 1.0, 10, 1.0), -1);     /* b > B */
	assert_int_equal(goodput_noise_add(&acc, 0, 1.0, 10, 1.0), -1);      /* b == 0 */
	assert_int_equal(goodput_noise_add(&acc, 10, -1.0, 40, 1.0), -1);    /* a negative square */
	assert_int_equal(goodput_noise_add(&acc, 10, NAN, 40, 1.0), -1);
	assert_int_equal(goodput_noise_add(&acc, 10, 1.0, INFINITY, 1.0), -1);
	assert_int_equal(acc.n, 0);
	assert_true(acc.mean_g2 == 0.0 && acc.mean_s == 0.0);
}

static void test_efficiency(void **state)
{
	(void)state;
	assert_float_equal(goodput_efficiency(25.0, 32, 32), 1.0, 1e-12);
	assert_float_equal(goodput_efficiency(25.0, 32, 512), 57.0 / 537.0, 1e-12);
	assert_true(goodput_efficiency(25.0, 32, 64) < 1.0);
	assert_true(goodput_efficiency(25.0, 32, 512) < goodput_efficiency(25.0, 32, 64));
	assert_true(goodput_efficiency(25.0, 32, 16) > 1.0);       /* smaller than the baseline */
	assert_float_equal(goodput_efficiency(1e9, 32, 512), 1.0, 1e-6); /* all noise: batch costs nothing */
	assert_true(isnan(goodput_efficiency(NAN, 32, 64)));
	assert_true(isnan(goodput_efficiency(0.0, 32, 64)));
	assert_true(isnan(goodput_efficiency(25.0, 0, 64)));
	assert_true(isnan(goodput_efficiency(25.0, 32, -1)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_figures_give_the_noise_scale),
		cmocka_unit_test(test_ratio_of_averages),
		cmocka_unit_test(test_unknown_until_enough),
		cmocka_unit_test(test_unknown_until_precise),
		cmocka_unit_test(test_bad_pairs_refused),
		cmocka_unit_test(test_efficiency),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
