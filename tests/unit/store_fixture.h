/*
 * A real store in a fresh temporary directory, for the unit tests that seed
 * one (store ranks, the cluster outbox, the diagnosis report, live
 * streams), the job rows they seed it with, and a look at a store's file
 * behind its back (the store tests).  Header-only, like
 * collectors_fixture.h: each test links it into its own binary.
 */
#ifndef DLPROF_TEST_STORE_FIXTURE_H
#define DLPROF_TEST_STORE_FIXTURE_H

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

#include "store.h"
#include "store_series.h"

struct store_fixture {
	char dir[64];
	char path[96];
	struct store *st;
};

/* Opens a new store under /tmp; 0, or -1 (the directory is left for a look). */
static inline int
store_fixture_open(struct store_fixture *f)
{
	static const struct store_options opts = {.queue_limit = 1024, .readers = 2};

	snprintf(f->dir, sizeof(f->dir), "/tmp/dlprof-test-store-XXXXXX");
	if (mkdtemp(f->dir) == NULL)
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/t.db", f->dir);
	f->st = store_open(f->path, &opts);
	return f->st != NULL ? 0 : -1;
}

/* Closes the store (every acknowledged write flushed) and removes its directory; 0 or -1. */
static inline int
store_fixture_close(struct store_fixture *f)
{
	char cmd[128];

	store_close(f->st);
	f->st = NULL;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* cmocka group set-up and teardown: *state is a store_fixture of its own. */
static inline int
store_fixture_setup(void **state)
{
	struct store_fixture *f = calloc(1, sizeof(*f));

	if (f == NULL || store_fixture_open(f) < 0) {
		free(f);
		return -1;
	}
	*state = f;
	return 0;
}

static inline int
store_fixture_teardown(void **state)
{
	struct store_fixture *f = *state;
	int r = store_fixture_close(f);

	free(f);
	return r;
}

/*
 * A job of workload registered at started with pid (0: none); external_id
 * may be NULL, rank (with external_id) makes it a rank joining its
 * distributed job.  Its id, or -1.
 */
static inline int64_t
store_fixture_job(struct store *st, const char *workload, const char *external_id,
		  const struct job_rank_spec *rank, int64_t pid, double started)
{
	struct job_spec spec = {.workload = workload, .params_json = "{}", .hw_class = "test", .objective = OBJECTIVE_THROUGHPUT,
				.source = "registered", .external_id = external_id, .rank = rank, .pid = pid,
				.started = started};
	int64_t id;
	bool adopted;

	if (rank != NULL)
		return store_job_join(st, &spec, &id, &adopted) == STORE_OK ? id : -1;
	return store_job_register(st, &spec, &id) == STORE_OK ? id : -1;
}

static inline void
store_fixture_count_bucket(const struct store_bucket *b, void *arg)
{
	*(double *)arg += b->count;
}

/*
 * How many points of job's series (but the per-thread ones) the store
 * answers with in [from, to), read as the API reads them: wherever the
 * store keeps them.  -1 when the read fails.
 */
static inline int64_t
store_fixture_points(struct store *st, int64_t job, double from, double to)
{
	double n = 0;

	if (store_series_buckets(st, job, NULL, from, to, 1.0, store_fixture_count_bucket, &n) != STORE_OK)
		return -1;
	return (int64_t)n;
}

/*
 * The first column of sql's first row, read from the database at path
 * through a connection of its own; -1 when there is no row.  A query that
 * cannot run is the test's own mistake, so it stops the test (as cmocka's
 * asserts would) rather than read as a value.
 */
static inline int64_t
store_fixture_query_int(const char *path, const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *s = NULL;
	int64_t v = -1;

	if (sqlite3_open(path, &db) != SQLITE_OK || sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) {
		fprintf(stderr, "store_fixture_query_int: %s: %s\n", sql, sqlite3_errmsg(db));
		abort();
	}
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(db);
	return v;
}

#endif
