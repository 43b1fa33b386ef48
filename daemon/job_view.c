/*
 * GET /api/v1/jobs/{id}: a job's view (store_job_get's row, trials,
 * phases, latest values and ranks, the ranks other nodes shared, its
 * energy) as JSON text, rendered once for each state of the store and kept
 * until the next committed write.  The view is what every job page and
 * dlprofctl polls; rendering it took five queries in a read transaction,
 * a read of the job's throughput series for its energy, a copy of the
 * collectors' state and a json_dumps, some 40 us of CPU an answer, for an
 * answer that changes once a sampler tick at most (bench/RESULTS.md).
 *
 * A stale view is a bug, so an entry is keyed by the store's generation
 * (store_generation: bumped by every committed write, the sampler's tick
 * among them) and a view rendered across a bump is not kept.  What the
 * view takes from outside the store changes with a tick too (the
 * collectors' reasons), except the ranks other nodes shared: a job those
 * may change (a distributed job with the cluster store on) is rendered
 * each time.  A reader from the network without the token gets the view
 * without the command line: its own entry.  At most JOB_VIEW_SLOTS entries,
 * the oldest replaced first; one lock.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_watch.h"
#include "app.h"
#include "cluster_ranks.h"
#include "cluster.h"
#include "energy_report.h"
#include "http.h"
#include "job_view.h"
#include "log.h"
#include "store.h"

#define JOB_VIEW_SLOTS 32

struct job_view_entry {
	int64_t id;
	bool redacted;
	unsigned long gen;         /* the store's generation it was rendered in */
	char *text;                /* NULL: empty slot */
	size_t len;
};

struct job_views {
	pthread_mutex_t lock;      /* guards everything below */
	struct job_view_entry e[JOB_VIEW_SLOTS];
	unsigned next;             /* the slot the next new entry takes */
};

struct job_views *
job_views_new(void)
{
	struct job_views *v = calloc(1, sizeof(*v));

	if (v != NULL)
		pthread_mutex_init(&v->lock, NULL);
	return v;
}

void
job_views_free(struct job_views *v)
{
	if (v == NULL)
		return;
	for (int i = 0; i < JOB_VIEW_SLOTS; i++)
		free(v->e[i].text);
	pthread_mutex_destroy(&v->lock);
	free(v);
}

size_t
job_views_count(struct job_views *v)
{
	size_t n = 0;

	pthread_mutex_lock(&v->lock);
	for (int i = 0; i < JOB_VIEW_SLOTS; i++)
		n += v->e[i].text != NULL;
	pthread_mutex_unlock(&v->lock);
	return n;
}

/* A copy of the entry's text for (id, redacted) in generation gen, or NULL. */
static char *
cached(struct job_views *v, int64_t id, bool redacted, unsigned long gen, size_t *len)
{
	char *copy = NULL;

	pthread_mutex_lock(&v->lock);
	for (int i = 0; i < JOB_VIEW_SLOTS && copy == NULL; i++) {
		struct job_view_entry *e = &v->e[i];

		if (e->text == NULL || e->id != id || e->redacted != redacted || e->gen != gen)
			continue;
		if ((copy = malloc(e->len + 1)) != NULL) {
			memcpy(copy, e->text, e->len + 1);
			*len = e->len;
		}
	}
	pthread_mutex_unlock(&v->lock);
	return copy;
}

/* Keeps a copy of text for (id, redacted) in generation gen, in its old slot or the next one. */
static void
keep(struct job_views *v, int64_t id, bool redacted, unsigned long gen, const char *text, size_t len)
{
	char *copy = malloc(len + 1);
	struct job_view_entry *e = NULL;

	if (copy == NULL)
		return;         /* the answer goes out uncached */
	memcpy(copy, text, len + 1);
	pthread_mutex_lock(&v->lock);
	for (int i = 0; i < JOB_VIEW_SLOTS && e == NULL; i++)
		if (v->e[i].text != NULL && v->e[i].id == id && v->e[i].redacted == redacted)
			e = &v->e[i];
	if (e == NULL) {
		e = &v->e[v->next];
		v->next = (v->next + 1) % JOB_VIEW_SLOTS;
	}
	free(e->text);
	*e = (struct job_view_entry){id, redacted, gen, copy, len};
	pthread_mutex_unlock(&v->lock);
}

void
job_view_redact(json_t *job)
{
	json_object_set_new(job, "command", json_null());
}

/* Whether other nodes' ranks may change the job's view without a write here. */
static bool
shared_elsewhere(const struct app *app, const json_t *job)
{
	return app->cluster != NULL && json_integer_value(json_object_get(job, "world_size")) > 1;
}

json_t *
job_view_json(struct app *app, int64_t id, bool redacted, int *err)
{
	json_t *job;

	if ((*err = store_job_get(app->store, id, &job)) != STORE_OK)
		return NULL;
	/* The ranks other nodes shared, as the cluster thread last read them: no wait on the database. */
	if (app->cluster != NULL)
		cluster_ranks_merge(cluster_ranks_of(app->cluster), job);
	if (redacted)
		job_view_redact(job);
	json_object_set_new(job, "energy", energy_report_json(app->store, app->sampler, job));
	return job;
}

char *
job_view_text(struct app *app, int64_t id, bool redacted, size_t *len, int *err)
{
	unsigned long gen = store_generation(app->store), failures = alloc_watch_failures();
	bool volatile_view;
	json_t *job;
	char *text;

	*err = STORE_OK;
	if (app->job_views != NULL && (text = cached(app->job_views, id, redacted, gen, len)) != NULL)
		return text;
	if ((job = job_view_json(app, id, redacted, err)) == NULL)
		return NULL;
	volatile_view = shared_elsewhere(app, job);
	if ((text = http_json_text(job, len)) == NULL) {
		*err = STORE_EIO;
		return NULL;
	}
	/* Not kept when an allocation failed on the way (a member may be missing: router_handle answers 503). */
	if (app->job_views != NULL && !volatile_view && store_generation(app->store) == gen &&
	    alloc_watch_failures() == failures)
		keep(app->job_views, id, redacted, gen, text, *len);
	return text;
}
