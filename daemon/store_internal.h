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
/* store_stmt with ?1 bound to id: the preamble of every statement about one row's id. */
sqlite3_stmt *store_stmt_id(struct store_conn *c, const char *sql, int64_t id);
/*
 * Steps s once, its parameters bound (a write, or a read whose row is not
 * wanted); STORE_OK on a row or at the end, else the failure, logged as what.
 */
int store_step(struct store_conn *c, sqlite3_stmt *s, const char *what);
/* Runs sql (a statement that returns no rows) with ?1 bound to id, and resets it; STORE_OK or the failure, logged as what. */
int store_run_id(struct store_conn *c, const char *sql, int64_t id, const char *what);
/* The same with ?1 bound to a number (a time, a mark). */
int store_run_double(struct store_conn *c, const char *sql, double arg, const char *what);

/*
 * Steps s (its parameters bound; NULL: it could not be prepared) to its
 * end, row reading each row into the next element (size bytes) of a
 * growing array, and resets it.  On STORE_OK *out (to free()) and *n are
 * the rows; else *out is untouched and the result is STORE_EIO (no
 * statement, no memory) or the step's failure, logged as what.
 */
typedef void store_row_into_fn(sqlite3_stmt *s, void *elem);
int store_rows_read(struct store_conn *c, sqlite3_stmt *s, size_t size, store_row_into_fn *row, const char *what,
		    void **out, size_t *n);

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
 * The points not yet in blocks, in memory (store_pending.c): the
 * sampler's, and the jobs' reported points, each with its own flushed mark
 * (sql/011 sampler_flushed, sql/018 reported_flushed).  The writer thread
 * adds and takes; readers copy under the store_pending's own lock.  Points
 * before a mark are in blocks; a reader adds those at or after the mark
 * its snapshot shows.  A series is a job, a name and a phase ("" for none).
 */
struct series_point;
struct store_pending;
enum pending_kind { PENDING_SAMPLER, PENDING_REPORTED, PENDING_KINDS };
struct pending_run {                /* one series' points taken for a flush */
	int64_t job_id;
	char *name, *phase;
	struct series_point *p;
	size_t n;
};
struct store_pending *pending_new(void);
void pending_free(struct store_pending *p);
/* Appends the points of s that are not skipped (skip NULL: all), all or none (writer thread); -1 when out of memory. */
int pending_add(struct store_pending *p, const struct sample *s, size_t n, const bool *skip);
/*
 * A malloc'd copy of one series' points in [lo, hi) (phase NULL: of every
 * phase), in the order added; -1 when out of memory.
 */
int pending_copy(struct store_pending *p, int64_t job_id, const char *name, const char *phase, double lo, double hi,
		 struct series_point **out, size_t *n);
/* Calls fn with the name and phase of each series of job_id holding points, under the lock (fn must not call back). */
void pending_job_names(struct store_pending *p, int64_t job_id,
		       void (*fn)(const char *name, const char *phase, void *arg), void *arg);
/* Copies of every series' points in [lo, hi), series without any left out (writer thread); -1 when out of memory. */
int pending_take(struct store_pending *p, double lo, double hi, struct pending_run **runs, size_t *nruns);
void pending_runs_free(struct pending_run *runs, size_t n);
/*
 * The writer's transaction: a commit that fails undoes the points added
 * since pending_txn_begin, as the database undoes their batches (writer
 * thread).
 */
void pending_txn_begin(struct store_pending *p);
void pending_txn_undo(struct store_pending *p);
/* Forgets the points before `before` (in blocks for a while) and the series left empty (writer thread). */
void pending_prune(struct store_pending *p, double before);
/* The store's pending points of a kind, and its flushed mark as the writer last set it (writer thread). */
struct store_pending *store_pending_of(struct store *st, enum pending_kind kind);
double *store_pending_mark(struct store *st, enum pending_kind kind);
/* store_samples.c: writes the sampler's pending points at or after its mark as a staged batch (an apply function). */
int store_samples_stage_pending(struct store_conn *c, void *st);

/*
 * store_batches.c: the reported batches staged until their points are in
 * blocks (sql/018).  store_batch_stage writes the points of s not skipped
 * (at least one) as one row; store_batches_replay adds every staged point
 * at or after mark to p (the store's opening); store_batches_flushed moves
 * the reported mark to mark and deletes the batches wholly before it.
 */
int store_batch_stage(struct store_conn *c, const struct sample *s, size_t n, const bool *skip);
/*
 * Calls fn with each series' points of a staged batch's blob, in the order
 * sent (the samples' strings last until fn returns).  0; -1 when the blob
 * does not decode (after fn had the runs before the damage); fn's result
 * when it is not 0.
 */
typedef int store_batch_run_fn(const struct sample *s, size_t n, void *arg);
int store_batch_decode(const unsigned char *b, size_t len, store_batch_run_fn *fn, void *arg);
int store_batches_replay(struct store_conn *c, struct store_pending *p, double mark);
int store_batches_flushed(struct store_conn *c, double mark);

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
/* The key of id's span of span_s seconds starting at t0 (series_minutes: an hour; series_times: a job's id). */
bool store_tier_key(int64_t id, int64_t t0, int64_t span_s, int64_t *key);

/*
 * store_times.c: one job's times of one span (series_times), shared by
 * its dense blocks, and the reference series (ref_id, -1: none) whose
 * values (ref: one a table time, NAN where it has none) predict the times'
 * spacing and may predict the other blocks' values.
 */
struct store_times {
	double *t;                 /* distinct, ascending */
	size_t n;
	int64_t ref_id;
	double *ref;               /* NULL when ref_id is -1 */
};
/* A dense series' points of the span (ascending), from which a table is built. */
struct store_times_member {
	int64_t series_id;
	const double *t, *v;
	size_t n;
};
/* Reads and decodes the table of job_id's span at t0; STORE_ENOTFOUND when there is none or it does not decode. */
int store_times_read(struct store_conn *c, int64_t job_id, int64_t t0, struct store_times *tt);
void store_times_free(struct store_times *tt);
/* The table of the members' times and its reference; STORE_ENOTFOUND when it does not pay (fewer than two). */
int store_times_build(const struct store_times_member *m, size_t nm, struct store_times *tt);
int store_times_write(struct store_conn *c, int64_t job_id, int64_t t0, const struct store_times *tt);
int store_times_delete(struct store_conn *c, int64_t job_id, int64_t t0);
/*
 * Decodes a block of series_raw of job_id's span at t0, reading the span's
 * time table and reference when its times are over it.  STORE_ENOTFOUND
 * when it does not decode.
 */
struct series_cols;
int store_raw_decode(struct store_conn *c, int64_t job_id, int64_t t0, const unsigned char *buf, size_t len,
		     struct series_cols *out);
/* store_tiers.c: a block of series_minutes as summaries into a malloc'd *out; -1 when it does not decode. */
struct series_summary;
int store_minutes_decode(const unsigned char *buf, size_t len, struct series_summary **out, size_t *n);
/*
 * store_tiers.c: the bytes of the database's pages in use now (before the
 * upkeep's flush), then the tiers' retention and the budget after it.
 */
int store_tiers_live(struct store_conn *c, int64_t *live);
int store_tiers_upkeep(struct store *st, struct store_conn *c, double now, int64_t live_before);
/* store_tiers.c: the WAL's bound for a budget (bytes; journal_size_limit and the autocheckpoint). */
int64_t store_wal_limit(int64_t budget);

/* store.c: the limits in force (any thread), the database's path. */
void store_limits_get(struct store *st, struct store_limits *l);
const char *store_path(struct store *st);

/*
 * What the writer has seen of the budget across upkeeps (store_tiers.c
 * keeps it, store.c acts on its flags between and after batches).  Writer
 * thread only.
 */
struct store_budget_seen {
	int64_t wal_peak;          /* the WAL's largest size right after an upkeep's commit */
	int64_t growth_peak;       /* the most one upkeep's flush added to the pages in use */
	bool checkpoint_due;       /* after this batch's commit: note the WAL's size, then truncate it */
	bool vacuum_due;           /* after this batch: VACUUM (a file without auto_vacuum over the budget) */
	bool vacuum_failed;        /* it failed once: not tried again until a restart */
	bool short_logged;         /* the budget was found too small, said once */
};
struct store_budget_seen *store_budget_of(struct store *st);
/* store.c: runs a pragma whose one integer argument fmt (a static format) takes. */
int store_exec_pragma(struct store_conn *c, const char *fmt, long long arg);

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
