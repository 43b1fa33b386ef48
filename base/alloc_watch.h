/*
 * Allocation failures seen by the calling thread.  jansson's setters and
 * appenders drop a member when memory runs out and most callers cannot tell;
 * SQLite may fail inside a row it then reads as NULL.  Rather than checking
 * each of hundreds of calls, the daemon routes jansson's allocations (and
 * SQLite's, see store.c) through a counter of failures per thread, and the
 * one place that runs a route handler (router_handle) answers 503 when the
 * count moved while the answer was built: never 200 with missing data.
 */
#ifndef DLPROF_ALLOC_WATCH_H
#define DLPROF_ALLOC_WATCH_H

/* Routes jansson's allocations through the counter; once, before any JSON is built. */
void alloc_watch_install(void);

/* Records a failed allocation of this thread (an allocator that is watched calls it). */
void alloc_watch_note(void);

/* The failures this thread has seen so far; compare two readings to watch a span. */
unsigned long alloc_watch_failures(void);

#endif
