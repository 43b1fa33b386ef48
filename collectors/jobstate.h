/*
 * What a collector keeps about each job between ticks, keyed by the store's
 * job id: a small table that finds a job's state (creating it zeroed on
 * first sight), forgets it when the job is gone, and frees everything at
 * fini.  Each collector says how large its state is, how to set up a new
 * one and how to free what a state holds; the table owns the state's memory
 * itself.  Like the
 * collectors, it is used from the sampler's one thread and takes no lock.
 */
#ifndef DLPROF_JOBSTATE_H
#define DLPROF_JOBSTATE_H

#include <stddef.h>
#include <stdint.h>

struct jobstate_entry;

struct jobstate_table {
	struct jobstate_entry *head;   /* the jobs, newest first */
	size_t size;                   /* bytes of one job's state */
	void (*init)(void *state);     /* sets up a new, zeroed state; may be NULL */
	void (*clear)(void *state);    /* frees what a state holds, not the state; may be NULL */
};

/* An empty table of states of size bytes each. */
void jobstate_init(struct jobstate_table *t, size_t size, void (*init)(void *state), void (*clear)(void *state));
/* The job's state, zeroed and given to init when new; NULL when out of memory. */
void *jobstate_get(struct jobstate_table *t, int64_t id);
/* Clears and frees the job's state; nothing when it has none. */
void jobstate_drop(struct jobstate_table *t, int64_t id);
/* Clears and frees every state; the table is empty after. */
void jobstate_free_all(struct jobstate_table *t);

#endif
