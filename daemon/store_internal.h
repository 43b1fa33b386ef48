/*
 * What the store's own files (store*.c) share: connections with a cache of
 * prepared statements, and the writer queue.  Nothing outside store*.c
 * includes this.
 *
 * SQL text lives in each store file as named static strings; a connection
 * caches each prepared statement by the address of its text, so a statement
 * is compiled once per connection.
 */
#ifndef DLPROF_STORE_INTERNAL_H
#define DLPROF_STORE_INTERNAL_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

#include "store.h"

#define STORE_STMT_CACHE 64

struct store_conn {
	sqlite3 *db;
	struct {
		const char *sql;          /* key: address of a static SQL string */
		sqlite3_stmt *stmt;
	} cache[STORE_STMT_CACHE];
	int ncache;
	bool quiet;                   /* failures already reported: store_fail stays silent */
};

/*
 * The prepared statement for sql (a static string), reset and with its
 * bindings cleared, or NULL after logging the error.
 */
sqlite3_stmt *store_stmt(struct store_conn *c, const char *sql);

/*
 * Maps a SQLite result code to a store_err and logs it once with the
 * database's message; what says which operation failed.
 */
int store_fail(struct store_conn *c, int rc, const char *what);

/*
 * A write operation: runs in the writer thread inside a transaction (its own
 * savepoint, so a failing operation does not undo the others in the batch).
 * Returns STORE_OK or a store_err.
 */
typedef int (*store_apply_fn)(struct store_conn *c, void *arg);

/* Queues fn and waits until its transaction is committed; its result. */
int store_write(struct store *st, store_apply_fn fn, void *arg);
/* A change of the running jobs (registered, adopted, ended) was committed. */
void store_jobs_changed(struct store *st);
/*
 * Queues fn and returns at once; the writer calls free_arg(arg) when done.
 * STORE_EBUSY (and free_arg called) when the queue is full.
 */
int store_post(struct store *st, store_apply_fn fn, void *arg, void (*free_arg)(void *));

struct job_spec;
/* store_ranks.c: writes spec->rank's row for job id and the job's world size (writer thread). */
int store_rank_insert(struct store_conn *c, int64_t id, const struct job_spec *spec);
/* store_ranks.c: sets job's "ranks" (its rows, JSON) and "ranks_elsewhere" (world size less those). */
int store_ranks_json(struct store_conn *c, int64_t id, json_t *job);

/*
 * The sampler's points not yet in blocks, in memory (store_pending.c).  The
 * writer thread adds and takes; readers copy under the store_pending's own
 * lock.  Points before the flushed mark (sql 011, sampler_flushed) are in
 * blocks; a reader adds those at or after the mark its snapshot shows.
 */
struct series_point;
struct store_pending;
struct pending_run {                /* one series' points taken for a flush */
	int64_t job_id;
	char *name;
	struct series_point *p;
	size_t n;
};
struct store_pending *pending_new(void);
void pending_free(struct store_pending *p);
/* Appends one point (writer thread); -1 when out of memory. */
int pending_add(struct store_pending *p, int64_t job_id, const char *name, double t, double v);
/* A malloc'd copy of one series' points in [lo, hi), in the order added; -1 when out of memory. */
int pending_copy(struct store_pending *p, int64_t job_id, const char *name, double lo, double hi,
		 struct series_point **out, size_t *n);
/* Calls fn with the name of each series of job_id holding points, under the lock (fn must not call back). */
void pending_job_names(struct store_pending *p, int64_t job_id, void (*fn)(const char *name, void *arg), void *arg);
/* Copies of every series' points in [lo, hi), series without any left out; -1 when out of memory. */
int pending_take(struct store_pending *p, double lo, double hi, struct pending_run **runs, size_t *nruns);
void pending_runs_free(struct pending_run *runs, size_t n);
/* Forgets the points before `before` (in blocks for a while) and the series left empty. */
void pending_prune(struct store_pending *p, double before);
/* The store's pending points, and the flushed mark as the writer last set it (writer thread). */
struct store_pending *store_pending_of(struct store *st);
double *store_pending_mark(struct store *st);
/* store_samples.c: writes the pending points at or after the mark as staged rows (an apply function). */
int store_samples_stage_pending(struct store_conn *c, void *st);

/* Borrows a read connection (blocks while all are in use); give it back. */
struct store_conn *store_reader(struct store *st);
void store_reader_done(struct store *st, struct store_conn *c);

/*
 * An outbox of rows waiting for the cluster store (store_cluster.c: trials;
 * store_cluster_ranks.c: ranks), each statement bound to ?1: the first
 * max entries' rows (peek_sql), each made by row, as a new JSON array
 * *out, and in *last the last id they cover (max_sql), so entries the joins
 * of peek_sql skipped leave with the rest.  what names it in errors.
 */
typedef json_t *store_row_fn(sqlite3_stmt *s);
int store_outbox_peek(struct store *st, const char *peek_sql, const char *max_sql, store_row_fn *row,
		      const char *what, int max, json_t **out, int64_t *last);

/*
 * A block's rowid (sql/015_series_blocks_key.sql): its span's index times
 * STORE_BLOCK_KEY_SPAN plus its series' id, so keys ascend with time.
 * store_block_key is false for a span before 1970 or past ~2^31 spans, or
 * an id outside [0, 2^32): such a block has no key.  store_block_keys gives
 * the keys of one series' spans whose start t0 has lo < t0 <= hi (any
 * doubles), a step of STORE_BLOCK_KEY_SPAN apart; false when there are none.
 */
#define STORE_BLOCK_KEY_SPAN 4294967296LL
bool store_block_key(int64_t series_id, int64_t t0, int64_t *key);
bool store_block_keys(int64_t series_id, double lo, double hi, int64_t *first, int64_t *last);

/* Column helpers for reads: text or NULL as JSON, and JSON text parsed. */
json_t *store_col_text(sqlite3_stmt *s, int col);
/*
 * A text column as a C string, "" for NULL.  sqlite3_column_text is also
 * NULL when SQLite runs out of memory converting a value: never hand that
 * to strcmp, a format or a JSON key.  The failure was counted by the
 * allocation watch (alloc_watch.h), so a handler's answer becomes a 503.
 */
const char *store_col_str(sqlite3_stmt *s, int col);
json_t *store_col_json(sqlite3_stmt *s, int col);
json_t *store_col_real(sqlite3_stmt *s, int col);

#endif
