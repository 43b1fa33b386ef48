/*
 * The tuner's regression gate: a fixed subset of the surfaces of
 * bench/tuner/compare.py -- every CSV surface of bench/tuner/surfaces and
 * the first generated surfaces of each family (tests/fixtures/tuner-gate,
 * written by bench/tuner/gen_surfaces.py --gate) -- replayed through the
 * tuner's own entry points as the daemon calls them (job start, a report
 * every few steps with the config the job ran, job end, recommend), with
 * the benchmark's job model: JOBS jobs of the surface's steps, noisy steps,
 * slow first steps.  Deterministic: the noise comes from a counter-based
 * generator keyed by surface, job, step and config.  Per family it checks
 * the final pick against the best, the cumulative regret against random
 * search run on the same jobs and draws, and, on the CSV surfaces, the
 * first config; a change that helps one class of surface and hurts
 * another fails here.
 *
 * Given paths (files or directories of CSV surfaces) as arguments, it
 * replays those instead (each with DLPROF_GATE_SEEDS noise draws, 1 by
 * default) and prints a line per run and per family, without judging: the
 * quick way to see a tuner change on every family.  DLPROF_GATE_TRACE=name
 * prints that surface's jobs (and DLPROF_GATE_TRACE_MODEL its model's
 * predictions after each).
 */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "node.h"
#include "tuner.h"

#define JOBS 12
#define TRIAL_STEPS 10                 /* random search: one trial, as in compare.py */
#define WARM_START 3
#define WARM_SWITCH 2
#define MAX_ROWS 4096
#define MAX_KNOBS 8
#define MAX_SURFACES 2048
#define MAX_FAMILIES 16

static const struct tuner_options topt = {.gain_threshold = 0.01};
static const char *const static_knobs[] = {"interop_threads", "gpus", "affinity", "allocator",
					   "dataloader_workers", "batch_size", NULL};

struct surface {
	char name[96];
	char family[32];
	struct node_info node;
	bool efficiency;
	double step_sd, run_sd;
	int steps, report;
	int nknobs;
	char knob[MAX_KNOBS][32];
	bool is_static[MAX_KNOBS];
	int nrows;
	char (*cell)[MAX_KNOBS][24];   /* per row, each knob's value as text */
	double *value;
	json_t *declared;               /* what the job declares beyond the values ("# declared:"), or NULL */
	double best;
	uint64_t tag;                   /* hash of the name: the noise stream */
};

/* What one run of a method cost and chose. */
struct outcome {
	double final;    /* the pick's value over the best */
	double lost;     /* steps lost against always running the best */
	int tried;       /* distinct configs run */
	double first_beats; /* share of the surface's configs the first config beats */
	double first_job;   /* the first job's throughput over always running the best's */
};

/* ---- deterministic noise ---- */

static uint64_t mix(uint64_t z)
{
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double uniform(uint64_t key)
{
	return ((double)(mix(key) >> 11) + 0.5) / 9007199254740992.0;
}

/* A standard normal draw for key. */
static double normal(uint64_t key)
{
	return sqrt(-2.0 * log(uniform(key))) * cos(2.0 * M_PI * uniform(key ^ 0x5bd1e995u));
}

static uint64_t hash_text(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

/* ---- surfaces ---- */

static void parse_topology(const char *line, struct node_info *n)
{
	const char *p;
	int cores = 1, cpus = 0, numa = 0, gpus = 0;

	if ((p = strstr(line, "cores=")) && (p == line || p[-1] == ' '))
		cores = atoi(p + 6);
	if ((p = strstr(line, " cpus=")))
		cpus = atoi(p + 6);
	if ((p = strstr(line, "numa_cores=")))
		numa = atoi(p + 11);
	if ((p = strstr(line, "gpus=")))
		gpus = atoi(p + 5);
	cpus = cpus > 0 ? cpus : cores;
	numa = numa > 0 ? numa : cores;
	memset(n, 0, sizeof(*n));
	snprintf(n->hostname, sizeof(n->hostname), "gate");
	snprintf(n->hw_class, sizeof(n->hw_class), "x86_64-gate-%dc-%dnuma-%dgpu", cores, cores / numa, gpus);
	n->cores = n->cores_allowed = cores;
	n->cpus_online = n->cpus_allowed = cpus;
	n->threads_per_core = cpus / cores > 0 ? cpus / cores : 1;
	n->numa_nodes = cores / numa > 0 ? cores / numa : 1;
	for (int i = 0; i < n->numa_nodes && i < NODE_MAX_NUMA; i++)
		n->numa_cores[i] = numa;
	n->gpus = gpus;
}

static int split(char *line, char **f, int max)
{
	int n = 0;
	char *p = line;

	line[strcspn(line, "\r\n")] = '\0';
	while (n < max) {
		f[n++] = p;
		if (!(p = strchr(p, ',')))
			break;
		*p++ = '\0';
	}
	return n;
}

static bool knob_static(const char *name)
{
	for (int i = 0; static_knobs[i]; i++)
		if (strcmp(static_knobs[i], name) == 0)
			return true;
	return false;
}

/* The family of a CSV without a "# family:" line, from its name's prefix. */
static void family_of_name(struct surface *s)
{
	if (strncmp(s->name, "torch-", 6) == 0)
		snprintf(s->family, sizeof(s->family), "csv-torch");
	else if (strncmp(s->name, "gpu-", 4) == 0)
		snprintf(s->family, sizeof(s->family), "csv-gpu");
	else
		snprintf(s->family, sizeof(s->family), "csv-synthetic");
}

static void parse_header_line(struct surface *s, const char *line)
{
	const char *p;

	if (strncmp(line, "# topology:", 11) == 0)
		parse_topology(line + 11, &s->node);
	else if (strncmp(line, "# objective: efficiency", 23) == 0)
		s->efficiency = true;
	else if (strncmp(line, "# noise:", 8) == 0 && (p = strstr(line, "step=")) && strstr(line, "run="))
		s->step_sd = atof(p + 5), s->run_sd = atof(strstr(line, "run=") + 4);
	else if (strncmp(line, "# job:", 6) == 0 && (p = strstr(line, "steps=")) && strstr(line, "report="))
		s->steps = atoi(p + 6), s->report = atoi(strstr(line, "report=") + 7);
	else if (strncmp(line, "# family:", 9) == 0)
		sscanf(line + 9, " %31s", s->family);
	else if (strncmp(line, "# declared:", 11) == 0 && !s->declared)
		s->declared = json_loads(line + 11, 0, NULL);
}

static struct surface *surface_load(const char *path)
{
	struct surface *s = calloc(1, sizeof(*s));
	const char *base = strrchr(path, '/');
	char line[1024], *f[MAX_KNOBS + 4];
	FILE *fp = fopen(path, "r");
	int n, k;

	if (!s || !fp || !(s->cell = calloc(MAX_ROWS, sizeof(*s->cell))) || !(s->value = calloc(MAX_ROWS, sizeof(double))))
		goto fail;
	snprintf(s->name, sizeof(s->name), "%s", base ? base + 1 : path);
	s->name[strcspn(s->name, ".")] = '\0';
	s->step_sd = 0.05;
	s->run_sd = 0.02;
	s->steps = 60;
	s->report = 1;
	s->nknobs = -1;
	parse_topology("cores=1", &s->node);
	while (fgets(line, sizeof(line), fp)) {
		if (line[0] == '#') {
			parse_header_line(s, line);
			continue;
		}
		if (line[0] == '\n' || (n = split(line, f, MAX_KNOBS + 4)) < 2)
			continue;
		if (s->nknobs < 0) {
			for (s->nknobs = 0; s->nknobs < n && s->nknobs < MAX_KNOBS && strcmp(f[s->nknobs], "objective") != 0;
			     s->nknobs++) {
				snprintf(s->knob[s->nknobs], sizeof(s->knob[0]), "%s", f[s->nknobs]);
				s->is_static[s->nknobs] = knob_static(f[s->nknobs]);
			}
			continue;
		}
		if (n <= s->nknobs || s->nrows >= MAX_ROWS)
			continue;
		for (k = 0; k < s->nknobs; k++)
			snprintf(s->cell[s->nrows][k], sizeof(s->cell[0][0]), "%s", f[k]);
		s->value[s->nrows] = atof(f[s->nknobs]);
		if (s->value[s->nrows] > s->best)
			s->best = s->value[s->nrows];
		s->nrows++;
	}
	fclose(fp);
	if (!s->family[0])
		family_of_name(s);
	s->tag = hash_text(s->name);
	if (s->nrows == 0 || s->nknobs <= 0 || !(s->best > 0.0)) {
		fprintf(stderr, "%s: no surface\n", path);
		goto fail_closed;
	}
	return s;
fail:
	if (fp)
		fclose(fp);
fail_closed:
	if (s) {
		free(s->cell);
		free(s->value);
		json_decref(s->declared);
	}
	free(s);
	return NULL;
}

static void surface_free(struct surface *s)
{
	if (!s)
		return;
	free(s->cell);
	free(s->value);
	json_decref(s->declared);
	free(s);
}

static json_t *cell_json(const char *text)
{
	char *end;
	long v = strtol(text, &end, 10);

	return *end == '\0' && end != text ? json_integer(v) : json_string(text);
}

/*
 * The knobs a job declares: each of the surface's with the values its rows
 * take, with what its "# declared:" line adds (a default); absent built-ins held.
 */
static json_t *surface_declared(const struct surface *s)
{
	json_t *decl = json_object(), *extra;
	const char *name;
	int k, r;

	for (k = 0; k < s->nknobs; k++) {
		json_t *vals = json_array();
		for (r = 0; r < s->nrows; r++) {
			json_t *v = cell_json(s->cell[r][k]), *e;
			size_t i;
			bool seen = false;
			json_array_foreach(vals, i, e) seen = seen || json_equal(e, v);
			if (seen)
				json_decref(v);
			else
				json_array_append_new(vals, v);
		}
		json_object_set_new(decl, s->knob[k], json_pack("{s:o}", "values", vals));
	}
	json_object_foreach(s->declared, name, extra)
		if (json_is_object(json_object_get(decl, name)))
			json_object_update(json_object_get(decl, name), extra);
	if (!json_object_get(decl, "intra_threads"))
		json_object_set_new(decl, "intra_threads", json_pack("{s:[i]}", "values", 1));
	if (!json_object_get(decl, "interop_threads"))
		json_object_set_new(decl, "interop_threads", json_pack("{s:[i]}", "values", 1));
	if (!json_object_get(decl, "gpus"))
		json_object_set_new(decl, "gpus", json_pack("{s:[i]}", "values", 0));
	return decl;
}

/* The row a config (the tuner's answer) runs; -1 when it is not on the surface. */
static int surface_row(const struct surface *s, const json_t *config)
{
	char want[MAX_KNOBS][24];
	int k, r;

	for (k = 0; k < s->nknobs; k++) {
		json_t *v = json_object_get(config, s->knob[k]);
		if (json_is_integer(v))
			snprintf(want[k], sizeof(want[k]), "%lld", (long long)json_integer_value(v));
		else if (json_is_string(v))
			snprintf(want[k], sizeof(want[k]), "%s", json_string_value(v));
		else
			return -1;
	}
	for (r = 0; r < s->nrows; r++) {
		for (k = 0; k < s->nknobs && strcmp(s->cell[r][k], want[k]) == 0; k++)
			;
		if (k == s->nknobs)
			return r;
	}
	return -1;
}

/* The share of the other configs that are worse than row's. */
static double beats(const struct surface *s, int row)
{
	int r, n = 0;

	for (r = 0; r < s->nrows; r++)
		n += s->value[r] < s->value[row];
	return s->nrows > 1 ? (double)n / (s->nrows - 1) : 1.0;
}

static double resources(const struct surface *s, int row)
{
	long gpus = 0, threads = 1;

	for (int k = 0; k < s->nknobs; k++) {
		if (strcmp(s->knob[k], "gpus") == 0)
			gpus = atol(s->cell[row][k]);
		else if (strcmp(s->knob[k], "intra_threads") == 0)
			threads = atol(s->cell[row][k]);
	}
	return gpus > 0 ? (double)gpus : (double)threads;
}

/* ---- the simulated job (as compare.py's Job) ---- */

struct job_sim {
	const struct surface *s;
	int job, n, prev, since_switch;
	double *lost;
	bool *tried;
	int *first;
};

static double job_step(struct job_sim *j, int row)
{
	const struct surface *s = j->s;
	double start = j->n == 0 ? 0.6 : j->n == 1 ? 0.85 : 1.0, slow, z;

	if (j->prev >= 0 && row != j->prev)
		j->since_switch = 0;
	slow = start * (j->prev >= 0 && j->since_switch == 0 ? 0.9 : 1.0);
	*j->lost += s->best * (1.0 / (s->value[row] * slow) - 1.0 / (s->best * start));
	j->tried[row] = true;
	if (*j->first < 0)
		*j->first = row;
	z = s->run_sd * normal(s->tag ^ mix(((uint64_t)j->job << 32) | (uint64_t)row | (1ull << 62))) +
	    s->step_sd * normal(s->tag ^ mix(((uint64_t)j->job << 32) | (uint64_t)j->n));
	j->n++;
	j->since_switch++;
	j->prev = row;
	return s->value[row] * slow * fmax(0.05, 1.0 + z);
}

static int count_tried(const struct surface *s, const bool *tried)
{
	int r, n = 0;

	for (r = 0; r < s->nrows; r++)
		n += tried[r];
	return n;
}

/* Appends "config (its share of the best) x steps" to a job's trace. */
static void trace_append(const struct surface *s, char *buf, size_t len, int row, int steps)
{
	size_t n = strlen(buf);

	for (int k = 0; k < s->nknobs && n < len; k++, n = strlen(buf))
		snprintf(buf + n, len - n, "%s%s", k ? "/" : "", s->cell[row][k]);
	if (n < len)
		snprintf(buf + n, len - n, " (%.2f) x%d, ", s->value[row] / s->best, steps);
}

/* dlprofd's tuner, called as the daemon calls it (DLPROF_GATE_TRACE=name prints its jobs). */
static struct outcome run_tuner(const struct surface *s)
{
	struct tuner *t = tuner_open(NULL, &s->node, &topt);
	json_t *decl = surface_declared(s), *config, *rec;
	enum objective objective = s->efficiency ? OBJECTIVE_EFFICIENCY : OBJECTIVE_THROUGHPUT;
	struct sample smp[64];
	struct outcome o = {0};
	bool *tried = calloc((size_t)s->nrows, sizeof(bool));
	double clock = 1000.0;
	int first = -1, job, done, row, i, last, run;
	const char *want = getenv("DLPROF_GATE_TRACE");
	bool trace = want && strcmp(want, s->name) == 0;
	char trace_runs[4096];

	assert_non_null(t);
	assert_non_null(tried);
	for (job = 0; job < JOBS; job++) {
		struct job_sim js = {s, job, 0, -1, 0, &o.lost, tried, &first};
		config = tuner_job_start(t, job + 1, s->name, NULL, objective, decl);
		assert_non_null(config);
		trace_runs[0] = '\0';
		last = -1;
		run = 0;
		for (done = 0; done < s->steps;) {
			size_t ns = 0;
			json_t *next;
			row = surface_row(s, config);
			if (row < 0)
				fail_msg("%s: the tuner answered a config not on the surface", s->name);
			if (trace && row != last && last >= 0)
				trace_append(s, trace_runs, sizeof(trace_runs), last, run), run = 0;
			last = row;
			run += s->report;
			for (i = 0; i < s->report && done < s->steps && ns + 2 <= 64; i++, done++) {
				double v = job_step(&js, row);
				clock += 1e-3;
				smp[ns++] = (struct sample){.job_id = job + 1, .t = clock, .name = "samples_per_s",
							    .value = v * (s->efficiency ? resources(s, row) : 1.0)};
				smp[ns++] = (struct sample){.job_id = job + 1, .t = clock, .name = "step_time_s",
							    .value = 1.0 / v};
			}
			next = tuner_job_observe(t, job + 1, smp, ns, config);
			assert_non_null(next);
			json_decref(config);
			config = next;
		}
		json_decref(config);
		tuner_job_end(t, job + 1);
		if (job == 0)
			o.first_job = s->steps / (s->steps + o.lost);
		if (trace)
			trace_append(s, trace_runs, sizeof(trace_runs), last, run);
		if (trace)
			printf("%s job %2d: lost %7.0f so far; %s\n", s->name, job + 1, o.lost, trace_runs);
		if (trace && getenv("DLPROF_GATE_TRACE_MODEL")) {
			json_t *view = tuner_workload(t, s->name, NULL, &objective), *e;
			size_t k;
			json_array_foreach(json_object_get(view, "predicted"), k, e) {
				char *c = json_dumps(json_object_get(e, "config"), JSON_COMPACT | JSON_SORT_KEYS);
				printf("   %s mean %.4g sd %.3g\n", c, json_number_value(json_object_get(e, "mean")),
				       json_number_value(json_object_get(e, "std")));
				free(c);
			}
			json_decref(view);
		}
	}
	rec = tuner_recommend(t, s->name, NULL, objective);
	row = surface_row(s, json_object_get(rec, "config"));
	o.final = row >= 0 ? s->value[row] / s->best : 0.0;
	o.tried = count_tried(s, tried);
	o.first_beats = beats(s, first);
	json_decref(rec);
	json_decref(decl);
	free(tried);
	tuner_close(t);
	return o;
}

/* Random search, a trial of TRIAL_STEPS at a time, static knobs fixed per job (as compare.py's random/trial). */
static struct outcome run_random(const struct surface *s)
{
	struct outcome o = {0};
	bool *tried = calloc((size_t)s->nrows, sizeof(bool));
	int *ok = calloc((size_t)s->nrows, sizeof(int));
	int first = -1, job, done, r, k, n, fixed, i;
	uint64_t draws = 0;

	assert_non_null(tried);
	assert_non_null(ok);
	for (job = 0; job < JOBS; job++) {
		struct job_sim js = {s, job, 0, -1, 0, &o.lost, tried, &first};
		for (fixed = -1, done = 0; done < s->steps; done += TRIAL_STEPS) {
			int fresh = 0, row;
			for (n = 0, r = 0; r < s->nrows; r++) {
				bool pass = true;
				for (k = 0; k < s->nknobs && fixed >= 0; k++)
					pass = pass && (!s->is_static[k] || strcmp(s->cell[r][k], s->cell[fixed][k]) == 0);
				if (pass)
					ok[n++] = r, fresh += !tried[r];
			}
			/* Configs not run yet first; every config once run, any of them. */
			if (fresh > 0) {
				for (i = 0, k = 0; i < n; i++)
					if (!tried[ok[i]])
						ok[k++] = ok[i];
				n = k;
			}
			row = ok[(int)(uniform(s->tag ^ mix(0x72616e64ull + draws++)) * n) % n];
			fixed = row;
			for (i = 0; i < TRIAL_STEPS && done + i < s->steps; i++)
				(void)job_step(&js, row);
		}
	}
	o.tried = count_tried(s, tried);
	o.first_beats = beats(s, first);
	free(ok);
	free(tried);
	return o;
}

/* ---- the gate and the replay ---- */

struct family {
	char name[32];
	int n;
	double final[MAX_SURFACES];
	double lost, lost_random;
	double first_least;
	double first_job[MAX_SURFACES];
};

static struct family *family_get(struct family *fams, int *nfams, const char *name)
{
	for (int i = 0; i < *nfams; i++)
		if (strcmp(fams[i].name, name) == 0)
			return &fams[i];
	if (*nfams >= MAX_FAMILIES)
		return NULL;
	memset(&fams[*nfams], 0, sizeof(fams[0]));
	snprintf(fams[*nfams].name, sizeof(fams[0].name), "%s", name);
	fams[*nfams].first_least = 1.0;
	return &fams[(*nfams)++];
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double least(const double *v, int n)
{
	double m = INFINITY;

	for (int i = 0; i < n; i++)
		m = fmin(m, v[i]);
	return m;
}

/* Replays one surface through the tuner and random search into its family; seed picks the noise. */
static void replay(const char *path, struct family *fams, int *nfams, bool verbose, int seed)
{
	struct surface *s = surface_load(path);
	struct outcome t, r;
	struct family *f;

	if (!s)
		fail_msg("%s: cannot load", path);
	s->tag ^= mix((uint64_t)seed);
	t = run_tuner(s);
	r = run_random(s);
	if (!(f = family_get(fams, nfams, s->family)))
		fail_msg("too many families");
	f->first_job[f->n] = t.first_job;
	f->final[f->n++] = t.final;
	f->lost += t.lost;
	f->lost_random += r.lost;
	f->first_least = fmin(f->first_least, t.first_beats);
	if (verbose)
		printf("%-40s %-14s final %.3f  lost %7.0f (random %7.0f)  tried %3d  first beats %3.0f%%  seed %d\n",
		       s->name, s->family, t.final, t.lost, r.lost, t.tried, 100.0 * t.first_beats, seed);
	surface_free(s);
}

static int has_suffix(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int cmp_text(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Replays every CSV of a directory (in name order) or a single file. */
static void replay_path(const char *path, struct family *fams, int *nfams, bool verbose, int seeds)
{
	struct stat st;
	struct dirent *de;
	char *names[MAX_SURFACES], full[1024];
	int n = 0, i;
	DIR *d;

	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode)) {
		for (i = 0; i < seeds; i++)
			replay(path, fams, nfams, verbose, i);
		return;
	}
	if (!(d = opendir(path)))
		fail_msg("%s: cannot open", path);
	while ((de = readdir(d)) && n < MAX_SURFACES)
		if (has_suffix(de->d_name, ".csv"))
			names[n++] = strdup(de->d_name);
	closedir(d);
	qsort(names, (size_t)n, sizeof(names[0]), cmp_text);
	for (i = 0; i < n; i++) {
		snprintf(full, sizeof(full), "%s/%s", path, names[i]);
		for (int k = 0; k < seeds; k++)
			replay(full, fams, nfams, verbose, k);
		free(names[i]);
	}
}

static void print_families(struct family *fams, int nfams)
{
	for (int i = 0; i < nfams; i++) {
		struct family *f = &fams[i];
		double lo = least(f->final, f->n), med = median(f->final, f->n), p5 = f->final[(int)(0.05 * (f->n - 1))];
		printf("family %-14s %3d surfaces: final least %.3f worst-5%% %.3f median %.3f, regret %.0f = %.2fx random's, "
		       "first config beats >= %.0f%%, first job %.2f of the best's (median)\n", f->name, f->n, lo, p5, med,
		       f->lost / f->n, f->lost / fmax(f->lost_random, 1e-9), 100.0 * f->first_least,
		       median(f->first_job, f->n));
	}
}

/*
 * The gate's thresholds (bench/tuner/README.md, "The gate").  Per family of
 * a few surfaces: the final pick's least and median share of the best (the
 * benchmark's targets, 0.95 and 0.99, the measured surfaces' too: on the
 * 2-CPU PyTorch ones they turn on whether inter-op threads past the CPUs
 * are a cliff, tuner_learner.c), the regret over the jobs against random search's on the same
 * jobs and draws (the benchmark's bound), and on the measured surfaces
 * (PyTorch on this machine, published GPU tables) the first config against
 * the surface's others.  Over the generated surfaces: the first job's median
 * share of the best (a first job near the optimum: the first config, and
 * exploring from it as it pays).  Deterministic, so a margin stands for what
 * a change may cost, not for noise.
 */
#define GATE_FINAL_LEAST 0.95
#define GATE_FINAL_MEDIAN 0.99
#define GATE_REGRET_VS_RANDOM 0.30
#define GATE_FIRST_BEATS 0.80
#define GATE_FIRST_JOB 0.78

static bool measured_family(const char *name)
{
	return strcmp(name, "csv-torch") == 0 || strcmp(name, "csv-gpu") == 0;
}

/* Whether family f passes; says why not. */
static bool family_passes(struct family *f)
{
	bool measured = measured_family(f->name);
	double lo = least(f->final, f->n), med = median(f->final, f->n), ratio = f->lost / fmax(f->lost_random, 1e-9);
	bool ok = lo >= GATE_FINAL_LEAST && med >= GATE_FINAL_MEDIAN && ratio <= GATE_REGRET_VS_RANDOM &&
		  (!measured || f->first_least >= GATE_FIRST_BEATS);

	if (!ok)
		printf("gate: family %s fails: final least %.3f (>= %.2f), median %.3f (>= %.2f), regret %.2fx random's "
		       "(<= %.2f), first config beats at least %.0f%% (>= %.0f%% on measured surfaces)\n", f->name, lo,
		       GATE_FINAL_LEAST, med, GATE_FINAL_MEDIAN, ratio, GATE_REGRET_VS_RANDOM, 100.0 * f->first_least,
		       100.0 * GATE_FIRST_BEATS);
	return ok;
}

static void test_gate(void **state)
{
	struct family fams[MAX_FAMILIES];
	const char *src = getenv("DLPROF_SRCDIR");
	double first[MAX_SURFACES], med;
	char path[1024];
	int nfams = 0, nfirst = 0, i, k;
	bool failed = false;

	(void)state;
	snprintf(path, sizeof(path), "%s/bench/tuner/surfaces", src ? src : ".");
	replay_path(path, fams, &nfams, false, 1);
	snprintf(path, sizeof(path), "%s/tests/fixtures/tuner-gate", src ? src : ".");
	replay_path(path, fams, &nfams, false, 1);
	print_families(fams, nfams);
	for (i = 0; i < nfams; i++) {
		failed = !family_passes(&fams[i]) || failed;
		for (k = 0; k < fams[i].n && strncmp(fams[i].name, "csv-", 4) != 0; k++)
			first[nfirst++] = fams[i].first_job[k];
	}
	med = nfirst > 0 ? median(first, nfirst) : 0.0;
	printf("gate: first job over the generated surfaces: %.3f of the best's (median; >= %.2f)\n", med, GATE_FIRST_JOB);
	assert_true(nfams >= 7 && nfirst >= 20);
	assert_true(med >= GATE_FIRST_JOB);
	assert_false(failed);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gate),
	};

	if (argc > 1) {
		struct family fams[MAX_FAMILIES];
		int nfams = 0;
		const char *seeds = getenv("DLPROF_GATE_SEEDS");
		for (int i = 1; i < argc; i++)
			replay_path(argv[i], fams, &nfams, true, seeds && atoi(seeds) > 0 ? atoi(seeds) : 1);
		print_families(fams, nfams);
		return 0;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
