/*
 * The window of sampled values between two stores (see sample_window.h).
 * Series are found by a hash of (job, name) with linear probing; the table
 * is rebuilt when it grows and when a close forgets series, so lookups stay
 * one or two probes at ~1,000 series a tick.
 */
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "metrics.h"
#include "sample_window.h"

void
sample_window_init(struct sample_window *w)
{
	memset(w, 0, sizeof(*w));
}

void
sample_window_free(struct sample_window *w)
{
	free(w->v);
	free(w->slot);
	memset(w, 0, sizeof(*w));
}

/* FNV-1a over the name, mixed with the job id. */
static uint32_t
series_hash(int64_t job_id, const char *name)
{
	uint32_t h = 2166136261u ^ (uint32_t)job_id ^ (uint32_t)((uint64_t)job_id >> 32);

	for (; *name != '\0'; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	return h;
}

static int
series_counter(int64_t job_id, const char *name)
{
	const struct metric_info *m = metric_of(job_id, name);

	return m != NULL && m->type == METRIC_COUNTER;
}

/* Where (job, name) is in the table, or the empty slot it would take. */
static uint32_t *
series_slot(const struct sample_window *w, int64_t job_id, const char *name)
{
	size_t mask = w->nslot - 1, i = series_hash(job_id, name) & mask;
	const struct sample_series *s;

	for (;; i = (i + 1) & mask) {
		if (w->slot[i] == 0)
			return &w->slot[i];
		s = &w->v[w->slot[i] - 1];
		if (s->newest.job_id == job_id && strcmp(s->newest.name, name) == 0)
			return &w->slot[i];
	}
}

/* Refills the table, in a new one of nslot slots when the size changes. */
static int
rehash(struct sample_window *w, size_t nslot)
{
	uint32_t *slot;
	size_t i;

	if (nslot == w->nslot) {
		memset(w->slot, 0, nslot * sizeof(*w->slot));
	} else {
		if ((slot = calloc(nslot, sizeof(*slot))) == NULL)
			return -1;
		free(w->slot);
		w->slot = slot;
		w->nslot = nslot;
	}
	for (i = 0; i < w->n; i++)
		*series_slot(w, w->v[i].newest.job_id, w->v[i].newest.name) = (uint32_t)(i + 1);
	return 0;
}

static struct sample_series *
series_get(struct sample_window *w, const struct collector_value *v)
{
	struct sample_series *nv;
	uint32_t *slot;

	if (w->nslot < 2 * (w->n + 1) && rehash(w, w->nslot ? w->nslot * 2 : 256) < 0)
		return NULL;
	slot = series_slot(w, v->job_id, v->name);
	if (*slot != 0)
		return &w->v[*slot - 1];
	if (w->n == w->cap) {
		nv = array_grow(w->v, &w->cap, w->n + 1, sizeof(*nv));
		if (nv == NULL)
			return NULL;
		w->v = nv;
	}
	nv = &w->v[w->n];
	memset(nv, 0, sizeof(*nv));
	nv->newest = *v;
	nv->counter = series_counter(v->job_id, v->name);
	*slot = (uint32_t)++w->n;
	return nv;
}

int
sample_window_add(struct sample_window *w, const struct collector_value *v, size_t n)
{
	struct sample_series *s;
	size_t i;

	for (i = 0; i < n; i++) {
		if ((s = series_get(w, &v[i])) == NULL)
			return -1;
		s->newest.t = v[i].t;
		s->newest.value = v[i].value;
		s->sum += v[i].value;
		s->n++;
	}
	return 0;
}

size_t
sample_window_rows(struct sample_window *w, double t, struct sample *rows)
{
	struct sample_series *s;
	size_t i, nrows = 0;
	double v;

	for (i = 0; i < w->n; i++) {
		s = &w->v[i];
		if (s->n == 0)
			continue;
		v = s->counter ? s->newest.value : s->sum / s->n;
		rows[nrows++] = (struct sample){s->newest.job_id, t, s->newest.name, v, NULL};
	}
	return nrows;
}

void
sample_window_next(struct sample_window *w, double forget_before)
{
	size_t i, keep = 0;

	for (i = 0; i < w->n; i++) {
		if (w->v[i].n == 0 && !(w->v[i].newest.t >= forget_before))
			continue;
		w->v[keep] = w->v[i];
		w->v[keep].sum = 0;
		w->v[keep].n = 0;
		keep++;
	}
	if (keep != w->n) {
		w->n = keep;
		rehash(w, w->nslot);  /* same size: cannot fail */
	}
}
