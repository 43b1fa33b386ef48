/*
 * The set of a job's threads that perf and papi count on (threadset.h):
 * finding a thread by tid, adding and starting new ones up to a bound, and
 * dropping the gone.  Lookups walk the array: the bound keeps it short.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "array.h"
#include "procfs.h"
#include "threadset.h"

/* Room for this many threads when a job's first thread is added. */
/* Listing the threads again whatever the counts say, every this many tracks (a minute at 10 s). */
#define THREADSET_RELIST_EVERY 6

void
threadset_init(struct threadset *ts, size_t size, size_t max)
{
	ts->items = NULL;
	ts->n = 0;
	ts->cap = 0;
	ts->size = size;
	ts->max = max;
	ts->listed_threads = -1;
	ts->listed_pids = 0;
	ts->since_listed = 0;
}

void *
threadset_at(const struct threadset *ts, size_t i)
{
	return ts->items + i * ts->size;
}

static struct threadset_thread *
threadset_find(const struct threadset *ts, pid_t tid)
{
	struct threadset_thread *t;
	size_t i;

	for (i = 0; i < ts->n; i++) {
		t = threadset_at(ts, i);
		if (t->tid == tid)
			return t;
	}
	return NULL;
}

/* Adds and starts tid; 0 also when the set is full or start skipped it; -1 with errno otherwise. */
static int
threadset_add(struct threadset *ts, pid_t tid, threadset_start_fn start, void *arg)
{
	struct threadset_thread *t;
	unsigned char *ni;

	if (ts->n == ts->max)
		return 0;
	if (ts->n == ts->cap) {
		ni = array_grow(ts->items, &ts->cap, ts->n + 1, ts->size);
		if (ni == NULL) {
			errno = ENOMEM;
			return -1;
		}
		ts->items = ni;
	}
	t = threadset_at(ts, ts->n);
	memset(t, 0, ts->size);
	t->tid = tid;
	t->seen = 1;
	switch (start(t, arg)) {
	case THREADSET_STARTED:
		ts->n++;
		return 0;
	case THREADSET_SKIPPED:
		return 0;
	case THREADSET_STOP:
		break;
	}
	return -1;
}

/*
 * The job's threads as the kernel counts them: a task directory's link
 * count is its threads plus 2 (a stat, not a listing).  -1 when a count
 * cannot be read, or the file system does not count subdirectories.
 */
static long
thread_count(const char *proc_root, const struct collector_job *job)
{
	struct stat st;
	char dir[512];
	long total = 0;
	size_t i;

	for (i = 0; i < job->npids; i++) {
		snprintf(dir, sizeof(dir), "%s/%d/task", proc_root, (int)job->pids[i]);
		if (stat(dir, &st) < 0 || st.st_nlink < 3)
			return -1;
		total += (long)st.st_nlink - 2;
	}
	return total;
}

/* FNV-1a over the job's pids: a process replaced by another with as many threads changes it. */
static uint64_t
pids_hash(const struct collector_job *job)
{
	uint64_t h = 14695981039346656037ull;
	size_t i;

	for (i = 0; i < job->npids; i++) {
		h ^= (uint64_t)job->pids[i];
		h *= 1099511628211ull;
	}
	return h;
}

int
threadset_track(struct threadset *ts, const char *proc_root, const struct collector_job *job,
		threadset_start_fn start, void *arg)
{
	struct threadset_thread *t;
	pid_t *tids;
	ssize_t n, k;
	size_t i;
	int failed = 0, err = 0;
	long count = thread_count(proc_root, job);
	uint64_t pids = pids_hash(job);
	char dir[512];

	/* Listing every process's task directory was an eighth of the sampler's time. */
	if (count >= 0 && count == ts->listed_threads && pids == ts->listed_pids &&
	    ++ts->since_listed < THREADSET_RELIST_EVERY) {
		for (i = 0; i < ts->n; i++)
			((struct threadset_thread *)threadset_at(ts, i))->seen = 1;
		return 0;
	}
	for (i = 0; i < ts->n; i++)
		((struct threadset_thread *)threadset_at(ts, i))->seen = 0;
	for (i = 0; i < job->npids; i++) {
		snprintf(dir, sizeof(dir), "%s/%d/task", proc_root, (int)job->pids[i]);
		n = procfs_list_ids(dir, &tids);
		for (k = 0; k < n; k++) {
			if ((t = threadset_find(ts, tids[k])) != NULL)
				t->seen = 1;
			else if (!failed && threadset_add(ts, tids[k], start, arg) < 0) {
				/* Kept from the listing's own calls, which may set errno. */
				failed = 1;
				err = errno;
			}
		}
		free(tids);
	}
	/* After a refusal, list again next time: the threads not added are to be retried. */
	ts->listed_threads = failed ? -1 : count;
	ts->listed_pids = pids;
	ts->since_listed = 0;
	if (failed) {
		errno = err;
		return -1;
	}
	return 0;
}

void
threadset_sweep(struct threadset *ts, threadset_stop_fn stop)
{
	struct threadset_thread *t;
	size_t i, keep;

	for (i = 0, keep = 0; i < ts->n; i++) {
		t = threadset_at(ts, i);
		if (!t->seen)
			stop(t);
		else if (keep++ != i)
			memcpy(threadset_at(ts, keep - 1), t, ts->size);
	}
	ts->n = keep;
}

void
threadset_free(struct threadset *ts, threadset_stop_fn stop)
{
	size_t i;

	for (i = 0; i < ts->n; i++)
		stop(threadset_at(ts, i));
	free(ts->items);
	ts->items = NULL;
	ts->n = 0;
	ts->cap = 0;
}
