/*
 * Live streams: GET /api/v1/jobs/{id}/live answers server-sent events, one
 * per sampler tick, with the tick's values of the job (0: the node), so
 * the dashboard follows new points as they are sampled instead of polling;
 * and an "ingest" event when the job's own reported samples are committed,
 * which the page then reads from the series.
 *
 * A stream costs no thread: between ticks its connection is suspended in
 * libmicrohttpd, and live_notify, which main.c makes the sampler's tick
 * hook (sampler_set_tick_hook), resumes every suspended stream after a tick
 * is published.  The number of streams is bounded
 * (live_open returns NULL beyond it), and live_stop ends every stream at
 * once, so a client that never reads cannot hold up the daemon's stop or
 * take a worker from other requests.  All functions are thread-safe.
 */
#ifndef DLPROF_LIVE_H
#define DLPROF_LIVE_H

#include <stdint.h>

struct live;
struct live_stream;
struct sampler;

/* A hub for at most max_streams streams; NULL when out of memory. */
struct live *live_new(unsigned max_streams);
/* After the server and the sampler have stopped: every stream is gone by then. */
void live_free(struct live *lv);
/* A tick was published (the sampler's thread, through its tick hook): suspended streams wake to send it. */
void live_notify(struct live *lv);
/* A job's reported samples were committed: its streams send an "ingest" event to re-read them. */
void live_ingested(struct live *lv, int64_t job_id);
/* Streams end after the event they are sending; new ones are refused. */
void live_stop(struct live *lv);
/* The most streams open at once. */
unsigned live_max_streams(const struct live *lv);

/* A new stream of job_id's values from the sampler's ticks; NULL when the hub is full or stopping. */
struct live_stream *live_open(struct live *lv, struct sampler *sam, int64_t job_id);
/*
 * The stream's response for conn (server.c; both are libmicrohttpd's, as
 * void * so handlers need not see its types): the response owns the
 * stream from then on, even when NULL is returned.
 */
void *live_stream_start(void *stream, void *conn);
/* Closes a stream that was never started. */
void live_stream_cancel(void *stream);

#endif
