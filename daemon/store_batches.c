/*
 * The jobs' reported batches as the store keeps them until their spans are
 * encoded into blocks (sql/018_reported_batches.sql): one row a batch, its
 * points a blob, written in the transaction that acknowledges the batch;
 * the points themselves are in the writer's memory (store_pending.c), and
 * this row is what brings them back after a crash.  A staged row a point
 * cost an insert and three index updates each, a sorted read-back and a
 * delete; a batch's row costs one insert and one index entry, and its
 * points 8 or 16 bytes each.
 *
 * The blob: a format byte, the count of runs as a varint (LEB128), then
 * each run: its job id, its name's and phase's lengths (0: no phase) as
 * varints, with their bytes, the count of its points, a byte that says
 * whether its times are the previous run's, then (if not) its times and
 * its values, each a double's bits, little-endian.  A run is one series'
 * points in the batch, in the order sent; a job reports its series at
 * each step's time, so the runs of one batch mostly share their times.
 * The points are not compressed further: a batch's row lives for one to
 * two spans, and encoding it with series_codec (some 7 bytes a point here)
 * took a third of the writer's time (bench/RESULTS.md, issue 33); their
 * blocks are written from memory.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "log.h"
#include "store_internal.h"

#define BATCH_FORMAT 1
#define DOUBLE_BYTES 8

static const char sql_batch_insert[] = "INSERT INTO reported_batches (tmax, data) VALUES (?1, ?2)";
static const char sql_batches_all[] = "SELECT id, data FROM reported_batches ORDER BY id";
static const char sql_batches_delete[] = "DELETE FROM reported_batches WHERE tmax < ?1";
static const char sql_reported_mark_set[] = "UPDATE reported_flushed SET t = ?1";

/* A growing byte buffer; ok goes false on the first failed allocation. */
struct bytes {
	unsigned char *b;
	size_t n, cap;
	bool ok;
};

static void
bytes_put(struct bytes *w, const void *src, size_t len)
{
	unsigned char *nb;

	if (!w->ok || len == 0)
		return;
	if ((nb = array_grow(w->b, &w->cap, w->n + len, 1)) == NULL) {
		w->ok = false;
		return;
	}
	w->b = nb;
	memcpy(w->b + w->n, src, len);
	w->n += len;
}

static void
varint_put(struct bytes *w, uint64_t v)
{
	unsigned char buf[10];
	size_t n = 0;

	do {
		buf[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v != 0);
	bytes_put(w, buf, n);
}

/* Reads a varint at *pos; false past the end or for one longer than 64 bits. */
static bool
varint_get(const unsigned char *b, size_t len, size_t *pos, uint64_t *v)
{
	*v = 0;
	for (unsigned shift = 0; shift < 64 && *pos < len; shift += 7) {
		unsigned char c = b[(*pos)++];

		*v |= (uint64_t)(c & 0x7f) << shift;
		if ((c & 0x80) == 0)
			return true;
	}
	return false;
}

static int
series_cmp(const struct sample *a, const struct sample *b)
{
	const char *pa = a->phase != NULL ? a->phase : "", *pb = b->phase != NULL ? b->phase : "";
	int c;

	if (a->job_id != b->job_id)
		return a->job_id < b->job_id ? -1 : 1;
	if ((c = strcmp(a->name, b->name)) != 0)
		return c;
	return strcmp(pa, pb);
}

/* A point of the batch by its index: sorted by series, each series' points are one run. */
struct order {
	const struct sample *s;
	size_t i;
};

/* By series, then in the order sent. */
static int
order_cmp(const void *x, const void *y)
{
	const struct order *a = x, *b = y;
	int c = series_cmp(&a->s[a->i], &b->s[b->i]);

	return c != 0 ? c : (a->i > b->i) - (a->i < b->i);
}

static void
double_put(unsigned char *at, double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	for (int k = 0; k < 8; k++)
		at[k] = (unsigned char)(u >> (8 * k));
}

static double
double_get(const unsigned char *at)
{
	uint64_t u = 0;
	double d;

	for (int k = 0; k < 8; k++)
		u |= (uint64_t)at[k] << (8 * k);
	memcpy(&d, &u, sizeof(d));
	return d;
}

/* Whether the runs o[0..k-1] and prev[0..kprev-1] have the same times, bit for bit. */
static bool
same_times(const struct order *o, size_t k, const struct order *prev, size_t kprev)
{
	if (prev == NULL || k != kprev)
		return false;
	for (size_t i = 0; i < k; i++)
		if (memcmp(&o[i].s[o[i].i].t, &prev[i].s[prev[i].i].t, sizeof(double)) != 0)
			return false;
	return true;
}

/* Writes one run: the k points o[0..k-1], one series'; its times are prev's (of kprev) when they are the same. */
static int
run_put(struct bytes *w, const struct order *o, size_t k, const struct order *prev, size_t kprev)
{
	const struct sample *x = &o[0].s[o[0].i];
	const char *phase = x->phase != NULL ? x->phase : "";
	unsigned char d[DOUBLE_BYTES], shared = same_times(o, k, prev, kprev);

	varint_put(w, (uint64_t)x->job_id);
	varint_put(w, strlen(x->name));
	bytes_put(w, x->name, strlen(x->name));
	varint_put(w, strlen(phase));
	bytes_put(w, phase, strlen(phase));
	varint_put(w, k);
	bytes_put(w, &shared, 1);
	for (size_t i = 0; i < k && !shared; i++) {
		double_put(d, o[i].s[o[i].i].t);
		bytes_put(w, d, sizeof(d));
	}
	for (size_t i = 0; i < k; i++) {
		double_put(d, o[i].s[o[i].i].value);
		bytes_put(w, d, sizeof(d));
	}
	return w->ok ? STORE_OK : STORE_EIO;
}

/* The length of the run at o[0] (of n): its series' points. */
static size_t
run_len(const struct order *o, size_t n)
{
	size_t k = 1;

	while (k < n && series_cmp(&o[0].s[o[0].i], &o[k].s[o[k].i]) == 0)
		k++;
	return k;
}

/* The blob of the points of s not skipped (skip[i] true); *tmax their newest time. */
static int
batch_encode(const struct sample *s, size_t n, const bool *skip, struct bytes *w, double *tmax)
{
	struct order *o = malloc((n ? n : 1) * sizeof(*o));
	size_t m = 0, runs = 0;
	int r = STORE_OK;

	*w = (struct bytes){.ok = true};
	*tmax = -INFINITY;
	if (o == NULL)
		return STORE_EIO;
	for (size_t i = 0; i < n; i++) {
		if (skip != NULL && skip[i])
			continue;
		o[m++] = (struct order){s, i};
		*tmax = fmax(*tmax, s[i].t);
	}
	qsort(o, m, sizeof(*o), order_cmp);
	for (size_t i = 0; i < m; i += run_len(o + i, m - i))
		runs++;
	bytes_put(w, &(unsigned char){BATCH_FORMAT}, 1);
	varint_put(w, runs);
	for (size_t i = 0, k, prev = 0, kprev = 0; i < m && r == STORE_OK; prev = i, kprev = k, i += k) {
		k = run_len(o + i, m - i);
		r = run_put(w, o + i, k, i > 0 ? o + prev : NULL, kprev);
	}
	free(o);
	if (r != STORE_OK || !w->ok) {
		free(w->b);
		w->b = NULL;
		return STORE_EIO;
	}
	return STORE_OK;
}

int
store_batch_stage(struct store_conn *c, const struct sample *s, size_t n, const bool *skip)
{
	sqlite3_stmt *ins = store_stmt(c, sql_batch_insert);
	struct bytes w;
	double tmax;
	int rc, r;

	if (ins == NULL)
		return STORE_EIO;
	if ((r = batch_encode(s, n, skip, &w, &tmax)) != STORE_OK)
		return r;
	sqlite3_bind_double(ins, 1, tmax);
	sqlite3_bind_blob(ins, 2, w.b, (int)w.n, free);
	rc = sqlite3_step(ins);
	sqlite3_reset(ins);
	return rc == SQLITE_DONE ? STORE_OK : store_fail(c, rc, "stage a reported batch");
}

/* Reads a length and that many bytes at *pos; false when they overrun the blob. */
static bool
chunk_get(const unsigned char *b, size_t len, size_t *pos, const unsigned char **at, size_t *n)
{
	uint64_t v;

	if (!varint_get(b, len, pos, &v) || v > len - *pos)
		return false;
	*at = b + *pos;
	*n = (size_t)v;
	*pos += (size_t)v;
	return true;
}

int
store_batch_decode(const unsigned char *b, size_t len, store_batch_run_fn *fn, void *arg)
{
	const unsigned char *name, *phase, *times = NULL;
	size_t pos = 1, nname, nphase;
	uint64_t runs, job, n, nprev = 0;
	struct sample *s;
	char sname[256], sphase[256];
	int r = 0, shared;

	if (len < 1 || b[0] != BATCH_FORMAT || !varint_get(b, len, &pos, &runs))
		return -1;
	for (uint64_t i = 0; i < runs && r == 0; i++) {
		if (!varint_get(b, len, &pos, &job) || !chunk_get(b, len, &pos, &name, &nname) ||
		    !chunk_get(b, len, &pos, &phase, &nphase) || !varint_get(b, len, &pos, &n) || pos >= len ||
		    nname >= sizeof(sname) || nphase >= sizeof(sphase))
			return -1;
		shared = b[pos++];
		if (shared > 1 || (shared && (times == NULL || n != nprev)) ||
		    n > (len - pos) / DOUBLE_BYTES / (shared ? 1 : 2))
			return -1;
		if (!shared) {
			times = b + pos;
			pos += n * DOUBLE_BYTES;
		}
		nprev = n;
		memcpy(sname, name, nname);
		sname[nname] = '\0';
		memcpy(sphase, phase, nphase);
		sphase[nphase] = '\0';
		if ((s = malloc((n ? n : 1) * sizeof(*s))) == NULL)
			return -2;
		for (size_t k = 0; k < n; k++, pos += DOUBLE_BYTES)
			s[k] = (struct sample){(int64_t)job, double_get(times + k * DOUBLE_BYTES), sname,
					       double_get(b + pos), nphase > 0 ? sphase : NULL};
		r = fn(s, (size_t)n, arg);
		free(s);
	}
	return r != 0 ? r : pos == len ? 0 : -1;
}

struct replay {
	struct store_pending *p;
	double mark;
};

/* Adds a run's points at or after the mark to memory: those before are in blocks. */
static int
replay_run(const struct sample *s, size_t n, void *arg)
{
	const struct replay *rp = arg;
	bool *skip = malloc((n ? n : 1) * sizeof(*skip));
	int r;

	if (skip == NULL)
		return -2;
	for (size_t k = 0; k < n; k++)
		skip[k] = !(s[k].t >= rp->mark);
	r = pending_add(rp->p, s, n, skip) < 0 ? -2 : 0;
	free(skip);
	return r;
}

int
store_batches_replay(struct store_conn *c, struct store_pending *p, double mark)
{
	sqlite3_stmt *s = store_stmt(c, sql_batches_all);
	size_t batches = 0, bad = 0;
	int rc, r = STORE_OK, got;

	if (s == NULL)
		return STORE_EIO;
	while (r == STORE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		got = store_batch_decode(sqlite3_column_blob(s, 1), (size_t)sqlite3_column_bytes(s, 1), replay_run,
					 &(struct replay){p, mark});
		if (got == -2) {
			r = STORE_EIO;
		} else if (got < 0) {
			/* Its points cannot be read back: the rest of the store is still worth opening. */
			log_warnx("store: reported batch %lld does not decode; its points are lost",
				  (long long)sqlite3_column_int64(s, 0));
			bad++;
		}
		batches++;
	}
	if (r == STORE_OK && rc != SQLITE_DONE)
		r = store_fail(c, rc, "read the staged batches");
	sqlite3_reset(s);
	if (r == STORE_OK && batches > 0)
		log_info("store: %zu staged reported batches read back into memory%s", batches,
			 bad > 0 ? ", some lost" : "");
	return r;
}

int
store_batches_flushed(struct store_conn *c, double mark)
{
	int r = store_run_double(c, sql_reported_mark_set, mark, "move the reported points' flushed mark");

	return r != STORE_OK ? r : store_run_double(c, sql_batches_delete, mark, "delete the encoded batches");
}
