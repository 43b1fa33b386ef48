/*
 * The sampler thread (see sampler.h).  Each tick: discovery finds the jobs
 * and their processes, every collector that is up samples the node and each
 * job, the values join the store window (sample_window.h), and a snapshot
 * of each series' newest value is published for /metrics; each tick's
 * values go to the store's writer as one posted batch.  Every store
 * interval the tick is a detail tick: collectors also read what is costly
 * per thread.  The core handles failure, as
 * collectd does: a collector whose init fails is retried with a doubling
 * interval, one whose sampling fails is suspended with a doubling interval,
 * and each change of state is logged once.  Its own cost is measured with
 * the thread's CPU clock, per collector and per job.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "array.h"
#include "clock.h"
#include "collector.h"
#include "discovery.h"
#include "energy.h"
#include "gpu_pick.h"
#include "log.h"
#include "metrics.h"
#include "sample_window.h"
#include "sampler.h"
#include "store.h"
#include "store_labels.h"
#include "store_series.h"

#define SAMPLER_MAX_COLLECTORS 8
/* Longest wait between retries of a failing collector. */
#define SAMPLER_BACKOFF_MAX_S 600.0
/*
 * First wait before probing an unavailable collector again, by default: what
 * makes one unavailable (no PMU, no driver, no privilege) rarely changes
 * within a minute, and a probe can cost milliseconds (PAPI's library load
 * and init).
 */
#define SAMPLER_PROBE_RETRY_S 60.0
/* How often the store's upkeep runs: its flush into blocks, its tiers' retention and budget. */
#define SAMPLER_MAINTAIN_EVERY_S 60.0

struct sampler_col {
	const struct collector *c;
	void *ctx;                       /* NULL: not initialised */
	bool probed;                     /* init tried at least once */
	char reason[256];                /* why unavailable, or a note on what works in part */
	bool failing;                    /* sampling failed last time */
	double backoff_s;                /* current retry interval; 0: none */
	double next_try;                 /* monotonic time of the next init or sample */
	unsigned long long failures;
	double cpu_s;                    /* thread CPU spent in it, total */
	json_t *detail;                  /* its describe(), or NULL */
};

/* What /api/v1/node and /metrics read; guarded by sampler.lock. */
struct sampler_pub {
	struct sampler_snapshot snap;
	size_t values_cap, jobs_cap;     /* room in snap's arrays */
	json_t *collectors;              /* array of {name, status, reason[, detail]} */
	struct gpu_seen gpus[GPU_PICK_MAX]; /* the GPUs the NVML collector describes while it is up: index, uuid */
	size_t ngpus;
};

/*
 * The arrays the next snapshot is built in: the published ones of the tick
 * before, swapped back, so a tick allocates nothing (a fresh 100 kB array a
 * tick came back from the allocator as page faults).  Sampler thread only.
 */
struct sampler_spare {
	struct collector_value *values;
	struct sampler_job_cost *jobs;
	size_t values_cap, jobs_cap;
};

struct sampler {
	struct store *store;             /* ticks posted to it, its series kept */
	struct jobs *jobs;               /* discovery's jobs registered and ended through it */
	sampler_tick_fn *on_tick;        /* under lock; called after each published tick */
	void *on_tick_ctx;               /* under lock */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;                       /* under lock */
	double interval_s;               /* under lock */
	double tick_interval_s;          /* the sampler thread's copies for this tick */
	double tick_store_s;
	struct tick_grid grid;           /* the last tick's stored time (tick_grid_stamp) */
	double store_interval_s;         /* under lock; >= interval_s when used */
	double discovery_interval_s;     /* under lock */
	char proc_root[256], sys_root[256], nvml_library[512];
	struct collector_env env;
	double probe_retry_s;
	double next_maintain;
	struct sampler_col col[SAMPLER_MAX_COLLECTORS];
	size_t ncol;
	struct discovery *disc;
	struct energy_attr *energy;      /* jobs' shares of the node's CPU energy */
	struct collector_out out;
	struct sample_window win;        /* values since the last store */
	double window_mono;              /* when the window opened; 0: before the first tick */
	struct sample *batch;            /* scratch for the store */
	size_t batch_cap;
	unsigned long long ticks;
	double progress_mono;            /* under lock: when the thread last got somewhere */
	double cpu_total_s;
	struct sampler_pub pub;          /* under lock */
	struct sampler_spare spare;
	bool cols_changed;               /* a collector's state changed since pub.collectors was built */
};

static double
thread_cpu_s(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) < 0)
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double
current_interval(struct sampler *s)
{
	double v;

	pthread_mutex_lock(&s->lock);
	v = s->interval_s;
	pthread_mutex_unlock(&s->lock);
	return v;
}

/* A failure: wait twice as long as last time (at first, first_s) before the next try. */
static void
col_back_off(struct sampler_col *sc, double mono, double first_s)
{
	sc->backoff_s = sc->backoff_s > 0 ? sc->backoff_s * 2 : first_s;
	if (sc->backoff_s > SAMPLER_BACKOFF_MAX_S)
		sc->backoff_s = SAMPLER_BACKOFF_MAX_S;
	sc->next_try = mono + sc->backoff_s;
}

static void
col_try_init(struct sampler *s, struct sampler_col *sc, double mono)
{
	char why[256] = "";

	sc->ctx = sc->c->init(&s->env, why, sizeof(why));
	sc->probed = true;
	s->cols_changed = true;
	if (sc->ctx == NULL) {
		if (strcmp(why, sc->reason) != 0 || sc->backoff_s == 0)
			log_info("collector %s unavailable: %s", sc->c->name, why);
		snprintf(sc->reason, sizeof(sc->reason), "%s", why[0] ? why : "initialisation failed");
		col_back_off(sc, mono, s->probe_retry_s);
		return;
	}
	if (why[0] != '\0')
		log_info("collector %s available (%s)", sc->c->name, why);
	else
		log_info("collector %s available", sc->c->name);
	snprintf(sc->reason, sizeof(sc->reason), "%s", why);
	sc->backoff_s = 0;
	sc->next_try = 0;
	sc->failing = false;
	json_decref(sc->detail);
	sc->detail = sc->c->describe != NULL ? sc->c->describe(sc->ctx) : NULL;
}

/* Applies a sampling result: back off, reinitialise later, or recover. */
static void
col_result(struct sampler *s, struct sampler_col *sc, int rc, const char *why, double mono)
{
	if (rc == COLLECTOR_OK) {
		if (sc->failing) {
			log_info("collector %s recovered", sc->c->name);
			s->cols_changed = true;
		}
		sc->failing = false;
		sc->backoff_s = 0;
		return;
	}
	sc->failures++;
	s->cols_changed = true;
	if (!sc->failing)
		log_warnx("collector %s failed: %s; retrying with backoff", sc->c->name, why);
	sc->failing = true;
	col_back_off(sc, mono, current_interval(s) * 2);
	if (rc == COLLECTOR_UNSUPPORTED) {
		snprintf(sc->reason, sizeof(sc->reason), "%s", why);
		sc->c->fini(sc->ctx);
		sc->ctx = NULL;
		json_decref(sc->detail);
		sc->detail = NULL;
	}
}

/*
 * One collector over the node and every job.  On detail ticks it adds each
 * job's CPU cost to cost[]; on the others it does not time jobs, since
 * reading the thread CPU clock twice a job per collector cost more than the
 * cheap ticks' reads themselves.
 */
static void
col_run(struct sampler *s, struct sampler_col *sc, const struct discovery_job *jobs, size_t njobs, double *cost,
	double mono)
{
	struct collector_job cj;
	char why[256] = "";
	double c0, c1 = 0, c2;
	size_t i;
	int rc = COLLECTOR_OK;

	if (sc->ctx == NULL && mono < sc->next_try)
		return;
	c0 = thread_cpu_s();
	if (sc->ctx == NULL)
		col_try_init(s, sc, mono);
	if (sc->ctx == NULL || mono < sc->next_try) {
		sc->cpu_s += thread_cpu_s() - c0;
		return;
	}
	if (sc->c->sample_node != NULL)
		rc = sc->c->sample_node(sc->ctx, &s->out, why, sizeof(why));
	/* One clock read per job, each closing the last one's span: the clock is a system call. */
	if (s->out.detail)
		c1 = thread_cpu_s();
	for (i = 0; rc == COLLECTOR_OK && sc->c->sample_job != NULL && i < njobs; i++) {
		cj.id = jobs[i].id;
		cj.pids = jobs[i].pids;
		cj.npids = jobs[i].npids;
		cj.cgroup = jobs[i].cgroup[0] != '\0' ? jobs[i].cgroup : NULL;
		cj.cgroup_version = jobs[i].cgroup_version;
		rc = sc->c->sample_job(sc->ctx, &cj, &s->out, why, sizeof(why));
		if (s->out.detail) {
			c2 = thread_cpu_s();
			cost[i] += c2 - c1;
			c1 = c2;
		}
	}
	col_result(s, sc, rc, why, mono);
	sc->cpu_s += thread_cpu_s() - c0;
}

/* See sampler.h. */
double
tick_grid_stamp(struct tick_grid *g, double interval, double now, double scheduled)
{
	double k, t = NAN;

	if (!(interval > 0))
		return round(now * 1000.0) / 1000.0;
	k = (scheduled - g->anchor_mono) / interval;
	if (g->anchor_mono > 0 && g->interval == interval && fabs(k - round(k)) < 1e-3)
		t = g->anchor_t + round(k) * interval;
	/* A new cadence (the first tick, a slow tick, a new interval) or a clock set: anchor again. */
	if (isnan(t) || fabs(t - now) > interval) {
		t = round(now / interval) * interval;
		g->anchor_t = t;
		g->anchor_mono = scheduled;
		g->interval = interval;
	}
	/* Anchoring again may land on the last stamp; a clock set back further is followed. */
	if (g->last > 0 && t <= g->last && g->last - t < 2 * interval)
		t = g->last + interval;
	g->last = t;
	return round(t * 1000.0) / 1000.0;
}

/* Hands the window's rows, stamped t, to the writer (the store copies them) and opens the next window. */
static void
post_window(struct sampler *s, double t, double now)
{
	struct sample *nb;
	size_t n;
	int r;

	if (s->win.n > s->batch_cap) {
		nb = array_grow(s->batch, &s->batch_cap, s->win.n, sizeof(*nb));
		if (nb == NULL) {
			log_warn("%s: realloc", __func__);
			sample_window_next(&s->win, now - 2 * s->tick_store_s);
			return;
		}
		s->batch = nb;
	}
	n = sample_window_rows(&s->win, t, s->batch);
	r = n > 0 ? store_samples_post(s->store, s->batch, n) : STORE_OK;
	if (r != STORE_OK)
		log_debug("%s: %zu samples dropped: %s", __func__, n, store_strerror(r));
	sample_window_next(&s->win, now - 2 * s->tick_store_s);
}

/* Hands this tick's series labels (threads' names, new or changed) to the writer, which copies them. */
static void
post_labels(struct sampler *s, double now)
{
	struct store_label *v;
	size_t i, n = s->out.nlabels;
	int r;

	if (n == 0)
		return;
	if (!(v = calloc(n, sizeof(*v)))) {
		log_warn("%s: calloc", __func__);
		return;
	}
	for (i = 0; i < n; i++)
		v[i] = (struct store_label){s->out.labels[i].job_id, s->out.labels[i].key, s->out.labels[i].text, now};
	if ((r = store_labels_post(s->store, v, n)) != STORE_OK)
		log_debug("%s: %zu labels dropped: %s", __func__, n, store_strerror(r));
	free(v);
}

static json_t *
collectors_json_build(struct sampler *s)
{
	json_t *arr = json_array(), *o;
	size_t i;
	const char *const *k;

	/* Every known collector, in the table's order, including those not built in. */
	for (k = collector_known; *k != NULL; k++) {
		for (i = 0; i < s->ncol && strcmp(s->col[i].c->name, *k) != 0; i++)
			;
		if (i == s->ncol) {
			json_array_append_new(arr, json_pack("{s:s,s:s,s:s}", "name", *k, "status", "unavailable",
							     "reason", collector_missing_reason(*k)));
			continue;
		}
		if (!s->col[i].probed) {
			json_array_append_new(arr, json_pack("{s:s,s:s,s:s}", "name", *k, "status", "starting",
							     "reason", "being probed"));
			continue;
		}
		o = json_pack("{s:s,s:s,s:s}", "name", *k, "status", s->col[i].ctx != NULL ? "available" : "unavailable",
			      "reason", s->col[i].reason);
		if (o != NULL && s->col[i].failing)
			json_object_set_new(o, "failing", json_true());
		if (o != NULL && s->col[i].detail != NULL)
			json_object_set_new(o, "detail", json_deep_copy(s->col[i].detail));
		json_array_append_new(arr, o);
	}
	return arr;
}

/* The GPUs the NVML collector describes ({"gpus":[{"index","uuid"}]}) while it is up; how many. */
static size_t
gpus_described(const struct sampler *s, struct gpu_seen *gpus, size_t max)
{
	const json_t *g;
	size_t i, k, n = 0;

	for (i = 0; i < s->ncol; i++) {
		if (s->col[i].c != &collector_nvml || s->col[i].ctx == NULL)
			continue;
		json_array_foreach(json_object_get(s->col[i].detail, "gpus"), k, g) {
			const json_t *index = json_object_get(g, "index"), *uuid = json_object_get(g, "uuid");
			if (n == max || !json_is_integer(index))
				continue;
			gpus[n] = (struct gpu_seen){.index = (int)json_integer_value(index), .util_percent = -1,
						    .mem_used_bytes = -1, .processes = -1};
			snprintf(gpus[n].uuid, sizeof(gpus[n].uuid), "%s", json_is_string(uuid) ? json_string_value(uuid) : "");
			n++;
		}
	}
	return n;
}

/* Publishes the collectors' states (cols, stolen) and the GPUs they describe; the lock held. */
static void
pub_collectors_set(struct sampler *s, json_t *cols)
{
	json_decref(s->pub.collectors);
	s->pub.collectors = cols;
	s->pub.ngpus = gpus_described(s, s->pub.gpus, GPU_PICK_MAX);
}

/* One node value of the last tick into its GPU's view (gpu.N.<figure>; gpu.N.mig.M.*: MIG is on). */
static void
gpu_value(struct gpu_seen *gpus, size_t n, const struct collector_value *v)
{
	static const struct {
		const char *figure;
		size_t off;
	} figures[] = {
		{"util_percent", offsetof(struct gpu_seen, util_percent)},
		{"mem_used_bytes", offsetof(struct gpu_seen, mem_used_bytes)},
		{"mem_total_bytes", offsetof(struct gpu_seen, mem_total_bytes)},
		{"processes", offsetof(struct gpu_seen, processes)},
	};
	const char *rest;
	int gpu, mig;

	if (v->job_id != 0 || metric_split_gpu(v->name, &gpu, &mig, &rest) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		if (gpus[i].index != gpu)
			continue;
		if (mig >= 0)
			gpus[i].mig = true;
		for (size_t k = 0; mig < 0 && k < sizeof(figures) / sizeof(figures[0]); k++)
			if (strcmp(rest, figures[k].figure) == 0)
				*(double *)((char *)&gpus[i] + figures[k].off) = v->value;
		return;
	}
}

size_t
sampler_gpus(struct sampler *s, struct gpu_seen *gpus, size_t max)
{
	size_t i, n;

	pthread_mutex_lock(&s->lock);
	n = s->pub.ngpus < max ? s->pub.ngpus : max;
	memcpy(gpus, s->pub.gpus, n * sizeof(*gpus));
	for (i = 0; n > 0 && i < s->pub.snap.nvalues; i++)
		gpu_value(gpus, n, &s->pub.snap.values[i]);
	pthread_mutex_unlock(&s->lock);
	return n;
}

/* A job's cost as the last detail tick measured it, for ticks that do not measure. */
static double
last_detail_cost(const struct sampler_snapshot *prev, int64_t id)
{
	size_t i;

	for (i = 0; i < prev->njobs; i++)
		if (prev->jobs[i].id == id)
			return prev->jobs[i].cpu_s;
	return 0;
}

/* Publishes the tick for readers: values, per-job cost, collectors' state. */
static void
publish(struct sampler *s, const struct discovery_job *jobs, size_t njobs, const double *cost, double tick_cpu,
	double tick_wall)
{
	struct sampler_snapshot snap;
	struct sampler_spare *sp = &s->spare, old;
	/* The collectors' JSON only when one changed state: it rarely does. */
	json_t *cols = s->cols_changed ? collectors_json_build(s) : NULL;
	long threads = 0;
	void *nv;
	size_t i;

	memset(&snap, 0, sizeof(snap));
	snap.t = s->out.t;
	if ((nv = array_grow(sp->values, &sp->values_cap, s->win.n + 1, sizeof(*sp->values))))
		sp->values = nv;
	if ((nv = array_grow(sp->jobs, &sp->jobs_cap, njobs + 1, sizeof(*sp->jobs))))
		sp->jobs = nv;
	snap.values = sp->values;
	snap.jobs = sp->jobs;
	if (sp->values_cap >= s->win.n + 1 && sp->jobs_cap >= njobs + 1) {
		/* Each series' newest value: per-thread figures of the last detail tick stay shown. */
		for (i = 0; i < s->win.n; i++)
			snap.values[i] = s->win.v[i].newest;
		snap.nvalues = s->win.n;
		for (i = 0; i < njobs; i++) {
			snap.jobs[i].id = jobs[i].id;
			snprintf(snap.jobs[i].workload, sizeof(snap.jobs[i].workload), "%s", jobs[i].workload);
			/* Only the sampler thread writes pub.snap: reading it here needs no lock. */
			snap.jobs[i].cpu_s = s->out.detail ? cost[i] : last_detail_cost(&s->pub.snap, jobs[i].id);
			snap.jobs[i].threads = jobs[i].threads;
			threads += jobs[i].threads;
		}
		snap.njobs = njobs;
	}
	for (i = 0; i < s->ncol && i < SAMPLER_MAX_COLLECTORS; i++) {
		snprintf(snap.cols[i].name, sizeof(snap.cols[i].name), "%s", s->col[i].c->name);
		snap.cols[i].available = s->col[i].ctx != NULL && !s->col[i].failing;
		snap.cols[i].failures = s->col[i].failures;
		snap.cols[i].cpu_s = s->col[i].cpu_s;
	}
	snap.ncols = s->ncol;
	snap.ticks = s->ticks;
	snap.cpu_seconds_total = s->cpu_total_s;
	snap.last_tick_cpu_s = tick_cpu;
	snap.last_tick_wall_s = tick_wall;
	snap.threads = threads;
	pthread_mutex_lock(&s->lock);
	s->progress_mono = clock_mono_s();
	old = (struct sampler_spare){s->pub.snap.values, s->pub.snap.jobs, s->pub.values_cap, s->pub.jobs_cap};
	s->pub.snap = snap;
	s->pub.values_cap = sp->values_cap;
	s->pub.jobs_cap = sp->jobs_cap;
	if (cols != NULL) {
		pub_collectors_set(s, cols);
		s->cols_changed = false;
	}
	pthread_mutex_unlock(&s->lock);
	*sp = old;
}

/* The tick hook, read under the lock and called outside it: fn may take its own locks. */
static void
tick_hook_call(struct sampler *s)
{
	sampler_tick_fn *fn;
	void *ctx;

	pthread_mutex_lock(&s->lock);
	fn = s->on_tick;
	ctx = s->on_tick_ctx;
	pthread_mutex_unlock(&s->lock);
	if (fn != NULL)
		fn(ctx);
}

/*
 * Takes this tick's intervals (SIGHUP may change them) and says whether the
 * tick reads per-thread detail: the first
 * tick, then each tick that reaches the store interval, within half a
 * sampling period so jitter does not push a store a whole tick late.
 */
static bool
tick_intervals(struct sampler *s, double mono)
{
	double interval, store, scan;

	pthread_mutex_lock(&s->lock);
	interval = s->interval_s;
	store = s->store_interval_s > interval ? s->store_interval_s : interval;
	scan = s->discovery_interval_s;
	pthread_mutex_unlock(&s->lock);
	s->tick_interval_s = interval;
	s->tick_store_s = store;
	/* Set from the sampler's own thread: discovery is not shared. */
	discovery_set_rescan(s->disc, scan);
	return s->window_mono == 0 || mono - s->window_mono >= store - interval / 2;
}

/* One tick, due at the monotonic time scheduled (its place on the cadence). */
static void
tick(struct sampler *s, double scheduled)
{
	const struct discovery_job *jobs = NULL;
	const int64_t *gone = NULL;
	size_t njobs = 0, ngone = 0, i, k;
	double mono = clock_mono_s(), now = clock_now_s(), c0 = thread_cpu_s(), *cost;
	bool detail = tick_intervals(s, mono);
	/* Before discovery: a job registered after the stamp waits for the next tick. */
	double stamp = tick_grid_stamp(&s->grid, s->tick_interval_s, now, scheduled);

	if (discovery_update(s->disc, now, stamp, &jobs, &njobs, &gone, &ngone) < 0)
		njobs = ngone = 0;
	for (i = 0; i < ngone; i++) {
		for (k = 0; k < s->ncol; k++)
			if (s->col[k].ctx != NULL && s->col[k].c->job_gone != NULL)
				s->col[k].c->job_gone(s->col[k].ctx, gone[i]);
		energy_attr_job_gone(s->energy, gone[i]);
	}
	cost = calloc(njobs + 1, sizeof(*cost));
	if (cost == NULL)
		return;
	collector_out_reset(&s->out, now, mono);
	s->out.detail = detail;
	for (k = 0; k < s->ncol; k++)
		col_run(s, &s->col[k], jobs, njobs, cost, mono);
	energy_attr_tick(s->energy, &s->out);
	if (sample_window_add(&s->win, s->out.v, s->out.n) < 0)
		log_warn("%s: sample window", __func__);
	/* Every tick is stored: the blocks make a point cost bits, not a row (store_blocks.c). */
	post_window(s, stamp, now);
	post_labels(s, now);
	if (detail)
		s->window_mono = mono;
	if (mono >= s->next_maintain) {
		store_series_maintain(s->store, now, false);
		s->next_maintain = mono + SAMPLER_MAINTAIN_EVERY_S;
	}
	s->ticks++;
	s->cpu_total_s += thread_cpu_s() - c0;
	publish(s, jobs, njobs, cost, thread_cpu_s() - c0, clock_mono_s() - mono);
	tick_hook_call(s);
	free(cost);
}

static void
mark_progress(struct sampler *s)
{
	pthread_mutex_lock(&s->lock);
	s->progress_mono = clock_mono_s();
	pthread_mutex_unlock(&s->lock);
}

bool
sampler_alive(struct sampler *s)
{
	double age, limit;

	if (s == NULL)
		return false;
	pthread_mutex_lock(&s->lock);
	age = clock_mono_s() - s->progress_mono;
	/* A probe (likwid, PAPI) may take many seconds on a loaded node. */
	limit = s->interval_s * 5 > 30 ? s->interval_s * 5 : 30;
	pthread_mutex_unlock(&s->lock);
	return age < limit;
}

static void *
sampler_main(void *arg)
{
	struct sampler *s = arg;
	struct timespec until;
	double next, interval, now;
	json_t *cols;

	/*
	 * Probing can take seconds (likwid reads the whole topology), so it runs
	 * here, not in sampler_start: the server answers meanwhile and shows the
	 * collectors as "starting".
	 */
	for (size_t i = 0; i < s->ncol; i++) {
		pthread_mutex_lock(&s->lock);
		bool stop = s->stop;
		pthread_mutex_unlock(&s->lock);
		if (stop)
			return NULL;
		mark_progress(s);
		col_try_init(s, &s->col[i], clock_mono_s());
	}
	cols = collectors_json_build(s);
	pthread_mutex_lock(&s->lock);
	pub_collectors_set(s, cols);
	pthread_mutex_unlock(&s->lock);
	next = clock_mono_s();
	for (;;) {
		tick(s, next);
		pthread_mutex_lock(&s->lock);
		interval = s->interval_s;
		/* The next tick keeps the cadence; after a slow tick it starts at once. */
		next += interval;
		now = clock_mono_s();
		if (next < now)
			next = now;
		until.tv_sec = (time_t)next;
		until.tv_nsec = (long)((next - floor(next)) * 1e9);
		while (!s->stop && pthread_cond_timedwait(&s->cond, &s->lock, &until) != ETIMEDOUT)
			;
		if (s->stop) {
			pthread_mutex_unlock(&s->lock);
			return NULL;
		}
		pthread_mutex_unlock(&s->lock);
	}
}

static void
sampler_free(struct sampler *s)
{
	size_t i;

	for (i = 0; i < s->ncol; i++) {
		if (s->col[i].ctx != NULL)
			s->col[i].c->fini(s->col[i].ctx);
		json_decref(s->col[i].detail);
	}
	discovery_free(s->disc);
	energy_attr_free(s->energy);
	collector_out_free(&s->out);
	sample_window_free(&s->win);
	free(s->batch);
	sampler_snapshot_free(&s->pub.snap);
	free(s->spare.values);
	free(s->spare.jobs);
	json_decref(s->pub.collectors);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static int
sampler_init_sync(struct sampler *s)
{
	pthread_condattr_t ca;
	int rc;

	if ((rc = pthread_mutex_init(&s->lock, NULL)) != 0)
		return rc;
	if ((rc = pthread_condattr_init(&ca)) != 0)
		return rc;
	/* Waits are timed on the monotonic clock, so a clock step does not stall sampling. */
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	rc = pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
	return rc;
}

struct sampler *
sampler_start(struct store *store, struct jobs *jobs, const struct sampler_options *opt)
{
	return sampler_start_with(store, jobs, opt, collector_registry);
}

struct sampler *
sampler_start_with(struct store *store, struct jobs *jobs, const struct sampler_options *opt,
		   const struct collector *const *table)
{
	struct sampler *s = calloc(1, sizeof(*s));
	const char *lib = getenv("DLPROF_NVML_LIBRARY");
	int rc;

	if (s == NULL) {
		log_warn("%s: calloc", __func__);
		return NULL;
	}
	if ((rc = sampler_init_sync(s)) != 0) {
		log_warnx("%s: cannot create the sampler's lock: %s", __func__, strerror(rc));
		free(s);
		return NULL;
	}
	s->store = store;
	s->jobs = jobs;
	s->interval_s = opt->interval_s > 0 ? opt->interval_s : 1.0;
	s->store_interval_s = opt->store_interval_s;
	s->discovery_interval_s = opt->discovery_interval_s;
	s->probe_retry_s = opt->probe_retry_s > 0 ? opt->probe_retry_s : SAMPLER_PROBE_RETRY_S;
	snprintf(s->proc_root, sizeof(s->proc_root), "%s", opt->proc_root ? opt->proc_root : "/proc");
	snprintf(s->sys_root, sizeof(s->sys_root), "%s", opt->sys_root ? opt->sys_root : "/sys");
	/* Read once here, never while sampling: tests point NVML at a double. */
	snprintf(s->nvml_library, sizeof(s->nvml_library), "%s", lib != NULL ? lib : "");
	s->env = (struct collector_env){s->proc_root, s->sys_root, s->nvml_library[0] ? s->nvml_library : NULL,
					s->interval_s};
	for (s->ncol = 0; table[s->ncol] != NULL && s->ncol < SAMPLER_MAX_COLLECTORS; s->ncol++) {
		if (table[s->ncol]->version != COLLECTOR_VERSION) {
			log_warnx("%s: collector %s speaks interface version %d, not %d: left out", __func__,
				  table[s->ncol]->name, table[s->ncol]->version, COLLECTOR_VERSION);
			break;
		}
		s->col[s->ncol].c = table[s->ncol];
	}
	s->disc = discovery_new(jobs, s->proc_root);
	if (s->disc == NULL || (s->energy = energy_attr_new()) == NULL)
		goto fail;
	s->pub.collectors = collectors_json_build(s);
	s->progress_mono = clock_mono_s();
	if ((rc = pthread_create(&s->thread, NULL, sampler_main, s)) != 0) {
		log_warnx("%s: cannot start the sampler thread: %s", __func__, strerror(rc));
		goto fail;
	}
	return s;
fail:
	sampler_free(s);
	return NULL;
}

void
sampler_stop(struct sampler *s)
{
	if (s == NULL)
		return;
	struct timespec deadline;

	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
	/*
	 * A collector's init (PAPI, likwid) cannot be interrupted and may take
	 * seconds on a loaded node; shutdown must not wait for it.  A thread
	 * still inside one is left to the process's exit, with its memory.
	 */
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 3;
	if (pthread_timedjoin_np(s->thread, NULL, &deadline) != 0) {
		log_warnx("sampler: still probing a collector; not waiting for it");
		return;
	}
	sampler_free(s);
}

void
sampler_set_interval(struct sampler *s, double interval_s, double store_interval_s, double discovery_interval_s)
{
	if (s == NULL || !(interval_s > 0))
		return;
	pthread_mutex_lock(&s->lock);
	s->interval_s = interval_s;
	s->store_interval_s = store_interval_s;
	s->discovery_interval_s = discovery_interval_s;
	pthread_cond_signal(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

void
sampler_set_tick_hook(struct sampler *s, sampler_tick_fn *fn, void *ctx)
{
	pthread_mutex_lock(&s->lock);
	s->on_tick = fn;
	s->on_tick_ctx = ctx;
	pthread_mutex_unlock(&s->lock);
}

json_t *
sampler_collectors_json(struct sampler *s)
{
	json_t *v;

	pthread_mutex_lock(&s->lock);
	v = json_deep_copy(s->pub.collectors);
	pthread_mutex_unlock(&s->lock);
	return v != NULL ? v : json_array();
}

int
sampler_snapshot_get(struct sampler *s, struct sampler_snapshot *out)
{
	const struct sampler_snapshot *p;
	int r = 0;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&s->lock);
	p = &s->pub.snap;
	*out = *p;
	out->values = malloc((p->nvalues + 1) * sizeof(*out->values));
	out->jobs = malloc((p->njobs + 1) * sizeof(*out->jobs));
	if (out->values == NULL || out->jobs == NULL) {
		r = -1;
	} else {
		/* Before the first tick the published arrays are NULL: memcpy must not see them. */
		if (p->nvalues > 0)
			memcpy(out->values, p->values, p->nvalues * sizeof(*out->values));
		if (p->njobs > 0)
			memcpy(out->jobs, p->jobs, p->njobs * sizeof(*out->jobs));
	}
	pthread_mutex_unlock(&s->lock);
	if (r < 0) {
		sampler_snapshot_free(out);
		log_warn("%s: malloc", __func__);
	}
	return r;
}

void
sampler_snapshot_free(struct sampler_snapshot *snap)
{
	free(snap->values);
	free(snap->jobs);
	snap->values = NULL;
	snap->jobs = NULL;
	snap->nvalues = snap->njobs = 0;
}
