/*
 * Per-bucket summaries and their exact sums (see series_summary.h).
 */
#include <math.h>
#include <stdlib.h>

#include "array.h"
#include "invariant.h"
#include "series_summary.h"

#define SUM_DECIMALS_MAX 6
#define SUM_EXACT_MAX 9007199254740992.0  /* 2^53: every integer up to it is a double */

static const double pow10s[SUM_DECIMALS_MAX + 1] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6};

/* The fewest decimals d with v an integer over 10^d (*k), or -1. */
static int
decimal_of(double v, int64_t *k)
{
	for (int d = 0; d <= SUM_DECIMALS_MAX; d++) {
		double x = v * pow10s[d];

		if (!(fabs(x) <= SUM_EXACT_MAX))
			return -1;
		*k = llround(x);
		if ((double)*k / pow10s[d] == v)
			return d;
	}
	return -1;
}

void
exact_sum_start(struct exact_sum *s)
{
	*s = (struct exact_sum){0, 0, 0, true};
}

/* k times 10^up, or false when that leaves the exact range. */
static bool
scale_up(int64_t *k, int up)
{
	for (; up > 0; up--) {
		if (fabs((double)*k * 10) > SUM_EXACT_MAX)
			return false;
		*k *= 10;
	}
	return true;
}

void
exact_sum_add(struct exact_sum *s, double v)
{
	int64_t k;
	int d;

	s->plain += v;
	if (!s->exact)
		return;
	if ((d = decimal_of(v, &k)) < 0 || !scale_up(d > s->d ? &s->k : &k, d > s->d ? d - s->d : s->d - d)) {
		s->exact = false;
		return;
	}
	if (d > s->d)
		s->d = d;
	if (fabs((double)s->k + (double)k) > SUM_EXACT_MAX) {
		s->exact = false;
		return;
	}
	s->k += k;
}

double
exact_sum_value(const struct exact_sum *s)
{
	assert(s->d >= 0 && s->d <= SUM_DECIMALS_MAX);
	return s->exact ? (double)s->k / pow10s[s->d] : s->plain;
}

void
summary_acc_start(struct summary_acc *a, double t)
{
	a->s = (struct series_summary){t, 0, 0, INFINITY, -INFINITY, NAN};
	exact_sum_start(&a->sum);
	a->tlast = -INFINITY;
}

void
summary_acc_add(struct summary_acc *a, double n, double sum, double min, double max, double last, double tlast)
{
	a->s.n += n;
	exact_sum_add(&a->sum, sum);
	a->s.min = fmin(a->s.min, min);
	a->s.max = fmax(a->s.max, max);
	if (tlast >= a->tlast) {
		a->tlast = tlast;
		a->s.last = last;
	}
}

struct series_summary
summary_acc_get(const struct summary_acc *a)
{
	struct series_summary s = a->s;

	s.sum = exact_sum_value(&a->sum);
	return s;
}

int
series_per_second(const double *t, const double *v, size_t n, struct series_summary **out, size_t *nout)
{
	struct series_summary *s = NULL, *ns;
	struct summary_acc a;
	size_t m = 0, cap = 0;
	double sec;

	for (size_t i = 0; i < n;) {
		sec = floor(t[i]);
		summary_acc_start(&a, sec);
		for (; i < n && floor(t[i]) == sec; i++)
			summary_acc_add(&a, 1, v[i], v[i], v[i], v[i], t[i]);
		if ((ns = array_grow(s, &cap, m + 1, sizeof(*s))) == NULL) {
			free(s);
			return -1;
		}
		s = ns;
		s[m++] = summary_acc_get(&a);
	}
	*out = s;
	*nout = m;
	return 0;
}

void
series_summary_split(const struct series_summary *s, size_t n, double *t, double *const *cols)
{
	for (size_t i = 0; i < n; i++) {
		t[i] = s[i].t;
		cols[SUMMARY_N][i] = s[i].n;
		cols[SUMMARY_SUM][i] = s[i].sum;
		cols[SUMMARY_MIN][i] = s[i].min;
		cols[SUMMARY_MAX][i] = s[i].max;
		cols[SUMMARY_LAST][i] = s[i].last;
	}
}

void
series_summary_join(const double *t, const double *const *cols, size_t n, struct series_summary *s)
{
	for (size_t i = 0; i < n; i++)
		s[i] = (struct series_summary){t[i], cols[SUMMARY_N][i], cols[SUMMARY_SUM][i], cols[SUMMARY_MIN][i],
					       cols[SUMMARY_MAX][i], cols[SUMMARY_LAST][i]};
}
