/*
 * The PAPI collector: PAPI preset events (cycles, instructions, floating
 * point operations, last-level cache misses) counted on each thread of each
 * job through PAPI's perf_event component, one event set attached per
 * thread.  It works only where the CPU exposes a PMU: without one (most
 * VMs) init says so without loading PAPI at all, since loading and
 * initialising it only to find no presets cost milliseconds and megabytes at
 * every probe.
 *
 * Built only when configure finds PAPI's header (HAVE_PAPI); the registry
 * lists it under that guard.  libpapi is not linked: init opens it with
 * dlopen and closes it again when it cannot count, because PAPI and libpfm
 * cost megabytes of resident memory in every process that maps them, for
 * nothing on a node without a PMU.  papi.h still gives the types and
 * constants; every function goes through the table in the context.
 */

#include <dlfcn.h>
#include <papi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "dynlib.h"
#include "jobstate.h"
#include "log.h"
#include "perf_reason.h"
#include "threadset.h"

/* PAPI event sets are costly: threads beyond this are not counted. */
#define PAPI_MAX_THREADS_PER_JOB 64
#define PAPI_NEV 4

/* The presets wanted, in order; the second column is the fallback. */
static const struct {
	int code;
	int fallback;
	const char *sample;     /* rate name */
} papi_wanted[PAPI_NEV] = {
	{PAPI_TOT_CYC, PAPI_NULL, "papi.cycles_per_s"},
	{PAPI_TOT_INS, PAPI_NULL, "papi.instructions_per_s"},
	{PAPI_FP_OPS, PAPI_DP_OPS, "papi.fp_ops_per_s"},
	{PAPI_L3_TCM, PAPI_L2_TCM, "papi.cache_misses_per_s"},
};

struct papi_thread {
	struct threadset_thread head;  /* tid, seen */
	const struct papi_api *api;    /* the context's, for papi_thread_stop */
	int evset;
	long long prev[PAPI_NEV];
};

struct papi_job {
	struct threadset threads;   /* struct papi_thread each */
	double last_mono;
};

/* The PAPI functions used, resolved with dlsym. */
struct papi_api {
	int (*library_init)(int version);
	char *(*strerror)(int rc);
	int (*query_event)(int code);
	int (*get_component_index)(const char *name);
	const PAPI_component_info_t *(*get_component_info)(int cidx);
	void (*shutdown)(void);
	int (*create_eventset)(int *evset);
	int (*assign_eventset_component)(int evset, int cidx);
	int (*add_event)(int evset, int code);
	int (*attach)(int evset, unsigned long tid);
	int (*start)(int evset);
	int (*read)(int evset, long long *v);
	int (*stop)(int evset, long long *v);
	int (*cleanup_eventset)(int evset);
	int (*destroy_eventset)(int *evset);
};

static const struct dynlib_symbol papi_symbols[] = {
	{offsetof(struct papi_api, library_init), "PAPI_library_init", 1},
	{offsetof(struct papi_api, strerror), "PAPI_strerror", 1},
	{offsetof(struct papi_api, query_event), "PAPI_query_event", 1},
	{offsetof(struct papi_api, get_component_index), "PAPI_get_component_index", 1},
	{offsetof(struct papi_api, get_component_info), "PAPI_get_component_info", 1},
	{offsetof(struct papi_api, shutdown), "PAPI_shutdown", 1},
	{offsetof(struct papi_api, create_eventset), "PAPI_create_eventset", 1},
	{offsetof(struct papi_api, assign_eventset_component), "PAPI_assign_eventset_component", 1},
	{offsetof(struct papi_api, add_event), "PAPI_add_event", 1},
	{offsetof(struct papi_api, attach), "PAPI_attach", 1},
	{offsetof(struct papi_api, start), "PAPI_start", 1},
	{offsetof(struct papi_api, read), "PAPI_read", 1},
	{offsetof(struct papi_api, stop), "PAPI_stop", 1},
	{offsetof(struct papi_api, cleanup_eventset), "PAPI_cleanup_eventset", 1},
	{offsetof(struct papi_api, destroy_eventset), "PAPI_destroy_eventset", 1},
};

/* The sonames tried, in order: the runtime package's, then the -dev symlink. */
static const char *const papi_libraries[] = {"libpapi.so.7", "libpapi.so"};

struct papi_ctx {
	void *lib;                  /* dlopen handle of libpapi */
	struct papi_api api;
	char proc_root[256];
	int cid;                    /* the perf_event component */
	int codes[PAPI_NEV];        /* chosen preset per slot, PAPI_NULL if none */
	int slot[PAPI_NEV];         /* event set position -> wanted slot */
	int nev;                    /* events in each event set */
	struct jobstate_table jobs; /* struct papi_job per job */
};

static int
papi_choose_events(struct papi_ctx *c, char *why, size_t why_len)
{
	const struct papi_api *a = &c->api;
	int i;

	c->nev = 0;
	for (i = 0; i < PAPI_NEV; i++) {
		c->codes[i] = PAPI_NULL;
		if (a->query_event(papi_wanted[i].code) == PAPI_OK)
			c->codes[i] = papi_wanted[i].code;
		else if (papi_wanted[i].fallback != PAPI_NULL && a->query_event(papi_wanted[i].fallback) == PAPI_OK)
			c->codes[i] = papi_wanted[i].fallback;
		if (c->codes[i] != PAPI_NULL)
			c->slot[c->nev++] = i;
	}
	if (c->nev > 0)
		return 0;
	snprintf(why, why_len,
		 "PAPI perf_event component has no preset events (PAPI_TOT_CYC: %s): no PMU, or the CPU is "
		 "unknown to PAPI",
		 a->strerror(a->query_event(PAPI_TOT_CYC)));
	return -1;
}

static void
papi_thread_stop(void *thread)
{
	struct papi_thread *t = thread;
	long long v[PAPI_NEV];

	t->api->stop(t->evset, v);
	t->api->cleanup_eventset(t->evset);
	t->api->destroy_eventset(&t->evset);
}

static void
papi_job_init(void *state)
{
	struct papi_job *j = state;

	threadset_init(&j->threads, sizeof(struct papi_thread), PAPI_MAX_THREADS_PER_JOB);
}

static void
papi_job_clear(void *state)
{
	struct papi_job *j = state;

	threadset_free(&j->threads, papi_thread_stop);
}

/* Opens libpapi and binds papi_symbols into c->api; -1 with the reason otherwise. */
static int
papi_open(struct papi_ctx *c, char *why, size_t why_len)
{
	c->lib = dynlib_load(papi_libraries, sizeof(papi_libraries) / sizeof(papi_libraries[0]), papi_symbols,
			     sizeof(papi_symbols) / sizeof(papi_symbols[0]), &c->api, "install libpapi7",
			     "install libpapi7 (PAPI 7)", why, why_len);
	return c->lib != NULL ? 0 : -1;
}

/* Whether PAPI's perf_event component can count presets here; why otherwise. */
static int
papi_check(struct papi_ctx *c, char *why, size_t why_len)
{
	const PAPI_component_info_t *ci;

	c->cid = c->api.get_component_index("perf_event");
	if (c->cid < 0) {
		snprintf(why, why_len, "PAPI has no perf_event component: rebuild PAPI with it");
		return -1;
	}
	ci = c->api.get_component_info(c->cid);
	if (ci == NULL || ci->disabled) {
		snprintf(why, why_len, "PAPI perf_event component disabled: %s",
			 ci != NULL && ci->disabled_reason[0] ? ci->disabled_reason : "no reason given");
		return -1;
	}
	if (ci->num_cntrs <= 0) {
		snprintf(why, why_len, "PAPI perf_event component disabled: no PMU counters");
		return -1;
	}
	return papi_choose_events(c, why, why_len);
}

/* A node where PAPI cannot count keeps neither PAPI's state nor its mapping. */
static void *
papi_init(const struct collector_env *env, char *why, size_t why_len)
{
	struct papi_ctx *c;
	int rc;

	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		snprintf(why, why_len, "out of memory");
		return NULL;
	}
	snprintf(c->proc_root, sizeof(c->proc_root), "%s", env->proc_root);
	jobstate_init(&c->jobs, sizeof(struct papi_job), papi_job_init, papi_job_clear);
	if (!perf_core_pmu(env->sys_root)) {
		snprintf(why, why_len,
			 "PAPI cannot count: no PMU (no CPU event source under %s/bus/event_source/devices; VMs often "
			 "hide it)",
			 env->sys_root);
		goto fail;
	}
	if (papi_open(c, why, why_len) < 0)
		goto fail;
	rc = c->api.library_init(PAPI_VER_CURRENT);
	if (rc != PAPI_VER_CURRENT) {
		snprintf(why, why_len, "PAPI_library_init failed: %s",
			 rc > 0 ? "version mismatch: libpapi is not the PAPI dlprofd was built with"
				: c->api.strerror(rc));
		goto fail_lib;
	}
	if (papi_check(c, why, why_len) < 0)
		goto fail_init;
	why[0] = '\0';
	return c;
fail_init:
	c->api.shutdown();
fail_lib:
	dlclose(c->lib);
fail:
	free(c);
	return NULL;
}

static void
papi_fini(void *ctx)
{
	struct papi_ctx *c = ctx;

	jobstate_free_all(&c->jobs);
	c->api.shutdown();
	dlclose(c->lib);
	free(c);
}

static void
papi_job_gone(void *ctx, int64_t job_id)
{
	struct papi_ctx *c = ctx;

	jobstate_drop(&c->jobs, job_id);
}

/* An event set with the chosen presets attached to tid and started; PAPI_OK or its error. */
static int
papi_thread_start(const struct papi_ctx *c, struct papi_thread *t)
{
	const struct papi_api *a = &c->api;
	int rc, i;

	t->api = a;
	t->evset = PAPI_NULL;
	if ((rc = a->create_eventset(&t->evset)) != PAPI_OK)
		return rc;
	if ((rc = a->assign_eventset_component(t->evset, c->cid)) != PAPI_OK)
		goto fail;
	for (i = 0; i < c->nev; i++)
		if ((rc = a->add_event(t->evset, c->codes[c->slot[i]])) != PAPI_OK)
			goto fail;
	if ((rc = a->attach(t->evset, (unsigned long)t->head.tid)) != PAPI_OK)
		goto fail;
	if ((rc = a->start(t->evset)) != PAPI_OK)
		goto fail;
	return PAPI_OK;
fail:
	a->cleanup_eventset(t->evset);
	a->destroy_eventset(&t->evset);
	return rc;
}

/* What the start callback needs, and what it found. */
struct papi_start {
	const struct papi_ctx *c;
	int last_rc;                /* PAPI's error for the last thread it refused; PAPI_OK: none */
};

/* Starts counting on a new thread; one PAPI refuses is skipped, its error kept. */
static enum threadset_start
papi_thread_begin(void *thread, void *arg)
{
	struct papi_start *ps = arg;
	int rc = papi_thread_start(ps->c, thread);

	if (rc == PAPI_OK)
		return THREADSET_STARTED;
	ps->last_rc = rc;
	return THREADSET_SKIPPED;
}

static int
papi_sample_job(void *ctx, const struct collector_job *job, struct collector_out *out, char *why, size_t why_len)
{
	struct papi_ctx *c = ctx;
	struct papi_job *j = jobstate_get(&c->jobs, job->id);
	struct papi_start ps = {c, PAPI_OK};
	struct papi_thread *t;
	long long v[PAPI_NEV];
	double delta[PAPI_NEV] = {0}, elapsed;
	size_t i;
	int e;

	/* As perf: counts accumulate, so they are read when the sampler stores. */
	if (!out->detail)
		return COLLECTOR_OK;
	if (j == NULL) {
		snprintf(why, why_len, "out of memory");
		return COLLECTOR_TRANSIENT;
	}
	/* No memory for more threads is PAPI_ENOMEM, like a thread PAPI had no memory for. */
	if (threadset_track(&j->threads, c->proc_root, job, papi_thread_begin, &ps) < 0)
		ps.last_rc = PAPI_ENOMEM;
	if (j->threads.n == 0 && ps.last_rc != PAPI_OK && ps.last_rc != PAPI_ESYS) {
		/* Not one thread could be attached: say why; ESYS is a thread that left meanwhile. */
		snprintf(why, why_len, "cannot attach PAPI event sets: %s", c->api.strerror(ps.last_rc));
		return ps.last_rc == PAPI_EPERM ? COLLECTOR_UNSUPPORTED : COLLECTOR_TRANSIENT;
	}
	/* Read every thread, including those that just exited (their final counts), then drop the gone. */
	for (i = 0; i < j->threads.n; i++) {
		t = threadset_at(&j->threads, i);
		if (c->api.read(t->evset, v) != PAPI_OK)
			continue;
		for (e = 0; e < c->nev; e++) {
			if (v[e] >= t->prev[e])
				delta[e] += (double)(v[e] - t->prev[e]);
			t->prev[e] = v[e];
		}
	}
	threadset_sweep(&j->threads, papi_thread_stop);
	elapsed = j->last_mono > 0 ? out->mono - j->last_mono : 0;
	j->last_mono = out->mono;
	if (elapsed <= 0)
		return COLLECTOR_OK;
	/* Counted events: a rate is a multiple of 1 / elapsed (collector_resolved). */
	for (e = 0; e < c->nev; e++)
		collector_put(out, job->id, collector_resolved(delta[e] / elapsed, 1 / elapsed), "%s",
			      papi_wanted[c->slot[e]].sample);
	if (c->codes[0] != PAPI_NULL && c->codes[1] != PAPI_NULL && delta[0] > 0)
		collector_put(out, job->id, delta[1] / delta[0], "papi.ipc");
	return COLLECTOR_OK;
}

const struct collector collector_papi = {
	.version = COLLECTOR_VERSION,
	.name = "papi",
	.init = papi_init,
	.sample_node = NULL,
	.sample_job = papi_sample_job,
	.job_gone = papi_job_gone,
	.describe = NULL,
	.fini = papi_fini,
};
