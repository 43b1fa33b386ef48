/*
 * A job's share of the node's CPU energy (see energy.h): each tick's
 * joules, by the job's share of the node's busy CPU time.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "energy.h"
#include "log.h"

struct energy_job {
	int64_t id;
	double joules;             /* attributed so far */
};

struct energy_attr {
	double prev_node_j;        /* the node's energy.cpu_joules at the last tick; NAN: none */
	struct energy_job *jobs;
	size_t njobs, cap;
};

struct energy_attr *
energy_attr_new(void)
{
	struct energy_attr *a = calloc(1, sizeof(*a));

	if (a == NULL) {
		log_warn("%s: calloc", __func__);
		return NULL;
	}
	a->prev_node_j = NAN;
	return a;
}

void
energy_attr_free(struct energy_attr *a)
{
	if (a == NULL)
		return;
	free(a->jobs);
	free(a);
}

/* The job's entry, a new one at 0 J when first seen; NULL when out of memory. */
static struct energy_job *
job_entry(struct energy_attr *a, int64_t id)
{
	struct energy_job *nj;
	size_t i;

	for (i = 0; i < a->njobs; i++)
		if (a->jobs[i].id == id)
			return &a->jobs[i];
	if ((nj = array_grow(a->jobs, &a->cap, a->njobs + 1, sizeof(*nj))) == NULL)
		return NULL;
	a->jobs = nj;
	a->jobs[a->njobs] = (struct energy_job){id, 0};
	return &a->jobs[a->njobs++];
}

void
energy_attr_tick(struct energy_attr *a, struct collector_out *out)
{
	double node_j = collector_value_find(out->v, out->n, 0, "energy.cpu_joules");
	double busy = collector_value_find(out->v, out->n, 0, "cpu.cores"), tick_j, share;
	struct energy_job *j;
	size_t i, n = out->n;

	if (a == NULL)
		return;
	if (!isfinite(node_j)) {
		/* Not measured this tick: the next measurement is a new baseline. */
		a->prev_node_j = NAN;
		return;
	}
	/* A total that went back is the collector counting afresh (it was reinitialised). */
	tick_j = isfinite(a->prev_node_j) && node_j >= a->prev_node_j ? node_j - a->prev_node_j : 0;
	a->prev_node_j = node_j;
	for (i = 0; i < n; i++) {
		if (out->v[i].job_id == 0 || strcmp(out->v[i].name, "cpu.cores") != 0)
			continue;
		share = busy > 0 ? fmin(out->v[i].value / busy, 1.0) : 0;
		if (!(share > 0))
			share = 0;
		if ((j = job_entry(a, out->v[i].job_id)) == NULL) {
			out->failed = 1;
			continue;
		}
		j->joules += tick_j * share;
		collector_put(out, j->id, j->joules, "energy.cpu_joules");
	}
}

void
energy_attr_job_gone(struct energy_attr *a, int64_t job_id)
{
	size_t i;

	for (i = 0; a != NULL && i < a->njobs; i++)
		if (a->jobs[i].id == job_id) {
			a->jobs[i] = a->jobs[--a->njobs];
			return;
		}
}
