/*
 * Tests of the live event streams (daemon/live.c) as the daemon runs them:
 * a real sampler over a stand-in collector, its tick hook waking the hub
 * (as main.c sets it), and streams served by the daemon's own MHD pool to
 * clients on loopback.  Each tick reaches a stream once, in order; an
 * ingest event reaches the streams of its job only; the hub holds at most
 * its bound and a stream's slot frees when its client goes; stopping ends
 * every stream and refuses new ones.  Three threads meet here (sampler,
 * MHD worker, the test), so the suite also runs under ThreadSanitizer.
 */
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "collector.h"
#include "jobs.h"
#include "live.h"
#include "mhd_pool.h"
#include "sampler.h"
#include "store_fixture.h"

#define MAX_STREAMS 2
#define EVENT_MAX 4096

static _Atomic long ticks_sampled;

static void *
tick_init(const struct collector_env *env, char *why, size_t len)
{
	static int ctx;

	(void)env;
	(void)len;
	why[0] = '\0';
	return &ctx;
}

/* The node's value is the tick's number, so each event says which tick it is. */
static int
tick_node(void *ctx, struct collector_out *out, char *why, size_t len)
{
	(void)ctx;
	(void)why;
	(void)len;
	collector_put(out, 0, (double)++ticks_sampled, "load.1");
	return COLLECTOR_OK;
}

static void
tick_fini(void *ctx)
{
	(void)ctx;
}

static const struct collector ticker = {COLLECTOR_VERSION, "proc", tick_init, tick_node, NULL, NULL, NULL, tick_fini};
static const struct collector *const table[] = {&ticker, NULL};

struct fixture {
	struct store_fixture sf;
	struct jobs *jobs;
	struct sampler *sam;
	struct live *lv;
	int listen_fd;
	uint16_t port;
	struct mhd_pool *pool;
};

/* The sampler's tick hook, as main.c sets it. */
static void
wake_streams(void *lv)
{
	live_notify(lv);
}

/* GET /JOB: a stream of job JOB's values (api_series.c's route, less the routing). */
static enum MHD_Result
on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method, const char *version,
	   const char *upload, size_t *upload_len, void **req_cls)
{
	struct fixture *f = cls;
	struct live_stream *ls;
	struct MHD_Response *mr;
	enum MHD_Result ret;

	(void)method;
	(void)version;
	(void)upload;
	(void)upload_len;
	if (*req_cls == NULL) {          /* headers only: answer on the second call */
		*req_cls = f;
		return MHD_YES;
	}
	if ((ls = live_open(f->lv, f->sam, strtoll(url + 1, NULL, 10))) == NULL) {
		mr = MHD_create_response_from_buffer(4, (void *)"full", MHD_RESPMEM_PERSISTENT);
		ret = MHD_queue_response(conn, MHD_HTTP_SERVICE_UNAVAILABLE, mr);
	} else {
		if ((mr = live_stream_start(ls, conn)) == NULL)
			return MHD_NO;
		ret = MHD_queue_response(conn, MHD_HTTP_OK, mr);
	}
	MHD_destroy_response(mr);
	return ret;
}

static int
setup(void **state)
{
	static const struct sampler_options so = {.interval_s = 0.05, .proc_root = "/proc", .sys_root = "/sys"};
	struct fixture *f = calloc(1, sizeof(*f));
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sin);

	if (f == NULL || store_fixture_open(&f->sf) < 0 || (f->jobs = jobs_new(f->sf.st, NULL, "test", "/proc")) == NULL ||
	    (f->lv = live_new(MAX_STREAMS)) == NULL || (f->sam = sampler_start_with(f->sf.st, f->jobs, &so, table)) == NULL)
		return -1;
	sampler_set_tick_hook(f->sam, wake_streams, f->lv);
	f->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (f->listen_fd < 0 || bind(f->listen_fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    listen(f->listen_fd, 16) < 0 || getsockname(f->listen_fd, (struct sockaddr *)&sin, &len) < 0)
		return -1;
	f->port = ntohs(sin.sin_port);
	f->pool = mhd_pool_start(f->listen_fd, "test", &(struct mhd_pool_options){
		.workers = 1, .max_connections = 16, .connection_timeout_s = 30, .on_request = on_request,
		.request_cls = f});
	if (f->pool == NULL)
		return -1;
	*state = f;
	return 0;
}

/* In the daemon's stop order: streams, server, sampler, then the hub. */
static int
teardown(void **state)
{
	struct fixture *f = *state;
	int r;

	live_stop(f->lv);
	mhd_pool_stop(f->pool);
	close(f->listen_fd);
	sampler_stop(f->sam);
	live_free(f->lv);
	jobs_free(f->jobs);
	r = store_fixture_close(&f->sf);
	free(f);
	return r;
}

/* A client of job's stream: connected, the request sent (HTTP/1.0: the body is the stream, not chunked). */
static int
stream(struct fixture *f, long job)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(f->port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct timeval tv = {10, 0};   /* a hang fails the test instead of stalling it */
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	char req[64];
	int n = snprintf(req, sizeof(req), "GET /%ld HTTP/1.0\r\n\r\n", job);

	assert_true(fd >= 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(write(fd, req, (size_t)n), n);
	return fd;
}

/* What a client has read and not yet taken as events. */
struct reader {
	int fd;
	char buf[16384];
	size_t len;
	bool eof;
	int status;                /* the response's; 0 until its head is read */
};

/* Reads more; false at the end of the stream. */
static bool
fill(struct reader *r)
{
	ssize_t got;

	if (r->eof || r->len + 1 >= sizeof(r->buf))
		return false;
	if ((got = read(r->fd, r->buf + r->len, sizeof(r->buf) - 1 - r->len)) < 0)
		fail_msg("read: nothing for 10 s");
	r->eof = got == 0;
	r->len += got > 0 ? (size_t)got : 0;
	r->buf[r->len] = '\0';
	return got > 0;
}

/* Drops the first n bytes read. */
static void
consume(struct reader *r, size_t n)
{
	memmove(r->buf, r->buf + n, r->len - n + 1);
	r->len -= n;
}

/*
 * The next event (its lines up to the blank one) into ev, after the
 * response's head; false at the end of the stream.
 */
static bool
next_event(struct reader *r, char *ev, size_t evlen)
{
	char *end;

	for (;;) {
		if (r->status == 0 && (end = strstr(r->buf, "\r\n\r\n")) != NULL) {
			r->status = atoi(r->buf + strlen("HTTP/1.x "));
			consume(r, (size_t)(end + 4 - r->buf));
			continue;
		}
		if (r->status != 0 && (end = strstr(r->buf, "\n\n")) != NULL) {
			snprintf(ev, evlen, "%.*s", (int)(end - r->buf), r->buf);
			consume(r, (size_t)(end + 2 - r->buf));
			return true;
		}
		if (!fill(r))
			return false;
	}
}

/* The next data event's tick time; its value of load.1 in *value (NAN: none). */
static double
next_tick(struct reader *r, double *value)
{
	char ev[EVENT_MAX];
	json_t *o, *v;
	double t;

	do
		assert_true(next_event(r, ev, sizeof(ev)));
	while (strncmp(ev, "data: ", 6) != 0);
	o = json_loads(ev + 6, 0, NULL);
	assert_non_null(o);
	t = json_real_value(json_object_get(o, "t"));
	v = json_object_get(json_object_get(o, "values"), "load.1");
	*value = json_is_number(v) ? json_number_value(v) : NAN;
	json_decref(o);
	return t;
}

static void
each_tick_reaches_a_stream_once_in_order(void **state)
{
	struct fixture *f = *state;
	struct reader r = {.fd = stream(f, 0)};
	char ev[EVENT_MAX];
	double t, last_t = 0, v, last_v = 0;

	/* First the reconnect delay, so a browser comes back after a restart. */
	assert_true(next_event(&r, ev, sizeof(ev)));
	assert_int_equal(r.status, 200);
	assert_string_equal(ev, "retry: 2000");
	for (int i = 0; i < 8; i++) {
		t = next_tick(&r, &v);
		assert_true(t > last_t);                /* never the same tick twice, never back */
		assert_true(v > last_v);
		assert_true(t == round(t * 1000) / 1000);   /* whole milliseconds, like the stored points */
		last_t = t;
		last_v = v;
	}
	close(r.fd);
}

static void
ingest_events_reach_their_job_only(void **state)
{
	struct fixture *f = *state;
	struct reader a = {.fd = stream(f, 7)}, b = {.fd = stream(f, 8)};
	char ev[EVENT_MAX];
	double v;
	bool seen = false;

	/* Both streams are up: each has had a tick (with no values: the jobs have none). */
	next_tick(&a, &v);
	assert_true(isnan(v));
	next_tick(&b, &v);
	live_ingested(f->lv, 7);
	while (!seen) {
		assert_true(next_event(&a, ev, sizeof(ev)));
		seen = strcmp(ev, "event: ingest\ndata: {\"job\":7}") == 0;
	}
	/* Job 8's stream goes on with ticks; an ingest event for it would have come before them. */
	for (int i = 0; i < 3; i++) {
		assert_true(next_event(&b, ev, sizeof(ev)));
		assert_null(strstr(ev, "ingest"));
	}
	close(a.fd);
	close(b.fd);
}

/* Opens a stream straight on the hub until one fits, for up to 10 s; whether one did. */
static bool
room_comes(struct fixture *f)
{
	struct timespec pause = {0, 20 * 1000 * 1000};
	struct live_stream *ls;

	for (int i = 0; i < 500; i++) {
		if ((ls = live_open(f->lv, f->sam, 0)) != NULL) {
			live_stream_cancel(ls);
			return true;
		}
		nanosleep(&pause, NULL);
	}
	return false;
}

static void
the_hub_holds_its_bound_and_frees_a_gone_client(void **state)
{
	struct fixture *f = *state;
	struct reader a = {.fd = stream(f, 0)}, b = {.fd = stream(f, 0)}, c;
	char ev[EVENT_MAX];

	assert_int_equal(live_max_streams(f->lv), MAX_STREAMS);
	assert_true(next_event(&a, ev, sizeof(ev)));
	assert_true(next_event(&b, ev, sizeof(ev)));
	/* Full: the route answers 503 and the hub refuses. */
	c = (struct reader){.fd = stream(f, 0)};
	assert_false(next_event(&c, ev, sizeof(ev)));
	assert_int_equal(c.status, 503);
	assert_string_equal(c.buf, "full");
	close(c.fd);
	assert_null(live_open(f->lv, f->sam, 0));
	/* A client goes: its stream ends at the next tick it cannot send, and its slot is free. */
	close(a.fd);
	assert_true(room_comes(f));
	close(b.fd);
}

static void
stop_ends_every_stream(void **state)
{
	struct fixture *f = *state;
	struct reader a = {.fd = stream(f, 0)}, b = {.fd = stream(f, 3)};
	char ev[EVENT_MAX];
	double v;

	next_tick(&a, &v);
	next_tick(&b, &v);
	live_stop(f->lv);
	/* Each stream ends after the event it was sending: the clients read to the end. */
	while (next_event(&a, ev, sizeof(ev)))
		;
	while (next_event(&b, ev, sizeof(ev)))
		;
	assert_true(a.eof && b.eof);
	assert_null(live_open(f->lv, f->sam, 0));
	close(a.fd);
	close(b.fd);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(each_tick_reaches_a_stream_once_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(ingest_events_reach_their_job_only, setup, teardown),
		cmocka_unit_test_setup_teardown(the_hub_holds_its_bound_and_frees_a_gone_client, setup, teardown),
		cmocka_unit_test_setup_teardown(stop_ends_every_stream, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
