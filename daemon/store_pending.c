/*
 * The points not yet in blocks, kept in memory (see store_internal.h,
 * "pending"): a store has two, the sampler's and the jobs' reported
 * points.  A staged row cost the writer an insert, three index updates and
 * a delete a few minutes later for every point; the points are instead
 * appended here by the writer thread and encoded into blocks straight from
 * memory when their ten-minute span closes (store_blocks.c).  Readers copy
 * a series' points under the lock, so answers include the newest tick or
 * step.  What is here is durable elsewhere or not at all: a reported batch
 * is a row of reported_batches, written in the transaction that
 * acknowledges it and replayed into memory when the store opens
 * (store_batches.c); the sampler's points are written only when the store
 * closes, so a crash loses at most its open span and the minute before the
 * next flush.
 *
 * Series are found by a hint first: a poster sends its series in the same
 * order every tick or batch, so the series after the last one found is
 * almost always the next one's.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "series_codec.h"
#include "store_internal.h"

struct pending_series {
	int64_t job_id;
	char *name;
	char *phase;                     /* "" for none */
	struct series_point *p;          /* in the order added: time order, but for a clock step or a late batch */
	size_t n, cap;
	size_t n_before;                 /* n before the batch numbered batch: what a failed batch goes back to */
	unsigned long batch;
	size_t n_txn;                    /* n before the transaction numbered txn: what a failed commit goes back to */
	unsigned long txn;
};

struct store_pending {
	pthread_mutex_t lock;            /* guards everything below */
	struct pending_series *s;
	size_t n, cap;
	size_t hint;                     /* where the next lookup looks first */
	unsigned long batch;             /* the number of the last batch added */
	unsigned long txn;               /* the number of the writer's transaction under way */
};

struct store_pending *
pending_new(void)
{
	struct store_pending *p = calloc(1, sizeof(*p));

	if (p != NULL)
		pthread_mutex_init(&p->lock, NULL);
	return p;
}

static void
series_free(struct pending_series *s)
{
	free(s->name);
	free(s->phase);
	free(s->p);
}

void
pending_free(struct store_pending *p)
{
	if (p == NULL)
		return;
	for (size_t i = 0; i < p->n; i++)
		series_free(&p->s[i]);
	free(p->s);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

/* Whether s is (job_id, name, phase); phase NULL: any phase. */
static int
series_is(const struct pending_series *s, int64_t job_id, const char *name, const char *phase)
{
	return s->job_id == job_id && strcmp(s->name, name) == 0 && (phase == NULL || strcmp(s->phase, phase) == 0);
}

/* The series' index, or p->n when absent.  Lock held. */
static size_t
series_find(struct store_pending *p, int64_t job_id, const char *name, const char *phase)
{
	size_t i;

	if (p->hint < p->n && series_is(&p->s[p->hint], job_id, name, phase))
		return p->hint;
	for (i = 0; i < p->n && !series_is(&p->s[i], job_id, name, phase); i++)
		;
	return i;
}

/* A new empty series at the end, or NULL.  Lock held. */
static struct pending_series *
series_add(struct store_pending *p, int64_t job_id, const char *name, const char *phase)
{
	struct pending_series *ns;
	char *copy = strdup(name), *pcopy = strdup(phase);

	if (copy == NULL || pcopy == NULL)
		goto fail;
	if (p->n == p->cap) {
		if ((ns = array_grow(p->s, &p->cap, p->n + 1, sizeof(*ns))) == NULL)
			goto fail;
		p->s = ns;
	}
	ns = &p->s[p->n++];
	*ns = (struct pending_series){.job_id = job_id, .name = copy, .phase = pcopy};
	return ns;
fail:
	free(copy);
	free(pcopy);
	return NULL;
}

/* Appends one point of the batch p->batch; -1 when out of memory.  Lock held. */
static int
add_locked(struct store_pending *p, const struct sample *x)
{
	const char *phase = x->phase != NULL ? x->phase : "";
	size_t i = series_find(p, x->job_id, x->name, phase);
	struct pending_series *s = i < p->n ? &p->s[i] : series_add(p, x->job_id, x->name, phase);
	struct series_point *np;

	if (s == NULL)
		return -1;
	if (s->batch != p->batch) {
		s->batch = p->batch;
		s->n_before = s->n;
	}
	if (s->txn != p->txn) {
		s->txn = p->txn;
		s->n_txn = s->n;
	}
	if ((np = array_grow(s->p, &s->cap, s->n + 1, sizeof(*np))) == NULL)
		return -1;
	s->p = np;
	s->p[s->n++] = (struct series_point){x->t, x->value};
	p->hint = (size_t)(s - p->s) + 1;
	return 0;
}

int
pending_add(struct store_pending *p, const struct sample *s, size_t n, const bool *skip)
{
	int r = 0;

	pthread_mutex_lock(&p->lock);
	p->batch++;
	for (size_t i = 0; i < n && r == 0; i++)
		if (skip == NULL || !skip[i])
			r = add_locked(p, &s[i]);
	/* All or nothing: a batch that failed is stored again whole when its poster retries. */
	for (size_t i = 0; r < 0 && i < p->n; i++)
		if (p->s[i].batch == p->batch)
			p->s[i].n = p->s[i].n_before;
	pthread_mutex_unlock(&p->lock);
	return r;
}

void
pending_txn_begin(struct store_pending *p)
{
	pthread_mutex_lock(&p->lock);
	p->txn++;
	pthread_mutex_unlock(&p->lock);
}

void
pending_txn_undo(struct store_pending *p)
{
	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->n; i++)
		if (p->s[i].txn == p->txn)
			p->s[i].n = p->s[i].n_txn;
	pthread_mutex_unlock(&p->lock);
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
pending_copy(struct store_pending *p, int64_t job_id, const char *name, const char *phase, double lo, double hi,
	     struct series_point **out, size_t *n)
{
	size_t cap = 0;
	int r = 0;

	*out = NULL;
	*n = 0;
	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->n && r == 0; i++)
		if (series_is(&p->s[i], job_id, name, phase))
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
pending_job_names(struct store_pending *p, int64_t job_id, void (*fn)(const char *name, const char *phase, void *arg),
		  void *arg)
{
	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->n; i++)
		if (p->s[i].job_id == job_id && p->s[i].n > 0)
			fn(p->s[i].name, p->s[i].phase, arg);
	pthread_mutex_unlock(&p->lock);
}

void
pending_runs_free(struct pending_run *runs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(runs[i].name);
		free(runs[i].phase);
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

/*
 * The writer's walks over every point (take, prune) keep readers waiting
 * as little as they can: the jobs' memory holds a million points and more,
 * and a reader waiting for a walk over all of them waited milliseconds.
 * Only the writer thread changes the series, so it reads them without the
 * lock, and holds it only to put a series' new points in place.
 */
int
pending_take(struct store_pending *p, double lo, double hi, struct pending_run **runs, size_t *nruns)
{
	struct pending_run *rs = NULL, *nr;
	size_t n = 0, cap = 0, pcap;
	int r = 0;

	for (size_t i = 0; i < p->n && r == 0; i++) {
		if (!has_range(&p->s[i], lo, hi))
			continue;
		if ((nr = array_grow(rs, &cap, n + 1, sizeof(*nr))) == NULL) {
			r = -1;
			break;
		}
		rs = nr;
		rs[n] = (struct pending_run){.job_id = p->s[i].job_id, .name = strdup(p->s[i].name),
					     .phase = strdup(p->s[i].phase)};
		pcap = 0;
		if (rs[n++].name == NULL || rs[n - 1].phase == NULL ||
		    copy_range(&p->s[i], lo, hi, &rs[n - 1].p, &rs[n - 1].n, &pcap) < 0)
			r = -1;
	}
	if (r < 0) {
		pending_runs_free(rs, n);
		return -1;
	}
	*runs = rs;
	*nruns = n;
	return 0;
}

/*
 * The points of s at or after before, in a new array (*out NULL when
 * none), and in *n_txn how many of them s->n_txn becomes; -1 when out of
 * memory.
 */
static int
kept_points(const struct pending_series *s, double before, struct series_point **out, size_t *n, size_t *n_txn)
{
	size_t keep = 0;

	*n_txn = 0;
	for (size_t k = 0; k < s->n; k++) {
		keep += !(s->p[k].t < before);
		if (k + 1 == s->n_txn)
			*n_txn = keep;
	}
	*out = NULL;
	*n = keep;
	if (keep == 0)
		return 0;
	if ((*out = malloc(keep * sizeof(**out))) == NULL)
		return -1;
	keep = 0;
	for (size_t k = 0; k < s->n; k++)
		if (!(s->p[k].t < before))
			(*out)[keep++] = s->p[k];
	return 0;
}

void
pending_prune(struct store_pending *p, double before)
{
	struct series_point *np, *old;
	size_t keep_s = 0, n, n_txn;

	for (size_t i = 0; i < p->n; i++) {
		struct pending_series *s = &p->s[i];

		if (!has_range(s, -INFINITY, before))
			continue;
		/* Out of memory: the points stay, and go at a later upkeep (readers skip them by the mark). */
		if (kept_points(s, before, &np, &n, &n_txn) < 0)
			continue;
		pthread_mutex_lock(&p->lock);
		old = s->p;
		s->p = np;
		s->n = s->cap = n;
		s->n_txn = n_txn;
		pthread_mutex_unlock(&p->lock);
		free(old);
	}
	pthread_mutex_lock(&p->lock);
	/* A series left empty (its job ended) goes, so the table does not grow with every job seen. */
	for (size_t i = 0; i < p->n; i++) {
		if (p->s[i].n == 0) {
			series_free(&p->s[i]);
			continue;
		}
		p->s[keep_s++] = p->s[i];
	}
	p->n = keep_s;
	p->hint = 0;
	pthread_mutex_unlock(&p->lock);
}
