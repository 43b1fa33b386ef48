/*
 * The diagnosis report (see diag_report.h).  The job's samples come back
 * from the store in buckets one window wide (wider for long jobs, so a
 * report never holds more than DIAG_MAX_WINDOWS); a gauge missing from a
 * bucket (a per-thread figure comes every store_interval, and a database
 * of an older release holds a repeated value once a minute) carries its
 * last value forward (see carry), and the job is judged as of its last
 * sample.  Fixes come from the
 * tuner's recommendation for the job's workload: the thread count it
 * learned (or its default), never above the CPUs the job may use.
 */
#include "diag_report.h"
#include "diag_straggler.h"

#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "cluster_ranks.h"
#include "config.h"
#include "energy_report.h"
#include "knobs.h"
#include "log.h"
#include "reported.h"
#include "sampler.h"
#include "store.h"
#include "store_series.h"
#include "tuner.h"

#define DIAG_MAX_WINDOWS 600
#define REPEAT_GAP_S 60.0          /* the longest gap a gauge is carried over (carry) */
#define DIAG_MAX_VERDICTS 32
#define DIAG_CACHE_MAX 1024

struct diag_cached {
	int64_t id;
	double computed;           /* monotonic seconds */
	unsigned kinds;
};

struct diag {
	struct diag_sources src;   /* set at creation */
	pthread_mutex_t lock;
	struct diag_options opt;   /* under lock */
	struct diag_cached *cache; /* under lock */
	size_t ncache;
};

/* Windows being filled from buckets; the CPU limits are kept apart until combined. */
#define NGAUGES (sizeof(gauges) / sizeof(gauges[0]))

struct windows {
	struct diag_window *w;
	double *affinity, *cpuset, *quota;
	double *last;              /* per window and gauge: its bucket's latest value */
	size_t n;
	size_t filled;             /* windows up to the last that holds a sample */
};

/* Gauges taken as the bucket's mean, by sample name. */
static const struct {
	const char *name;
	size_t off;
} gauges[] = {
	{"cpu.cores", offsetof(struct diag_window, cpu_cores)},
	{"sched.wait_cores", offsetof(struct diag_window, wait_cores)},
	{"sched.switches_per_s", offsetof(struct diag_window, switches_per_s)},
	{"cpu.threads", offsetof(struct diag_window, threads)},
	{"cpu.busy_threads", offsetof(struct diag_window, busy_threads)},
	{"cpu.processes", offsetof(struct diag_window, processes)},
	{"cpu.thread_max_cores", offsetof(struct diag_window, thread_max_cores)},
	{"cpu.busy_thread_cores", offsetof(struct diag_window, busy_thread_cores)},
	{"mem.rss_bytes", offsetof(struct diag_window, rss_bytes)},
	{"mem.limit_bytes", offsetof(struct diag_window, mem_limit_bytes)},
	{"mem.major_faults_per_s", offsetof(struct diag_window, major_faults_per_s)},
	{"gpu.count", offsetof(struct diag_window, gpus)},
	{"gpu.util_percent", offsetof(struct diag_window, gpu_util_percent)},
	{"perf.ipc", offsetof(struct diag_window, ipc)},
	{"papi.ipc", offsetof(struct diag_window, ipc)},
	{"perf.instructions_per_s", offsetof(struct diag_window, instructions_per_s)},
	{"papi.instructions_per_s", offsetof(struct diag_window, instructions_per_s)},
	{"perf.llc_misses_per_s", offsetof(struct diag_window, llc_misses_per_s)},
	{"papi.cache_misses_per_s", offsetof(struct diag_window, llc_misses_per_s)},
	{"papi.fp_ops_per_s", offsetof(struct diag_window, flops)},
};

static double *
field(struct diag_window *w, size_t off)
{
	return (double *)((char *)w + off);
}

/* Adds v to a sum that may still be NAN. */
static void
add(double *sum, double v)
{
	*sum = isfinite(*sum) ? *sum + v : v;
}

static bool
ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

static void
on_bucket(const struct store_bucket *b, void *arg)
{
	struct windows *ws = arg;
	struct diag_window *w;
	size_t i;

	if (b->bucket < 0 || (size_t)b->bucket >= ws->n)
		return;
	if ((size_t)b->bucket + 1 > ws->filled)
		ws->filled = (size_t)b->bucket + 1;
	w = &ws->w[b->bucket];
	for (i = 0; i < NGAUGES; i++)
		if (strcmp(b->name, gauges[i].name) == 0) {
			*field(w, gauges[i].off) = b->mean;
			ws->last[(size_t)b->bucket * NGAUGES + i] = b->last;
			return;
		}
	if (strcmp(b->name, "cpu.allowed") == 0)
		ws->affinity[b->bucket] = b->mean;
	else if (strcmp(b->name, "cpu.cpuset_cpus") == 0)
		ws->cpuset[b->bucket] = b->mean;
	else if (strcmp(b->name, "cpu.quota_cores") == 0)
		ws->quota[b->bucket] = b->mean;
	else if (reported_of(b->name) == REPORTED_STEP_TIME_S)
		add(&w->step_s, b->sum);
	else if (reported_of(b->name) == REPORTED_PHASE_TIME_S) {
		switch (diag_phase_class(b->phase)) {
		case DIAG_PHASE_DATA: add(&w->data_s, b->sum); break;
		case DIAG_PHASE_COMM: add(&w->comm_s, b->sum); break;
		case DIAG_PHASE_CHECKPOINT:
			add(&w->checkpoint_s, b->sum);
			add(&w->checkpoints, b->count);
			break;
		case DIAG_PHASE_OTHER: break;
		}
	} else if (strncmp(b->name, "likwid.", 7) == 0 && ends_with(b->name, "mflop_s"))
		w->flops = b->mean * 1e6;
	else if (strncmp(b->name, "likwid.", 7) == 0 && ends_with(b->name, "memory_bandwidth_mbytes_s"))
		w->bandwidth = b->mean * 1e6;
}

/*
 * A gauge missing from a bucket keeps the latest value stored before it
 * for up to REPEAT_GAP_S (a per-thread figure comes every store_interval;
 * databases written before every tick was stored hold a repeat once a
 * minute): the value at the end of the last bucket that held it, not that
 * bucket's mean (a resident size that rose within it, then held).  latest
 * (stride lstride) gives it per bucket; NULL: the bucket's own value.
 */
static void
carry(double *v, size_t stride, const double *latest, size_t lstride, size_t n, double width)
{
	size_t i, last = 0;
	bool seen = false;
	double keep = NAN;

	for (i = 0; i < n; i++) {
		double *x = (double *)((char *)v + i * stride);
		if (isfinite(*x)) {
			last = i;
			seen = true;
			keep = latest && isfinite(latest[i * lstride]) ? latest[i * lstride] : *x;
		} else if (seen && (double)(i - last) * width <= REPEAT_GAP_S + width) {
			*x = keep;
		}
	}
}

static double
smallest_positive(double a, double b)
{
	if (!(a > 0))
		return b > 0 ? b : NAN;
	return b > 0 && b < a ? b : a;
}

static void
windows_finish(struct windows *ws, double width)
{
	size_t i, g;

	for (g = 0; g < NGAUGES; g++)
		carry(field(&ws->w[0], gauges[g].off), sizeof(struct diag_window), ws->last + g, NGAUGES, ws->n, width);
	carry(ws->affinity, sizeof(double), NULL, 0, ws->n, width);
	carry(ws->cpuset, sizeof(double), NULL, 0, ws->n, width);
	carry(ws->quota, sizeof(double), NULL, 0, ws->n, width);
	for (i = 0; i < ws->n; i++)
		ws->w[i].allowed_cpus = smallest_positive(smallest_positive(ws->affinity[i], ws->cpuset[i]), ws->quota[i]);
}

static void
windows_free(struct windows *ws)
{
	free(ws->w);
	free(ws->affinity);
	free(ws->cpuset);
	free(ws->quota);
	free(ws->last);
}

/* The job's windows over [from, to); STORE_EIO when out of memory. */
static int
windows_read(struct store *st, int64_t id, double from, double to, double min_width, struct windows *ws,
	     double *width)
{
	size_t i;
	int r;

	*width = (to - from) / DIAG_MAX_WINDOWS > min_width ? (to - from) / DIAG_MAX_WINDOWS : min_width;
	memset(ws, 0, sizeof(*ws));
	ws->n = to > from ? (size_t)ceil((to - from) / *width) : 0;
	if (ws->n == 0)
		return STORE_OK;
	ws->w = malloc(ws->n * sizeof(*ws->w));
	ws->affinity = malloc(ws->n * sizeof(double));
	ws->cpuset = malloc(ws->n * sizeof(double));
	ws->quota = malloc(ws->n * sizeof(double));
	ws->last = malloc(ws->n * NGAUGES * sizeof(double));
	if (!ws->w || !ws->affinity || !ws->cpuset || !ws->quota || !ws->last) {
		log_warn("%s: malloc", __func__);
		windows_free(ws);
		return STORE_EIO;
	}
	for (i = 0; i < ws->n; i++) {
		diag_window_clear(&ws->w[i], from + (double)i * *width, fmin(from + (double)(i + 1) * *width, to));
		ws->affinity[i] = ws->cpuset[i] = ws->quota[i] = NAN;
		for (size_t g = 0; g < NGAUGES; g++)
			ws->last[i * NGAUGES + g] = NAN;
	}
	r = store_series_buckets(st, id, NULL, from, to, *width, on_bucket, ws);
	/*
	 * A job is judged as of its last sample: windows after it (a stalled
	 * job, a clock stepped forward) hold nothing to judge.
	 */
	ws->n = ws->filled;
	if (r == STORE_OK && ws->n > 0)
		windows_finish(ws, *width);
	return r;
}

static bool
sampled(const struct windows *ws)
{
	for (size_t i = 0; i < ws->n; i++)
		if (isfinite(ws->w[i].cpu_cores))
			return true;
	return false;
}

/* One job diagnosed: its view from the store and its verdicts. */
struct job_diag {
	json_t *job;
	bool running;
	double from, to;
	struct diag_verdict v[DIAG_MAX_VERDICTS];
	size_t nv;
	bool undecided;
	char why[320];             /* what would decide compute- vs memory-bound */
};

static void
options_get(struct diag *d, struct diag_options *o)
{
	pthread_mutex_lock(&d->lock);
	*o = d->opt;
	pthread_mutex_unlock(&d->lock);
}

/* A running job over its last lookback_s (life: from its start); an ended one over its whole life. */
static int
job_diagnose(struct diag *d, int64_t id, const struct diag_options *o, bool life, struct job_diag *jd)
{
	struct windows ws;
	double started, width, now = clock_now_s();
	int r;

	memset(jd, 0, sizeof(*jd));
	if ((r = store_job_get(d->src.store, id, &jd->job)) != STORE_OK)
		return r;
	jd->running = config_enum_value(config_job_state_names, json_string_value(json_object_get(jd->job, "state"))) ==
		      JOB_STATE_RUNNING;
	started = json_number_value(json_object_get(jd->job, "started"));
	if (jd->running) {
		jd->to = now;
		jd->from = !life && now - o->lookback_s > started ? now - o->lookback_s : started;
	} else {
		jd->from = started;
		/* The window that holds the end is stored when it closes, a little after. */
		jd->to = json_number_value(json_object_get(jd->job, "ended")) + o->window_s;
	}
	if ((r = windows_read(d->src.store, id, jd->from, jd->to, o->window_s, &ws, &width)) != STORE_OK) {
		json_decref(jd->job);
		jd->job = NULL;
		return r;
	}
	if (ws.n > 0)
		jd->to = ws.w[ws.n - 1].t1;
	jd->nv = diag_evaluate(ws.w, ws.n, &o->th, jd->v, DIAG_MAX_VERDICTS);
	/* Only a job whose processes were sampled could have been counted. */
	jd->undecided = sampled(&ws) && diag_undecided(ws.w, ws.n, jd->why, sizeof(jd->why));
	windows_free(&ws);
	return STORE_OK;
}

/* Whether verdict v belongs in the report (life: every one does): a running job shows what holds now. */
static bool
shown(const struct job_diag *jd, const struct diag_verdict *v, bool life)
{
	return life || !jd->running || v->active;
}

/* Where the tuner's number comes from, priced: "learned on 12 jobs of this workload: +48% over ...". */
static void
fix_source(const json_t *rec, char *buf, size_t len)
{
	const char *source = json_string_value(json_object_get(rec, "source"));
	json_t *gain = json_object_get(rec, "expected_gain");
	json_int_t jobs = json_integer_value(json_object_get(rec, "jobs"));

	if (source != NULL && strcmp(source, "learned") == 0 && json_is_number(gain))
		snprintf(buf, len, "learned on %lld job(s) of this workload: %+.0f%% over the default config",
			 (long long)jobs, json_number_value(gain) * 100);
	else if (source != NULL && strcmp(source, "similar") == 0 && json_is_number(gain))
		snprintf(buf, len, "learned on similar workloads: %+.0f%% expected over the default config",
			 json_number_value(gain) * 100);
	else
		snprintf(buf, len, "the tuner's default (nothing learned for this workload yet: gain not known)");
}

/* {"text","env":{env: value},"config":{knob: value},"source","expected_gain","jobs"}, or NULL. */
static json_t *
fix_json(const json_t *rec, const char *text, const char *env, const char *knob, long value)
{
	char src[160], line[400];

	fix_source(rec, src, sizeof(src));
	snprintf(line, sizeof(line), "%s; %s", text, src);
	return json_pack("{s:s,s:{s:o},s:{s:I},s:O*,s:O*,s:O*}", "text", line, "env", env, json_sprintf("%ld", value),
			 "config", knob, (json_int_t)value, "source", json_object_get(rec, "source"),
			 "expected_gain", json_object_get(rec, "expected_gain"), "jobs", json_object_get(rec, "jobs"));
}

/*
 * The thread count to run with: the tuner's, never above the CPUs the job
 * may use; an oversubscribed job running a config whose intra-op times
 * inter-op threads exceed them is told so (nested pools multiply).
 */
static json_t *
fix_threads(const struct diag_verdict *v, const json_t *rec, long threads, const json_t *config)
{
	double allowed = diag_evidence(v, "allowed_cpus");
	json_int_t intra = json_integer_value(json_object_get(config, knob_name(KNOB_INTRA_THREADS)));
	json_int_t inter = json_integer_value(json_object_get(config, knob_name(KNOB_INTEROP_THREADS)));
	char text[240];

	if (isfinite(allowed) && allowed >= 1 && threads > (long)allowed)
		threads = (long)allowed;
	if (v->kind == DIAG_UNDERUSE && isfinite(allowed) && threads < (long)allowed)
		snprintf(text, sizeof(text), "ask for %ld CPU(s): the best known setting runs %ld thread(s)", threads,
			 threads);
	else if (v->kind == DIAG_OVERSUBSCRIBED && intra > 0 && inter > 1 && isfinite(allowed) &&
		 (double)(intra * inter) > allowed)
		snprintf(text, sizeof(text), "run with OMP_NUM_THREADS=%ld (it runs %lld intra-op x %lld inter-op "
			 "threads on %.0f CPUs)", threads, (long long)intra, (long long)inter, allowed);
	else
		snprintf(text, sizeof(text), "run with OMP_NUM_THREADS=%ld", threads);
	return fix_json(rec, text, "OMP_NUM_THREADS", knob_name(KNOB_INTRA_THREADS), threads);
}

/* The fix the tuner can price for verdict v of job (its store view), or NULL. */
static json_t *
fix_for(struct tuner *t, const struct diag_verdict *v, const json_t *job)
{
	const char *workload = json_string_value(json_object_get(job, "workload"));
	json_t *rec, *config, *fix = NULL, *knob;
	char text[200];

	if (t == NULL || workload == NULL ||
	    (v->kind != DIAG_UNDERUSE && v->kind != DIAG_OVERSUBSCRIBED && v->kind != DIAG_INPUT_BOUND))
		return NULL;
	rec = tuner_recommend(t, workload, json_object_get(job, "params"),
			      config_objective(json_string_value(json_object_get(job, "objective"))));
	config = json_object_get(rec, "config");
	if (v->kind != DIAG_INPUT_BOUND && json_is_integer(knob = json_object_get(config, knob_name(KNOB_INTRA_THREADS)))) {
		fix = fix_threads(v, rec, (long)json_integer_value(knob), json_object_get(job, "config"));
	} else if (v->kind == DIAG_INPUT_BOUND &&
		   json_is_integer(knob = json_object_get(config, knob_name(KNOB_DATALOADER_WORKERS)))) {
		snprintf(text, sizeof(text), "run with DLPROF_DATALOADER_WORKERS=%lld",
			 (long long)json_integer_value(knob));
		fix = fix_json(rec, text, "DLPROF_DATALOADER_WORKERS", knob_name(KNOB_DATALOADER_WORKERS),
			       (long)json_integer_value(knob));
	}
	json_decref(rec);
	return fix;
}

static json_t *
verdict_json(struct diag *d, const struct job_diag *jd, const struct diag_verdict *v)
{
	json_t *figures = json_object(), *o, *fix;
	bool active = jd->running && v->active;
	size_t i;

	for (i = 0; i < v->nevidence; i++)
		json_object_set_new(figures, v->evidence[i].name, json_real(v->evidence[i].value));
	o = json_pack("{s:s,s:f,s:o,s:b,s:{s:f,s:f,s:o},s:s}", "kind", diag_kind_name(v->kind), "since", v->since,
		      "until", active ? json_null() : json_real(v->until), "active", active, "evidence", "from",
		      v->since, "to", v->until, "figures", figures, "hint", v->hint);
	if (o != NULL && (fix = fix_for(d->src.tuner, v, jd->job)) != NULL)
		json_object_set_new(o, "fix", fix);
	return o;
}

/* One rank's figures as the straggler rule takes them: means per step. */
static void
rank_figures(const struct rank_row *k, struct diag_rank *d)
{
	double steps = (double)k->steps;

	*d = (struct diag_rank){.rank = k->rank, .node = k->node, .steps = steps, .step_s = NAN, .comm_s = NAN,
				.data_s = NAN, .cpu_cores = k->cpu_cores, .wait_cores = k->wait_cores};
	if (steps > 0) {
		d->step_s = k->step_s / steps;
		d->comm_s = k->comm_s / steps;
		d->data_s = k->data_s / steps;
	}
}

/*
 * A distributed job's ranks in the report (each one's step time and the
 * share of it spent waiting in collectives) and, when one holds the others
 * back, the straggler verdict, first: it is what the job waits for.
 */
static int
ranks_report(struct diag *d, int64_t id, const struct job_diag *jd, json_t *ranks, json_t *verdicts)
{
	struct rank_row *rows = NULL;
	struct diag_rank *dr;
	struct diag_straggler s;
	json_t *v;
	size_t n = 0, i;
	int r;

	if ((r = store_job_ranks(d->src.store, id, &rows, &n)) != STORE_OK || n == 0) {
		free(rows);
		return r;
	}
	/* The ranks other nodes shared: the straggler may run there (figures as the cluster thread last read them). */
	if (d->src.ranks != NULL && cluster_ranks_append(d->src.ranks, id, &rows, &n) < 0)
		log_warnx("%s: the other nodes' ranks are left out: no memory", __func__);
	if ((dr = calloc(n, sizeof(*dr))) == NULL) {
		free(rows);
		log_warn("%s: calloc", __func__);
		return STORE_EIO;
	}
	for (i = 0; i < n; i++) {
		rank_figures(&rows[i], &dr[i]);
		json_array_append_new(ranks, json_pack("{s:i,s:s,s:I,s:o,s:o}", "rank", dr[i].rank, "node", dr[i].node,
						       "steps", (json_int_t)rows[i].steps, "step_time_s",
						       isfinite(dr[i].step_s) ? json_real(dr[i].step_s) : json_null(),
						       "comm_share", dr[i].step_s > 0 ? json_real(dr[i].comm_s / dr[i].step_s)
										  : json_null()));
	}
	if (diag_straggler_find(dr, n, &s)) {
		v = json_pack("{s:s,s:i,s:s,s:f,s:s,s:s,s:f,s:o,s:b,s:{s:f,s:f,s:{s:f,s:f,s:f}},s:s}", "kind",
			      "straggler", "rank", s.rank, "node", s.node, "slower", s.slower, "cause",
			      diag_straggler_cause_name(s.cause), "measured_by", s.from_cpu ? "cpu_wait" : "collectives",
			      "since", jd->from, "until",
			      jd->running ? json_null() : json_real(jd->to), "active", jd->running, "evidence", "from",
			      jd->from, "to", jd->to, "figures", "own_step_s", s.own_s, "others_own_step_s",
			      s.median_own_s, "others_wait_share", s.others_wait_share, "hint", s.hint);
		if (v != NULL)
			json_array_insert_new(verdicts, 0, v);
	}
	free(dr);
	free(rows);
	return STORE_OK;
}

/* One line a person reads first: the first verdict, or that none holds. */
static json_t *
headline(const struct job_diag *jd, const json_t *verdicts, const struct diag_options *o)
{
	json_t *first = json_array_get(verdicts, 0);

	if (first != NULL)
		return json_sprintf("%s: %s", json_string_value(json_object_get(first, "kind")),
				    json_string_value(json_object_get(first, "hint")));
	if (jd->running)
		return json_sprintf("No problem found over the last %.0f s", fmin(jd->to - jd->from, o->lookback_s));
	return json_string("No problem found over the job's life");
}

/* The undecided note with what the counting collectors say about this node ("perf: no PMU ..."). */
static json_t *
why_uncounted(struct diag *d, const char *why)
{
	json_t *cols = d->src.sampler != NULL ? sampler_collectors_json(d->src.sampler) : NULL, *c;
	char text[1024];
	size_t i, o = (size_t)snprintf(text, sizeof(text), "%s", why);

	json_array_foreach(cols, i, c) {
		const char *name = json_string_value(json_object_get(c, "name"));
		const char *reason = json_string_value(json_object_get(c, "reason"));
		if (name != NULL && reason != NULL && reason[0] != '\0' && o < sizeof(text) &&
		    (strcmp(name, "perf") == 0 || strcmp(name, "papi") == 0))
			o += (size_t)snprintf(text + o, sizeof(text) - o, "; %s: %s", name, reason);
	}
	json_decref(cols);
	return json_string(text);
}

/*
 * Job id diagnosed into *out (allocated; the caller frees it and its job)
 * with its verdicts as JSON, the straggler first: those its report shows,
 * or with life every one of its whole life; and its ranks.
 */
static int
diagnose_json(struct diag *d, int64_t id, const struct diag_options *o, bool life, struct job_diag **out,
	      json_t **verdicts, json_t **ranks)
{
	struct job_diag *jd;
	size_t i;
	int r;

	if ((jd = malloc(sizeof(*jd))) == NULL) {
		log_warn("%s: malloc", __func__);
		return STORE_EIO;
	}
	if ((r = job_diagnose(d, id, o, life, jd)) != STORE_OK) {
		free(jd);
		return r;
	}
	*verdicts = json_array();
	*ranks = json_array();
	for (i = 0; i < jd->nv; i++)
		if (shown(jd, &jd->v[i], life))
			json_array_append_new(*verdicts, verdict_json(d, jd, &jd->v[i]));
	if ((r = ranks_report(d, id, jd, *ranks, *verdicts)) != STORE_OK) {
		json_decref(*ranks);
		json_decref(*verdicts);
		json_decref(jd->job);
		free(jd);
		return r;
	}
	*out = jd;
	return STORE_OK;
}

int
diag_report(struct diag *d, int64_t id, json_t **out)
{
	struct diag_options o;
	struct job_diag *jd;
	json_t *verdicts, *undecided, *ranks;
	int r;

	if (d == NULL)
		return STORE_ENOTFOUND;
	options_get(d, &o);
	if ((r = diagnose_json(d, id, &o, false, &jd, &verdicts, &ranks)) != STORE_OK)
		return r;
	undecided = json_array();
	if (jd->undecided)
		json_array_append_new(undecided, why_uncounted(d, jd->why));
	*out = json_pack("{s:I,s:O,s:s,s:f,s:f,s:o,s:o,s:o,s:o,s:o*}", "job", (json_int_t)id, "workload",
			 json_object_get(jd->job, "workload"), "state",
			 config_enum_name(config_job_state_names, jd->running ? JOB_STATE_RUNNING : JOB_STATE_ENDED), "from",
			 jd->from, "to", jd->to, "headline", headline(jd, verdicts, &o), "verdicts", verdicts,
			 "undecided", undecided, "ranks", ranks, "energy",
			 energy_report_json(d->src.store, d->src.sampler, jd->job));
	json_decref(jd->job);
	free(jd);
	return *out != NULL ? STORE_OK : STORE_EIO;
}

int
diag_history(struct diag *d, int64_t id, json_t **out)
{
	struct diag_options o;
	struct job_diag *jd;
	json_t *ranks;
	int r;

	if (d == NULL)
		return STORE_ENOTFOUND;
	options_get(d, &o);
	if ((r = diagnose_json(d, id, &o, true, &jd, out, &ranks)) != STORE_OK)
		return r;
	json_decref(ranks);
	json_decref(jd->job);
	free(jd);
	return STORE_OK;
}

/* Remembers a job's active kinds; when the cache is full, entries older than a window make room. */
static void
cache_put(struct diag *d, int64_t id, double mono, unsigned kinds)
{
	size_t i, k;

	pthread_mutex_lock(&d->lock);
	for (i = 0; i < d->ncache && d->cache[i].id != id; i++)
		;
	if (i == d->ncache && d->ncache == DIAG_CACHE_MAX) {
		for (i = k = 0; i < d->ncache; i++)
			if (mono - d->cache[i].computed < d->opt.window_s)
				d->cache[k++] = d->cache[i];
		d->ncache = k;
		i = k;
	}
	if (i < DIAG_CACHE_MAX) {
		d->cache[i] = (struct diag_cached){id, mono, kinds};
		if (i == d->ncache)
			d->ncache++;
	}
	pthread_mutex_unlock(&d->lock);
}

int
diag_active(struct diag *d, int64_t id, unsigned *kinds)
{
	struct diag_options o;
	struct job_diag *jd;
	double mono = clock_mono_s();
	size_t i;
	int r;

	*kinds = 0;
	if (d == NULL)
		return STORE_OK;
	pthread_mutex_lock(&d->lock);
	o = d->opt;
	for (i = 0; i < d->ncache && d->cache[i].id != id; i++)
		;
	if (i < d->ncache && mono - d->cache[i].computed < o.window_s) {
		*kinds = d->cache[i].kinds;
		pthread_mutex_unlock(&d->lock);
		return STORE_OK;
	}
	pthread_mutex_unlock(&d->lock);
	if ((jd = malloc(sizeof(*jd))) == NULL) {
		log_warn("%s: malloc", __func__);
		return STORE_EIO;
	}
	if ((r = job_diagnose(d, id, &o, false, jd)) != STORE_OK) {
		free(jd);
		return r;
	}
	for (i = 0; i < jd->nv; i++)
		if (jd->running && jd->v[i].active)
			*kinds |= 1u << jd->v[i].kind;
	json_decref(jd->job);
	free(jd);
	cache_put(d, id, mono, *kinds);
	return STORE_OK;
}

/* See diag_report.h. */
struct diag_options
diag_options_of(const struct config *cfg)
{
	return (struct diag_options){
		.th = {.sustain_s = cfg->diag_sustain_s, .underuse_share = cfg->diag_underuse_share,
		       .gpu_idle_percent = cfg->diag_gpu_idle_percent, .oversub_ratio = cfg->diag_oversub_ratio,
		       .input_share = cfg->diag_input_share, .comm_share = cfg->diag_comm_share,
		       .checkpoint_share = cfg->diag_checkpoint_share, .mtbf_s = cfg->diag_mtbf_hours * 3600,
		       .memory_share = cfg->diag_memory_share, .major_faults_per_s = cfg->diag_major_faults,
		       .imbalance_ratio = cfg->diag_imbalance_ratio, .ipc_low = cfg->diag_ipc_low,
		       .llc_mpki = cfg->diag_llc_mpki, .ipc_high = cfg->diag_ipc_high,
		       .peak_flops = cfg->diag_peak_flops, .peak_bandwidth = cfg->diag_peak_bandwidth},
		/* Verdicts are judged per stored window: finer ones do not exist. */
		.window_s = cfg->store_interval_s > cfg->interval_s ? cfg->store_interval_s : cfg->interval_s,
		.lookback_s = cfg->diag_lookback_s,
	};
}

struct diag *
diag_new(const struct diag_options *opt, const struct diag_sources *src)
{
	struct diag *d = calloc(1, sizeof(*d));
	int rc;

	if (d == NULL || (d->cache = calloc(DIAG_CACHE_MAX, sizeof(*d->cache))) == NULL) {
		log_warn("%s: calloc", __func__);
		free(d);
		return NULL;
	}
	if ((rc = pthread_mutex_init(&d->lock, NULL)) != 0) {
		log_warnx("%s: cannot create the lock: %s", __func__, strerror(rc));
		free(d->cache);
		free(d);
		return NULL;
	}
	d->opt = *opt;
	d->src = *src;
	return d;
}

void
diag_free(struct diag *d)
{
	if (d == NULL)
		return;
	pthread_mutex_destroy(&d->lock);
	free(d->cache);
	free(d);
}

void
diag_set_options(struct diag *d, const struct diag_options *opt)
{
	pthread_mutex_lock(&d->lock);
	d->opt = *opt;
	d->ncache = 0;
	pthread_mutex_unlock(&d->lock);
}
