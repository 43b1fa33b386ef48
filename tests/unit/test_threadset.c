/*
 * Tests of the thread set perf and papi count on, over a /proc-like tree
 * this test builds in a temporary directory (PID/task/TID directories), so
 * threads can appear and exit between ticks: new threads are started once,
 * known ones are marked, gone ones are stopped by the sweep, the listing is
 * skipped while nothing changed, the bound and a skipping or stopping start
 * callback are obeyed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "threadset.h"

struct test_thread {
	struct threadset_thread head;
	int started;             /* set by the start callback */
};

/* What the callbacks saw and how they answer. */
struct test_log {
	pid_t started[16];
	size_t nstarted;
	pid_t stopped[16];
	size_t nstopped;
	pid_t skip_tid;          /* start answers SKIPPED for it */
	pid_t stop_tid;          /* start answers STOP (errno EMFILE) for it */
};

static struct test_log test_log;
static char test_root[64];

static enum threadset_start
test_start(void *thread, void *arg)
{
	struct test_thread *t = thread;
	struct test_log *l = arg;

	assert_int_equal(t->started, 0);   /* handed over zeroed */
	assert_int_equal(t->head.seen, 1);
	if (t->head.tid == l->stop_tid) {
		errno = EMFILE;
		return THREADSET_STOP;
	}
	l->started[l->nstarted++] = t->head.tid;
	if (t->head.tid == l->skip_tid)
		return THREADSET_SKIPPED;
	t->started = 1;
	return THREADSET_STARTED;
}

static void
test_stop(void *thread)
{
	struct test_thread *t = thread;

	assert_int_equal(t->started, 1);
	test_log.stopped[test_log.nstopped++] = t->head.tid;
}

static void
task_dir(pid_t pid, pid_t tid, int present)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%d", test_root, (int)pid);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/%d/task", test_root, (int)pid);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/%d/task/%d", test_root, (int)pid, (int)tid);
	if (present)
		assert_true(mkdir(path, 0700) == 0 || errno == EEXIST);
	else
		assert_int_equal(rmdir(path), 0);
}

static pid_t
tid_at(const struct threadset *ts, size_t i)
{
	return ((const struct test_thread *)threadset_at(ts, i))->head.tid;
}

static int
setup(void **state)
{
	(void)state;
	memset(&test_log, 0, sizeof(test_log));
	snprintf(test_root, sizeof(test_root), "%s", "/tmp/test_threadset.XXXXXX");
	return mkdtemp(test_root) != NULL ? 0 : -1;
}

static int
remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int
teardown(void **state)
{
	(void)state;
	return nftw(test_root, remove_one, 8, FTW_DEPTH | FTW_PHYS);
}

/* Threads 10 and 11 in process 10, 20 in process 20, tracked once by a fresh set. */
static void
track_first(struct threadset *ts, const struct collector_job *job)
{
	task_dir(10, 10, 1);
	task_dir(10, 11, 1);
	task_dir(20, 20, 1);
	threadset_init(ts, sizeof(struct test_thread), 8);
	assert_int_equal(threadset_track(ts, test_root, job, test_start, &test_log), 0);
}

static void
new_started_gone_swept(void **state)
{
	pid_t pids[] = {10, 20};
	struct collector_job job = {1, pids, 2, NULL, 0};
	struct threadset ts;

	(void)state;
	track_first(&ts, &job);
	assert_int_equal(ts.n, 3);
	assert_int_equal(test_log.nstarted, 3);
	threadset_sweep(&ts, test_stop);
	assert_int_equal(test_log.nstopped, 0);
	/* Next tick: 12 appeared. */
	task_dir(10, 12, 1);
	assert_int_equal(threadset_track(&ts, test_root, &job, test_start, &test_log), 0);
	assert_int_equal(test_log.nstarted, 4);
	assert_int_equal(test_log.started[3], 12);
	threadset_sweep(&ts, test_stop);
	assert_int_equal(test_log.nstopped, 0);
	/* Next tick: 11 exited. */
	task_dir(10, 11, 0);
	assert_int_equal(threadset_track(&ts, test_root, &job, test_start, &test_log), 0);
	assert_int_equal(ts.n, 4);  /* the gone one stays until the sweep: its final counts */
	threadset_sweep(&ts, test_stop);
	assert_int_equal(test_log.nstopped, 1);
	assert_int_equal(test_log.stopped[0], 11);
	assert_int_equal(ts.n, 3);
	assert_int_equal(tid_at(&ts, 0), 10);
	assert_int_equal(tid_at(&ts, 1), 20);
	assert_int_equal(tid_at(&ts, 2), 12);
	threadset_free(&ts, test_stop);
	assert_int_equal(test_log.nstopped, 4);
	assert_int_equal(ts.n, 0);
}

/* Whether this file system counts subdirectories in a directory's links, as /proc does for threads. */
static int
counts_subdirs(void)
{
	char path[128];
	struct stat st;

	snprintf(path, sizeof(path), "%s/10/task", test_root);
	return stat(path, &st) == 0 && st.st_nlink >= 3;
}

/*
 * While the thread count and the processes stay the same, the threads are
 * not listed: one that exits as another starts is noticed when a listing is
 * due anyway (within 6 tracks); a process replaced by another with as many
 * threads is noticed at once.
 */
static void
same_count_listed_when_due(void **state)
{
	pid_t pids[] = {10, 20};
	struct collector_job job = {1, pids, 2, NULL, 0};
	struct threadset ts;
	int tracks;

	(void)state;
	track_first(&ts, &job);
	threadset_sweep(&ts, test_stop);
	assert_int_equal(test_log.nstarted, 3);
	task_dir(10, 11, 0);
	task_dir(10, 12, 1);
	for (tracks = 1; tracks <= 6 && test_log.nstarted == 3; tracks++) {
		assert_int_equal(threadset_track(&ts, test_root, &job, test_start, &test_log), 0);
		threadset_sweep(&ts, test_stop);
	}
	if (counts_subdirs())
		assert_true(tracks > 2);          /* not listed at the first track after the change */
	else
		assert_int_equal(tracks, 2);      /* no count to go by: listed every time */
	assert_int_equal(test_log.nstarted, 4);   /* but within 6 */
	assert_int_equal(test_log.started[3], 12);
	assert_int_equal(test_log.nstopped, 1);
	assert_int_equal(test_log.stopped[0], 11);
	/* Process 20 (one thread) replaced by 30 (one thread): listed at once. */
	pids[1] = 30;
	task_dir(30, 30, 1);
	assert_int_equal(threadset_track(&ts, test_root, &job, test_start, &test_log), 0);
	threadset_sweep(&ts, test_stop);
	assert_int_equal(test_log.nstarted, 5);
	assert_int_equal(test_log.started[4], 30);
	assert_int_equal(test_log.nstopped, 2);
	assert_int_equal(test_log.stopped[1], 20);
	threadset_free(&ts, test_stop);
}

static void
skipped_and_bounded(void **state)
{
	pid_t pid = 10;
	struct collector_job job = {1, &pid, 1, NULL, 0};
	struct threadset ts;
	pid_t tid;

	(void)state;
	for (tid = 10; tid < 14; tid++)
		task_dir(10, tid, 1);
	test_log.skip_tid = 11;
	threadset_init(&ts, sizeof(struct test_thread), 2);
	assert_int_equal(threadset_track(&ts, test_root, &job, test_start, &test_log), 0);
	/* 11 was offered and skipped; 13 is beyond the bound and never offered. */
	assert_int_equal(test_log.nstarted, 3);
	assert_int_equal(ts.n, 2);
	assert_int_equal(tid_at(&ts, 0), 10);
	assert_int_equal(tid_at(&ts, 1), 12);
	threadset_free(&ts, test_stop);
	assert_int_equal(test_log.nstopped, 2);
}

static void
stop_marks_known_adds_no_more(void **state)
{
	pid_t pid = 10;
	struct collector_job job = {1, &pid, 1, NULL, 0};
	struct threadset ts;

	(void)state;
	task_dir(10, 10, 1);
	threadset_init(&ts, sizeof(struct test_thread), 8);
	assert_int_equal(threadset_track(&ts, test_root, &job, test_start, &test_log), 0);
	task_dir(10, 11, 1);
	task_dir(10, 12, 1);
	test_log.stop_tid = 11;
	errno = 0;
	assert_int_equal(threadset_track(&ts, test_root, &job, test_start, &test_log), -1);
	assert_int_equal(errno, EMFILE);
	assert_int_equal(test_log.nstarted, 1);  /* 12 was not offered after the stop */
	assert_int_equal(ts.n, 1);
	threadset_sweep(&ts, test_stop);
	assert_int_equal(test_log.nstopped, 0);  /* 10 was still marked */
	threadset_free(&ts, test_stop);
	assert_int_equal(test_log.nstopped, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(new_started_gone_swept, setup, teardown),
		cmocka_unit_test_setup_teardown(same_count_listed_when_due, setup, teardown),
		cmocka_unit_test_setup_teardown(skipped_and_bounded, setup, teardown),
		cmocka_unit_test_setup_teardown(stop_marks_known_adds_no_more, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
