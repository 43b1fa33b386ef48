/*
 * Out of memory along every route's path: a countdown
 * allocator fails the Nth allocation of the request's thread, for every N
 * until the handler runs through without a failure, and each answer must be
 * an honest 503 or the answer given with memory to spare (for a read the
 * same bytes, for a change the same status and keys): never a 200 that lost
 * a line or a member, never a crash (ASan/UBSan) or a leak (LeakSanitizer).
 *
 * The countdown sits under all three allocators a handler reaches: jansson
 * (whose allocations the daemon routes through malloc, alloc_watch.c), SQLite
 * (SQLITE_CONFIG_MALLOC, installed before the first store_open) and libc
 * malloc, calloc, realloc, strdup, strndup and open_memstream as called from the daemon's own
 * objects (the link wraps them: -Wl,--wrap, see tests/local.mk).  Only the
 * test's thread is counted, so the store's writer runs undisturbed and each
 * N fails the same allocation every time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sqlite3.h>
#include <cmocka.h>

#include "alloc_watch.h"
#include "app.h"
#include "jobs.h"
#include "node.h"
#include "router.h"
#include "stats.h"
#include "store.h"
#include "tuner.h"
#include "tuner_internal.h"   /* the lock and the cache generation, to bypass the answer cache */
#include "route_call.h"

/* ---- the countdown ---- */

static _Thread_local long countdown;       /* > 0: armed; the allocation that takes it to 0 fails */
static _Thread_local long allocations;     /* counted while armed */
static _Thread_local int injected;         /* failures injected since armed */

static int fail_now(void)
{
	if (countdown <= 0)
		return 0;
	allocations++;
	if (--countdown == 0) {
		injected++;
		return 1;
	}
	return 0;
}

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);
FILE *__real_open_memstream(char **ptr, size_t *size);
FILE *__wrap_open_memstream(char **ptr, size_t *size);

void *__wrap_malloc(size_t n)
{
	return fail_now() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return fail_now() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
	return fail_now() ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
	return fail_now() ? NULL : __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
	return fail_now() ? NULL : __real_strndup(s, n);
}

FILE *__wrap_open_memstream(char **ptr, size_t *size)
{
	return fail_now() ? NULL : __real_open_memstream(ptr, size);
}

static sqlite3_mem_methods sqlite_default;

static void *sqlite_countdown_malloc(int n)
{
	return fail_now() ? NULL : sqlite_default.xMalloc(n);
}

static void *sqlite_countdown_realloc(void *p, int n)
{
	return fail_now() ? NULL : sqlite_default.xRealloc(p, n);
}

static void countdown_install(void)
{
	sqlite3_mem_methods m;

	assert_int_equal(sqlite3_config(SQLITE_CONFIG_GETMALLOC, &sqlite_default), SQLITE_OK);
	m = sqlite_default;
	m.xMalloc = sqlite_countdown_malloc;
	m.xRealloc = sqlite_countdown_realloc;
	assert_int_equal(sqlite3_config(SQLITE_CONFIG_MALLOC, &m), SQLITE_OK);
	alloc_watch_install();
}

/* ---- the daemon, without a server ---- */

struct fixture {
	char dir[64], db[96];
	struct node_info node;
	struct app app;
	char job[24];          /* the registered job's id */
};

static void fresh_answers(struct fixture *f)
{
	pthread_mutex_lock(&f->app.tuner->lock);
	tuner_cache_changed(f->app.tuner);
	pthread_mutex_unlock(&f->app.tuner->lock);
}

static int setup(void **state)
{
	static const struct store_options sopt = {.queue_limit = 1024, .readers = 2};
	static const struct tuner_options topt = {.gain_threshold = 0.01};
	struct fixture *f = calloc(1, sizeof(*f));
	struct route_answer a;
	char metrics[512];

	countdown_install();
	snprintf(f->dir, sizeof(f->dir), "/tmp/dlprof-oom-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->db, sizeof(f->db), "%s/oom.db", f->dir);
	snprintf(f->node.hostname, sizeof(f->node.hostname), "test");
	snprintf(f->node.hw_class, sizeof(f->node.hw_class), "x86_64-test-4c-1numa-0gpu");
	snprintf(f->node.arch, sizeof(f->node.arch), "x86_64");
	f->node.sockets = 1;
	f->node.cores = f->node.cores_allowed = 4;
	f->node.cpus_online = f->node.cpus_allowed = 8;
	f->node.threads_per_core = 2;
	f->node.numa_nodes = 1;
	f->node.numa_cores[0] = 4;
	f->app.node = &f->node;
	f->app.store = store_open(f->db, &sopt);
	f->app.tuner = f->app.store ? tuner_open(f->app.store, &f->node, &topt) : NULL;
	f->app.stats = stats_new(dlprof_routes);
	f->app.jobs = f->app.tuner ? jobs_new(f->app.store, f->app.tuner, f->node.hw_class, "/proc") : NULL;
	if (!f->app.jobs || !f->app.stats)
		return -1;
	atomic_store(&f->app.limits.max_samples, 1000);
	atomic_store(&f->app.limits.max_sample_age_s, 1e9);
	atomic_store(&f->app.limits.max_sample_skew_s, 1e9);
	/* One job that reported, so the reads have rows, series and a learned config. */
	snprintf(metrics, sizeof(metrics), "{\"workload\":\"oom\",\"params\":{\"batch\":8},\"pid\":%d}", (int)getpid());
	a = route_call(&f->app, "POST", "/api/v1/jobs", metrics);
	if (a.status != 201 || sscanf(a.body, "{\"id\":%20[0-9]", f->job) != 1)
		return -1;
	free(a.body);
	snprintf(metrics, sizeof(metrics), "/api/v1/jobs/%s/metrics", f->job);
	a = route_call(&f->app, "POST", metrics,
		 "{\"samples\":[{\"t\":1700000000.5,\"name\":\"samples_per_s\",\"value\":812.5},"
		 "{\"t\":1700000001.5,\"name\":\"samples_per_s\",\"value\":800}],\"config\":{\"intra_threads\":4}}");
	if (a.status != 200)
		return -1;
	free(a.body);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	jobs_free(f->app.jobs);
	tuner_close(f->app.tuner);
	store_close(f->app.store);
	stats_free(f->app.stats);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

/* An answer's JSON less the allocator's live figures (GET /api/v1/node's "daemon"), which move between calls. */
static json_t *steady_json(const struct route_answer *a, size_t len)
{
	json_t *j = json_loadb(a->body, len, 0, NULL), *d = json_object_get(j, "daemon");

	json_object_del(d, "allocated_bytes");
	json_object_del(d, "resident_bytes");
	return j;
}

/*
 * got reads as want, or as want without its final newline: http_reply_json
 * sends the JSON without it when the two bytes for it cannot be had (its
 * comment: the newline is for a person reading curl's output).  Byte for
 * byte, but for the allocator's live figures, which jemalloc moves with
 * every allocation.
 */
static bool same_answer(const struct route_answer *got, const struct route_answer *want)
{
	size_t len = want->len;
	json_t *a, *b;
	bool same;

	if (got->status != want->status || got->nheaders != want->nheaders)
		return false;
	if (got->len + 1 == len && want->body[len - 1] == '\n')
		len--;
	if (got->len == len && memcmp(got->body, want->body, len) == 0)
		return true;
	a = steady_json(got, got->len);
	b = steady_json(want, len);
	same = a && b && json_equal(a, b);
	json_decref(a);
	json_decref(b);
	return same;
}

/*
 * target under every N: 503, or the very answer memory to spare gives.
 * uncached: the tuner's answer cache is emptied before each call.
 */
static void every_failure(struct fixture *f, const char *target, bool uncached)
{
	struct route_answer want, got;
	long n;

	if (uncached)
		fresh_answers(f);
	want = route_call(&f->app, "GET", target, NULL);
	assert_true(want.status == 200);
	for (n = 1;; n++) {
		assert_true(n < 200000);
		if (uncached)
			fresh_answers(f);
		allocations = 0;
		injected = 0;
		countdown = n;
		got = route_call(&f->app, "GET", target, NULL);
		countdown = 0;
		if (!injected) {
			/* N beyond the path: nothing failed, and the answer is the one without failures. */
			assert_int_equal(got.status, want.status);
			free(got.body);
			break;
		}
		if (got.status != 503 && !same_answer(&got, &want))
			fail_msg("GET %s, allocation %ld of %ld failed: %d %.*s\nwithout failures: %d %.*s", target, n,
				 allocations, got.status, (int)got.len, got.body ? got.body : "", want.status,
				 (int)want.len, want.body);
		free(got.body);
	}
	print_message("# GET %s%s: %ld allocations, each failed once\n", target, uncached ? " (uncached)" : "",
		      n - 1);
	free(want.body);
}

/*
 * The same members, each of the same type (values may differ: a new job's
 * id, a config the tuner moved).  Only the top level: when the tuner cannot
 * choose a config (it logs why), registration answers an empty one and
 * ingest the config the job reported, as their comments say.
 */
static bool same_shape(const json_t *a, const json_t *b)
{
	const char *key;
	json_t *v;

	if (!json_is_object(a) || !json_is_object(b) || json_object_size(a) != json_object_size(b))
		return false;
	json_object_foreach((json_t *)a, key, v) {
		json_t *w = json_object_get(b, key);
		if (!w || (json_typeof(v) != json_typeof(w) && !(json_is_number(v) && json_is_number(w))))
			return false;
	}
	return true;
}

/*
 * A change under every N: 503, or an answer of the status and the shape
 * memory to spare gives.  body_fmt takes N (a fresh timestamp for samples);
 * before_each, when set, prepares each call (a job to end) and returns the
 * target.
 */
static void every_failure_post(struct fixture *f, const char *what, const char *(*before_each)(struct fixture *),
			       const char *target, const char *body_fmt)
{
	struct route_answer want, got;
	json_t *wj, *gj;
	char body[512];
	long n;

	snprintf(body, sizeof(body), body_fmt, 0L);
	want = route_call(&f->app, "POST", before_each ? before_each(f) : target, body);
	assert_true(want.status >= 200 && want.status < 300);
	wj = json_loadb(want.body, want.len, 0, NULL);
	assert_non_null(wj);
	for (n = 1;; n++) {
		const char *t = before_each ? before_each(f) : target;
		assert_true(n < 200000);
		snprintf(body, sizeof(body), body_fmt, n);
		allocations = 0;
		injected = 0;
		countdown = n;
		got = route_call(&f->app, "POST", t, body);
		countdown = 0;
		gj = got.status == want.status ? json_loadb(got.body, got.len, 0, NULL) : NULL;
		if (got.status != 503 && !(gj && same_shape(gj, wj)))
			fail_msg("POST %s, allocation %ld of %ld failed: %d %.*s\nwithout failures: %d %.*s", what, n,
				 allocations, got.status, (int)got.len, got.body ? got.body : "", want.status,
				 (int)want.len, want.body);
		json_decref(gj);
		free(got.body);
		if (!injected)
			break;
	}
	print_message("# POST %s: %ld allocations, each failed once\n", what, n - 1);
	json_decref(wj);
	free(want.body);
}

/* A running job to end, registered with memory to spare. */
static const char *job_to_end(struct fixture *f)
{
	static char target[64];
	struct route_answer a = route_call(&f->app, "POST", "/api/v1/jobs", "{\"workload\":\"oom-end\"}");
	json_t *j = json_loadb(a.body, a.len, 0, NULL);

	assert_int_equal(a.status, 201);
	snprintf(target, sizeof(target), "/api/v1/jobs/%lld/end", (long long)json_integer_value(json_object_get(j, "id")));
	json_decref(j);
	free(a.body);
	return target;
}

static void register_job(void **state)
{
	every_failure_post(*state, "/api/v1/jobs", NULL, "/api/v1/jobs",
			   "{\"workload\":\"oom-reg\",\"params\":{\"batch\":%ld},\"knobs\":"
			   "{\"micro_batch\":{\"values\":[2,4]}}}");
}

static void ingest(void **state)
{
	struct fixture *f = *state;
	char target[64];

	snprintf(target, sizeof(target), "/api/v1/jobs/%s/metrics", f->job);
	every_failure_post(f, "/api/v1/jobs/{id}/metrics", NULL, target,
			   "{\"samples\":[{\"t\":1700001000.%06ld,\"name\":\"samples_per_s\",\"value\":800},"
			   "{\"t\":1700001000.5,\"name\":\"loss\",\"value\":1.5}],\"config\":{\"intra_threads\":4}}");
}

static void end_job(void **state)
{
	every_failure_post(*state, "/api/v1/jobs/{id}/end", job_to_end, NULL, "{\"exit_status\":%ld}");
}

static void healthz(void **state)
{
	every_failure(*state, "/healthz", false);
}

static void node(void **state)
{
	every_failure(*state, "/api/v1/node", false);
}

static void recommend_env(void **state)
{
	every_failure(*state, "/api/v1/recommend?workload=oom&batch=8&format=env", true);
	every_failure(*state, "/api/v1/recommend?workload=oom&batch=8&format=env&job=7", true);
	every_failure(*state, "/api/v1/recommend?workload=oom&batch=8&format=env&job=7", false);
}

static void recommend_slurm(void **state)
{
	every_failure(*state, "/api/v1/recommend?workload=oom&batch=8&format=slurm&job=7", true);
	every_failure(*state, "/api/v1/recommend?workload=oom&batch=8&format=slurm&job=7", false);
}

static void recommend_json(void **state)
{
	every_failure(*state, "/api/v1/recommend?workload=oom&batch=8", true);
	every_failure(*state, "/api/v1/recommend?workload=oom&batch=8", false);
	every_failure(*state, "/api/v1/recommend?workload=unseen", true);
}

static void jobs(void **state)
{
	struct fixture *f = *state;
	char target[128];

	every_failure(f, "/api/v1/jobs?state=all", false);
	snprintf(target, sizeof(target), "/api/v1/jobs/%s", f->job);
	every_failure(f, target, false);
	snprintf(target, sizeof(target), "/api/v1/jobs/%s/series?name=samples_per_s&from=0&to=1700000100", f->job);
	every_failure(f, target, false);
	snprintf(target, sizeof(target), "/api/v1/jobs/%s/threads?from=1699999990&to=1700000010", f->job);
	every_failure(f, target, false);
	snprintf(target, sizeof(target), "/api/v1/jobs/%s/timeline", f->job);
	every_failure(f, target, false);
	snprintf(target, sizeof(target), "/api/v1/jobs/%s/record?from=1699999990&to=1700000010&step=1", f->job);
	every_failure(f, target, false);
	snprintf(target, sizeof(target), "/api/v1/jobs/%s/record?from=1699999990&to=1700000010&format=csv", f->job);
	every_failure(f, target, false);
}

static void workloads(void **state)
{
	every_failure(*state, "/api/v1/workloads", false);
	every_failure(*state, "/api/v1/workloads/oom", false);
}

static void metrics(void **state)
{
	every_failure(*state, "/metrics", false);
}

/* The dashboard's files, from the source tree (DLPROF_SRCDIR under make check). */
static void static_files(void **state)
{
	struct fixture *f = *state;
	char root[512];
	const char *src = getenv("DLPROF_SRCDIR");

	snprintf(root, sizeof(root), "%s/web", src ? src : "../..");
	f->app.web_root = root;
	every_failure(f, "/", false);
	every_failure(f, "/index.html", false);
	f->app.web_root = NULL;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(healthz),
		cmocka_unit_test(node),
		cmocka_unit_test(recommend_env),
		cmocka_unit_test(recommend_slurm),
		cmocka_unit_test(recommend_json),
		cmocka_unit_test(jobs),
		cmocka_unit_test(workloads),
		cmocka_unit_test(metrics),
		cmocka_unit_test(static_files),
		cmocka_unit_test(register_job),
		cmocka_unit_test(ingest),
		cmocka_unit_test(end_job),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
