/*
 * The threads of one job that a counting collector (perf, papi) follows.
 * Each tick threadset_track lists the threads of the job's processes,
 * marks those already counted as still there and has the collector start
 * counting on new ones; the collector then reads every thread (those that
 * just exited too: their final counts) and threadset_sweep stops and drops
 * the threads that are gone.  The listing is skipped while the kernel's
 * thread count and the job's processes are what they were at the last one;
 * a thread that exits while another starts (the same count) is therefore
 * noticed at the next listing that is due anyway, at most a minute later.
 *
 * What a collector keeps per thread is its own struct whose first member is
 * a struct threadset_thread; the set stores those structs by value in one
 * array, in the order the threads were first seen.  Used from the sampler's
 * one thread, like the collectors.
 */
#ifndef DLPROF_THREADSET_H
#define DLPROF_THREADSET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collector.h"

/* The first member of a collector's per-thread struct. */
struct threadset_thread {
	pid_t tid;
	int seen;                      /* still listed this tick */
};

/* What a collector's start callback did with a new thread. */
enum threadset_start {
	THREADSET_STARTED,             /* counting: keep the thread */
	THREADSET_SKIPPED,             /* not counting it; go on with the others */
	THREADSET_STOP,                /* out of a resource (errno says which): add no more this tick */
};

/*
 * Starts counting on a new thread: thread points at the collector's zeroed
 * struct with tid and seen set; arg is what threadset_track was given.
 */
typedef enum threadset_start (*threadset_start_fn)(void *thread, void *arg);
/* Stops counting on a thread and frees what it holds (not the struct). */
typedef void (*threadset_stop_fn)(void *thread);

struct threadset {
	unsigned char *items;          /* n structs of size bytes */
	size_t n, cap;
	size_t size;                   /* bytes of the collector's per-thread struct */
	size_t max;                    /* threads beyond this many are not counted */
	long listed_threads;           /* the kernel's count at the last listing; -1: list next time */
	uint64_t listed_pids;          /* a hash of the job's pids then */
	unsigned since_listed;         /* tracks since then */
};

/* An empty set of per-thread structs of size bytes, at most max of them. */
void threadset_init(struct threadset *ts, size_t size, size_t max);
/* The i-th thread's struct, i < ts->n. */
void *threadset_at(const struct threadset *ts, size_t i);
/*
 * Follows the threads of job's processes under proc_root: marks the known
 * ones seen and the others not, starts new ones with start(thread, arg).
 * Returns 0, or -1 with errno when start said THREADSET_STOP or memory ran
 * out; it still marks the known threads then, but adds no more.
 */
int threadset_track(struct threadset *ts, const char *proc_root, const struct collector_job *job,
		    threadset_start_fn start, void *arg);
/* Stops and drops the threads not seen by the last track; the others keep their order. */
void threadset_sweep(struct threadset *ts, threadset_stop_fn stop);
/* Stops every thread and frees the set; it is empty after. */
void threadset_free(struct threadset *ts, threadset_stop_fn stop);

#endif
