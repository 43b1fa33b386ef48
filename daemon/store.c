/*
 * The store's core: opening and checking the database file, migrations,
 * the writer thread with its bounded queue and batched transactions, the
 * pool of read connections and the prepared-statement cache.  The tables'
 * own reads and writes live in store_jobs.c, store_samples.c and friends.
 */
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc_watch.h"
#include "array.h"
#include "invariant.h"
#include "log.h"
#include "migrations.h"
#include "store_internal.h"

/* "dlpf": marks a file as ours, so a foreign SQLite database is never migrated. */
#define STORE_APPLICATION_ID 0x646c7066
#define STORE_BATCH_MAX 512

struct store_op {
	store_apply_fn fn;
	void *arg;
	void (*free_arg)(void *);   /* posted ops: the writer frees; NULL for waited ops */
	int result;
	bool done;
	struct store_op *next;
};

struct store {
	char *path;
	struct store_conn writer;       /* owned by the writer thread after start */
	pthread_t thread;
	bool thread_started;

	pthread_mutex_t lock;           /* guards everything below up to readers */
	pthread_cond_t work;            /* the writer waits for ops */
	pthread_cond_t done;            /* callers wait for their op */
	struct store_op *head, *tail;
	size_t depth, limit;
	bool stopping;
	int write_status;               /* STORE_OK or the last batch's failure */
	char write_error[256];
	bool synchronous_full;          /* fsync each commit: the writer's pragmas */

	pthread_mutex_t rlock;          /* guards the reader pool */
	pthread_cond_t rfree;
	struct store_conn *readers;
	bool *reader_busy;
	int nreaders;

	atomic_ulong jobs_generation;   /* bumped by each committed change of the running jobs */
	atomic_ulong generation;        /* bumped by each committed batch of writes */

	struct store_pending *pending[PENDING_KINDS]; /* the points not yet in blocks (each its own lock) */
	double pending_mark[PENDING_KINDS];           /* writer thread: each kind's flushed mark as it last set it */

	struct store_limits limits;     /* under lock: the tiers' limits and the budget in force */
	int64_t wal_limit;              /* writer thread: the WAL bound last set on its connection */
	struct store_budget_seen budget;/* writer thread: what the upkeeps saw of the budget */
};

static const char sql_savepoint[] = "SAVEPOINT op";
static const char sql_release[] = "RELEASE op";
static const char sql_rollback_to[] = "ROLLBACK TO op";
static const char sql_begin[] = "BEGIN IMMEDIATE";
static const char sql_commit[] = "COMMIT";
static const char sql_read_begin[] = "BEGIN";   /* deferred: the first read takes the snapshot */
static const char sql_marks[] = "SELECT (SELECT t FROM sampler_flushed), (SELECT t FROM reported_flushed)";
static const char sql_pragmas_normal[] =
	"PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;";
static const char sql_pragmas_full[] =
	"PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;";
/*
 * Each reader's page cache: 512 KiB, not SQLite's default 2 MB.  A reader's
 * cache only lives as long as the database does not change (the writer
 * commits every second or more often), so a larger one buys few hits, but
 * four readers each filling 2 MB during a burst of series reads showed as
 * several MB of RSS coming and going.  The writer keeps the default: its
 * cache holds the hot index pages that every insert touches.
 */
static const char sql_pragmas_reader[] = "PRAGMA cache_size=-512;";
static const char sql_auto_vacuum_incremental[] = "PRAGMA auto_vacuum=INCREMENTAL";
static const char sql_vacuum[] = "PRAGMA auto_vacuum=INCREMENTAL; VACUUM";
static const char sql_journal_limit_fmt[] = "PRAGMA journal_size_limit=%lld";

const char *store_strerror(int err)
{
	switch (err) {
	case STORE_OK: return "ok";
	case STORE_ENOTFOUND: return "not found";
	case STORE_EBUSY: return "write queue full";
	case STORE_EIO: return "database cannot be written";
	case STORE_ECLOSED: return "store is shutting down";
	case STORE_EINVAL: return "rejected by a constraint";
	case STORE_EFULL: return "the disk is full";
	case STORE_EREADONLY: return "the database is read-only";
	case STORE_EMOVED: return "the database file was removed or replaced";
	}
	return "unknown store error";
}

int store_schema_version(void)
{
	int v = 0;
	for (const struct migration *m = migrations; m->version; m++)
		v = m->version;
	return v;
}

int store_fail(struct store_conn *c, int rc, const char *what)
{
	int primary = rc & 0xff;

	if (!c->quiet)
		log_warnx("store: %s: %s (%s)", what, sqlite3_errmsg(c->db), sqlite3_errstr(rc));
	if (primary == SQLITE_CONSTRAINT)
		return STORE_EINVAL;
	if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED)
		return STORE_EBUSY;
	if (primary == SQLITE_FULL)
		return STORE_EFULL;
	if (primary == SQLITE_READONLY)
		return STORE_EREADONLY;
	return STORE_EIO;
}

sqlite3_stmt *store_stmt(struct store_conn *c, const char *sql)
{
	sqlite3_stmt *s;
	int rc;

	for (int i = 0; i < c->ncache; i++) {
		if (c->cache[i].sql == sql) {
			sqlite3_reset(c->cache[i].stmt);
			sqlite3_clear_bindings(c->cache[i].stmt);
			return c->cache[i].stmt;
		}
	}
	rc = sqlite3_prepare_v3(c->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, NULL);
	if (rc != SQLITE_OK) {
		store_fail(c, rc, "prepare");
		return NULL;
	}
	if (c->ncache == STORE_STMT_CACHE) {
		/* Full: statements stay correct, only uncached; a build-time mistake. */
		log_warnx("%s: statement cache full", __func__);
		sqlite3_finalize(c->cache[0].stmt);
		memmove(&c->cache[0], &c->cache[1], sizeof(c->cache[0]) * (STORE_STMT_CACHE - 1));
		c->ncache--;
	}
	c->cache[c->ncache].sql = sql;
	c->cache[c->ncache].stmt = s;
	c->ncache++;
	return s;
}

sqlite3_stmt *store_stmt_id(struct store_conn *c, const char *sql, int64_t id)
{
	sqlite3_stmt *s = store_stmt(c, sql);

	if (s)
		sqlite3_bind_int64(s, 1, id);
	return s;
}

int store_step(struct store_conn *c, sqlite3_stmt *s, const char *what)
{
	int rc = sqlite3_step(s);

	return rc == SQLITE_DONE || rc == SQLITE_ROW ? STORE_OK : store_fail(c, rc, what);
}

/* Steps s (NULL: it could not be prepared) once as a statement that returns no rows, and resets it. */
static int run_bound(struct store_conn *c, sqlite3_stmt *s, const char *what)
{
	int rc;

	if (!s)
		return STORE_EIO;
	rc = sqlite3_step(s);
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? STORE_OK : store_fail(c, rc, what);
}

int store_run_id(struct store_conn *c, const char *sql, int64_t id, const char *what)
{
	return run_bound(c, store_stmt_id(c, sql, id), what);
}

int store_run_double(struct store_conn *c, const char *sql, double arg, const char *what)
{
	sqlite3_stmt *s = store_stmt(c, sql);

	if (s)
		sqlite3_bind_double(s, 1, arg);
	return run_bound(c, s, what);
}

int store_rows_read(struct store_conn *c, sqlite3_stmt *s, size_t size, store_row_into_fn *row, const char *what,
		    void **out, size_t *n)
{
	char *v = NULL, *nv;
	size_t cap = 0, cnt = 0;
	int rc = SQLITE_DONE, r = s ? STORE_OK : STORE_EIO;

	while (r == STORE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (cnt == cap) {
			if (!(nv = array_grow(v, &cap, cnt + 1, size))) {
				r = STORE_EIO;
				break;
			}
			v = nv;
		}
		assert(cnt < cap);
		row(s, v + cnt++ * size);
	}
	if (r == STORE_OK && rc != SQLITE_DONE)
		r = store_fail(c, rc, what);
	if (s)
		sqlite3_reset(s);
	if (r != STORE_OK) {
		free(v);
		return r;
	}
	*out = v;
	*n = cnt;
	return STORE_OK;
}

/* Ends every statement's step, so none holds a read open past its operation (or a reader's COMMIT). */
static void store_conn_reset(struct store_conn *c)
{
	for (int i = 0; i < c->ncache; i++)
		sqlite3_reset(c->cache[i].stmt);
}

static void store_conn_close(struct store_conn *c)
{
	for (int i = 0; i < c->ncache; i++)
		sqlite3_finalize(c->cache[i].stmt);
	c->ncache = 0;
	if (c->db)
		sqlite3_close(c->db);
	c->db = NULL;
}

static int store_exec(struct store_conn *c, const char *sql)
{
	sqlite3_stmt *s = store_stmt(c, sql);
	int rc;

	if (!s)
		return STORE_EIO;
	rc = sqlite3_step(s);
	sqlite3_reset(s);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return store_fail(c, rc, sql);
	return STORE_OK;
}

const char *store_col_str(sqlite3_stmt *s, int col)
{
	const unsigned char *t = sqlite3_column_text(s, col);

	return t != NULL ? (const char *)t : "";
}

json_t *store_col_text(sqlite3_stmt *s, int col)
{
	const unsigned char *t = sqlite3_column_text(s, col);
	return t ? json_string((const char *)t) : json_null();
}

json_t *store_col_json(sqlite3_stmt *s, int col)
{
	const unsigned char *t = sqlite3_column_text(s, col);
	json_t *v;

	if (!t)
		return json_null();
	v = json_loads((const char *)t, JSON_DECODE_ANY, NULL);
	return v ? v : json_null();
}

json_t *store_col_real(sqlite3_stmt *s, int col)
{
	if (sqlite3_column_type(s, col) == SQLITE_NULL)
		return json_null();
	return json_real(sqlite3_column_double(s, col));
}

/* ---- opening and migrations ---- */

/* A non-empty file that does not start with SQLite's header is not ours to touch. */
static int store_check_file(const char *path)
{
	static const char magic[16] = "SQLite format 3";
	char head[16];
	struct stat sb;
	ssize_t n;
	int fd;

	if (stat(path, &sb) < 0)
		return errno == ENOENT ? 0 : (log_warn("store: %s", path), -1);
	if (!S_ISREG(sb.st_mode)) {
		log_warnx("store: %s: not a regular file", path);
		return -1;
	}
	if (sb.st_size == 0)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		log_warn("store: %s", path);
		return -1;
	}
	n = read(fd, head, sizeof(head));
	close(fd);
	if (n != (ssize_t)sizeof(head) || memcmp(head, magic, sizeof(magic)) != 0) {
		log_warnx("store: %s is not an SQLite database; refusing to touch it "
			  "(move it away or point --db elsewhere)", path);
		return -1;
	}
	return 0;
}

static int store_pragma_int(struct store_conn *c, const char *sql, int *out)
{
	sqlite3_stmt *s;
	int rc = sqlite3_prepare_v2(c->db, sql, -1, &s, NULL);

	if (rc != SQLITE_OK)
		return store_fail(c, rc, sql);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_fail(c, rc, sql);
	return STORE_OK;
}

/*
 * Reads every page of an existing database once (PRAGMA quick_check) before
 * anything is written: a corrupt file is refused as it is, never
 * "repaired" by a write or a checkpoint.  Costs a pass over the file at
 * start only.
 */
static int store_check_pages(struct store_conn *c, const char *path)
{
	sqlite3_stmt *s;
	int rc = sqlite3_prepare_v2(c->db, "PRAGMA quick_check(1)", -1, &s, NULL);
	char first[200] = "";

	if (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW && sqlite3_column_text(s, 0))
		snprintf(first, sizeof(first), "%s", (const char *)sqlite3_column_text(s, 0));
	if (rc != SQLITE_ROW)
		snprintf(first, sizeof(first), "%s", sqlite3_errmsg(c->db));
	sqlite3_finalize(s);
	if (strcmp(first, "ok") == 0)
		return 0;
	for (char *p = first; *p; p++)
		if (*p == '\n')
			*p = ' ';   /* one log line */
	log_warnx("store: %s is corrupt (%s); refusing to touch it: move it away or restore a copy", path, first);
	return -1;
}

/* Refuses foreign and corrupt files, and databases written by a newer dlprofd. */
static int store_check_identity(struct store_conn *c, const char *path, int *version)
{
	int app_id = 0, tables = 0;

	if (store_pragma_int(c, "PRAGMA user_version", version) != STORE_OK ||
	    store_pragma_int(c, "PRAGMA application_id", &app_id) != STORE_OK ||
	    store_pragma_int(c, "SELECT count(*) FROM sqlite_master", &tables) != STORE_OK) {
		log_warnx("store: %s: cannot read the database (corrupt?)", path);
		return -1;
	}
	if ((tables > 0 || *version > 0) && app_id != STORE_APPLICATION_ID) {
		log_warnx("store: %s is an SQLite database of another program; refusing to touch it", path);
		return -1;
	}
	if (*version > store_schema_version()) {
		log_warnx("store: %s has schema version %d, newer than this dlprofd's %d; "
			  "run a newer dlprofd or point --db elsewhere",
			  path, *version, store_schema_version());
		return -1;
	}
	return tables > 0 ? store_check_pages(c, path) : 0;
}

static int store_migrate(struct store_conn *c, int from)
{
	for (const struct migration *m = migrations; m->version; m++) {
		char pragma[96];
		char *err = NULL;

		if (m->version <= from)
			continue;
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d; PRAGMA application_id = %d;",
			 m->version, STORE_APPLICATION_ID);
		if (sqlite3_exec(c->db, "BEGIN", NULL, NULL, &err) != SQLITE_OK ||
		    sqlite3_exec(c->db, m->sql, NULL, NULL, &err) != SQLITE_OK ||
		    sqlite3_exec(c->db, pragma, NULL, NULL, &err) != SQLITE_OK ||
		    sqlite3_exec(c->db, "COMMIT", NULL, NULL, &err) != SQLITE_OK) {
			log_warnx("store: migration %s failed: %s", m->name, err ? err : "?");
			sqlite3_free(err);
			sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
			return -1;
		}
		log_info("store: applied migration %s", m->name);
	}
	return 0;
}

static int store_conn_open(struct store_conn *c, const char *path, bool readonly)
{
	const char *pragmas = sql_pragmas_reader;
	int flags = (readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
		    SQLITE_OPEN_NOMUTEX;
	int rc = sqlite3_open_v2(path, &c->db, flags, NULL);

	if (rc != SQLITE_OK) {
		log_warnx("store: %s: %s", path, c->db ? sqlite3_errmsg(c->db) : sqlite3_errstr(rc));
		return -1;
	}
	sqlite3_busy_timeout(c->db, 5000);
	sqlite3_extended_result_codes(c->db, 1);
	if (readonly && sqlite3_exec(c->db, pragmas, NULL, NULL, NULL) != SQLITE_OK) {
		log_warnx("store: %s: %s", path, sqlite3_errmsg(c->db));
		return -1;
	}
	return 0;
}

static int store_setup_writer(struct store *st, const struct store_options *opt)
{
	char *err = NULL;
	int version = 0, tables = 0;

	const char *pragmas = opt->synchronous_full ? sql_pragmas_full : sql_pragmas_normal;

	st->synchronous_full = opt->synchronous_full;
	if (store_conn_open(&st->writer, st->path, false) < 0 ||
	    store_check_identity(&st->writer, st->path, &version) < 0 ||
	    store_pragma_int(&st->writer, "SELECT count(*) FROM sqlite_master", &tables) != STORE_OK)
		return -1;
	/* A new file can give free pages back (store_tiers.c); only before its first table can it be told so. */
	if (tables == 0 && sqlite3_exec(st->writer.db, sql_auto_vacuum_incremental, NULL, NULL, &err) != SQLITE_OK) {
		log_warnx("store: %s: %s", st->path, err ? err : "?");
		sqlite3_free(err);
		return -1;
	}
	if (sqlite3_exec(st->writer.db, pragmas, NULL, NULL, &err) != SQLITE_OK) {
		log_warnx("store: %s: %s", st->path, err ? err : "?");
		sqlite3_free(err);
		return -1;
	}
	return store_migrate(&st->writer, version);
}

static void *store_writer_main(void *arg);

int store_exec_pragma(struct store_conn *c, const char *fmt, long long arg)
{
	char sql[128];
	int rc;

	snprintf(sql, sizeof(sql), fmt, arg);
	rc = sqlite3_exec(c->db, sql, NULL, NULL, NULL);
	return rc == SQLITE_OK ? STORE_OK : store_fail(c, rc, sql);
}

/*
 * Bounds the WAL for the budget in force (writer thread): checkpoints at
 * that many bytes, and a WAL that grew past them is cut back to them after
 * one.  SQLite's default (1,000 pages) stays the most.
 */
static int store_wal_bound(struct store *st)
{
	struct store_limits l;
	int64_t bytes;

	store_limits_get(st, &l);
	bytes = l.budget > 0 ? store_wal_limit(l.budget) : 4096000;
	if (bytes == st->wal_limit)
		return 0;
	if (sqlite3_wal_autocheckpoint(st->writer.db, (int)(bytes / 4096)) != SQLITE_OK ||
	    store_exec_pragma(&st->writer, sql_journal_limit_fmt, (long long)bytes) != STORE_OK)
		return -1;
	st->wal_limit = bytes;
	return 0;
}

void store_limits_get(struct store *st, struct store_limits *l)
{
	pthread_mutex_lock(&st->lock);
	*l = st->limits;
	pthread_mutex_unlock(&st->lock);
}

void store_set_limits(struct store *st, const struct store_limits *l)
{
	pthread_mutex_lock(&st->lock);
	st->limits = *l;
	pthread_mutex_unlock(&st->lock);
}

const char *store_path(struct store *st)
{
	return st->path;
}

struct store_budget_seen *store_budget_of(struct store *st)
{
	return &st->budget;
}

/*
 * After an upkeep's commit: its WAL frames are noted (the budget leaves
 * room for them), and a WAL grown past its bound (the upkeep's own
 * transaction, a flush of many staged rows) is written into the database
 * and cut to nothing, so that the files between upkeeps are the database
 * and a WAL within its bound.  Readers in the way are waited for briefly;
 * failing, the next upkeep tries.
 */
static void store_wal_truncate(struct store *st)
{
	struct stat sb;
	char wal[1100];

	st->budget.checkpoint_due = false;
	snprintf(wal, sizeof(wal), "%s-wal", st->path);
	if (stat(wal, &sb) < 0)
		return;
	if ((int64_t)sb.st_size > st->budget.wal_peak)
		st->budget.wal_peak = (int64_t)sb.st_size;
	if ((int64_t)sb.st_size <= st->wal_limit)
		return;
	sqlite3_busy_timeout(st->writer.db, 100);
	sqlite3_wal_checkpoint_v2(st->writer.db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
	sqlite3_busy_timeout(st->writer.db, 5000);
}

/*
 * A database that cannot give free pages back (made before auto_vacuum was
 * set, sql/016) and whose file is over the budget is rebuilt once, as one
 * that can.  Runs between batches, outside any transaction; needs room for
 * a copy of the pages in use.  On failure the file keeps its size and its
 * free pages are reused.
 */
static void store_vacuum(struct store *st)
{
	char *err = NULL;

	st->budget.vacuum_due = false;
	log_info("store: %s: rebuilding the file (VACUUM) so that it can shrink to the storage budget", st->path);
	if (sqlite3_exec(st->writer.db, sql_vacuum, NULL, NULL, &err) != SQLITE_OK) {
		log_warnx("store: %s: VACUUM failed: %s; the file keeps its size until a restart tries again", st->path,
			  err ? err : "?");
		sqlite3_free(err);
		st->budget.vacuum_failed = true;
		return;
	}
	log_info("store: %s rebuilt", st->path);
}

/*
 * The flushed marks (sql/011, 018), and the staged reported batches read
 * back into memory, before the writer starts.
 */
static int store_read_pending(struct store *st)
{
	sqlite3_stmt *s = store_stmt(&st->writer, sql_marks);
	int rc;

	if (s == NULL)
		return -1;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL && sqlite3_column_type(s, 1) != SQLITE_NULL) {
		st->pending_mark[PENDING_SAMPLER] = sqlite3_column_double(s, 0);
		st->pending_mark[PENDING_REPORTED] = sqlite3_column_double(s, 1);
	} else if (rc == SQLITE_ROW) {
		rc = SQLITE_CORRUPT;
	}
	sqlite3_reset(s);
	if (rc != SQLITE_ROW) {
		store_fail(&st->writer, rc == SQLITE_DONE ? SQLITE_CORRUPT : rc, "read the flushed marks");
		return -1;
	}
	return store_batches_replay(&st->writer, st->pending[PENDING_REPORTED], st->pending_mark[PENDING_REPORTED]) ==
			       STORE_OK
		       ? 0
		       : -1;
}

void store_jobs_changed(struct store *st)
{
	atomic_fetch_add(&st->jobs_generation, 1);
}

unsigned long store_jobs_generation(struct store *st)
{
	return atomic_load(&st->jobs_generation);
}

unsigned long store_generation(struct store *st)
{
	return atomic_load(&st->generation);
}

/*
 * SQLite counts every allocation under one process-wide mutex unless told
 * not to (SQLITE_DEFAULT_MEMSTATUS).  Nothing here reads those counts, and
 * with the HTTP threads reading at once that mutex was contended about
 * three times per GET /api/v1/jobs/{id} (futex calls from sqlite3Malloc and
 * sqlite3_free).  It can only be set before SQLite initialises, hence once,
 * from the first store_open.
 */
/*
 * SQLite's allocator as it was before sqlite_configure wrapped it.  Written
 * once, under pthread_once and before SQLite initialises, and only read
 * after: SQLite's allocator hooks take no context pointer.
 */
static sqlite3_mem_methods sqlite_mem;

/*
 * A failed allocation inside SQLite can surface as a NULL column a row
 * reader takes for a NULL value: it is counted for the calling thread, so
 * the request that met it answers 503 (alloc_watch.h).
 */
static void *sqlite_malloc_watched(int n)
{
	void *p = sqlite_mem.xMalloc(n);

	if (!p)
		alloc_watch_note();
	return p;
}

static void *sqlite_realloc_watched(void *old, int n)
{
	void *p = sqlite_mem.xRealloc(old, n);

	if (!p && n > 0)
		alloc_watch_note();
	return p;
}

static void sqlite_configure(void)
{
	int rc = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	sqlite3_mem_methods watched;

	if (rc != SQLITE_OK)
		log_debug("store: SQLite's memory statistics stay on: %s", sqlite3_errstr(rc));
	if (sqlite3_config(SQLITE_CONFIG_GETMALLOC, &sqlite_mem) != SQLITE_OK)
		return;
	watched = sqlite_mem;
	watched.xMalloc = sqlite_malloc_watched;
	watched.xRealloc = sqlite_realloc_watched;
	rc = sqlite3_config(SQLITE_CONFIG_MALLOC, &watched);
	if (rc != SQLITE_OK)
		log_debug("store: SQLite's allocation failures go uncounted: %s", sqlite3_errstr(rc));
}

struct store *store_open(const char *path, const struct store_options *opt)
{
	static pthread_once_t configured = PTHREAD_ONCE_INIT;
	struct store *st;

	pthread_once(&configured, sqlite_configure);
	if (store_check_file(path) < 0)
		return NULL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	pthread_mutex_init(&st->lock, NULL);
	pthread_cond_init(&st->work, NULL);
	pthread_cond_init(&st->done, NULL);
	pthread_mutex_init(&st->rlock, NULL);
	pthread_cond_init(&st->rfree, NULL);
	st->limit = opt->queue_limit ? opt->queue_limit : 4096;
	st->limits = opt->limits;
	st->path = strdup(path);
	st->pending[PENDING_SAMPLER] = pending_new();
	st->pending[PENDING_REPORTED] = pending_new();
	if (!st->path || !st->pending[PENDING_SAMPLER] || !st->pending[PENDING_REPORTED] ||
	    store_setup_writer(st, opt) < 0 || store_read_pending(st) < 0 ||
	    store_wal_bound(st) < 0)
		goto fail;

	st->nreaders = opt->readers > 0 ? opt->readers : 4;
	st->readers = calloc((size_t)st->nreaders, sizeof(*st->readers));
	st->reader_busy = calloc((size_t)st->nreaders, sizeof(*st->reader_busy));
	if (!st->readers || !st->reader_busy)
		goto fail;
	for (int i = 0; i < st->nreaders; i++) {
		int schema;
		/*
		 * One read now opens the WAL and its index, which SQLite does on
		 * first use: readers then keep working if the files vanish later.
		 */
		if (store_conn_open(&st->readers[i], path, true) < 0 ||
		    store_pragma_int(&st->readers[i], "PRAGMA schema_version", &schema) != STORE_OK)
			goto fail;
	}

	if (pthread_create(&st->thread, NULL, store_writer_main, st) != 0) {
		log_warnx("%s: cannot start the writer thread", __func__);
		goto fail;
	}
	st->thread_started = true;
	return st;
fail:
	store_close(st);
	return NULL;
}

void store_close(struct store *st)
{
	if (!st)
		return;
	/* The sampler's points still in memory are staged: a clean stop keeps them all (the jobs' are already). */
	if (st->thread_started && store_write(st, store_samples_stage_pending, st) != STORE_OK)
		log_warnx("%s: the sampler's unflushed points could not be staged; they are lost", __func__);
	if (st->thread_started) {
		pthread_mutex_lock(&st->lock);
		st->stopping = true;
		pthread_cond_signal(&st->work);
		pthread_mutex_unlock(&st->lock);
		pthread_join(st->thread, NULL);
	}
	store_conn_close(&st->writer);
	for (int i = 0; st->readers && i < st->nreaders; i++)
		store_conn_close(&st->readers[i]);
	free(st->readers);
	free(st->reader_busy);
	pthread_cond_destroy(&st->rfree);
	pthread_mutex_destroy(&st->rlock);
	pthread_cond_destroy(&st->done);
	pthread_cond_destroy(&st->work);
	pthread_mutex_destroy(&st->lock);
	for (int k = 0; k < PENDING_KINDS; k++)
		pending_free(st->pending[k]);
	free(st->path);
	free(st);
}

struct store_pending *store_pending_of(struct store *st, enum pending_kind kind)
{
	return st->pending[kind];
}

double *store_pending_mark(struct store *st, enum pending_kind kind)
{
	return &st->pending_mark[kind];
}

/* ---- the writer ---- */

static int store_run_op(struct store_conn *c, struct store_op *op)
{
	int r;

	if (store_exec(c, sql_savepoint) != STORE_OK)
		return STORE_EIO;
	r = op->fn(c, op->arg);
	if (r != STORE_OK)
		store_exec(c, sql_rollback_to);
	if (store_exec(c, sql_release) != STORE_OK)
		r = STORE_EIO;
	store_conn_reset(c);
	return r;
}

/*
 * Closes every connection and opens them again on the path: SQLite shares
 * one WAL index per file among a process's connections, so a writer opened
 * read-only, or a file recreated, is only left behind when all of them go.
 * Runs in the writer thread; takes every reader, waiting for those in use.
 */
static int store_reopen_all(struct store *st)
{
	int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
	const char *pragmas = st->synchronous_full ? sql_pragmas_full : sql_pragmas_normal;
	bool quiet = st->writer.quiet;
	int r = 0;

	pthread_mutex_lock(&st->rlock);
	for (int i = 0; i < st->nreaders; i++) {
		while (st->reader_busy[i])
			pthread_cond_wait(&st->rfree, &st->rlock);
		st->reader_busy[i] = true;
	}
	pthread_mutex_unlock(&st->rlock);

	for (int i = 0; i < st->nreaders; i++)
		store_conn_close(&st->readers[i]);
	store_conn_close(&st->writer);
	if (sqlite3_open_v2(st->path, &st->writer.db, flags, NULL) != SQLITE_OK ||
	    sqlite3_db_readonly(st->writer.db, "main") != 0 ||
	    sqlite3_exec(st->writer.db, pragmas, NULL, NULL, NULL) != SQLITE_OK)
		r = -1;
	sqlite3_busy_timeout(st->writer.db, 5000);
	sqlite3_extended_result_codes(st->writer.db, 1);
	st->writer.quiet = quiet;
	st->wal_limit = 0;      /* the new connection's WAL bound is set after the batch */
	for (int i = 0; i < st->nreaders; i++)
		if (store_conn_open(&st->readers[i], st->path, true) < 0)
			r = -1;

	pthread_mutex_lock(&st->rlock);
	for (int i = 0; i < st->nreaders; i++)
		st->reader_busy[i] = false;
	pthread_cond_broadcast(&st->rfree);
	pthread_mutex_unlock(&st->rlock);
	return r;
}

/*
 * The file was removed (its directory deleted, say) and the directory is
 * back: the open connection still holds every committed page, so it is
 * copied to a new file at the path, which becomes the database.
 */
static int store_recreate(struct store *st)
{
	sqlite3 *dest = NULL;
	sqlite3_backup *b;
	int rc = SQLITE_ERROR;

	if (sqlite3_open_v2(st->path, &dest, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    NULL) == SQLITE_OK &&
	    (b = sqlite3_backup_init(dest, "main", st->writer.db, "main"))) {
		sqlite3_backup_step(b, -1);
		rc = sqlite3_backup_finish(b);
	}
	sqlite3_close(dest);
	if (rc != SQLITE_OK || store_reopen_all(st) < 0)
		return -1;
	log_info("store: %s recreated from the open database", st->path);
	return 0;
}

/* Whether path's directory exists (mode W_OK: and is writable). */
static bool parent_dir_ok(const char *path, int mode)
{
	char dir[1024];
	char *slash;
	struct stat sb;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		return true;
	*slash = '\0';
	if (slash == dir)
		snprintf(dir, sizeof(dir), "/");
	return stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode) && (mode == F_OK || access(dir, mode) == 0);
}

/*
 * Before each batch: a file removed or replaced under the daemon would take
 * every later commit into an unlinked inode (acknowledged, then lost), and
 * a writer opened on a read-only file system stays read-only.  Recovers
 * when it can (the directory is back, the file system writable again);
 * otherwise returns the error with why set.
 */
static int store_writer_check(struct store *st, char *why, size_t why_len)
{
	int moved = 0;

	if (sqlite3_file_control(st->writer.db, "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK && moved) {
		if (!parent_dir_ok(st->path, F_OK) || store_recreate(st) < 0) {
			snprintf(why, why_len, "the database file %s was removed or replaced", st->path);
			return STORE_EMOVED;
		}
	}
	if (sqlite3_db_readonly(st->writer.db, "main") == 1 &&
	    (!parent_dir_ok(st->path, W_OK) || store_reopen_all(st) < 0)) {
		snprintf(why, why_len, "the database %s is read-only (read-only file system?)", st->path);
		return STORE_EREADONLY;
	}
	return STORE_OK;
}

/* Runs one batch in one transaction; every op gets its result. */
static void store_run_batch(struct store *st, struct store_op *batch)
{
	struct store_conn *c = &st->writer;
	double marks[PENDING_KINDS];
	char why[256] = "";
	int status;

	/* While writes fail, each retry's failure was reported already. */
	c->quiet = st->write_status != STORE_OK;
	status = store_writer_check(st, why, sizeof(why));
	/* The points in memory and their marks go with the transaction: a failed commit undoes them too. */
	for (int k = 0; k < PENDING_KINDS; k++) {
		marks[k] = st->pending_mark[k];
		pending_txn_begin(st->pending[k]);
	}

	if (status == STORE_OK)
		status = store_exec(c, sql_begin);
	for (struct store_op *op = batch; op; op = op->next)
		op->result = status == STORE_OK ? store_run_op(c, op) : status;
	if (status == STORE_OK) {
		status = store_exec(c, sql_commit);
		if (status != STORE_OK) {
			/* The reason, before ROLLBACK replaces the connection's message. */
			snprintf(why, sizeof(why), "%s", sqlite3_errmsg(c->db));
			sqlite3_exec(c->db, "ROLLBACK", NULL, NULL, NULL);
			for (struct store_op *op = batch; op; op = op->next)
				if (op->result == STORE_OK)
					op->result = status;
		}
	}
	if (status != STORE_OK)
		for (int k = 0; k < PENDING_KINDS; k++) {
			pending_txn_undo(st->pending[k]);
			st->pending_mark[k] = marks[k];
		}
	if (status != STORE_OK && why[0] == '\0')
		snprintf(why, sizeof(why), "%s", sqlite3_errmsg(c->db));
	if (st->budget.checkpoint_due)
		store_wal_truncate(st);

	/* Before the callers learn of it: a reader that sees the old number renders a view it will not keep. */
	if (status == STORE_OK)
		atomic_fetch_add(&st->generation, 1);
	pthread_mutex_lock(&st->lock);
	if (status != STORE_OK && st->write_status == STORE_OK)
		log_warnx("store: writes fail, retried with each new write: %s", why);
	else if (status == STORE_OK && st->write_status != STORE_OK)
		log_info("store: writes succeed again");
	if (status != STORE_OK)
		snprintf(st->write_error, sizeof(st->write_error), "%s", why);
	st->write_status = status;
	for (struct store_op *op = batch; op;) {
		struct store_op *next = op->next;
		if (op->free_arg) {
			op->free_arg(op->arg);
			free(op);
		} else {
			op->done = true;
		}
		op = next;
	}
	pthread_cond_broadcast(&st->done);
	pthread_mutex_unlock(&st->lock);
}

static void *store_writer_main(void *arg)
{
	struct store *st = arg;

	for (;;) {
		struct store_op *batch, *last;
		size_t n = 1;

		pthread_mutex_lock(&st->lock);
		while (!st->head && !st->stopping)
			pthread_cond_wait(&st->work, &st->lock);
		if (!st->head) {
			pthread_mutex_unlock(&st->lock);
			break;
		}
		batch = last = st->head;
		while (last->next && n < STORE_BATCH_MAX) {
			last = last->next;
			n++;
		}
		st->head = last->next;
		if (!st->head)
			st->tail = NULL;
		last->next = NULL;
		st->depth -= n;
		pthread_mutex_unlock(&st->lock);

		store_run_batch(st, batch);
		if (store_wal_bound(st) < 0)
			log_warnx("store: the WAL's bound for the storage budget could not be set");
		if (st->budget.vacuum_due)
			store_vacuum(st);
	}
	/* Leave a clean, small WAL behind on shutdown. */
	sqlite3_wal_checkpoint_v2(st->writer.db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
	return NULL;
}

/* Appends op under the lock; STORE_EBUSY when full, STORE_ECLOSED when stopping. */
static int store_enqueue_locked(struct store *st, struct store_op *op)
{
	assert(lock_held(&st->lock));
	assert(st->depth <= st->limit);
	if (st->stopping)
		return STORE_ECLOSED;
	if (st->depth >= st->limit)
		return STORE_EBUSY;
	op->next = NULL;
	if (st->tail)
		st->tail->next = op;
	else
		st->head = op;
	st->tail = op;
	st->depth++;
	pthread_cond_signal(&st->work);
	return STORE_OK;
}

int store_write(struct store *st, store_apply_fn fn, void *arg)
{
	struct store_op op = {.fn = fn, .arg = arg};
	int r;

	pthread_mutex_lock(&st->lock);
	r = store_enqueue_locked(st, &op);
	if (r == STORE_OK) {
		while (!op.done)
			pthread_cond_wait(&st->done, &st->lock);
		r = op.result;
	}
	pthread_mutex_unlock(&st->lock);
	return r;
}

int store_post(struct store *st, store_apply_fn fn, void *arg, void (*free_arg)(void *))
{
	struct store_op *op = calloc(1, sizeof(*op));
	int r;

	if (!op) {
		free_arg(arg);
		return STORE_EBUSY;
	}
	op->fn = fn;
	op->arg = arg;
	op->free_arg = free_arg;
	pthread_mutex_lock(&st->lock);
	r = store_enqueue_locked(st, op);
	pthread_mutex_unlock(&st->lock);
	if (r != STORE_OK) {
		free_arg(arg);
		free(op);
	}
	return r;
}

bool store_writable(struct store *st, char *why, size_t why_len)
{
	bool ok;

	pthread_mutex_lock(&st->lock);
	ok = st->write_status == STORE_OK;
	if (!ok && why)
		snprintf(why, why_len, "%s", st->write_error);
	pthread_mutex_unlock(&st->lock);
	return ok;
}

size_t store_queue_depth(struct store *st)
{
	size_t d;

	pthread_mutex_lock(&st->lock);
	d = st->depth;
	pthread_mutex_unlock(&st->lock);
	return d;
}

/* ---- readers ---- */

/*
 * A borrowed reader runs in one read transaction until it is given back:
 * the queries of one answer (a job's row, trials, phases and latest values)
 * see one snapshot, and take the WAL's read lock once.  In autocommit each
 * query took it anew, through the shared-memory mutex that all of the
 * process's connections to the file share: most of the ~3 contended futex
 * calls per GET /api/v1/jobs/{id}.
 */
struct store_conn *store_reader(struct store *st)
{
	struct store_conn *c = NULL;

	pthread_mutex_lock(&st->rlock);
	while (!c) {
		for (int i = 0; i < st->nreaders; i++) {
			if (!st->reader_busy[i]) {
				st->reader_busy[i] = true;
				c = &st->readers[i];
				break;
			}
		}
		if (!c)
			pthread_cond_wait(&st->rfree, &st->rlock);
	}
	pthread_mutex_unlock(&st->rlock);
	/* Failing, the reader still works, one snapshot per query; store_fail said why. */
	store_exec(c, sql_read_begin);
	return c;
}

void store_reader_done(struct store *st, struct store_conn *c)
{
	store_conn_reset(c);
	if (!sqlite3_get_autocommit(c->db))
		store_exec(c, sql_commit);
	pthread_mutex_lock(&st->rlock);
	st->reader_busy[c - st->readers] = false;
	pthread_cond_signal(&st->rfree);
	pthread_mutex_unlock(&st->rlock);
}
