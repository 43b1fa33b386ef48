/*
 * The per-second history's figures (bench/RESULTS.md, "history"): a
 * synthetic node of --jobs jobs of 8 threads sampled at 1 Hz for --hours,
 * through the daemon's own path (sample_window's rows, one posted batch a
 * tick, the writer's upkeep once a simulated minute), then
 *
 *   bytes on disk per stored point (the database file after a checkpoint,
 *     less the empty database's size, over the points stored),
 *   the writer's CPU per simulated second as a share of one core (what the
 *     daemon spends storing at 1 Hz),
 *   p99 of series queries: a 14-day span and a 1-hour span, 1000 points.
 *
 * Values are shaped like the collectors' (collectors/metrics.c): rates from
 * integer jiffies or counts over a jittered interval, kept at their
 * resolution as the collectors keep them (collector_resolved), byte counts
 * in pages, counts that step now and then, constants, counters; each drawn
 * uniformly over its range, the noisiest a series of that shape can be.
 * With --trace FILE (bench/history/record.py's recording of real PyTorch
 * jobs, gzipped JSON lines) the values are the recorded ones instead: the
 * node's series and each job's sampled series replayed in a loop, job
 * slot j going through the recorded jobs from the j-th on, one after
 * another, as one long job whose phases change.  --trace-kinds FILE prints
 * the recorded series' own cost by name (ten-minute blocks of what was
 * stored), the jobs' reported figures included.
 * Prints one JSON object.  A ratio bench: figures from one run compare
 * with each other, not with another machine's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "collector.h"
#include "sample_window.h"
#include "series_codec.h"
#include "store.h"
#include "store_series.h"

#define NODE_SERIES 20
#define JOB_SERIES 10
#define T0 1767225600.0   /* 2026-01-01 00:00 UTC */

static double
cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

static double
thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double
wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double
uniform(unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return (double)(*seed >> 8) / (double)(1u << 24);
}

struct gen {
	unsigned seed;
	double rss[64], busy[64];
};

/* One series' value at tick k: kind picks the shape (see the file's comment). */
static double
value(struct gen *g, int job, int kind, long k, double dt)
{
	double jiffies;

	switch (kind) {
	case 0:   /* cores used: jiffies over the measured interval */
		jiffies = floor(380 + 40 * uniform(&g->seed));
		return collector_resolved(jiffies / 100.0 / dt, 1 / (100.0 * dt));
	case 1:   /* the busiest thread's share */
		jiffies = floor(90 + 10 * uniform(&g->seed));
		return collector_resolved(jiffies / 100.0 / dt, 1 / (100.0 * dt));
	case 2:   /* threads: constant */
		return 8;
	case 3:   /* busy threads: steps now and then */
		if (uniform(&g->seed) < 0.05)
			g->busy[job] = floor(4 + 5 * uniform(&g->seed));
		return g->busy[job];
	case 4:   /* RSS in pages, growing now and then */
		if (uniform(&g->seed) < 0.1)
			g->rss[job] += 4096.0 * floor(256 * uniform(&g->seed));
		return g->rss[job];
	case 5:   /* context switches per second */
		return collector_resolved(floor(2000 + 500 * uniform(&g->seed)) / dt, 1 / dt);
	case 6:   /* processes: constant */
		return 1;
	case 7:   /* CPU time used, a counter in jiffies / 100 */
		return floor((double)k * 3.9 * 100) / 100.0;
	case 8:   /* GPU utilisation, whole percent */
		return floor(85 + 10 * uniform(&g->seed));
	default:  /* CPUs allowed: constant */
		return 32;
	}
}

/*
 * Each value shape alone (--kinds): bytes per point of a ten-minute block
 * at 1 Hz, every point kept (no repeat rule), the times on the tick grid.
 */
static void
kinds(void)
{
	static const char *const names[10] = {"rate (cores used)", "rate (busiest thread)", "constant",
					      "steps (busy threads)", "RSS in pages", "rate (switches/s)", "constant",
					      "counter (1/100 s)", "whole percent", "constant"};
	struct series_point p[STORE_BLOCK_S];
	struct gen g = {.seed = 7, .rss = {4096.0 * 500000}, .busy = {6}};
	unsigned char *buf;
	size_t len;

	printf("{");
	for (int kind = 0; kind < 10; kind++) {
		for (int i = 0; i < STORE_BLOCK_S; i++)
			p[i] = (struct series_point){T0 + i,
						     value(&g, 0, kind, i, 1.0 + (uniform(&g.seed) - 0.5) * 0.006)};
		if (series_encode(p, STORE_BLOCK_S, &buf, &len) < 0)
			return;
		printf("%s\"%s\": %.3f", kind ? ", " : "", names[kind], (double)len / STORE_BLOCK_S);
		free(buf);
	}
	printf("}\n");
}


/*
 * A recording (bench/history/record.py): per recorded job (0: the node)
 * its sampled series as values at each of its ticks, NAN where it was not
 * read (per-thread figures come every store_interval).  A recording is of
 * a dlprofd that stores every sampled value.
 */
struct trace_series {
	char name[65];
	double *v;                  /* one per tick of its job; NAN where it was not read */
};

struct trace_job {
	int64_t id;
	double t0, t1;              /* its first and last point's time */
	size_t nticks;
	struct trace_series *s;
	size_t ns;
};

struct trace {
	struct trace_job *job;      /* job[0]: the node */
	size_t njobs;
	size_t job_ticks;           /* the jobs' ticks, the node's left out: a job slot's loop */
};

/* The sampler's series: a job's own reports (steps, phases, losses) come in its batches instead. */
static int
sampled_name(const char *name, const char *phase)
{
	static const char *const prefixes[] = {"cpu.", "mem.", "sched.", "gpu.", "io.", "net.", "disk.", "load.",
					       "perf.", "papi.", "likwid.", "energy.", "rapl.", "proc."};

	if (phase != NULL && *phase != '\0')
		return 0;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	return 0;
}

static FILE *
open_gz(const char *path)
{
	char cmd[1200];

	snprintf(cmd, sizeof(cmd), "gzip -dc '%s'", path);
	return popen(cmd, "r");
}

static struct trace_job *
trace_job_of(struct trace *tr, int64_t id)
{
	for (size_t i = 0; i < tr->njobs; i++)
		if (tr->job[i].id == id)
			return &tr->job[i];
	tr->job = realloc(tr->job, (tr->njobs + 1) * sizeof(*tr->job));
	tr->job[tr->njobs] = (struct trace_job){.id = id};
	return &tr->job[tr->njobs++];
}

/* Reads the recording's sampled series onto whole-second ticks from each job's first point; -1 when unreadable. */
static int
trace_load(const char *path, struct trace *tr)
{
	FILE *f = open_gz(path);
	json_error_t err;
	json_t *line;

	memset(tr, 0, sizeof(*tr));
	if (f == NULL)
		return -1;
	trace_job_of(tr, 0);
	/* Two passes over the lines would need the file twice: keep the lines' points, then place them. */
	struct raw { int64_t job; char name[65]; json_t *t, *v; } *raw = NULL;
	size_t nraw = 0;
	while ((line = json_loadf(f, JSON_DISABLE_EOF_CHECK, &err)) != NULL) {
		const char *name = json_string_value(json_object_get(line, "name"));
		const char *phase = json_string_value(json_object_get(line, "phase"));
		json_t *t = json_object_get(line, "t");
		if (name != NULL && sampled_name(name, phase) && json_array_size(t) > 0) {
			raw = realloc(raw, (nraw + 1) * sizeof(*raw));
			raw[nraw].job = json_integer_value(json_object_get(line, "job"));
			snprintf(raw[nraw].name, sizeof(raw[nraw].name), "%s", name);
			raw[nraw].t = json_incref(t);
			raw[nraw].v = json_incref(json_object_get(line, "v"));
			nraw++;
		}
		json_decref(line);
	}
	pclose(f);
	/* Each job's first and last tick, over its series. */
	/* Each job's first and last time, over its series. */
	for (size_t i = 0; i < nraw; i++) {
		struct trace_job *j = trace_job_of(tr, raw[i].job);
		double t0 = json_number_value(json_array_get(raw[i].t, 0));
		double t1 = json_number_value(json_array_get(raw[i].t, json_array_size(raw[i].t) - 1));

		if (j->nticks == 0 || t0 < j->t0)
			j->t0 = t0;
		if (j->nticks == 0 || t1 > j->t1)
			j->t1 = t1;
		j->nticks = 1;
	}
	for (size_t ji = 0; ji < tr->njobs; ji++) {
		tr->job[ji].nticks = tr->job[ji].nticks ? (size_t)llround(tr->job[ji].t1 - tr->job[ji].t0) + 1 : 0;
		if (ji > 0)
			tr->job_ticks += tr->job[ji].nticks;
	}
	for (size_t i = 0; i < nraw; i++) {
		struct trace_job *j = trace_job_of(tr, raw[i].job);
		struct trace_series *s;
		size_t n = json_array_size(raw[i].t);
		double base = j->t0;

		j->s = realloc(j->s, (j->ns + 1) * sizeof(*j->s));
		s = &j->s[j->ns++];
		snprintf(s->name, sizeof(s->name), "%s", raw[i].name);
		s->v = malloc(j->nticks * sizeof(double));
		for (size_t k = 0; k < j->nticks; k++)
			s->v[k] = NAN;
		for (size_t at = 0; at < n; at++) {
			double k = round(json_number_value(json_array_get(raw[i].t, at)) - base);
			if (k >= 0 && k < (double)j->nticks)
				s->v[(size_t)k] = json_number_value(json_array_get(raw[i].v, at));
		}
		json_decref(raw[i].t);
		json_decref(raw[i].v);
	}
	free(raw);
	return tr->njobs > 1 && tr->job[0].nticks > 0 ? 0 : -1;
}

/*
 * The sampled values of the node (slot 0) or job slot j (1..) at tick k
 * of the bench, appended to vals as job id slot: slot j replays the
 * recorded jobs from the j-th on, one after another, in a loop.
 */
static size_t
trace_values(const struct trace *tr, int slot, long k, double t, struct collector_value *vals)
{
	const struct trace_job *j;
	size_t n = 0, at;

	if (slot == 0) {
		j = &tr->job[0];
		at = (size_t)k % j->nticks;
	} else {
		at = ((size_t)k + (size_t)slot * 7919) % tr->job_ticks;   /* slots start at different points of the loop */
		j = &tr->job[1];
		for (size_t i = 1; at >= tr->job[i].nticks; i++) {
			at -= tr->job[i].nticks;
			j = &tr->job[i + 1];
		}
	}
	for (size_t i = 0; i < j->ns; i++)
		if (!isnan(j->s[i].v[at])) {
			vals[n] = (struct collector_value){slot, t, j->s[i].v[at], ""};
			memcpy(vals[n++].name, j->s[i].name, sizeof(vals[0].name));
		}
	return n;
}

/* Series of the recording at most: the node's and one job's, for the values' buffer. */
static size_t
trace_width(const struct trace *tr)
{
	size_t most = 0;

	for (size_t i = 1; i < tr->njobs; i++)
		if (tr->job[i].ns > most)
			most = tr->job[i].ns;
	return most;
}

/*
 * --trace-kinds: each name's stored points (sampled or reported, every job
 * and phase together) in ten-minute blocks as the store would code them,
 * bytes per point by name, over all points.
 */
static int
trace_kinds(const char *path)
{
	FILE *f = open_gz(path);
	json_error_t err;
	json_t *line, *by_name = json_object();
	size_t all_points = 0, all_bytes = 0, sampled_points = 0, sampled_bytes = 0;

	if (f == NULL)
		return 1;
	while ((line = json_loadf(f, JSON_DISABLE_EOF_CHECK, &err)) != NULL) {
		const char *name = json_string_value(json_object_get(line, "name"));
		const char *phase = json_string_value(json_object_get(line, "phase"));
		json_t *t = json_object_get(line, "t"), *v = json_object_get(line, "v"), *acc;
		size_t n = json_array_size(t), bytes = 0, start = 0;
		char key[200];

		while (start < n) {
			struct series_point p[STORE_BLOCK_S + 1];
			double t0 = floor(json_number_value(json_array_get(t, start)) / STORE_BLOCK_S) * STORE_BLOCK_S;
			size_t m = 0;
			unsigned char *buf;
			size_t len;
			while (start + m < n && m < STORE_BLOCK_S + 1 &&
			       json_number_value(json_array_get(t, start + m)) < t0 + STORE_BLOCK_S) {
				p[m] = (struct series_point){json_number_value(json_array_get(t, start + m)),
							     json_number_value(json_array_get(v, start + m))};
				m++;
			}
			if (series_encode(p, m, &buf, &len) == 0) {
				bytes += len;
				free(buf);
			}
			start += m;
		}
		snprintf(key, sizeof(key), "%s%s", name ? name : "?", phase && *phase ? " (phases)" : "");
		if ((acc = json_object_get(by_name, key)) == NULL)
			json_object_set_new(by_name, key, acc = json_pack("[i,i]", 0, 0));
		json_array_set_new(acc, 0, json_integer(json_integer_value(json_array_get(acc, 0)) + (json_int_t)n));
		json_array_set_new(acc, 1, json_integer(json_integer_value(json_array_get(acc, 1)) + (json_int_t)bytes));
		all_points += n;
		all_bytes += bytes;
		if (name && sampled_name(name, phase)) {
			sampled_points += n;
			sampled_bytes += bytes;
		}
		json_decref(line);
	}
	pclose(f);
	{
		const char *key;
		json_t *acc;
		printf("{\"by_name\": {");
		int first = 1;
		json_object_foreach(by_name, key, acc) {
			json_int_t np = json_integer_value(json_array_get(acc, 0));
			printf("%s\n  \"%s\": {\"points\": %lld, \"bytes_per_point\": %.3f}", first ? "" : ",", key,
			       (long long)np, np ? (double)json_integer_value(json_array_get(acc, 1)) / (double)np : 0.0);
			first = 0;
		}
		printf("},\n \"sampled\": {\"points\": %zu, \"block_bytes_per_point\": %.3f},\n", sampled_points,
		       sampled_points ? (double)sampled_bytes / (double)sampled_points : 0.0);
		printf(" \"all\": {\"points\": %zu, \"block_bytes_per_point\": %.3f}}\n", all_points,
		       all_points ? (double)all_bytes / (double)all_points : 0.0);
	}
	json_decref(by_name);
	return 0;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* p99 of n queries of span seconds ending at end, in ms. */
static double
query_p99(struct store *st, const char *name, double end, double span, int n)
{
	double *ms = calloc((size_t)n, sizeof(double)), w, p;
	struct store_series_query q = {.job_id = 0, .name = name, .has_from = true, .has_to = true};
	struct store_series_answer a;

	for (int i = 0; i < n; i++) {
		q.to = end - i * 7.0;
		q.from = q.to - span;
		w = wall_s();
		if (store_series(st, &q, &a) != STORE_OK)
			return NAN;
		ms[i] = (wall_s() - w) * 1000;
		json_decref(a.points);
		json_decref(a.bands);
	}
	qsort(ms, (size_t)n, sizeof(double), cmp_double);
	p = ms[(int)ceil(0.99 * n) - 1];
	free(ms);
	return p;
}

static long
file_size(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0 ? (long)sb.st_size : 0;
}

/* Bytes in free pages: the staging rows' room, reused by the next minutes' rows. */
static long
free_bytes(const char *path)
{
	sqlite3 *db;
	sqlite3_stmt *s;
	long v = 0;

	if (sqlite3_open(path, &db) != SQLITE_OK)
		return 0;
	if (sqlite3_prepare_v2(db, "SELECT (SELECT freelist_count FROM pragma_freelist_count) *"
				   " (SELECT page_size FROM pragma_page_size)", -1, &s, NULL) == SQLITE_OK) {
		if (sqlite3_step(s) == SQLITE_ROW)
			v = (long)sqlite3_column_int64(s, 0);
		sqlite3_finalize(s);
	}
	sqlite3_close(db);
	return v;
}

int
main(int argc, char **argv)
{
	static const char *const node_names[NODE_SERIES] = {
		"cpu.cores", "cpu.iowait_cores", "cpu.steal_cores", "cpu.count", "cpu.busy_seconds", "mem.used_bytes",
		"mem.total_bytes", "mem.available_bytes", "load.1", "load.5", "sched.runnable", "net.rx_bytes_per_s",
		"net.tx_bytes_per_s", "disk.read_bytes_per_s", "disk.write_bytes_per_s", "gpu.0.util_percent",
		"gpu.1.util_percent", "gpu.0.mem_used_bytes", "gpu.1.mem_used_bytes", "sched.switches_per_s"};
	static const char *const job_names[JOB_SERIES] = {
		"cpu.cores", "cpu.thread_max_cores", "cpu.threads", "cpu.busy_threads", "mem.rss_bytes",
		"sched.switches_per_s", "cpu.processes", "cpu.busy_seconds", "gpu.util_percent", "cpu.allowed"};
	static const struct store_options opts = {.queue_limit = 4096, .readers = 2};
	const char *dir = "/tmp", *trace_path = NULL;
	struct trace tr;
	double sampled = 0;
	double hours = 24, long_days = 14, store_cpu, c_all, gen_cpu = 0, g0, t, dt, end;
	int jobs = 50, keep = 0;
	char path[512];
	struct store *st;
	struct sample_window win;
	struct collector_value *vals;
	struct sample *rows;
	struct gen g = {.seed = 1};
	size_t nv = 0, stored = 0, n;
	long empty, base, full, freeb;

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--keep") == 0)
			keep = 1;   /* the database stays, for sqlite3's dbstat; its path goes to stderr */
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--hours") == 0)
			hours = atof(argv[i + 1]);
		else if (strcmp(argv[i], "--jobs") == 0)
			jobs = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--dir") == 0)
			dir = argv[i + 1];
		else if (strcmp(argv[i], "--long-days") == 0)
			long_days = atof(argv[i + 1]);
		else if (strcmp(argv[i], "--trace") == 0)
			trace_path = argv[i + 1];
		else if (strcmp(argv[i], "--trace-kinds") == 0)
			return trace_kinds(argv[i + 1]);
	}
	if (argc == 2 && strcmp(argv[1], "--kinds") == 0) {
		kinds();
		return 0;
	}
	if (jobs < 1 || jobs > 63)
		return 2;
	if (trace_path != NULL && trace_load(trace_path, &tr) < 0) {
		fprintf(stderr, "%s: not a recording with the node and a job\n", trace_path);
		return 2;
	}
	snprintf(path, sizeof(path), "%s/history-bench-%d.db", dir, (int)getpid());
	if ((st = store_open(path, &opts)) == NULL)
		return 1;
	store_close(st);
	empty = file_size(path);
	st = store_open(path, &opts);
	n = trace_path != NULL ? (size_t)(jobs + 1) * (trace_width(&tr) > tr.job[0].ns ? trace_width(&tr) : tr.job[0].ns)
			       : NODE_SERIES + (size_t)jobs * JOB_SERIES;
	vals = calloc(n, sizeof(*vals));
	rows = calloc(n, sizeof(*rows));
	sample_window_init(&win);
	for (int j = 0; j < jobs; j++)
		g.rss[j] = 4096.0 * 500000, g.busy[j] = 6;
	/* The long series first: the node's load.15 at 1 Hz for long_days, for the 14-day query. */
	for (long k = 0; k < (long)(long_days * 86400); k += 600) {
		struct sample s[600];
		for (int i = 0; i < 600; i++)
			s[i] = (struct sample){0, T0 - long_days * 86400 + (double)(k + i), "load.15",
					       floor(100 * (2 + uniform(&g.seed))) / 100.0, NULL};
		store_samples_write(st, s, 600);
		if (k % 3600 == 0)
			store_series_maintain(st, T0 - long_days * 86400 + (double)k, true);
	}
	store_series_maintain(st, T0, true);
	store_close(st);
	base = file_size(path) - free_bytes(path);   /* the long series' share, checkpointed */
	st = store_open(path, &opts);
	c_all = cpu_s();
	for (long k = 0; k < (long)(hours * 3600); k++) {
		g0 = thread_cpu_s();
		t = T0 + (double)k;
		dt = 1.0 + (uniform(&g.seed) - 0.5) * 0.006;   /* the measured interval jitters by a few ms */
		nv = 0;
		if (trace_path != NULL) {
			for (int j = 0; j <= jobs; j++)
				nv += trace_values(&tr, j, k, t, vals + nv);
		}
		for (int i = 0; trace_path == NULL && i < NODE_SERIES; i++) {
			vals[nv] = (struct collector_value){0, t, value(&g, 63, i % 10, k, dt), ""};
			snprintf(vals[nv++].name, sizeof(vals[0].name), "%s", node_names[i]);
		}
		for (int j = 0; trace_path == NULL && j < jobs; j++)
			for (int i = 0; i < JOB_SERIES; i++) {
				vals[nv] = (struct collector_value){j + 1, t, value(&g, j, i, k, dt), ""};
				snprintf(vals[nv++].name, sizeof(vals[0].name), "%s", job_names[i]);
			}
		gen_cpu += thread_cpu_s() - g0;
		sampled += (double)nv;
		sample_window_add(&win, vals, nv);
		n = sample_window_rows(&win, t, rows);
		store_samples_post(st, rows, n);     /* before next: the rows' names point into the window */
		sample_window_next(&win, INFINITY);
		if (k % 60 == 59)
			store_series_maintain(st, t + 1, true);   /* waits: the writer keeps up, as the daemon's must */
		stored += n;
	}
	end = T0 + hours * 3600;
	store_series_maintain(st, end + STORE_BLOCK_S, true);
	/* The process's CPU (the writer thread's included) less what generating the values took. */
	store_cpu = cpu_s() - c_all - gen_cpu;
	printf("{\"hours\": %g, \"jobs\": %d, \"values\": \"%s\", \"series\": %zu, \"points_stored\": %zu,"
	       " \"points_sampled\": %.0f,\n", hours, jobs, trace_path ? trace_path : "uniform", nv, stored, sampled);
	printf(" \"store_cpu_percent_of_core_at_1hz\": %.3f,\n", 100 * store_cpu / (hours * 3600));
	printf(" \"query_p99_ms_14d_1000pts\": %.2f,\n", query_p99(st, "load.15", T0, 14 * 86400.0, 200));
	printf(" \"query_p99_ms_1h_1000pts\": %.2f,\n", query_p99(st, "cpu.cores", end, 3600.0, 200));
	store_close(st);
	full = file_size(path);
	freeb = free_bytes(path);
	printf(" \"bytes_per_stored_point\": %.3f, \"bytes_per_sampled_value\": %.3f,\n", (double)(full - freeb - base) / (double)stored,
	       (double)(full - freeb - base) / sampled);
	printf(" \"bytes_per_stored_point_with_free_pages\": %.3f, \"db_bytes\": %ld, \"free_bytes\": %ld,"
	       " \"empty_db_bytes\": %ld}\n", (double)(full - base) / (double)stored, full, freeb, empty);
	sample_window_free(&win);
	free(vals);
	free(rows);
	if (keep)
		fprintf(stderr, "kept %s\n", path);
	else
		unlink(path);
	return 0;
}
