/*
 * Writing samples: a batch goes in one savepoint of the writer's
 * transaction, and the newest value of each series is kept in `latest` so
 * that job views never scan the samples table.  A batch with a sequence
 * number first moves its stream's mark in `ingest_seq`, in the same
 * savepoint: a batch at or below the mark was stored before and is skipped.
 * No point is a row of its own until it is in a block: the points go to
 * the writer's memory (store_pending.c) until their span is encoded.  A
 * job's batch is also staged as one row of reported_batches
 * (store_batches.c), so that an acknowledged batch survives a crash; the
 * sampler's posted batches are not staged, and a clean stop stages what
 * is still in memory the same way.  A point for a span already encoded (a
 * batch late by more than a span, a clock stepped back) is staged as a row
 * of samples instead, merged into its blocks at the next flush.  Per-thread
 * series (thread.*) have no `latest` row: only the heatmap reads them, as
 * history.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "series_codec.h"
#include "store_series.h"

#include "store_internal.h"

static const char sql_sample_insert[] =
	"INSERT INTO samples (job_id, t, name, value, phase) VALUES (?1, ?2, ?3, ?4, ?5)";
static const char sql_latest_upsert[] =
	"INSERT INTO latest (job_id, name, t, value) VALUES (?1, ?2, ?3, ?4) "
	"ON CONFLICT(job_id, name) DO UPDATE SET t = excluded.t, value = excluded.value "
	"WHERE excluded.t >= latest.t";
/* Changes no row when ?3 is not above the stream's mark: the batch is a duplicate. */
static const char sql_seq_advance[] =
	"INSERT INTO ingest_seq (job_id, stream, seq) VALUES (?1, ?2, ?3) "
	"ON CONFLICT(job_id, stream) DO UPDATE SET seq = excluded.seq WHERE excluded.seq > ingest_seq.seq";

#define LATEST_TRACKED 64

struct sample_batch {
	const struct sample *s;
	size_t n;
	struct sample *owned;   /* posted batches: the copy, freed with the batch */
	int64_t seq_job;        /* with seq > 0: the job whose stream's mark moves */
	const char *stream;
	int64_t seq;            /* 0: no sequence, always stored */
	bool duplicate;         /* out: seq was not above the mark; nothing stored */
	struct store *st;
	bool sampler;           /* the sampler's batch: points kept in memory, not staged */
};

static int insert_one(struct store_conn *c, sqlite3_stmt *ins, const struct sample *x)
{
	int rc;

	sqlite3_reset(ins);
	sqlite3_bind_int64(ins, 1, x->job_id);
	sqlite3_bind_double(ins, 2, x->t);
	sqlite3_bind_text(ins, 3, x->name, -1, SQLITE_STATIC);
	sqlite3_bind_double(ins, 4, x->value);
	if (x->phase)
		sqlite3_bind_text(ins, 5, x->phase, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(ins, 5);
	rc = sqlite3_step(ins);
	return rc == SQLITE_DONE ? STORE_OK : store_fail(c, rc, "insert sample");
}

static int upsert_latest(struct store_conn *c, sqlite3_stmt *up, const struct sample *x)
{
	int rc;

	sqlite3_reset(up);
	sqlite3_bind_int64(up, 1, x->job_id);
	sqlite3_bind_text(up, 2, x->name, -1, SQLITE_STATIC);
	sqlite3_bind_double(up, 3, x->t);
	sqlite3_bind_double(up, 4, x->value);
	rc = sqlite3_step(up);
	return rc == SQLITE_DONE ? STORE_OK : store_fail(c, rc, "update latest");
}

/* Moves the stream's mark to the batch's seq, or sets b->duplicate. */
static int advance_seq(struct store_conn *c, struct sample_batch *b)
{
	sqlite3_stmt *s = store_stmt_id(c, sql_seq_advance, b->seq_job);
	int rc;

	if (!s)
		return STORE_EIO;
	sqlite3_bind_text(s, 2, b->stream ? b->stream : "", -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, b->seq);
	rc = sqlite3_step(s);
	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return store_fail(c, rc, "advance ingest sequence");
	b->duplicate = sqlite3_changes(c->db) == 0;
	return STORE_OK;
}

/*
 * Marks in late[] the points of the batch that are before their kind's
 * flushed mark (their span is encoded already): they are staged as rows.
 */
static size_t mark_late(const struct sample_batch *b, bool *late)
{
	double mark = *store_pending_mark(b->st, b->sampler ? PENDING_SAMPLER : PENDING_REPORTED);
	size_t nlate = 0;

	for (size_t i = 0; i < b->n; i++)
		nlate += late[i] = !(b->s[i].t >= mark);
	return nlate;
}

/*
 * The batch's points: the late ones as rows; a job's others as one staged
 * batch, then all of them into memory, last, so that a failure before
 * leaves memory as it was.
 */
static int store_points(struct store_conn *c, struct sample_batch *b)
{
	sqlite3_stmt *ins = store_stmt(c, sql_sample_insert);
	bool *late = malloc(b->n * sizeof(*late));
	size_t nlate;
	int r = STORE_OK;

	if (ins == NULL || late == NULL) {
		free(late);
		return STORE_EIO;
	}
	nlate = mark_late(b, late);
	for (size_t i = 0; i < b->n && r == STORE_OK; i++)
		if (late[i])
			r = insert_one(c, ins, &b->s[i]);
	if (r == STORE_OK && nlate < b->n && !b->sampler)
		r = store_batch_stage(c, b->s, b->n, late);
	if (r == STORE_OK && nlate < b->n &&
	    pending_add(store_pending_of(b->st, b->sampler ? PENDING_SAMPLER : PENDING_REPORTED), b->s, b->n, late) < 0)
		r = STORE_EIO;
	free(late);
	return r;
}

/*
 * Finds the newest sample of each (job, name) in the batch, so `latest` is
 * written once per series rather than once per sample.  Series beyond
 * LATEST_TRACKED are written per sample: correct, only slower.
 */
static int apply_samples(struct store_conn *c, void *arg)
{
	struct sample_batch *b = arg;
	sqlite3_stmt *up = store_stmt(c, sql_latest_upsert);
	size_t newest[LATEST_TRACKED];
	size_t ntracked = 0;
	int r;

	if (!up)
		return STORE_EIO;
	if (b->seq > 0) {
		if ((r = advance_seq(c, b)) != STORE_OK || b->duplicate)
			return r;
	}
	for (size_t i = 0; i < b->n; i++) {
		const struct sample *x = &b->s[i];
		size_t k;

		/* Per-thread series are history for the heatmap: job views would carry hundreds of them. */
		if (strncmp(x->name, STORE_THREAD_PREFIX, sizeof(STORE_THREAD_PREFIX) - 1) == 0)
			continue;
		for (k = 0; k < ntracked; k++) {
			const struct sample *y = &b->s[newest[k]];
			if (y->job_id == x->job_id && strcmp(y->name, x->name) == 0)
				break;
		}
		if (k < ntracked) {
			if (x->t >= b->s[newest[k]].t)
				newest[k] = i;
		} else if (ntracked < LATEST_TRACKED) {
			newest[ntracked++] = i;
		} else if ((r = upsert_latest(c, up, x)) != STORE_OK) {
			return r;
		}
	}
	for (size_t k = 0; k < ntracked; k++)
		if ((r = upsert_latest(c, up, &b->s[newest[k]])) != STORE_OK)
			return r;
	return b->n > 0 ? store_points(c, b) : STORE_OK;
}

int store_samples_write(struct store *st, const struct sample *s, size_t n)
{
	bool duplicate;

	return store_samples_write_once(st, 0, NULL, 0, s, n, &duplicate);
}

int store_samples_write_once(struct store *st, int64_t job_id, const char *stream, int64_t seq,
			     const struct sample *s, size_t n, bool *duplicate)
{
	struct sample_batch b = {.s = s, .n = n, .seq_job = job_id, .stream = stream, .seq = seq, .st = st};
	int r;

	*duplicate = false;
	/* An empty batch with a seq still moves the mark: its resend is a duplicate too. */
	if (n == 0 && seq <= 0)
		return STORE_OK;
	r = store_write(st, apply_samples, &b);
	*duplicate = r == STORE_OK && b.duplicate;
	return r;
}

static void batch_free(void *arg)
{
	struct sample_batch *b = arg;
	free(b->owned);
	free(b);
}

/* One allocation holds the batch struct's samples and all their strings. */
static struct sample_batch *batch_copy(const struct sample *s, size_t n)
{
	size_t strings = 0;
	struct sample_batch *b;
	char *p;

	for (size_t i = 0; i < n; i++)
		strings += strlen(s[i].name) + 1 + (s[i].phase ? strlen(s[i].phase) + 1 : 0);
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->owned = malloc(n * sizeof(struct sample) + strings);
	if (!b->owned) {
		free(b);
		return NULL;
	}
	p = (char *)(b->owned + n);
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(s[i].name) + 1;
		b->owned[i] = s[i];
		b->owned[i].name = memcpy(p, s[i].name, len);
		p += len;
		if (s[i].phase) {
			len = strlen(s[i].phase) + 1;
			b->owned[i].phase = memcpy(p, s[i].phase, len);
			p += len;
		}
	}
	b->s = b->owned;
	b->n = n;
	return b;
}

int store_samples_post(struct store *st, const struct sample *s, size_t n)
{
	struct sample_batch *b;

	if (n == 0)
		return STORE_OK;
	b = batch_copy(s, n);
	if (!b)
		return STORE_EBUSY;
	b->st = st;
	b->sampler = true;
	return store_post(st, apply_samples, b, batch_free);
}

int store_samples_stage_pending(struct store_conn *c, void *arg)
{
	struct store *st = arg;
	struct store_pending *p = store_pending_of(st, PENDING_SAMPLER);
	struct pending_run *runs = NULL;
	struct sample_batch b = {.st = st};
	struct sample *s = NULL;
	size_t nruns = 0, n = 0;
	int r = STORE_OK;

	if (pending_take(p, *store_pending_mark(st, PENDING_SAMPLER), INFINITY, &runs, &nruns) < 0)
		return STORE_EIO;
	for (size_t i = 0; i < nruns; i++)
		n += runs[i].n;
	if (n > 0 && (s = malloc(n * sizeof(*s))) == NULL)
		r = STORE_EIO;
	for (size_t i = 0, k = 0; i < nruns && s != NULL; i++)
		for (size_t j = 0; j < runs[i].n; j++)
			s[k++] = (struct sample){runs[i].job_id, runs[i].p[j].t, runs[i].name, runs[i].p[j].v,
						 runs[i].phase[0] != '\0' ? runs[i].phase : NULL};
	/* As a job's batch: read back into the reported points' memory when the store opens again. */
	b.s = s;
	b.n = n;
	if (r == STORE_OK && n > 0)
		r = store_points(c, &b);
	free(s);
	pending_runs_free(runs, nruns);
	if (r == STORE_OK)
		pending_prune(p, INFINITY);
	return r;
}
