/*
 * Implementation of alloc_watch.h.  The count is thread-local: a handler's
 * thread must not see the failures of the sampler or the writer, and no lock
 * is taken on an allocation.  jansson's allocator hooks take no context
 * pointer, so the count cannot live anywhere but here.
 */
#include <jansson.h>
#include <stdlib.h>

#include "alloc_watch.h"

static _Thread_local unsigned long failures;

void alloc_watch_note(void)
{
	failures++;
}

unsigned long alloc_watch_failures(void)
{
	return failures;
}

static void *watched_malloc(size_t n)
{
	void *p = malloc(n);

	if (!p && n)
		failures++;
	return p;
}

void alloc_watch_install(void)
{
	json_set_alloc_funcs(watched_malloc, free);
}
