/*
 * The sampler's points not yet in blocks, kept in memory (see
 * store_internal.h, "pending").  A staged row cost the writer an insert,
 * three index updates and a delete a minute later for every point; the
 * sampler's points are instead appended here by the writer thread, encoded
 * into blocks straight from memory when their ten-minute span closes
 * (store_blocks.c), and written as staged rows only when the store closes.
 * Readers copy a series' points under the lock, so answers include the
 * newest tick.  A crash loses what is here: at most the open span and the
 * minute before the next flush.
 *
 * Series are found by a hint first: the sampler posts its series in the
 * same order every tick, so the series after the last one found is almost
 * always the next one's.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "series_codec.h"
#include "store_internal.h"

struct pending_series {
	int64_t job_id;
	char *name;
	struct series_point *p;          /* in the order added: time order, but for a clock step */
	size_t n, cap;
};

struct store_pending {
	pthread_mutex_t lock;            /* guards everything below */
	struct pending_series *s;
	size_t n, cap;
	size_t hint;                     /* where the next lookup looks first */
};

struct store_pending *
pending_new(void)
{
	struct store_pending *p = calloc(1, sizeof(*p));

	if (p != NULL)
		pthread_mutex_init(&p->lock, NULL);
	return p;
}

void
pending_free(struct store_pending *p)
{
	if (p == NULL)
		return;
	for (size_t i = 0; i < p->n; i++) {
		free(p->s[i].name);
		free(p->s[i].p);
	}
	free(p->s);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

static int
series_is(const struct pending_series *s, int64_t job_id, const char *name)
{
	return s->job_id == job_id && strcmp(s->name, name) == 0;
}

/* The series' index, or p->n when absent.  Lock held. */
static size_t
series_find(struct store_pending *p, int64_t job_id, const char *name)
{
	size_t i;

	if (p->hint < p->n && series_is(&p->s[p->hint], job_id, name))
		return p->hint;
	for (i = 0; i < p->n && !series_is(&p->s[i], job_id, name); i++)
		;
	return i;
}

/* A new empty series at the end, or NULL.  Lock held. */
static struct pending_series *
series_add(struct store_pending *p, int64_t job_id, const char *name)
{
	struct pending_series *ns;
	char *copy = strdup(name);

	if (copy == NULL)
		return NULL;
	if (p->n == p->cap) {
		if ((ns = array_grow(p->s, &p->cap, p->n + 1, sizeof(*ns))) == NULL) {
			free(copy);
			return NULL;
		}
		p->s = ns;
	}
	ns = &p->s[p->n++];
	*ns = (struct pending_series){.job_id = job_id, .name = copy};
	return ns;
}

int
pending_add(struct store_pending *p, int64_t job_id, const char *name, double t, double v)
{
	struct pending_series *s;
	struct series_point *np;
	size_t i;
	int r = -1;

	pthread_mutex_lock(&p->lock);
	i = series_find(p, job_id, name);
	s = i < p->n ? &p->s[i] : series_add(p, job_id, name);
	if (s != NULL && (np = array_grow(s->p, &s->cap, s->n + 1, sizeof(*np))) != NULL) {
		s->p = np;
		s->p[s->n++] = (struct series_point){t, v};
		p->hint = (size_t)(s - p->s) + 1;
		r = 0;
	}
	pthread_mutex_unlock(&p->lock);
	return r;
}

/* The points of s in [lo, hi), appended to *out (*n of *cap); -1 when out of memory. */
static int
copy_range(const struct pending_series *s, double lo, double hi, struct series_point **out, size_t *n,
	   size_t *cap)
{
	struct series_point *np;

	for (size_t i = 0; i < s->n; i++) {
		if (!(s->p[i].t >= lo && s->p[i].t < hi))
			continue;
		if ((np = array_grow(*out, cap, *n + 1, sizeof(*np))) == NULL)
			return -1;
		*out = np;
		(*out)[(*n)++] = s->p[i];
	}
	return 0;
}

int
pending_copy(struct store_pending *p, int64_t job_id, const char *name, double lo, double hi,
	     struct series_point **out, size_t *n)
{
	size_t i, cap = 0;
	int r = 0;

	*out = NULL;
	*n = 0;
	pthread_mutex_lock(&p->lock);
	for (i = 0; i < p->n && !series_is(&p->s[i], job_id, name); i++)
		;
	if (i < p->n)
		r = copy_range(&p->s[i], lo, hi, out, n, &cap);
	pthread_mutex_unlock(&p->lock);
	if (r < 0) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return r;
}

void
pending_job_names(struct store_pending *p, int64_t job_id, void (*fn)(const char *name, void *arg), void *arg)
{
	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->n; i++)
		if (p->s[i].job_id == job_id && p->s[i].n > 0)
			fn(p->s[i].name, arg);
	pthread_mutex_unlock(&p->lock);
}

void
pending_runs_free(struct pending_run *runs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(runs[i].name);
		free(runs[i].p);
	}
	free(runs);
}

/* Whether s holds a point in [lo, hi). */
static int
has_range(const struct pending_series *s, double lo, double hi)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->p[i].t >= lo && s->p[i].t < hi)
			return 1;
	return 0;
}

int
pending_take(struct store_pending *p, double lo, double hi, struct pending_run **runs, size_t *nruns)
{
	struct pending_run *rs = NULL, *nr;
	size_t n = 0, cap = 0, pcap;
	int r = 0;

	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->n && r == 0; i++) {
		if (!has_range(&p->s[i], lo, hi))
			continue;
		if ((nr = array_grow(rs, &cap, n + 1, sizeof(*nr))) == NULL) {
			r = -1;
			break;
		}
		rs = nr;
		rs[n] = (struct pending_run){.job_id = p->s[i].job_id, .name = strdup(p->s[i].name)};
		pcap = 0;
		if (rs[n++].name == NULL || copy_range(&p->s[i], lo, hi, &rs[n - 1].p, &rs[n - 1].n, &pcap) < 0)
			r = -1;
	}
	pthread_mutex_unlock(&p->lock);
	if (r < 0) {
		pending_runs_free(rs, n);
		return -1;
	}
	*runs = rs;
	*nruns = n;
	return 0;
}

void
pending_prune(struct store_pending *p, double before)
{
	size_t keep_s = 0, keep;

	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->n; i++) {
		struct pending_series *s = &p->s[i];

		keep = 0;
		for (size_t k = 0; k < s->n; k++)
			if (!(s->p[k].t < before))
				s->p[keep++] = s->p[k];
		s->n = keep;
		/* A series left empty (its job ended) goes, so the table does not grow with every job seen. */
		if (s->n == 0) {
			free(s->name);
			free(s->p);
			continue;
		}
		p->s[keep_s++] = *s;
	}
	p->n = keep_s;
	p->hint = 0;
	pthread_mutex_unlock(&p->lock);
}
