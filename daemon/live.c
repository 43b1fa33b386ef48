/*
 * Live streams (see live.h).  Each stream's connection runs in one of the
 * server's libmicrohttpd workers; its content reader sends the newest tick
 * when the sampler has published one since the last event, and otherwise
 * suspends the connection and returns nothing.  live_notify resumes the
 * suspended ones.  The hub's lock guards the streams' state and makes
 * "nothing to send, suspend" and "a tick, resume" one decision each, so a
 * tick is never missed between the two.
 */
#include <math.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "invariant.h"
#include "live.h"
#include "log.h"
#include "sampler.h"
#include "store_series.h"

/* Asks the browser to reconnect after this many ms when a stream ends (a restart, the hub full). */
#define LIVE_RETRY "retry: 2000\n\n"

struct live_stream {
	struct live *lv;
	struct sampler *sam;
	int64_t job_id;
	struct MHD_Connection *conn;   /* set when started */
	bool suspended;
	bool ingested;                 /* the job reported samples since the last "ingest" event */
	double sent_t;                 /* the tick last sent; 0: none yet */
	char *buf;                     /* the event being sent */
	size_t len, off;
};

struct live {
	pthread_mutex_t lock;          /* guards everything below and every stream's state */
	bool stopping;
	unsigned max;
	struct live_stream **v;        /* the open streams, max slots, NULL free */
};

struct live *
live_new(unsigned max_streams)
{
	struct live *lv = calloc(1, sizeof(*lv));

	if (lv == NULL || (lv->v = calloc(max_streams ? max_streams : 1, sizeof(*lv->v))) == NULL) {
		log_warn("%s: calloc", __func__);
		free(lv);
		return NULL;
	}
	lv->max = max_streams;
	pthread_mutex_init(&lv->lock, NULL);
	return lv;
}

void
live_free(struct live *lv)
{
	if (lv == NULL)
		return;
	for (unsigned i = 0; i < lv->max; i++)
		assert(lv->v[i] == NULL);
	pthread_mutex_destroy(&lv->lock);
	free(lv->v);
	free(lv);
}

unsigned
live_max_streams(const struct live *lv)
{
	return lv->max;
}

/* Resumes every suspended stream; the lock is held. */
static void
wake_all(struct live *lv)
{
	assert(lock_held(&lv->lock));
	for (unsigned i = 0; i < lv->max; i++) {
		struct live_stream *ls = lv->v[i];
		if (ls != NULL && ls->suspended) {
			ls->suspended = false;
			MHD_resume_connection(ls->conn);
		}
	}
}

void
live_notify(struct live *lv)
{
	pthread_mutex_lock(&lv->lock);
	wake_all(lv);
	pthread_mutex_unlock(&lv->lock);
}

void
live_stop(struct live *lv)
{
	pthread_mutex_lock(&lv->lock);
	lv->stopping = true;
	wake_all(lv);
	pthread_mutex_unlock(&lv->lock);
}

void
live_ingested(struct live *lv, int64_t job_id)
{
	pthread_mutex_lock(&lv->lock);
	for (unsigned i = 0; i < lv->max; i++) {
		struct live_stream *ls = lv->v[i];
		if (ls == NULL || ls->job_id != job_id)
			continue;
		ls->ingested = true;
		if (ls->suspended) {
			ls->suspended = false;
			MHD_resume_connection(ls->conn);
		}
	}
	pthread_mutex_unlock(&lv->lock);
}

struct live_stream *
live_open(struct live *lv, struct sampler *sam, int64_t job_id)
{
	struct live_stream *ls = NULL;

	pthread_mutex_lock(&lv->lock);
	for (unsigned i = 0; i < lv->max && !lv->stopping; i++) {
		if (lv->v[i] != NULL)
			continue;
		if ((ls = calloc(1, sizeof(*ls))) == NULL || (ls->buf = strdup(LIVE_RETRY)) == NULL) {
			log_warn("%s: calloc", __func__);
			free(ls);
			ls = NULL;
			break;
		}
		ls->lv = lv;
		ls->sam = sam;
		ls->job_id = job_id;
		ls->len = strlen(ls->buf);
		lv->v[i] = ls;
		break;
	}
	pthread_mutex_unlock(&lv->lock);
	return ls;
}

/* Removes the stream from the hub and frees it (the response's end, or a cancel). */
static void
stream_free(void *cls)
{
	struct live_stream *ls = cls;
	struct live *lv = ls->lv;

	pthread_mutex_lock(&lv->lock);
	for (unsigned i = 0; i < lv->max; i++)
		if (lv->v[i] == ls)
			lv->v[i] = NULL;
	pthread_mutex_unlock(&lv->lock);
	free(ls->buf);
	free(ls);
}

void
live_stream_cancel(void *stream)
{
	if (stream != NULL)
		stream_free(stream);
}

/*
 * The next event into ls->buf when the sampler has a tick newer than the
 * last one sent: {"t", "job", "values": {name: value}} (no per-thread
 * series), t in whole
 * milliseconds like the stored points.  Nothing when out of memory: the
 * next tick tries again.
 */
static void
stream_fill(struct live_stream *ls)
{
	struct sampler_snapshot snap;
	json_t *values, *ev;
	char *text;
	double t;

	if (sampler_snapshot_get(ls->sam, &snap) < 0)
		return;
	t = round(snap.t * 1000.0) / 1000.0;
	if (snap.t > 0 && t != ls->sent_t && (values = json_object()) != NULL) {
		/* Per-thread series change once a store interval and a job may have hundreds: the heatmap reads them. */
		for (size_t i = 0; i < snap.nvalues; i++)
			if (snap.values[i].job_id == ls->job_id &&
			    strncmp(snap.values[i].name, STORE_THREAD_PREFIX, sizeof(STORE_THREAD_PREFIX) - 1) != 0)
				json_object_set_new(values, snap.values[i].name, json_real(snap.values[i].value));
		ev = json_pack("{s:f,s:I,s:o}", "t", t, "job", (json_int_t)ls->job_id, "values", values);
		text = ev != NULL ? json_dumps(ev, JSON_COMPACT) : NULL;
		json_decref(ev);
		if (text != NULL) {
			free(ls->buf);
			ls->len = ls->off = 0;
			if ((ls->buf = malloc(strlen(text) + 9)) != NULL) {
				ls->len = (size_t)sprintf(ls->buf, "data: %s\n\n", text);
				ls->sent_t = t;
			}
			free(text);
		}
	}
	sampler_snapshot_free(&snap);
}

/* The "ingest" event, when the job reported samples since the last one. */
static void
stream_fill_ingest(struct live_stream *ls)
{
	char *buf = malloc(64);

	if (!ls->ingested || buf == NULL) {
		free(buf);
		return;
	}
	ls->ingested = false;
	free(ls->buf);
	ls->buf = buf;
	ls->off = 0;
	ls->len = (size_t)snprintf(buf, 64, "event: ingest\ndata: {\"job\":%lld}\n\n", (long long)ls->job_id);
}

/* libmicrohttpd's content reader: the event in hand, a new one, or suspend until the next tick. */
static ssize_t
stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct live_stream *ls = cls;
	struct live *lv = ls->lv;
	size_t n;

	(void)pos;
	pthread_mutex_lock(&lv->lock);
	if (ls->off == ls->len && !lv->stopping)
		stream_fill_ingest(ls);
	if (ls->off == ls->len && !lv->stopping)
		stream_fill(ls);
	if (ls->off == ls->len) {
		if (lv->stopping) {
			pthread_mutex_unlock(&lv->lock);
			return MHD_CONTENT_READER_END_OF_STREAM;
		}
		ls->suspended = true;
		MHD_suspend_connection(ls->conn);
		pthread_mutex_unlock(&lv->lock);
		return 0;
	}
	n = ls->len - ls->off < max ? ls->len - ls->off : max;
	memcpy(buf, ls->buf + ls->off, n);
	ls->off += n;
	pthread_mutex_unlock(&lv->lock);
	return (ssize_t)n;
}

void *
live_stream_start(void *stream, void *conn)
{
	struct live_stream *ls = stream;
	struct MHD_Response *mr;

	pthread_mutex_lock(&ls->lv->lock);
	ls->conn = conn;
	pthread_mutex_unlock(&ls->lv->lock);
	mr = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, stream_read, ls, stream_free);
	if (mr == NULL)
		stream_free(ls);
	return mr;
}
