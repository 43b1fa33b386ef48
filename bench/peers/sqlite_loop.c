/*
 * The storage ceiling for the ingest benchmark: one thread inserting the
 * rows of rows.h into dlprofd's samples table with one prepared statement,
 * WAL mode and synchronous=NORMAL as dlprofd's writer uses, one transaction
 * per batch.  No HTTP, no JSON, no queue: what SQLite itself can take on
 * this disk.  --schema applies SQL files first (bench/run passes dlprofd's
 * own migrations, sql/0*.sql, so the table has the daemon's indexes);
 * without it the table of the first migration is created.
 *
 *   sqlite_loop --db PATH [--schema FILE]... [--batch 1000] [--seconds 5]
 *
 * Prints one JSON object: rows, seconds, rows_per_s, batch.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rows.h"

static const char pragmas[] = "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;";
static const char schema[] =
	"CREATE TABLE IF NOT EXISTS samples (job_id INTEGER NOT NULL, t REAL NOT NULL, name TEXT NOT NULL,"
	" value REAL NOT NULL, phase TEXT);"
	"CREATE INDEX IF NOT EXISTS samples_job_name_t ON samples(job_id, name, t);";

/* Runs the SQL of one file. */
static int apply_file(sqlite3 *db, const char *path)
{
	FILE *f = fopen(path, "r");
	char *sql = NULL, *err = NULL;
	long len;
	int rc = -1;

	if (!f || fseek(f, 0, SEEK_END) < 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0 ||
	    !(sql = calloc(1, (size_t)len + 1)) || fread(sql, 1, (size_t)len, f) != (size_t)len) {
		fprintf(stderr, "sqlite_loop: cannot read %s\n", path);
		goto done;
	}
	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "sqlite_loop: %s: %s\n", path, err ? err : "?");
		goto done;
	}
	rc = 0;
done:
	sqlite3_free(err);
	free(sql);
	if (f)
		fclose(f);
	return rc;
}

static double now_s(int clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int insert_batch(sqlite3 *db, sqlite3_stmt *ins, size_t batch, double t0, long long job)
{
	if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return -1;
	for (size_t i = 0; i < batch; i++) {
		struct bench_row r = bench_row(i, t0);
		sqlite3_reset(ins);
		sqlite3_bind_int64(ins, 1, job);
		sqlite3_bind_double(ins, 2, r.t);
		sqlite3_bind_text(ins, 3, r.name, -1, SQLITE_STATIC);
		sqlite3_bind_double(ins, 4, r.value);
		if (r.phase)
			sqlite3_bind_text(ins, 5, r.phase, -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(ins, 5);
		if (sqlite3_step(ins) != SQLITE_DONE)
			return -1;
	}
	return sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

int main(int argc, char **argv)
{
	const char *path = NULL, *schemas[16];
	int nschemas = 0;
	size_t batch = 1000;
	double seconds = 5, start, wall, cpu0;
	long long rows = 0, n = 0;
	sqlite3 *db = NULL;
	sqlite3_stmt *ins = NULL;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--db") == 0)
			path = argv[i + 1];
		else if (strcmp(argv[i], "--schema") == 0 && nschemas < 16)
			schemas[nschemas++] = argv[i + 1];
		else if (strcmp(argv[i], "--batch") == 0)
			batch = (size_t)atol(argv[i + 1]);
		else if (strcmp(argv[i], "--seconds") == 0)
			seconds = atof(argv[i + 1]);
	}
	if (!path || batch == 0) {
		fprintf(stderr, "usage: sqlite_loop --db PATH [--schema FILE]... [--batch N] [--seconds S]\n");
		return 2;
	}
	if (sqlite3_open(path, &db) != SQLITE_OK || sqlite3_exec(db, pragmas, NULL, NULL, NULL) != SQLITE_OK) {
		fprintf(stderr, "sqlite_loop: %s: %s\n", path, db ? sqlite3_errmsg(db) : "cannot open");
		goto fail;
	}
	for (int i = 0; i < nschemas; i++)
		if (apply_file(db, schemas[i]) < 0)
			goto fail;
	if ((nschemas == 0 && sqlite3_exec(db, schema, NULL, NULL, NULL) != SQLITE_OK) ||
	    sqlite3_prepare_v3(db, "INSERT INTO samples (job_id, t, name, value, phase) VALUES (?1, ?2, ?3, ?4, ?5)",
			       -1, SQLITE_PREPARE_PERSISTENT, &ins, NULL) != SQLITE_OK) {
		fprintf(stderr, "sqlite_loop: %s: %s\n", path, db ? sqlite3_errmsg(db) : "cannot open");
		goto fail;
	}
	start = now_s(CLOCK_MONOTONIC);
	cpu0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
	do {
		/* Four clients' jobs in turn, as the HTTP generator sends them. */
		if (insert_batch(db, ins, batch, (double)time(NULL) - 60, 1 + n % 4) < 0) {
			fprintf(stderr, "sqlite_loop: %s\n", sqlite3_errmsg(db));
			goto fail;
		}
		rows += (long long)batch;
		n++;
	} while ((wall = now_s(CLOCK_MONOTONIC) - start) < seconds);
	printf("{\"batch\":%zu,\"rows\":%lld,\"seconds\":%.3f,\"cpu_s\":%.3f,\"rows_per_s\":%.0f}\n", batch, rows,
	       wall, now_s(CLOCK_PROCESS_CPUTIME_ID) - cpu0, (double)rows / wall);
	sqlite3_finalize(ins);
	sqlite3_close(db);
	return 0;
fail:
	sqlite3_finalize(ins);
	sqlite3_close(db);
	return 1;
}
