/*
 * The per-job state table of the collectors (jobstate.h).  A singly linked
 * list: a node runs few jobs at once, so a walk is as fast as anything
 * cleverer, and each state keeps its address for the job's whole life.
 */

#include <stdlib.h>

#include "jobstate.h"

struct jobstate_entry {
	int64_t id;                    /* the store's job id */
	struct jobstate_entry *next;
	max_align_t state[];           /* the collector's state, suitably aligned */
};

void
jobstate_init(struct jobstate_table *t, size_t size, void (*init)(void *state), void (*clear)(void *state))
{
	t->head = NULL;
	t->size = size;
	t->init = init;
	t->clear = clear;
}

void *
jobstate_get(struct jobstate_table *t, int64_t id)
{
	struct jobstate_entry *e;

	for (e = t->head; e != NULL; e = e->next)
		if (e->id == id)
			return e->state;
	e = calloc(1, sizeof(*e) + t->size);
	if (e == NULL)
		return NULL;
	e->id = id;
	if (t->init != NULL)
		t->init(e->state);
	e->next = t->head;
	t->head = e;
	return e->state;
}

static void
jobstate_free_entry(const struct jobstate_table *t, struct jobstate_entry *e)
{
	if (t->clear != NULL)
		t->clear(e->state);
	free(e);
}

void
jobstate_drop(struct jobstate_table *t, int64_t id)
{
	struct jobstate_entry **pp, *e;

	for (pp = &t->head; (e = *pp) != NULL; pp = &e->next) {
		if (e->id == id) {
			*pp = e->next;
			jobstate_free_entry(t, e);
			return;
		}
	}
}

void
jobstate_free_all(struct jobstate_table *t)
{
	struct jobstate_entry *e, *next;

	for (e = t->head; e != NULL; e = next) {
		next = e->next;
		jobstate_free_entry(t, e);
	}
	t->head = NULL;
}
