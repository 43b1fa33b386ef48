/*
 * A recording of real jobs (bench/history/record.py: every series the
 * store held, sampled and reported, gzipped JSON lines) written through a
 * real store at its own times, as the daemon writes it (batches of
 * samples, the writer's upkeep), then what the store keeps of it, by tier:
 *
 *   reported points as sent (series_raw and the jobs' time tables,
 *     series_times), bytes a reported point, and by name;
 *   their per-second summaries (series_seconds), bytes a reported point;
 *   the sampled series' blocks (series_blocks), bytes a sampled point;
 *   the whole recording, sampled and reported, bytes a point: in blocks,
 *     and on disk (the database's pages in use, less an empty database's),
 *     with the raw window and once it has passed.
 *
 * Prints one JSON object.  Deterministic: the figures are the codec's and
 * SQLite's, not the machine's.
 *
 *   trace_store bench/history/trace-2026-11-27.jsonl.gz [--dir /tmp] [--keep]
 *
 * --keep leaves the database, and a copy of it as it was before the raw
 * window passed (.raw), for --dump and sqlite3.
 *   trace_store --dump DATABASE
 *
 * --dump writes what a stopped dlprofd's database holds, one JSON line per
 * series as record.py writes them (job, workload, name, phase, t, v),
 * every double as it is stored (%.17g): the REST API answers with 16
 * significant digits, which gives a clock's reading to the microsecond only
 * and half the floats a loss is reported as back as other doubles.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>
#include <sqlite3.h>

#include "series_codec.h"
#include "store.h"
#include "store_internal.h"
#include "store_series.h"

struct pt {
	int64_t job;               /* the recording's job id (0: the node) */
	int name;                  /* index into names */
	double t, v;
};

struct trace {
	struct pt *p;
	size_t n, cap;
	char (*names)[2][65];      /* name, phase */
	size_t nnames;
	int64_t *jobs;             /* recorded ids, and the store's for each */
	int64_t *ids;
	size_t njobs;
};

/* The sampler's names: a job's own reports (steps, phases, losses) are the rest. */
static int
sampled_name(const char *name, const char *phase)
{
	static const char *const prefixes[] = {"cpu.", "mem.", "sched.", "gpu.", "io.", "net.", "disk.", "load.",
					       "perf.", "papi.", "likwid.", "energy.", "rapl.", "proc."};

	if (phase[0] != '\0')
		return 0;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	return 0;
}

static int
load(const char *path, struct trace *tr)
{
	char cmd[1200];
	json_error_t err;
	json_t *line;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "gzip -dc '%s'", path);
	if ((f = popen(cmd, "r")) == NULL)
		return -1;
	while ((line = json_loadf(f, JSON_DISABLE_EOF_CHECK, &err)) != NULL) {
		const char *name = json_string_value(json_object_get(line, "name"));
		const char *phase = json_string_value(json_object_get(line, "phase"));
		json_t *t = json_object_get(line, "t"), *v = json_object_get(line, "v");
		int64_t job = json_integer_value(json_object_get(line, "job"));
		size_t k;

		if (name == NULL) {
			json_decref(line);
			continue;
		}
		tr->names = realloc(tr->names, (tr->nnames + 1) * sizeof(*tr->names));
		snprintf(tr->names[tr->nnames][0], 65, "%s", name);
		snprintf(tr->names[tr->nnames][1], 65, "%s", phase != NULL ? phase : "");
		for (k = 0; k < tr->njobs && tr->jobs[k] != job; k++)
			;
		if (k == tr->njobs) {
			tr->jobs = realloc(tr->jobs, (tr->njobs + 1) * sizeof(*tr->jobs));
			tr->ids = realloc(tr->ids, (tr->njobs + 1) * sizeof(*tr->ids));
			tr->jobs[tr->njobs] = job;
			tr->ids[tr->njobs++] = 0;
		}
		for (size_t i = 0; i < json_array_size(t); i++) {
			if (tr->n == tr->cap) {
				tr->cap = tr->cap ? 2 * tr->cap : 65536;
				tr->p = realloc(tr->p, tr->cap * sizeof(*tr->p));
			}
			tr->p[tr->n++] = (struct pt){job, (int)tr->nnames, json_number_value(json_array_get(t, i)),
						     json_number_value(json_array_get(v, i))};
		}
		tr->nnames++;
		json_decref(line);
	}
	pclose(f);
	return tr->n > 0 ? 0 : -1;
}

static int
cmp_pt(const void *a, const void *b)
{
	double x = ((const struct pt *)a)->t, y = ((const struct pt *)b)->t;

	return (x > y) - (x < y);
}

static int64_t
query(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *s;
	int64_t v = 0;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) {
		fprintf(stderr, "%s: %s\n", sql, sqlite3_errmsg(db));
		exit(1);
	}
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

/* The database's pages in use, in bytes (after a clean close: no WAL). */
static int64_t
pages_in_use(const char *path)
{
	sqlite3 *db;
	int64_t v;

	if (sqlite3_open(path, &db) != SQLITE_OK)
		exit(1);
	v = (query(db, "PRAGMA page_count") - query(db, "PRAGMA freelist_count")) * query(db, "PRAGMA page_size");
	sqlite3_close(db);
	return v;
}

/* Writes every point at its own time, in batches of at most 1000 in time order, and flushes them all. */
static struct store *
write_all(const char *path, struct trace *tr, double *t_end)
{
	static const struct store_options opts = {.queue_limit = 4096, .readers = 2};
	struct sample batch[1000];
	struct store *st = store_open(path, &opts);
	size_t nb = 0;

	if (st == NULL)
		exit(1);
	qsort(tr->p, tr->n, sizeof(*tr->p), cmp_pt);
	for (size_t k = 0; k < tr->njobs; k++) {
		struct job_spec spec = {.workload = "trace", .params_json = "{}", .hw_class = "bench",
					.objective = OBJECTIVE_THROUGHPUT, .source = "registered", .started = tr->p[0].t};

		if (tr->jobs[k] != 0 && store_job_register(st, &spec, &tr->ids[k]) != STORE_OK)
			exit(1);
	}
	for (size_t i = 0; i < tr->n; i++) {
		const struct pt *p = &tr->p[i];
		size_t k;

		for (k = 0; tr->jobs[k] != p->job; k++)
			;
		batch[nb++] = (struct sample){tr->ids[k], p->t, tr->names[p->name][0], p->v,
					      tr->names[p->name][1][0] ? tr->names[p->name][1] : NULL};
		if (nb == 1000 || i + 1 == tr->n) {
			if (store_samples_write(st, batch, nb) != STORE_OK)
				exit(1);
			nb = 0;
		}
	}
	*t_end = tr->p[tr->n - 1].t;
	/* Every span closed a span ago: all of it flushed. */
	if (store_series_maintain(st, *t_end + 2 * STORE_BLOCK_S, true) != STORE_OK)
		exit(1);
	return st;
}

/* Appends a decoded block's points (one column) to the line's arrays. */
static void
dump_block(const unsigned char *buf, size_t len, const double *table, const double *ref, size_t ntable, FILE *out,
	   int *first)
{
	struct series_cols c;

	if (series_decode_block(buf, len, table, ntable, ref, ref != NULL ? ntable : 0, &c) < 0 || c.ncols != 1) {
		fprintf(stderr, "a block does not decode; left out\n");
		return;
	}
	for (size_t i = 0; i < c.n; i++) {
		fprintf(out, "%s[%.17g,%.17g]", *first ? "" : ",", c.t[i], c.v[0][i]);
		*first = 0;
	}
	series_cols_free(&c);
}

/* The blob of sql bound to key, copied; NULL when there is none. */
static unsigned char *
dump_blob(sqlite3 *db, const char *sql, int64_t key, size_t *len, int64_t *ref_id)
{
	sqlite3_stmt *s;
	unsigned char *buf = NULL;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return NULL;
	sqlite3_bind_int64(s, 1, key);
	if (sqlite3_step(s) == SQLITE_ROW) {
		*len = (size_t)sqlite3_column_bytes(s, 0);
		buf = malloc(*len + 1);
		memcpy(buf, sqlite3_column_blob(s, 0), *len);
		if (ref_id != NULL)
			*ref_id = sqlite3_column_type(s, 1) == SQLITE_NULL ? -1 : sqlite3_column_int64(s, 1);
	}
	sqlite3_finalize(s);
	return buf;
}

/*
 * The job's time table of the span of key (series_times) decoded, with its
 * reference column over it (*ref, NULL when none), as the store reads them
 * (store_times.c); NULL when there is none.
 */
static double *
dump_table(sqlite3 *db, int64_t job, int64_t key, size_t *n, double **ref)
{
	int64_t span = key / 4294967296 * 4294967296, ref_id = -1;
	size_t len = 0, rlen = 0;
	unsigned char *buf = dump_blob(db, "SELECT data, ref FROM series_times WHERE key = ?1", span + job, &len, &ref_id);
	struct series_cols c;
	double *t = NULL;

	*ref = NULL;
	if (buf == NULL || series_block_points(buf, len, n) < 0) {
		free(buf);
		return NULL;
	}
	if (ref_id >= 0) {
		unsigned char *rb = dump_blob(db, "SELECT data FROM series_raw WHERE key = ?1", span + ref_id, &rlen, NULL);

		if (rb != NULL && series_decode_block(rb, rlen, NULL, 0, NULL, 0, &c) == 0) {
			*ref = malloc(*n * sizeof(**ref));
			for (size_t j = 0; j < *n; j++)
				(*ref)[j] = NAN;
			/* Times are table indices here; an index with several points has no reference. */
			for (size_t i = 0; i < c.n; i++) {
				size_t j = (size_t)c.t[i];
				int alone = (i == 0 || c.t[i - 1] != c.t[i]) && (i + 1 == c.n || c.t[i + 1] != c.t[i]);
				if (j < *n)
					(*ref)[j] = alone ? c.v[0][i] : NAN;
			}
			series_cols_free(&c);
		}
		free(rb);
	}
	if (series_decode_block(buf, len, NULL, 0, *ref, *ref != NULL ? *n : 0, &c) == 0)
		t = c.t;
	free(buf);
	return t;
}

struct dump_insert {
	sqlite3_stmt *ins;
	double mark;               /* the reported points before it are in blocks */
};

/* Inserts a staged batch's run of points at or after the reported mark into temp.staged. */
static int
dump_batch_run(const struct sample *x, size_t n, void *arg)
{
	const struct dump_insert *d = arg;

	for (size_t i = 0; i < n; i++) {
		if (!(x[i].t >= d->mark))
			continue;
		sqlite3_bind_int64(d->ins, 1, x[i].job_id);
		sqlite3_bind_text(d->ins, 2, x[i].name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(d->ins, 3, x[i].phase != NULL ? x[i].phase : "", -1, SQLITE_TRANSIENT);
		sqlite3_bind_double(d->ins, 4, x[i].t);
		sqlite3_bind_double(d->ins, 5, x[i].value);
		if (sqlite3_step(d->ins) != SQLITE_DONE)
			return -1;
		sqlite3_reset(d->ins);
	}
	return 0;
}

/*
 * The points not yet in blocks, as temp.staged (job_id, name, phase, t,
 * value): the staged rows, and the staged batches' points at or after the
 * reported mark (sql/018, where the database has it).  0 or -1.
 */
static int
dump_staged(sqlite3 *db)
{
	sqlite3_stmt *ins, *b;
	double mark;
	int r = 0;

	if (sqlite3_exec(db, "CREATE TEMP TABLE staged AS SELECT job_id, name, coalesce(phase, '') AS phase, t, value"
			     " FROM samples", NULL, NULL, NULL) != SQLITE_OK)
		return -1;
	if (query(db, "SELECT count(*) FROM sqlite_master WHERE name = 'reported_batches'") <= 0)
		return 0;
	mark = (double)query(db, "SELECT t FROM reported_flushed");
	if (sqlite3_prepare_v2(db, "INSERT INTO temp.staged VALUES (?1, ?2, ?3, ?4, ?5)", -1, &ins, NULL) !=
		    SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT data FROM reported_batches ORDER BY id", -1, &b, NULL) != SQLITE_OK)
		return -1;
	while (r == 0 && sqlite3_step(b) == SQLITE_ROW)
		r = store_batch_decode(sqlite3_column_blob(b, 0), (size_t)sqlite3_column_bytes(b, 0), dump_batch_run,
				       &(struct dump_insert){ins, mark});
	sqlite3_finalize(b);
	sqlite3_finalize(ins);
	return r;
}

/*
 * Every series of a stopped daemon's database as points [t, v] (blocks,
 * raw blocks over their time tables, staged rows and batches), sorted by
 * a JSON reader later: one line per series.
 */
static int
dump(const char *path)
{
	static const char sql_series[] =
		"SELECT k.job_id, coalesce(w.name, ''), k.name, k.phase, coalesce(se.id, -1) FROM"
		" (SELECT job_id, name, phase FROM series UNION SELECT job_id, name, phase FROM temp.staged) k"
		" LEFT JOIN series se ON se.job_id = k.job_id AND se.name = k.name AND se.phase = k.phase"
		" LEFT JOIN jobs j ON j.id = k.job_id LEFT JOIN workloads w ON w.id = j.workload_id ORDER BY 1, 3, 4";
	sqlite3 *db;
	sqlite3_stmt *s, *b;
	int has_raw;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		return 1;
	has_raw = query(db, "SELECT count(*) FROM sqlite_master WHERE name = 'series_raw'") > 0;
	if (dump_staged(db) < 0 || sqlite3_prepare_v2(db, sql_series, -1, &s, NULL) != SQLITE_OK)
		return 1;
	while (sqlite3_step(s) == SQLITE_ROW) {
		int64_t job = sqlite3_column_int64(s, 0), id = sqlite3_column_int64(s, 4);
		const char *phase = (const char *)sqlite3_column_text(s, 3);
		json_t *head = json_pack("{s:I,s:s,s:s,s:s}", "job", (json_int_t)job, "workload", sqlite3_column_text(s, 1),
					 "name", sqlite3_column_text(s, 2), "phase", phase);
		char *text = json_dumps(head, JSON_COMPACT | JSON_PRESERVE_ORDER);
		int first = 1;

		/* The head's fields, then the points as [t, v] pairs, split into t and v by the reader. */
		text[strlen(text) - 1] = '\0';
		printf("%s,\"p\":[", text);
		free(text);
		json_decref(head);
		for (int raw = 0; raw <= has_raw; raw++) {
			if (sqlite3_prepare_v2(db, raw ? "SELECT key, data FROM series_raw WHERE key % 4294967296 = ?1 ORDER BY key"
						       : "SELECT key, data FROM series_blocks WHERE key % 4294967296 = ?1 ORDER BY key",
					       -1, &b, NULL) != SQLITE_OK)
				return 1;
			sqlite3_bind_int64(b, 1, id);
			while (sqlite3_step(b) == SQLITE_ROW) {
				const unsigned char *buf = sqlite3_column_blob(b, 1);
				size_t len = (size_t)sqlite3_column_bytes(b, 1), ntable = 0;
				double *ref = NULL, *table = series_block_shared(buf, len)
								     ? dump_table(db, job, sqlite3_column_int64(b, 0), &ntable, &ref)
								     : NULL;

				dump_block(buf, len, table, ref, ntable, stdout, &first);
				free(table);
				free(ref);
			}
			sqlite3_finalize(b);
		}
		if (sqlite3_prepare_v2(db, "SELECT t, value FROM temp.staged WHERE job_id = ?1 AND name = ?2"
					   " AND phase = ?3 ORDER BY t", -1, &b, NULL) != SQLITE_OK)
			return 1;
		sqlite3_bind_int64(b, 1, job);
		sqlite3_bind_text(b, 2, (const char *)sqlite3_column_text(s, 2), -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(b, 3, phase, -1, SQLITE_TRANSIENT);
		while (sqlite3_step(b) == SQLITE_ROW) {
			printf("%s[%.17g,%.17g]", first ? "" : ",", sqlite3_column_double(b, 0), sqlite3_column_double(b, 1));
			first = 0;
		}
		sqlite3_finalize(b);
		printf("]}\n");
	}
	sqlite3_finalize(s);
	sqlite3_close(db);
	return 0;
}

int
main(int argc, char **argv)
{
	struct trace tr = {0};
	const char *dir = "/tmp";
	char path[512], empty_path[600];
	size_t reported = 0, sampled = 0;
	int64_t raw, times, seconds, blocks_sampled, blocks_reported, empty, disk_raw, disk_after;
	struct store *st;
	sqlite3 *db;
	sqlite3_stmt *s;
	double t_end;
	int keep = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s RECORDING.jsonl.gz [--dir DIR] [--keep] | --dump DATABASE\n", argv[0]);
		return 2;
	}
	if (strcmp(argv[1], "--dump") == 0 && argc == 3)
		return dump(argv[2]);
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
			dir = argv[++i];
		else if (strcmp(argv[i], "--keep") == 0)
			keep = 1;
	}
	if (load(argv[1], &tr) < 0) {
		fprintf(stderr, "%s: no points\n", argv[1]);
		return 2;
	}
	for (size_t i = 0; i < tr.n; i++) {
		if (sampled_name(tr.names[tr.p[i].name][0], tr.names[tr.p[i].name][1]))
			sampled++;
		else
			reported++;
	}
	snprintf(path, sizeof(path), "%s/trace-store-%d.db", dir, (int)getpid());
	snprintf(empty_path, sizeof(empty_path), "%s.empty", path);
	store_close(store_open(empty_path, &(struct store_options){.queue_limit = 16, .readers = 1}));
	empty = pages_in_use(empty_path);
	unlink(empty_path);
	st = write_all(path, &tr, &t_end);
	store_close(st);
	if (sqlite3_open(path, &db) != SQLITE_OK)
		return 1;
	raw = query(db, "SELECT coalesce(sum(length(data)), 0) FROM series_raw");
	times = query(db, "SELECT coalesce(sum(length(data)), 0) FROM series_times");
	seconds = query(db, "SELECT coalesce(sum(length(data)), 0) FROM series_seconds");
	blocks_sampled = query(db, "SELECT coalesce(sum(length(b.data)), 0) FROM series_blocks b JOIN series s"
				   " ON s.id = b.key % 4294967296 WHERE s.phase = '' AND (s.name GLOB 'cpu.*' OR"
				   " s.name GLOB 'mem.*' OR s.name GLOB 'sched.*' OR s.name GLOB 'load.*' OR"
				   " s.name GLOB 'perf.*' OR s.name GLOB 'gpu.*' OR s.name GLOB 'energy.*')");
	blocks_reported = query(db, "SELECT coalesce(sum(length(data)), 0) FROM series_blocks") - blocks_sampled;
	disk_raw = pages_in_use(path) - empty;
	if (keep) {
		/* The store with its raw window, as --dump reads it back, beside the one after it. */
		char cmd[1200];

		snprintf(cmd, sizeof(cmd), "cp '%s' '%s.raw'", path, path);
		if (system(cmd) != 0)
			return 1;
	}
	printf("{\"recording\": \"%s\", \"points\": %zu, \"reported_points\": %zu, \"sampled_points\": %zu,\n",
	       argv[1], tr.n, reported, sampled);
	printf(" \"reported_raw_bytes_per_point\": %.3f, \"of_which_time_tables\": %.3f,"
	       " \"reported_sparse_block_bytes_per_point\": %.3f,\n",
	       (double)(raw + times) / (double)reported, (double)times / (double)reported,
	       (double)blocks_reported / (double)reported);
	printf(" \"reported_seconds_bytes_per_point\": %.3f, \"sampled_block_bytes_per_point\": %.3f,\n",
	       (double)seconds / (double)reported, (double)blocks_sampled / (double)sampled);
	printf(" \"by_name_raw_bytes_per_point\": {");
	if (sqlite3_prepare_v2(db, "SELECT s.name, sum(length(r.data)) FROM series_raw r JOIN series s"
				   " ON s.id = r.key % 4294967296 GROUP BY s.name ORDER BY s.name", -1, &s, NULL) == SQLITE_OK) {
		int first = 1;
		while (sqlite3_step(s) == SQLITE_ROW) {
			const char *name = (const char *)sqlite3_column_text(s, 0);
			size_t n = 0;

			for (size_t i = 0; i < tr.n; i++)
				n += strcmp(tr.names[tr.p[i].name][0], name) == 0;
			printf("%s\"%s\": %.3f", first ? "" : ", ", name, n ? (double)sqlite3_column_int64(s, 1) / (double)n : 0);
			first = 0;
		}
		sqlite3_finalize(s);
	}
	printf("},\n");
	sqlite3_close(db);
	/* The raw window passed: the points as sent leave, their summaries stay. */
	st = store_open(path, &(struct store_options){.queue_limit = 16, .readers = 1,
						      .limits = {.raw_s = 1}});
	if (st == NULL || store_series_maintain(st, t_end + 3 * STORE_BLOCK_S, true) != STORE_OK)
		return 1;
	store_close(st);
	disk_after = pages_in_use(path) - empty;
	printf(" \"whole_block_bytes_per_point\": %.3f, \"whole_block_bytes_per_point_after_raw_window\": %.3f,\n",
	       (double)(raw + times + seconds + blocks_sampled + blocks_reported) / (double)tr.n,
	       (double)(seconds + blocks_sampled + blocks_reported) / (double)tr.n);
	printf(" \"whole_disk_bytes_per_point\": %.3f, \"whole_disk_bytes_per_point_after_raw_window\": %.3f}\n",
	       (double)disk_raw / (double)tr.n, (double)disk_after / (double)tr.n);
	if (keep)
		fprintf(stderr, "kept %s and %s.raw (before the raw window passed)\n", path, path);
	else
		unlink(path);
	return 0;
}
