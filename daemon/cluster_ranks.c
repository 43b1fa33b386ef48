/*
 * The ranks of distributed jobs through the cluster store (see
 * cluster_ranks.h).
 *
 * Pushing: the ranks' outbox holds one row per rank whose figures changed
 * since the last push, so however often a rank reports, the shared store
 * gets at most one row per rank per RANKS_PUSH_EVERY_S; a database that is
 * away leaves them waiting (bounded by cluster_outbox_limit rows).
 *
 * Reading back: every RANKS_PULL_EVERY_S the thread asks for the other
 * nodes' ranks of this node's newest distributed jobs that span nodes
 * (RANKS_JOBS of them), one indexed query for all; a job is read while it
 * runs here, for RANKS_SETTLE_S after it ended (the other nodes' ranks may
 * end later), and once after a start.  So a job is seen whole within about
 * RANKS_PUSH_EVERY_S + RANKS_PULL_EVERY_S of a report on another node.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "clock.h"
#include "cluster_pg.h"
#include "cluster_ranks.h"
#include "cluster_sql.h"
#include "log.h"
#include "store.h"
#include "store_cluster.h"

#define RANKS_PUSH_EVERY_S 1.0
#define RANKS_PULL_EVERY_S 2.0
#define RANKS_RETRY_S 5.0        /* after a failed push or read */
#define RANKS_PUSH_BATCH 500
#define RANKS_JOBS 64            /* distributed jobs whose other ranks are kept */
#define RANKS_SETTLE_S 600.0     /* an ended job is read again for this long */
#define QUERY_TIMEOUT_S 30.0

struct cluster_ranks {
	struct store *st;
	char *store_id, *node;
	double next_push, next_pull;  /* mono; the thread's own */
	bool push_failing, pull_failing;

	/*
	 * Guarded by lock.  An entry is never changed once in the cache (a read
	 * replaces it), so a reader takes a reference under the lock and reads
	 * it after (jansson's reference counts are atomic).
	 */
	pthread_mutex_t lock;
	json_t *by_key;               /* job key -> {"as_of", "rows": [the other nodes' ranks]} */
	json_t *key_of;               /* local job id (as text) -> job key */
	long long pushed, read;       /* rank rows sent to the store, and read from it, ever */
	double last_read;             /* wall time of the last successful read; 0: none */
};

struct cluster_ranks *cluster_ranks_new(struct store *st, const char *store_id, const char *node)
{
	struct cluster_ranks *r = calloc(1, sizeof(*r));

	if (!r) {
		log_warn("%s", __func__);
		return NULL;
	}
	pthread_mutex_init(&r->lock, NULL);
	r->st = st;
	r->store_id = strdup(store_id);
	r->node = strdup(node);
	r->by_key = json_object();
	r->key_of = json_object();
	if (!r->store_id || !r->node || !r->by_key || !r->key_of) {
		log_warn("%s", __func__);
		cluster_ranks_free(r);
		return NULL;
	}
	return r;
}

void cluster_ranks_free(struct cluster_ranks *r)
{
	if (!r)
		return;
	json_decref(r->by_key);
	json_decref(r->key_of);
	pthread_mutex_destroy(&r->lock);
	free(r->store_id);
	free(r->node);
	free(r);
}

void cluster_ranks_link_up(struct cluster_ranks *r)
{
	r->next_push = r->next_pull = clock_mono_s();
}

/* ---- push ---- */

/* Sends one batch of the ranks' outbox; how many rows it held, or -1. */
static int push_batch(struct cluster_ranks *r, struct cluster_pg *pg)
{
	const struct cpg_outbox ob = {r->st, RANKS_PUSH_BATCH, store_cluster_ranks_peek, store_cluster_ranks_done,
				      r->store_id, "shared_by", r->node, QUERY_TIMEOUT_S};
	long long answer;
	int n = cpg_push_outbox(pg, cluster_sql_push_ranks, &ob, &answer);

	if (n > 0) {
		pthread_mutex_lock(&r->lock);
		r->pushed += n;
		pthread_mutex_unlock(&r->lock);
	}
	return n;
}

static void push(struct cluster_ranks *r, struct cluster_pg *pg)
{
	int n;

	while ((n = push_batch(r, pg)) >= RANKS_PUSH_BATCH && pg->conn)
		;
	if (n < 0 && pg->conn && !r->push_failing)
		log_warnx("cluster: sharing ranks: %s; they stay in the outbox", pg->error);
	r->push_failing = n < 0;
	r->next_push = clock_mono_s() + (n < 0 ? RANKS_RETRY_S : RANKS_PUSH_EVERY_S);
}

/* ---- read back ---- */

/* Whether job j's other ranks are read now: it runs, it ended lately, or they were never read. */
static bool wanted(struct cluster_ranks *r, const json_t *j, double now)
{
	const char *key = json_string_value(json_object_get(j, "job_key"));
	bool cached;

	if (json_is_true(json_object_get(j, "running")) ||
	    now - json_number_value(json_object_get(j, "ended")) < RANKS_SETTLE_S)
		return true;
	pthread_mutex_lock(&r->lock);
	cached = json_object_get(r->by_key, key) != NULL;
	pthread_mutex_unlock(&r->lock);
	return !cached;
}

/* The rows of the read, grouped by job key: {key: [rows]}. */
static json_t *group(json_t *rows)
{
	json_t *out = json_object(), *row, *list;
	size_t i;

	json_array_foreach(rows, i, row) {
		const char *key = json_string_value(json_object_get(row, "job_key"));
		if (!key)
			continue;
		if (!(list = json_object_get(out, key)))
			json_object_set_new(out, key, list = json_array());
		json_array_append(list, row);
	}
	return out;
}

/*
 * The new cache: for each of this node's jobs, what was read now (its key
 * asked; all the rows read, read them grouped), else what was there.  Jobs
 * past the newest RANKS_JOBS leave it.
 */
static void replace_cache(struct cluster_ranks *r, const json_t *jobs, const json_t *asked, const json_t *read,
			  const json_t *all, double as_of)
{
	json_t *by_key = json_object(), *key_of = json_object(), *j, *e;
	size_t i;

	pthread_mutex_lock(&r->lock);
	json_array_foreach(jobs, i, j) {
		const char *key = json_string_value(json_object_get(j, "job_key"));
		char id[24];
		if (!key)
			continue;
		snprintf(id, sizeof(id), "%lld", (long long)json_integer_value(json_object_get(j, "job_id")));
		json_object_set_new(key_of, id, json_string(key));
		if (json_object_get(by_key, key))
			continue;
		if (json_object_get(asked, key)) {
			json_t *rows = json_object_get(read, key);
			e = json_pack("{s:f, s:o}", "as_of", as_of, "rows", rows ? json_incref(rows) : json_array());
			json_object_set_new(by_key, key, e);
		} else if ((e = json_object_get(r->by_key, key))) {
			json_object_set(by_key, key, e);
		}
	}
	json_decref(r->by_key);
	json_decref(r->key_of);
	r->by_key = by_key;
	r->key_of = key_of;
	r->read += (long long)json_array_size(all);
	r->last_read = as_of;
	pthread_mutex_unlock(&r->lock);
}

/* Reads the other nodes' ranks of the jobs that want it; 0, or -1 (the cache stays). */
static int pull_once(struct cluster_ranks *r, struct cluster_pg *pg)
{
	json_t *jobs = NULL, *asked = json_object(), *keys = json_array(), *rows = NULL, *read = NULL, *j;
	double now = clock_now_s();
	const char *vals[2];
	PGresult *res = NULL;
	char *text = NULL;
	int rc = -1;
	size_t i;

	if (store_cluster_rank_jobs(r->st, RANKS_JOBS, &jobs) != STORE_OK)
		goto done;
	json_array_foreach(jobs, i, j) {
		const char *key = json_string_value(json_object_get(j, "job_key"));
		if (key && !json_object_get(asked, key) && wanted(r, j, now)) {
			json_object_set_new(asked, key, json_true());
			json_array_append_new(keys, json_string(key));
		}
	}
	if (json_array_size(keys) > 0) {
		if (!(text = json_dumps(keys, JSON_COMPACT)))
			goto done;
		vals[0] = text;
		vals[1] = r->store_id;
		if (!(res = cpg_query(pg, cluster_sql_pull_ranks, 2, vals, QUERY_TIMEOUT_S)))
			goto done;
		rows = json_loads(PQgetvalue(res, 0, 0), 0, NULL);
		if (!json_is_array(rows))
			goto done;
		read = group(rows);
	}
	replace_cache(r, jobs, asked, read, rows, now);
	rc = 0;
done:
	PQclear(res);
	free(text);
	json_decref(read);
	json_decref(rows);
	json_decref(keys);
	json_decref(asked);
	json_decref(jobs);
	return rc;
}

static void pull(struct cluster_ranks *r, struct cluster_pg *pg)
{
	int rc = pull_once(r, pg);

	if (rc < 0 && pg->conn && !r->pull_failing)
		log_warnx("cluster: reading other nodes' ranks: %s; the jobs show what was read before",
			  pg->error[0] ? pg->error : "the local store failed");
	r->pull_failing = rc < 0;
	r->next_pull = clock_mono_s() + (rc < 0 ? RANKS_RETRY_S : RANKS_PULL_EVERY_S);
}

double cluster_ranks_serve(struct cluster_ranks *r, struct cluster_pg *pg)
{
	double now = clock_mono_s();

	if (pg->conn && now >= r->next_push)
		push(r, pg);
	if (pg->conn && now >= r->next_pull)
		pull(r, pg);
	return r->next_push < r->next_pull ? r->next_push : r->next_pull;
}

/* ---- readers ---- */

json_t *cluster_ranks_status(struct cluster_ranks *r)
{
	json_t *o;

	pthread_mutex_lock(&r->lock);
	o = json_pack("{s:I, s:I, s:I, s:o}", "pushed", (json_int_t)r->pushed, "read", (json_int_t)r->read, "jobs",
		      (json_int_t)json_object_size(r->by_key), "last_read",
		      r->last_read > 0 ? json_real(r->last_read) : json_null());
	pthread_mutex_unlock(&r->lock);
	return o;
}

static double num_or_nan(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* One shared row as the store's rank row. */
static void row_of(const json_t *o, struct rank_row *k)
{
	const json_t *lr = json_object_get(o, "local_rank");
	const char *node = json_string_value(json_object_get(o, "node"));

	memset(k, 0, sizeof(*k));
	k->rank = (int)json_integer_value(json_object_get(o, "rank"));
	k->local_rank = json_is_integer(lr) ? (int)json_integer_value(lr) : -1;
	snprintf(k->node, sizeof(k->node), "%s", node ? node : "");
	k->pid = json_integer_value(json_object_get(o, "pid"));
	k->running = config_enum_value(config_job_state_names, json_string_value(json_object_get(o, "state"))) ==
		     JOB_STATE_RUNNING;
	k->steps = json_integer_value(json_object_get(o, "steps"));
	k->step_s = num_or_nan(o, "step_s");
	k->comm_s = num_or_nan(o, "comm_s");
	k->data_s = num_or_nan(o, "data_s");
	k->samples_per_s = num_or_nan(o, "samples_per_s");
	k->cpu_cores = num_or_nan(o, "cpu_cores");
	k->wait_cores = num_or_nan(o, "wait_cores");
}

/* The cached entry of a job key (a new reference), or NULL; the caller holds no lock. */
static json_t *entry(struct cluster_ranks *r, const char *key)
{
	json_t *e;

	pthread_mutex_lock(&r->lock);
	e = key ? json_incref(json_object_get(r->by_key, key)) : NULL;
	pthread_mutex_unlock(&r->lock);
	return e;
}

static bool has_rank(const json_t *ranks, json_int_t rank)
{
	const json_t *k;
	size_t i;

	json_array_foreach(ranks, i, k)
		if (json_integer_value(json_object_get(k, "rank")) == rank)
			return true;
	return false;
}

static int by_rank(const void *a, const void *b)
{
	json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "rank"));
	json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "rank"));

	return (x > y) - (x < y);
}

/* The job's ranks in rank order. */
static void sort_ranks(json_t *job)
{
	json_t *ranks = json_object_get(job, "ranks"), *sorted, **v;
	size_t i, n = json_array_size(ranks);

	if (n < 2 || !(v = malloc(n * sizeof(*v))))
		return;
	for (i = 0; i < n; i++)
		v[i] = json_array_get(ranks, i);
	qsort(v, n, sizeof(*v), by_rank);
	sorted = json_array();
	for (i = 0; i < n; i++)
		json_array_append(sorted, v[i]);
	free(v);
	json_object_set_new(job, "ranks", sorted);
}

void cluster_ranks_merge(struct cluster_ranks *r, json_t *job)
{
	json_int_t world = json_integer_value(json_object_get(job, "world_size"));
	json_t *ranks = json_object_get(job, "ranks"), *e, *row;
	struct rank_row k;
	size_t i, seen;

	if (world <= (json_int_t)json_array_size(ranks) || !json_is_array(ranks))
		return;
	e = entry(r, json_string_value(json_object_get(job, "external_id")));
	json_object_set_new(job, "ranks_shared", json_pack("{s:o}", "as_of", e ? json_copy(json_object_get(e, "as_of"))
										  : json_null()));
	if (!e)
		return;
	json_array_foreach(json_object_get(e, "rows"), i, row) {
		json_t *o;
		row_of(row, &k);
		if (has_rank(ranks, k.rank))
			continue;
		o = store_rank_row_json(&k);
		json_object_set(o, "shared_by", json_object_get(row, "shared_by"));
		json_array_append_new(ranks, o);
	}
	json_decref(e);
	sort_ranks(job);
	seen = json_array_size(json_object_get(job, "ranks"));
	json_object_set_new(job, "ranks_elsewhere", json_integer(world > (json_int_t)seen ? world - (json_int_t)seen : 0));
}

static int row_by_rank(const void *a, const void *b)
{
	int x = ((const struct rank_row *)a)->rank, y = ((const struct rank_row *)b)->rank;

	return (x > y) - (x < y);
}

int cluster_ranks_append(void *ctx, int64_t id, struct rank_row **rows, size_t *n)
{
	struct cluster_ranks *r = ctx;
	struct rank_row *v = *rows, *nv;
	size_t cap = *n, cnt = *n, i, l;
	char idtext[24];
	json_t *e, *row;
	const char *key;
	int rc = 0;

	snprintf(idtext, sizeof(idtext), "%lld", (long long)id);
	pthread_mutex_lock(&r->lock);
	key = json_string_value(json_object_get(r->key_of, idtext));
	e = key ? json_incref(json_object_get(r->by_key, key)) : NULL;
	pthread_mutex_unlock(&r->lock);
	json_array_foreach(json_object_get(e, "rows"), i, row) {
		struct rank_row k;
		row_of(row, &k);
		for (l = 0; l < *n && v[l].rank != k.rank; l++)
			;
		if (l < *n)
			continue;
		if (cnt == cap) {
			if (!(nv = array_grow(v, &cap, cnt + 1, sizeof(*v)))) {
				rc = -1;
				break;
			}
			v = *rows = nv;
		}
		v[cnt++] = k;
	}
	json_decref(e);
	if (rc == 0 && cnt > *n) {
		*n = cnt;
		qsort(v, cnt, sizeof(*v), row_by_rank);
	}
	return rc;
}
