/*
 * The straggler rule (see diag_straggler.h).  The median over ranks, not
 * the mean, is the yardstick, so one slow rank of two or of many does not
 * pull the reference toward itself; the cause is the first of data phase,
 * CPU wait, CPU share that explains the gap, judged against the same
 * medians.  Where no rank timed its collectives, the ranks' CPU figures
 * alone name a straggler that waits for a CPU while the others sleep.
 */
#include "diag_straggler.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The CPU-wait share of the straggler that names its CPUs as the reason ... */
#define CAUSE_WAIT_SHARE 0.2
/* ... and how many times the other ranks' it must be for a neighbour (not all ranks) to be the reason. */
#define CAUSE_WAIT_OVER_OTHERS 2.0
/* A data phase explains the gap when its extra time is at least this share of it. */
#define CAUSE_DATA_SHARE 0.5
/* Cores below this share of the other ranks' median, without waiting, are a smaller CPU share. */
#define CAUSE_CPU_SHARE 0.75

static const char *const cause_names[] = {
	[DIAG_CAUSE_UNKNOWN] = "unknown",
	[DIAG_CAUSE_DATA] = "data_phase",
	[DIAG_CAUSE_NEIGHBOUR] = "busy_neighbour",
	[DIAG_CAUSE_OVERSUBSCRIBED] = "oversubscribed",
	[DIAG_CAUSE_CPU_SHARE] = "cpu_share",
};

const char *
diag_straggler_cause_name(enum diag_straggler_cause c)
{
	return c <= DIAG_CAUSE_CPU_SHARE ? cause_names[c] : "unknown";
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of the finite values f(r[i]) of the judged ranks, except rank skip (-1: none); NAN when none. */
static double
median(const struct diag_rank *r, size_t n, int skip, double (*f)(const struct diag_rank *))
{
	double *v = malloc((n ? n : 1) * sizeof(*v)), m = NAN;
	size_t i, k = 0;

	if (v == NULL)
		return NAN;
	for (i = 0; i < n; i++)
		if (r[i].rank != skip && r[i].steps >= DIAG_STRAGGLER_MIN_STEPS && isfinite(f(&r[i])))
			v[k++] = f(&r[i]);
	if (k > 0) {
		qsort(v, k, sizeof(*v), cmp_double);
		m = k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
	}
	free(v);
	return m;
}

static double
own(const struct diag_rank *r)
{
	return r->step_s - (isfinite(r->comm_s) ? r->comm_s : 0);
}

static double
wait_share_of_step(const struct diag_rank *r)
{
	return r->step_s > 0 ? (isfinite(r->comm_s) ? r->comm_s : 0) / r->step_s : NAN;
}

static double
data(const struct diag_rank *r)
{
	return isfinite(r->data_s) ? r->data_s : 0;
}

static double
cores(const struct diag_rank *r)
{
	return r->cpu_cores;
}

/* The share of its runnable time a rank's threads waited for a CPU. */
static double
cpu_wait_share(const struct diag_rank *r)
{
	double all = r->cpu_cores + r->wait_cores;

	return isfinite(all) && all > 0 ? r->wait_cores / all : NAN;
}

/* The cores a rank's threads kept runnable: running, or waiting for a CPU. */
static double
runnable(const struct diag_rank *r)
{
	double all = r->cpu_cores + r->wait_cores;

	return isfinite(all) && all > 0 ? all : NAN;
}

static double
step_time(const struct diag_rank *r)
{
	return r->step_s;
}

static bool
is_judged(const struct diag_rank *r)
{
	return r->steps >= DIAG_STRAGGLER_MIN_STEPS && r->step_s > 0;
}

/* Whether any judged rank reported time waiting in collectives. */
static bool
any_timed(const struct diag_rank *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (is_judged(&r[i]) && isfinite(r[i].comm_s) && r[i].comm_s > 0)
			return true;
	return false;
}

/*
 * Nothing timed: the rank whose threads wait most for a CPU, when they
 * wait at least CAUSE_WAIT_SHARE of their runnable time and twice the
 * others' share, and the others keep so few cores runnable against its
 * count that they sleep (in the collective, waiting for it) at least
 * DIAG_STRAGGLER_WAIT_SHARE of each step.  In a synchronous job every rank
 * has the same work and the straggler never waits for the others, so the
 * ratio of runnable cores estimates how much longer its own work takes.
 */
static bool
from_cpus(const struct diag_rank *r, size_t n, struct diag_straggler *out)
{
	const struct diag_rank *s = NULL;
	double wait, others_wait, busy, others_busy;
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		if (!is_judged(&r[i]) || !isfinite(cpu_wait_share(&r[i])))
			continue;
		k++;
		if (s == NULL || cpu_wait_share(&r[i]) > cpu_wait_share(s))
			s = &r[i];
	}
	if (k < 2)
		return false;
	wait = cpu_wait_share(s);
	others_wait = median(r, n, s->rank, cpu_wait_share);
	busy = runnable(s);
	others_busy = median(r, n, s->rank, runnable);
	if (!(wait >= CAUSE_WAIT_SHARE) || !(wait >= CAUSE_WAIT_OVER_OTHERS * others_wait) || !(others_busy > 0))
		return false;
	out->slower = busy / others_busy;
	out->others_wait_share = 1 - others_busy / busy;
	if (!(out->slower >= DIAG_STRAGGLER_RATIO) || !(out->others_wait_share >= DIAG_STRAGGLER_WAIT_SHARE))
		return false;
	out->rank = s->rank;
	out->node = s->node;
	out->own_s = s->step_s;
	out->median_own_s = median(r, n, s->rank, step_time) / out->slower;
	out->cause = DIAG_CAUSE_NEIGHBOUR;
	out->from_cpu = true;
	snprintf(out->hint, sizeof(out->hint),
		 "rank %d on %s waits for a CPU %.0f%% of its runnable time (the others %.0f%%) and keeps %.2f cores "
		 "runnable against the others' %.2f, which sleep about %.0f%% of each step waiting for it (no rank "
		 "timed its collectives; read from the CPUs): another process busy on its CPUs; move it or the rank, "
		 "or bind the rank to CPUs of its own", s->rank, s->node, wait * 100, others_wait * 100, busy,
		 others_busy, out->others_wait_share * 100);
	return true;
}

static void
explain(const struct diag_rank *r, size_t n, const struct diag_rank *s, struct diag_straggler *out)
{
	double gap = out->own_s - out->median_own_s, data_gap = data(s) - median(r, n, s->rank, data);
	double wait = cpu_wait_share(s), others_wait = median(r, n, s->rank, cpu_wait_share);
	double others_cores = median(r, n, s->rank, cores);
	char *h = out->hint;
	size_t len = sizeof(out->hint);
	int o = snprintf(h, len, "rank %d on %s does its share of a step in %.3f s, %.1fx the other ranks' median %.3f s; "
			 "they wait %.0f%% of each step for it", s->rank, s->node, out->own_s, out->slower,
			 out->median_own_s, out->others_wait_share * 100);

	if (o < 0 || (size_t)o >= len)
		return;
	h += o;
	len -= (size_t)o;
	if (isfinite(data_gap) && gap > 0 && data_gap >= CAUSE_DATA_SHARE * gap) {
		out->cause = DIAG_CAUSE_DATA;
		snprintf(h, len, ": its data phase takes %.3f s per step (others %.3f s): give it more loader workers "
			 "or faster storage, or balance the data it reads", data(s), median(r, n, s->rank, data));
	} else if (isfinite(wait) && wait >= CAUSE_WAIT_SHARE && isfinite(others_wait) &&
		   wait >= CAUSE_WAIT_OVER_OTHERS * others_wait) {
		out->cause = DIAG_CAUSE_NEIGHBOUR;
		snprintf(h, len, ": its threads wait for a CPU %.0f%% of the time (the others %.0f%%): another process "
			 "busy on its CPUs; move it or the rank, or bind the rank to CPUs of its own",
			 wait * 100, others_wait * 100);
	} else if (isfinite(wait) && wait >= CAUSE_WAIT_SHARE) {
		out->cause = DIAG_CAUSE_OVERSUBSCRIBED;
		snprintf(h, len, ": every rank's threads wait for a CPU (it %.0f%%, the others %.0f%%): the node runs "
			 "more threads than it has CPUs, this job's or others'; run fewer ranks or threads per rank, "
			 "or the job where CPUs are free", wait * 100, others_wait * 100);
	} else if (isfinite(s->cpu_cores) && isfinite(others_cores) && s->cpu_cores < CAUSE_CPU_SHARE * others_cores) {
		out->cause = DIAG_CAUSE_CPU_SHARE;
		snprintf(h, len, ": it uses %.2f cores, the others %.2f: give it as many threads and CPUs as they have",
			 s->cpu_cores, others_cores);
	} else {
		out->cause = DIAG_CAUSE_UNKNOWN;
		snprintf(h, len, "; the daemons see no cause on its node (its CPU share and data phase match the others')");
	}
}

bool
diag_straggler_find(const struct diag_rank *r, size_t n, struct diag_straggler *out)
{
	const struct diag_rank *s = NULL;
	size_t i, judged = 0;

	memset(out, 0, sizeof(*out));
	if (!any_timed(r, n))
		return from_cpus(r, n, out);
	for (i = 0; i < n; i++) {
		if (!is_judged(&r[i]))
			continue;
		judged++;
		if (s == NULL || own(&r[i]) > own(s))
			s = &r[i];
	}
	if (judged < 2)
		return false;
	/* The others' median: with two ranks, the other one. */
	out->median_own_s = median(r, n, s->rank, own);
	out->own_s = own(s);
	out->slower = out->median_own_s > 0 ? out->own_s / out->median_own_s : NAN;
	/* What the others wait beyond what the straggler itself waits (the transfer both pay) is waiting for it. */
	out->others_wait_share = median(r, n, s->rank, wait_share_of_step) - wait_share_of_step(s);
	if (!(out->slower >= DIAG_STRAGGLER_RATIO) || !(out->others_wait_share >= DIAG_STRAGGLER_WAIT_SHARE))
		return false;
	out->rank = s->rank;
	out->node = s->node;
	explain(r, n, s, out);
	return true;
}
