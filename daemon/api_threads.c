/*
 * GET /api/v1/jobs/{id}/threads?from=&to=&step=: what every thread of a
 * job did over a range, as one matrix for the dashboard's heatmap: the
 * per-thread series (thread.PID.TID.cores, the proc collector's, one value
 * a store interval) read in one pass in buckets of at least step seconds
 * (at most THREADS_MAX_COLUMNS of them), each thread's name from its
 * series' label, and the time each phase the job reports took (its
 * phase_time_s) in the same columns, so a cell can say which phase was in
 * force.
 *
 * The answer: {"job","from","to","step","unit":"cores","t":[...],
 * "threads":[{"key","pid","tid","name","mean","max","values":[...]}],
 * "phases":[{"name","time_s":[...]}]}.  Columns are the buckets that hold
 * a thread's value, t the mean time of the values in each; a value is the
 * thread's CPU over the interval that ends at its time (the collector
 * reads a thread's counters once a store interval), null where a thread
 * has none, rounded to 0.0001 core.  A phase's time in a column is what it
 * took in the buckets after the column before, up to and with this one.
 * Threads come in pid then tid order; at most THREADS_MAX of them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "app.h"
#include "array.h"
#include "log.h"
#include "reported.h"
#include "store.h"
#include "store_labels.h"
#include "store_series.h"

#define THREADS_MAX_COLUMNS 1000
#define THREADS_MAX 1024
#define PHASES_MAX 64

struct thread_row {
	char key[64]; /* thread.PID.TID */
	long pid, tid;
	double *v; /* per bucket; NAN: none */
};

struct phase_row {
	char name[128];
	double *s; /* seconds per bucket */
};

struct matrix {
	size_t nb; /* buckets */
	struct thread_row *th;
	size_t nth, cap;
	size_t last;          /* the row the last bucket went to: a name's buckets come together */
	double *tsum, *count; /* per bucket, over every thread: for the columns' times */
	struct phase_row ph[PHASES_MAX];
	size_t nph;
	int failed;
};

/* The row of series name (thread.PID.TID.cores), added when new; NULL when it is not one or there is no room. */
static struct thread_row *thread_of(struct matrix *m, const char *name)
{
	struct thread_row *nt, *r;
	long pid, tid;
	int len = 0;

	if (m->nth > 0 && strncmp(m->th[m->last].key, name, strlen(m->th[m->last].key)) == 0 &&
	    strcmp(name + strlen(m->th[m->last].key), ".cores") == 0)
		return &m->th[m->last];
	if (sscanf(name, STORE_THREAD_PREFIX "%ld.%ld%n", &pid, &tid, &len) != 2 || strcmp(name + len, ".cores") != 0)
		return NULL;
	if (m->nth == THREADS_MAX)
		return NULL;
	if (m->nth == m->cap) {
		if (!(nt = array_grow(m->th, &m->cap, m->nth + 1, sizeof(*nt)))) {
			m->failed = 1;
			return NULL;
		}
		m->th = nt;
	}
	r = &m->th[m->nth];
	snprintf(r->key, sizeof(r->key), "%.*s", len, name);
	r->pid = pid;
	r->tid = tid;
	if (!(r->v = malloc(m->nb * sizeof(double)))) {
		m->failed = 1;
		return NULL;
	}
	for (size_t k = 0; k < m->nb; k++)
		r->v[k] = NAN;
	m->last = m->nth++;
	return r;
}

static void on_thread_bucket(const struct store_bucket *b, void *arg)
{
	struct matrix *m = arg;
	struct thread_row *r;

	if (b->bucket < 0 || (size_t)b->bucket >= m->nb || !(r = thread_of(m, b->name)))
		return;
	r->v[b->bucket] = b->mean;
	m->tsum[b->bucket] += b->t * b->count;
	m->count[b->bucket] += b->count;
}

static void on_phase_bucket(const struct store_bucket *b, void *arg)
{
	struct matrix *m = arg;
	size_t i;

	if (b->bucket < 0 || (size_t)b->bucket >= m->nb || reported_of(b->name) != REPORTED_PHASE_TIME_S || !b->phase[0])
		return;
	for (i = 0; i < m->nph && strcmp(m->ph[i].name, b->phase) != 0; i++)
		;
	if (i == m->nph) {
		if (m->nph == PHASES_MAX)
			return;
		snprintf(m->ph[i].name, sizeof(m->ph[i].name), "%s", b->phase);
		if (!(m->ph[i].s = calloc(m->nb, sizeof(double)))) {
			m->failed = 1;
			return;
		}
		m->nph++;
	}
	m->ph[i].s[b->bucket] += b->sum;
}

static void matrix_free(struct matrix *m)
{
	for (size_t i = 0; i < m->nth; i++)
		free(m->th[i].v);
	for (size_t i = 0; i < m->nph; i++)
		free(m->ph[i].s);
	free(m->th);
	free(m->tsum);
	free(m->count);
}

static int by_pid_tid(const void *a, const void *b)
{
	const struct thread_row *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* The thread's row of the answer over the kept columns (cols, ncols). */
static json_t *thread_json(const struct thread_row *r, const size_t *cols, size_t ncols, const json_t *labels)
{
	json_t *values = json_array(), *o;
	double sum = 0, max = NAN, n = 0, v;

	for (size_t i = 0; values && i < ncols; i++) {
		v = r->v[cols[i]];
		if (isnan(v)) {
			json_array_append_new(values, json_null());
			continue;
		}
		sum += v;
		n++;
		max = isnan(max) || v > max ? v : max;
		json_array_append_new(values, json_real(round(v * 1e4) / 1e4));
	}
	o = json_pack("{s:s,s:I,s:I,s:O?,s:o,s:o,s:o}", "key", r->key, "pid", (json_int_t)r->pid, "tid",
		      (json_int_t)r->tid, "name", json_object_get(labels, r->key), "mean",
		      n > 0 ? json_real(round(sum / n * 1e4) / 1e4) : json_null(), "max",
		      n > 0 ? json_real(round(max * 1e4) / 1e4) : json_null(), "values", values);
	return o;
}

/* Each phase's seconds per kept column: the buckets after the column before, up to and with this one. */
static json_t *phases_json(const struct matrix *m, const size_t *cols, size_t ncols)
{
	json_t *out = json_array(), *times;
	size_t i, c, k;
	double s;

	for (i = 0; out && i < m->nph; i++) {
		times = json_array();
		for (c = 0, k = 0; times && c < ncols; c++) {
			for (s = 0; k <= cols[c]; k++)
				s += m->ph[i].s[k];
			json_array_append_new(times, json_real(round(s * 1e6) / 1e6));
		}
		json_array_append_new(out, json_pack("{s:s,s:o*}", "name", m->ph[i].name, "time_s", times));
	}
	return out;
}

static json_t *matrix_json(struct matrix *m, const json_t *labels, json_t *answer)
{
	size_t *cols = malloc((m->nb ? m->nb : 1) * sizeof(*cols)), ncols = 0, k;
	json_t *t = json_array(), *threads = json_array();

	if (!cols || !t || !threads) {
		free(cols);
		json_decref(t);
		json_decref(threads);
		json_decref(answer);
		return NULL;
	}
	for (k = 0; k < m->nb; k++)
		if (m->count[k] > 0) {
			cols[ncols++] = k;
			json_array_append_new(t, json_real(m->tsum[k] / m->count[k]));
		}
	if (m->nth > 1)
		qsort(m->th, m->nth, sizeof(*m->th), by_pid_tid);
	for (k = 0; k < m->nth; k++)
		json_array_append_new(threads, thread_json(&m->th[k], cols, ncols, labels));
	json_object_set_new(answer, "t", t);
	json_object_set_new(answer, "threads", threads);
	json_object_set_new(answer, "phases", phases_json(m, cols, ncols));
	free(cols);
	return answer;
}

/* The range: asked, else the job's life (to now while it runs); a column at least the range over THREADS_MAX_COLUMNS. */
static int threads_range(const struct http_request *req, struct http_response *resp, int64_t id, double *from,
			 double *to, double *width, size_t *nb)
{
	if (api_job_range(req, resp, id, THREADS_MAX_COLUMNS, from, to, width) < 0)
		return -1;
	*nb = (size_t)ceil((*to - *from) / *width);
	return 0;
}

void api_job_threads(const struct http_request *req, struct http_response *resp)
{
	struct matrix m;
	json_t *labels = NULL, *answer;
	char *text;
	double from, to, width;
	size_t nb;
	int64_t id;
	int r;

	if (api_job_id(req, resp, &id) < 0 || threads_range(req, resp, id, &from, &to, &width, &nb) < 0)
		return;
	m = (struct matrix){.nb = nb};
	m.tsum = calloc(m.nb, sizeof(double));
	m.count = calloc(m.nb, sizeof(double));
	if (!m.tsum || !m.count) {
		matrix_free(&m);
		http_reply_oom(resp);
		return;
	}
	r = store_series_buckets(req->app->store, id, STORE_THREAD_PREFIX, from, to, width, on_thread_bucket, &m);
	if (r == STORE_OK)
		r = store_series_buckets(req->app->store, id, reported_name(REPORTED_PHASE_TIME_S), from, to, width,
					 on_phase_bucket, &m);
	if (r == STORE_OK)
		r = store_labels(req->app->store, id, STORE_THREAD_PREFIX, &labels);
	if (r == STORE_OK && m.failed)
		r = STORE_EIO;
	if (r != STORE_OK) {
		matrix_free(&m);
		json_decref(labels);
		api_store_error(resp, r, "job threads");
		return;
	}
	answer = json_pack("{s:I,s:f,s:f,s:f,s:s}", "job", (json_int_t)id, "from", from, "to", to, "step", width,
			   "unit", "cores");
	answer = answer ? matrix_json(&m, labels, answer) : NULL;
	matrix_free(&m);
	json_decref(labels);
	/*
	 * Thirteen digits: times to the millisecond, values as rounded (sixteen
	 * would print 0.7495 as 0.7495000000000001, a byte or more a cell).
	 */
	text = answer ? json_dumps(answer, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(13)) : NULL;
	json_decref(answer);
	if (!text) {
		http_reply_oom(resp);
		return;
	}
	http_reply_text(resp, 200, "application/json", text, strlen(text));
}
