/*
 * A node's month, time-compressed through a real store (bench/RESULTS.md,
 * "projection"): --jobs job slots (8) each running a job that reports
 * --steps steps a second (20), six series a step (step_time_s,
 * samples_per_s, loss, phase_time_s of data, forward and backward) in one
 * batch a second as the client sends them, and the sampler at 1 Hz (the
 * node's series and each job's), the writer's upkeep once a simulated
 * minute, for --days (30).  A slot's job ends after --job-hours (6) and
 * another starts.  Each slot's batches are written by a thread of its
 * own, as the jobs' clients write them at once (the writer commits what
 * is queued together in one transaction).  Values come from a recording of
 * real jobs (--trace):
 * the node's and a job's sampled series, and a job's reported values, its
 * steps' spacing scaled to --steps a second.
 *
 * Printed, one JSON line a simulated day and one at the end: bytes on
 * disk (database, WAL, shared memory) at the day's end and the most seen
 * after any upkeep, the budget, the span each tier holds, the wall time
 * the store took (writes, posts, upkeeps) and the points it took per
 * second of that; on each line, p99 of 1000-point answers over the last 14
 * days (the node's load.15, at 1 Hz, written for the 14 days before the
 * run too) and over the last hour (a job's step_time_s, and the node's
 * cpu.cores).
 *
 * --stop-after-days N ends the run there, keeping the database and a state
 * file in --dir; --resume continues it (a month in pieces, each its own
 * process).  --charts prints only the charts' p99 of a stopped run's
 * store as it ended (given the run's --hours or --days), so stores of
 * several runs can be queried back to back on the same machine.  Built
 * against today's store and against an older one (the base commit's,
 * which has no tiers or budget: STORE_SERIES_TIERS is not defined), so
 * both run the same node in one comparison.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "store.h"
#include "store_series.h"

#define T0 1798761600.0           /* 2027-01-01 00:00 UTC: the run's start */
#define NAMES_MAX 64
#define REPORTED 6

static const char *const reported_names[REPORTED] = {"step_time_s", "samples_per_s", "loss", "phase_time_s",
						     "phase_time_s", "phase_time_s"};
static const char *const reported_phases[REPORTED] = {NULL, NULL, NULL, "data", "forward", "backward"};

struct seq {
	char name[65];
	double *v;
	size_t n;
};

/* What the recording gives the run: value sequences, replayed in loops. */
struct source {
	struct seq node[NAMES_MAX];     /* the node's sampled series */
	size_t nnode;
	struct seq job[NAMES_MAX];      /* one job's sampled series */
	size_t njob;
	struct seq rep[REPORTED];       /* one job's reported values, a step each */
	double *gap;                    /* its steps' spacing, scaled to the run's rate */
	size_t ngap;
};

struct slot {
	int64_t job;                    /* the store's id of the slot's job */
	double started;                 /* when it started (simulated) */
	double next;                    /* its next step's time */
	long step;                      /* steps so far */
};

/* One slot's client: writes its batch of each simulated second, in step with the others. */
struct client {
	struct run *run;
	struct store *st;
	struct sample *buf;
	size_t n, cap;
	int failed;
};

struct run {
	int days, jobs, steps;
	pthread_barrier_t start, done;  /* each simulated second: the batches are ready, and written */
	int stop;
	double job_hours, raw_hours, retention_days;
	long long budget;
	char dir[400], db[500], state[500];
	long day;                       /* days done */
	struct slot slot[64];
	double store_s;                 /* wall seconds inside the store */
	double points;                  /* points written */
	long long most_bytes;           /* the most on disk after an upkeep */
};

static double
wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
sampled_name(const char *name, const char *phase)
{
	static const char *const prefixes[] = {"cpu.", "mem.", "sched.", "gpu.", "load.", "perf.", "energy."};

	if (phase != NULL && phase[0] != '\0')
		return 0;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	return 0;
}

static void
seq_set(struct seq *s, const char *name, json_t *v)
{
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->n = json_array_size(v);
	s->v = malloc(s->n * sizeof(double));
	for (size_t i = 0; i < s->n; i++)
		s->v[i] = json_number_value(json_array_get(v, i));
}

/* The recorded job with the most steps that reports all six series: its id. */
static int64_t
pick_job(json_t *lines)
{
	int64_t best = -1;
	size_t most = 0, i, k;
	json_t *l;

	json_array_foreach(lines, i, l) {
		int64_t job = json_integer_value(json_object_get(l, "job"));
		size_t have = 0, steps = 0;
		json_t *m;

		if (job == 0 || strcmp(json_string_value(json_object_get(l, "name")), "step_time_s") != 0)
			continue;
		steps = json_array_size(json_object_get(l, "t"));
		json_array_foreach(lines, k, m) {
			const char *name = json_string_value(json_object_get(m, "name"));
			const char *phase = json_string_value(json_object_get(m, "phase"));
			if (json_integer_value(json_object_get(m, "job")) != job)
				continue;
			for (int r = 0; r < REPORTED; r++)
				have += strcmp(name, reported_names[r]) == 0 &&
					strcmp(phase, reported_phases[r] != NULL ? reported_phases[r] : "") == 0;
		}
		if (have == REPORTED && steps > most) {
			most = steps;
			best = job;
		}
	}
	return best;
}

static int
source_load(const char *path, int steps, struct source *src)
{
	char cmd[1200];
	json_t *lines = json_array(), *l;
	json_error_t err;
	int64_t job;
	size_t i;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "gzip -dc '%s'", path);
	if ((f = popen(cmd, "r")) == NULL)
		return -1;
	while ((l = json_loadf(f, JSON_DISABLE_EOF_CHECK, &err)) != NULL)
		json_array_append_new(lines, l);
	pclose(f);
	if ((job = pick_job(lines)) < 0)
		return -1;
	json_array_foreach(lines, i, l) {
		const char *name = json_string_value(json_object_get(l, "name"));
		const char *phase = json_string_value(json_object_get(l, "phase"));
		int64_t j = json_integer_value(json_object_get(l, "job"));
		json_t *v = json_object_get(l, "v"), *t = json_object_get(l, "t");

		if (json_array_size(v) < 2)
			continue;
		if (j == 0 && sampled_name(name, phase) && src->nnode < NAMES_MAX)
			seq_set(&src->node[src->nnode++], name, v);
		if (j != job)
			continue;
		if (sampled_name(name, phase) && src->njob < NAMES_MAX)
			seq_set(&src->job[src->njob++], name, v);
		for (int r = 0; r < REPORTED; r++)
			if (strcmp(name, reported_names[r]) == 0 &&
			    strcmp(phase, reported_phases[r] != NULL ? reported_phases[r] : "") == 0)
				seq_set(&src->rep[r], name, v);
		if (strcmp(name, "step_time_s") == 0) {
			double sum = 0;

			src->ngap = json_array_size(t) - 1;
			src->gap = malloc(src->ngap * sizeof(double));
			for (size_t k = 0; k < src->ngap; k++) {
				src->gap[k] = json_number_value(json_array_get(t, k + 1)) - json_number_value(json_array_get(t, k));
				sum += src->gap[k];
			}
			/* The recorded spacing, bursts and pauses as they came, at the run's rate on average. */
			for (size_t k = 0; k < src->ngap; k++)
				src->gap[k] *= (double)src->ngap / (sum * steps);
		}
	}
	json_decref(lines);
	return src->nnode > 0 && src->njob > 0 && src->ngap > 0 ? 0 : -1;
}

static long long
disk_bytes(const char *db)
{
	static const char *const suffix[] = {"", "-wal", "-shm"};
	char p[600];
	struct stat sb;
	long long n = 0;

	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s%s", db, suffix[i]);
		if (stat(p, &sb) == 0)
			n += (long long)sb.st_size;
	}
	return n;
}

static struct store *
open_store(struct run *r)
{
	struct store_options o = {.queue_limit = 4096, .readers = 2};

#ifdef STORE_SERIES_TIERS
	o.limits = (struct store_limits){.raw_s = r->raw_hours * 3600, .second_s = r->retention_days * 86400,
					 .minute_s = 90 * 86400.0, .budget = r->budget};
#endif
	return store_open(r->db, &o);
}

static int
maintain(struct run *r, struct store *st, double now)
{
#ifdef STORE_SERIES_TIERS
	(void)r;
	return store_series_maintain(st, now, true);
#else
	return store_series_maintain(st, now, r->retention_days, true);
#endif
}

static int64_t
job_start(struct store *st, double t)
{
	struct job_spec spec = {.workload = "projection", .params_json = "{}", .hw_class = "bench",
				.objective = OBJECTIVE_THROUGHPUT, .source = "registered", .started = t};
	int64_t id = 0;

	return store_job_register(st, &spec, &id) == STORE_OK ? id : -1;
}

/* The node's load.15 at 1 Hz over the 14 days before the run, for the 14-day chart. */
static int
prefill(struct run *r, struct store *st, const struct source *src)
{
	struct sample s[600];
	const struct seq *load = &src->node[0];

	for (size_t i = 0; i < src->nnode; i++)
		if (strcmp(src->node[i].name, "load.15") == 0)
			load = &src->node[i];
	for (long k = 0; k < 14 * 86400; k += 600) {
		for (int i = 0; i < 600; i++)
			s[i] = (struct sample){0, T0 - 14 * 86400.0 + (double)(k + i), "load.15", load->v[(size_t)(k + i) % load->n],
					       NULL};
		if (store_samples_write(st, s, 600) != STORE_OK)
			return -1;
		if (k % 3600 == 0 && maintain(r, st, T0 - 14 * 86400.0 + (double)k) != STORE_OK)
			return -1;
	}
	return 0;
}

static void *
client_main(void *arg)
{
	struct client *c = arg;

	for (;;) {
		pthread_barrier_wait(&c->run->start);
		if (c->run->stop)
			return NULL;
		if (c->n > 0 && store_samples_write(c->st, c->buf, c->n) != STORE_OK)
			c->failed = 1;
		pthread_barrier_wait(&c->run->done);
	}
}

/* One simulated second at t: the sampler's tick, then each job's batch of its steps in [t, t + 1), at once. */
static int
second(struct run *r, struct store *st, const struct source *src, double t, struct sample *buf, struct client *cl)
{
	size_t n = 0;
	long k = (long)(t - T0);
	double w;

	for (size_t i = 0; i < src->nnode; i++)
		buf[n++] = (struct sample){0, t, src->node[i].name, src->node[i].v[(size_t)k % src->node[i].n], NULL};
	for (int j = 0; j < r->jobs; j++)
		for (size_t i = 0; i < src->njob; i++)
			buf[n++] = (struct sample){r->slot[j].job, t, src->job[i].name,
						   src->job[i].v[(size_t)(k + 977 * j) % src->job[i].n], NULL};
	w = wall_s();
	if (store_samples_post(st, buf, n) != STORE_OK)
		return -1;
	r->store_s += wall_s() - w;
	r->points += (double)n;
	for (int j = 0; j < r->jobs; j++) {
		struct slot *sl = &r->slot[j];

		cl[j].n = 0;
		/* A burst beyond the batch's room goes with the next second's batch, its times as they were. */
		while (sl->next < t + 1 && cl[j].n + REPORTED <= cl[j].cap) {
			for (int i = 0; i < REPORTED; i++)
				cl[j].buf[cl[j].n++] = (struct sample){sl->job, sl->next, reported_names[i],
								       src->rep[i].v[(size_t)(sl->step + 131 * j) % src->rep[i].n],
								       reported_phases[i]};
			sl->next += src->gap[(size_t)(sl->step + 37 * j) % src->ngap];
			sl->step++;
		}
		r->points += (double)cl[j].n;
	}
	w = wall_s();
	pthread_barrier_wait(&r->start);
	pthread_barrier_wait(&r->done);
	r->store_s += wall_s() - w;
	for (int j = 0; j < r->jobs; j++)
		if (cl[j].failed)
			return -1;
	return 0;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* p99 of 200 answers of 1000 points over span seconds ending near end, in ms. */
static double
query_p99(struct store *st, int64_t job, const char *name, double end, double span)
{
	struct store_series_query q = {.job_id = job, .name = name, .has_from = true, .has_to = true};
	struct store_series_answer a;
	double ms[200], w;

	for (int i = 0; i < 200; i++) {
		q.to = end - i * 7.0;
		q.from = q.to - span;
		w = wall_s();
		if (store_series(st, &q, &a) != STORE_OK)
			return NAN;
		ms[i] = (wall_s() - w) * 1000;
		json_decref(a.points);
		json_decref(a.bands);
	}
	qsort(ms, 200, sizeof(double), cmp_double);
	return ms[197];
}

/* The charts' p99 as of t, as fields of the line being printed (sep before the first). */
static void
print_charts(const struct run *r, struct store *st, double t, const char *sep)
{
	int oldest = 0;

	/* The hour chart of the job that has run longest: it has the whole hour. */
	for (int j = 1; j < r->jobs; j++)
		if (r->slot[j].started < r->slot[oldest].started)
			oldest = j;
	printf("%s\"query_p99_ms_14d_1000pts\": %.2f, \"query_p99_ms_1h_1000pts_step_time\": %.2f,"
	       " \"query_p99_ms_1h_1000pts_node\": %.2f", sep,
	       query_p99(st, 0, "load.15", t, 14 * 86400.0), query_p99(st, r->slot[oldest].job, "step_time_s", t, 3600.0),
	       query_p99(st, 0, "cpu.cores", t, 3600.0));
}

static void
print_day(struct run *r, struct store *st, double t)
{
	printf("{\"day\": %ld, \"bytes\": %lld, \"most_bytes\": %lld, \"budget\": %lld, \"points\": %.0f, \"store_s\": %.1f,"
	       " \"points_per_store_s\": %.0f",
	       r->day, disk_bytes(r->db), r->most_bytes, r->budget, r->points, r->store_s, r->points / r->store_s);
#ifdef STORE_SERIES_TIERS
	{
		struct store_usage u;

		if (store_usage(st, &u) == STORE_OK)
			for (int i = 0; i < STORE_TIERS; i++)
				printf(", \"%s_h\": %.1f", store_tier_names[i], u.tier[i].any ? (u.tier[i].to - u.tier[i].from) / 3600 : 0);
	}
#endif
	print_charts(r, st, t, ", ");
	printf("}\n");
	fflush(stdout);
}

static int
state_save(const struct run *r)
{
	FILE *f = fopen(r->state, "w");

	if (f == NULL)
		return -1;
	fprintf(f, "%ld %.17g %.17g %lld\n", r->day, r->store_s, r->points, r->most_bytes);
	for (int j = 0; j < r->jobs; j++)
		fprintf(f, "%lld %.17g %.17g %ld\n", (long long)r->slot[j].job, r->slot[j].started, r->slot[j].next,
			r->slot[j].step);
	return fclose(f);
}

static int
state_load(struct run *r)
{
	FILE *f = fopen(r->state, "r");
	int ok;

	if (f == NULL)
		return -1;
	ok = fscanf(f, "%ld %lf %lf %lld", &r->day, &r->store_s, &r->points, &r->most_bytes) == 4;
	for (int j = 0; ok && j < r->jobs; j++) {
		long long id;
		ok = fscanf(f, "%lld %lf %lf %ld", &id, &r->slot[j].started, &r->slot[j].next, &r->slot[j].step) == 4;
		r->slot[j].job = id;
	}
	fclose(f);
	return ok ? 0 : -1;
}

static double
arg_number(int argc, char **argv, const char *key, double def)
{
	for (int i = 1; i + 1 < argc; i++)
		if (strcmp(argv[i], key) == 0)
			return atof(argv[i + 1]);
	return def;
}

static const char *
arg_text(int argc, char **argv, const char *key, const char *def)
{
	for (int i = 1; i + 1 < argc; i++)
		if (strcmp(argv[i], key) == 0)
			return argv[i + 1];
	return def;
}

int
main(int argc, char **argv)
{
	struct run r = {0};
	struct source src = {0};
	struct store *st;
	struct sample *buf;
	struct client cl[64];
	pthread_t th[64];
	int resume = 0, charts = 0, stop_days;
	double t, end, hours;

	for (int i = 1; i < argc; i++) {
		resume |= strcmp(argv[i], "--resume") == 0;
		charts |= strcmp(argv[i], "--charts") == 0;
	}
	r.days = (int)arg_number(argc, argv, "--days", 30);
	r.jobs = (int)arg_number(argc, argv, "--jobs", 8);
	r.steps = (int)arg_number(argc, argv, "--steps", 20);
	r.job_hours = arg_number(argc, argv, "--job-hours", 6);
	r.raw_hours = arg_number(argc, argv, "--raw-hours", 24);
	r.retention_days = arg_number(argc, argv, "--retention-days", 14);
	r.budget = (long long)arg_number(argc, argv, "--budget", 1073741824.0);
	stop_days = (int)arg_number(argc, argv, "--stop-after-days", 1e9);
	/* --hours H: a run shorter than a day (its figures as at its end), for a quick look. */
	hours = arg_number(argc, argv, "--hours", 24.0 * r.days);
	if (hours < 24.0 * r.days)
		r.days = (int)ceil(hours / 24);
	snprintf(r.dir, sizeof(r.dir), "%s", arg_text(argc, argv, "--dir", "/tmp/projection"));
	snprintf(r.db, sizeof(r.db), "%s/projection.db", r.dir);
	snprintf(r.state, sizeof(r.state), "%s/state", r.dir);
	if (r.jobs < 1 || r.jobs > 64 || r.steps < 1 ||
	    source_load(arg_text(argc, argv, "--trace", "bench/history/trace-2026-11-27.jsonl.gz"), r.steps, &src) < 0) {
		fprintf(stderr, "usage: %s --trace RECORDING [--days 30] [--jobs 8] [--steps 20] [--budget BYTES]"
				" [--dir DIR] [--stop-after-days N] [--resume]\n", argv[0]);
		return 2;
	}
	mkdir(r.dir, 0755);
	if ((resume || charts) && state_load(&r) < 0) {
		fprintf(stderr, "%s: no state to resume\n", r.state);
		return 2;
	}
	if ((st = open_store(&r)) == NULL)
		return 1;
	if (charts) {
		/* The charts' p99 alone, of a run's store as it ended: runs compared back to back on the same machine. */
		printf("{\"day\": %ld", r.day);
		print_charts(&r, st, fmin(T0 + 86400.0 * (double)r.day, T0 + hours * 3600), ", ");
		printf("}\n");
		store_close(st);
		return 0;
	}
	buf = calloc(src.nnode + (size_t)r.jobs * src.njob, sizeof(*buf));
	pthread_barrier_init(&r.start, NULL, (unsigned)r.jobs + 1);
	pthread_barrier_init(&r.done, NULL, (unsigned)r.jobs + 1);
	for (int j = 0; j < r.jobs; j++) {
		/* A second's steps: the spacing's bursts can put several times the rate in one. */
		cl[j] = (struct client){&r, st, calloc(64 * (size_t)r.steps * REPORTED, sizeof(struct sample)), 0,
					64 * (size_t)r.steps * REPORTED, 0};
		pthread_create(&th[j], NULL, client_main, &cl[j]);
	}
	if (!resume) {
		unlink(r.state);
		if (prefill(&r, st, &src) < 0)
			return 1;
		for (int j = 0; j < r.jobs; j++) {
			/* Slots start their jobs staggered over a job's life, so jobs end one at a time. */
			r.slot[j] = (struct slot){job_start(st, T0), T0 - r.job_hours * 3600 * j / r.jobs, T0 + 0.0123456789 * j, 0};
		}
	}
	for (long d = 0; d < stop_days && r.day < r.days; d++, r.day++) {
		end = fmin(T0 + 86400.0 * (double)(r.day + 1), T0 + hours * 3600);
		for (t = T0 + 86400.0 * (double)r.day; t < end; t += 1) {
			if (second(&r, st, &src, t, buf, cl) < 0)
				return 1;
			for (int j = 0; j < r.jobs; j++) {
				if (t + 1 - r.slot[j].started < r.job_hours * 3600)
					continue;
				store_job_end(st, r.slot[j].job, t + 1, true, 0);
				r.slot[j].job = job_start(st, t + 1);
				r.slot[j].started = t + 1;
			}
			if ((long)(t - T0) % 60 == 59) {
				double w = wall_s();
				long long b;

				if (maintain(&r, st, t + 1) != STORE_OK)
					return 1;
				r.store_s += wall_s() - w;
				if ((b = disk_bytes(r.db)) > r.most_bytes)
					r.most_bytes = b;
			}
		}
		print_day(&r, st, end);
	}
	if (r.day >= r.days) {
		t = fmin(T0 + 86400.0 * r.days, T0 + hours * 3600);
		printf("{\"hours\": %g, \"jobs\": %d, \"steps_per_s\": %d, \"budget\": %lld, \"most_bytes\": %lld,"
		       " \"points\": %.0f, \"points_per_store_s\": %.0f,\n", (t - T0) / 3600, r.jobs, r.steps, r.budget, r.most_bytes,
		       r.points, r.points / r.store_s);
		print_charts(&r, st, t, " ");
		printf("}\n");
	}
	r.stop = 1;
	pthread_barrier_wait(&r.start);
	for (int j = 0; j < r.jobs; j++) {
		pthread_join(th[j], NULL);
		free(cl[j].buf);
	}
	store_close(st);
	if (state_save(&r) < 0)
		return 1;
	free(buf);
	return 0;
}
