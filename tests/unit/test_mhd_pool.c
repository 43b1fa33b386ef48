/*
 * mhd_pool: connections that arrive together are spread evenly over the
 * workers (MHD's own pool let one worker take most of a burst), the pool
 * holds at most max_connections and lets the rest wait in the backlog until
 * one closes, a connection the accept policy refuses is not counted, a
 * quiesced pool serves what it holds but accepts nothing new, and running
 * out of descriptors only pauses accepting.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <cmocka.h>

#include "mhd_pool.h"

#define MAX_WORKERS 8
/* Long enough that an answer that was going to come has come; only absences wait this long. */
#define QUIET_MS 300

/* What the request handler saw: which worker thread served each request. */
struct served {
	pthread_mutex_t lock;
	pthread_t threads[MAX_WORKERS];
	int nthreads;
	bool refuse_next;          /* the accept policy refuses one connection */
	int refused;
};

struct fixture {
	int listen_fd;
	uint16_t port;
	struct mhd_pool *pool;
	struct served served;
};

/* Answers with the index of the serving thread, in order of first appearance. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
				  const char *version, const char *upload_data, size_t *upload_data_size,
				  void **req_cls)
{
	struct served *s = cls;
	struct MHD_Response *resp;
	enum MHD_Result ret;
	char body[16];
	int idx = -1;

	(void)url;
	(void)method;
	(void)version;
	(void)upload_data;
	(void)upload_data_size;
	if (*req_cls == NULL) {   /* headers only: answer on the next call, keeping the connection */
		*req_cls = (void *)1;
		return MHD_YES;
	}
	pthread_mutex_lock(&s->lock);
	for (int i = 0; i < s->nthreads && idx < 0; i++)
		if (pthread_equal(s->threads[i], pthread_self()))
			idx = i;
	if (idx < 0 && s->nthreads < MAX_WORKERS) {
		idx = s->nthreads++;
		s->threads[idx] = pthread_self();
	}
	pthread_mutex_unlock(&s->lock);
	snprintf(body, sizeof(body), "%d", idx);
	resp = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_COPY);
	ret = MHD_queue_response(conn, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
	struct served *s = cls;
	bool refuse;

	(void)addr;
	(void)addrlen;
	pthread_mutex_lock(&s->lock);
	refuse = s->refuse_next;
	s->refuse_next = false;
	s->refused += refuse;
	pthread_mutex_unlock(&s->lock);
	return refuse ? MHD_NO : MHD_YES;
}

static struct fixture *start(unsigned workers, unsigned max_connections)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sin);

	assert_non_null(f);
	pthread_mutex_init(&f->served.lock, NULL);
	f->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	assert_true(f->listen_fd >= 0);
	assert_int_equal(bind(f->listen_fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(listen(f->listen_fd, 64), 0);
	assert_int_equal(getsockname(f->listen_fd, (struct sockaddr *)&sin, &len), 0);
	f->port = ntohs(sin.sin_port);
	f->pool = mhd_pool_start(f->listen_fd, "test", &(struct mhd_pool_options){
		.workers = workers, .max_connections = max_connections, .connection_timeout_s = 30,
		.accept_policy = on_accept, .accept_cls = &f->served,
		.on_request = on_request, .request_cls = &f->served});
	assert_non_null(f->pool);
	return f;
}

static void stop(struct fixture *f)
{
	mhd_pool_stop(f->pool);
	close(f->listen_fd);
	pthread_mutex_destroy(&f->served.lock);
	free(f);
}

static int client(struct fixture *f)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(f->port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct timeval tv = {10, 0};   /* a hang fails the test instead of stalling it */
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	return fd;
}

static void send_get(int fd)
{
	static const char req[] = "GET / HTTP/1.1\r\nHost: test\r\n\r\n";

	assert_int_equal(write(fd, req, sizeof(req) - 1), (ssize_t)(sizeof(req) - 1));
}

/* Reads one keep-alive answer; returns the serving thread's index, or -1 when none came. */
static int read_answer(int fd)
{
	char buf[1024];
	size_t len = 0;
	const char *body, *cl;

	for (;;) {
		ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);
		if (n <= 0)
			return -1;
		len += (size_t)n;
		buf[len] = '\0';
		if ((body = strstr(buf, "\r\n\r\n")) && (cl = strcasestr(buf, "content-length:")) &&
		    (size_t)(body + 4 - buf) + strtoul(cl + 15, NULL, 10) <= len)
			return atoi(body + 4);
	}
}

static bool quiet(int fd)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};

	return poll(&pfd, 1, QUIET_MS) == 0;
}

static int locked_read(struct fixture *f, const int *field)
{
	int v;

	pthread_mutex_lock(&f->served.lock);
	v = *field;
	pthread_mutex_unlock(&f->served.lock);
	return v;
}

static void test_burst_spread_evenly(void **state)
{
	struct fixture *f = start(4, 64);
	int fds[8], first[8], per_thread[MAX_WORKERS] = {0};

	(void)state;
	for (int i = 0; i < 8; i++)
		fds[i] = client(f);
	for (int i = 0; i < 8; i++)
		send_get(fds[i]);
	for (int i = 0; i < 8; i++) {
		first[i] = read_answer(fds[i]);
		assert_in_range(first[i], 0, MAX_WORKERS - 1);
		per_thread[first[i]]++;
	}
	/* Every worker serves two of the eight. */
	assert_int_equal(locked_read(f, &f->served.nthreads), 4);
	for (int t = 0; t < 4; t++)
		assert_int_equal(per_thread[t], 2);
	/* And a connection stays with its worker. */
	for (int i = 0; i < 8; i++) {
		send_get(fds[i]);
		assert_int_equal(read_answer(fds[i]), first[i]);
	}
	for (int i = 0; i < 8; i++)
		close(fds[i]);
	stop(f);
}

static void test_limit_holds_the_rest_in_backlog(void **state)
{
	struct fixture *f = start(2, 2);
	int a = client(f), b = client(f), c;

	(void)state;
	send_get(a);
	send_get(b);
	assert_true(read_answer(a) >= 0);
	assert_true(read_answer(b) >= 0);
	c = client(f);   /* the kernel completes the handshake; the pool must not take it */
	send_get(c);
	assert_true(quiet(c));
	assert_int_equal(mhd_pool_connections(f->pool), 2);
	close(a);
	assert_true(read_answer(c) >= 0);   /* one closed: the waiting client is served */
	close(b);
	close(c);
	stop(f);
}

static void test_refused_connection_not_counted(void **state)
{
	struct fixture *f = start(1, 1);
	int refused, served;
	char byte;

	(void)state;
	pthread_mutex_lock(&f->served.lock);
	f->served.refuse_next = true;
	pthread_mutex_unlock(&f->served.lock);
	refused = client(f);
	/* MHD closes what the policy refuses: the client reads end of file. */
	assert_int_equal(read(refused, &byte, 1), 0);
	assert_int_equal(locked_read(f, &f->served.refused), 1);
	served = client(f);   /* a count left behind would keep this one waiting for good */
	send_get(served);
	assert_true(read_answer(served) >= 0);
	close(refused);
	close(served);
	stop(f);
}

static void test_quiesced_serves_held_only(void **state)
{
	struct fixture *f = start(2, 16);
	int held = client(f), late;

	(void)state;
	send_get(held);
	assert_true(read_answer(held) >= 0);
	mhd_pool_quiesce(f->pool);
	late = client(f);
	send_get(late);
	send_get(held);
	assert_true(read_answer(held) >= 0);
	assert_true(quiet(late));
	close(held);
	close(late);
	stop(f);
}

static void test_accept_recovers_from_descriptor_limit(void **state)
{
	struct fixture *f = start(1, 16);
	struct rlimit saved, tight;
	int fillers[64], nfillers = 0, waiting;

	(void)state;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &saved), 0);
	tight = saved;
	tight.rlim_cur = 64;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &tight), 0);
	/* Take every descriptor left, then free one: the client's socket, and none for accept(). */
	while (nfillers < 64 && (fillers[nfillers] = dup(STDIN_FILENO)) >= 0)
		nfillers++;
	assert_int_equal(errno, EMFILE);
	assert_true(nfillers > 0);
	close(fillers[--nfillers]);
	waiting = client(f);
	send_get(waiting);
	assert_true(quiet(waiting));   /* accept() fails with EMFILE: the acceptor rests */
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &saved), 0);
	while (nfillers > 0)
		close(fillers[--nfillers]);
	assert_true(read_answer(waiting) >= 0);   /* and accepts again once it can */
	close(waiting);
	stop(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_burst_spread_evenly),
		cmocka_unit_test(test_limit_holds_the_rest_in_backlog),
		cmocka_unit_test(test_refused_connection_not_counted),
		cmocka_unit_test(test_quiesced_serves_held_only),
		cmocka_unit_test(test_accept_recovers_from_descriptor_limit),
	};
	return cmocka_run_group_tests_name("mhd_pool", tests, NULL, NULL);
}
