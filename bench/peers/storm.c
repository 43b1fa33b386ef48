/*
 * The prologue storm: N requests at once, each on a new TCP connection, as
 * N Slurm prologues would run `curl localhost:8080/api/v1/recommend?...`
 * when a large job array starts on one node.  All connections are opened
 * together (non-blocking, one epoll loop), each sends one request with
 * "Connection: close" and reads the answer to the end.  A request's latency
 * runs from its connect() to the last byte of its answer.
 *
 *   storm --tcp HOST:PORT --path PATH [--n 500] [--timeout 20]
 *
 * Prints one JSON object: n, answered (2xx), failed, wall_ms, p50_ms,
 * p99_ms, max_ms.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct conn {
	int fd;
	int sent;
	int status;          /* parsed from the status line; 0 until read */
	int done;            /* 1 answered to EOF, -1 failed */
	double start, end;
	char head[32];       /* the first bytes of the answer */
	size_t nhead;
};

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void finish(struct conn *c, int ok)
{
	c->end = mono_s();
	c->done = ok ? 1 : -1;
	close(c->fd);
	c->fd = -1;
}

/* Advances one connection on an epoll event. */
static void step(int ep, struct conn *c, uint32_t events, const char *req, size_t req_len)
{
	char buf[8192];
	ssize_t r;

	if (!c->sent) {
		int err = 0;
		socklen_t len = sizeof(err);
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
		getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
		if (err || write(c->fd, req, req_len) != (ssize_t)req_len) {
			finish(c, 0);
			return;
		}
		c->sent = 1;
		epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
		return;
	}
	(void)events;
	while ((r = read(c->fd, buf, sizeof(buf))) > 0) {
		size_t take = (size_t)r < sizeof(c->head) - 1 - c->nhead ? (size_t)r : sizeof(c->head) - 1 - c->nhead;
		memcpy(c->head + c->nhead, buf, take);
		c->nhead += take;
		c->head[c->nhead] = '\0';
	}
	if (r == 0) {
		if (sscanf(c->head, "HTTP/1.%*d %d", &c->status) != 1)
			c->status = 0;
		finish(c, 1);
	} else if (errno != EAGAIN && errno != EINTR) {
		finish(c, 0);
	}
}

int main(int argc, char **argv)
{
	const char *tcp = NULL, *path = NULL;
	int n = 500, answered = 0, failed = 0, pending, ep;
	double timeout = 20, t0, *lat;
	struct sockaddr_in sin = {.sin_family = AF_INET};
	struct conn *cs;
	char req[2048], host[64];
	size_t req_len, nlat = 0;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--tcp") == 0)
			tcp = argv[i + 1];
		else if (strcmp(argv[i], "--path") == 0)
			path = argv[i + 1];
		else if (strcmp(argv[i], "--n") == 0)
			n = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--timeout") == 0)
			timeout = atof(argv[i + 1]);
	}
	if (!tcp || !path || n < 1 || !strrchr(tcp, ':') || (size_t)(strrchr(tcp, ':') - tcp) >= sizeof(host)) {
		fprintf(stderr, "usage: storm --tcp HOST:PORT --path PATH [--n N] [--timeout S]\n");
		return 2;
	}
	memcpy(host, tcp, (size_t)(strrchr(tcp, ':') - tcp));
	host[strrchr(tcp, ':') - tcp] = '\0';
	sin.sin_port = htons((uint16_t)atoi(strrchr(tcp, ':') + 1));
	inet_pton(AF_INET, host, &sin.sin_addr);
	req_len = (size_t)snprintf(req, sizeof(req),
				   "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n"
				   "Connection: close\r\n\r\n", path, tcp);
	cs = calloc((size_t)n, sizeof(*cs));
	lat = calloc((size_t)n, sizeof(*lat));
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (!cs || !lat || ep < 0)
		return 1;
	t0 = mono_s();
	for (int i = 0; i < n; i++) {
		struct conn *c = &cs[i];
		struct epoll_event ev = {.events = EPOLLOUT, .data.ptr = c};
		c->start = mono_s();
		c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (c->fd < 0 || (connect(c->fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 && errno != EINPROGRESS) ||
		    epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) < 0) {
			if (c->fd >= 0)
				close(c->fd);
			c->end = mono_s();
			c->done = -1;
			c->fd = -1;
		}
	}
	pending = n;
	for (int i = 0; i < n; i++)
		pending -= cs[i].done != 0;
	while (pending > 0 && mono_s() - t0 < timeout) {
		struct epoll_event evs[256];
		int k = epoll_wait(ep, evs, 256, 100);
		for (int i = 0; i < k; i++) {
			struct conn *c = evs[i].data.ptr;
			if (c->done)
				continue;
			step(ep, c, evs[i].events, req, req_len);
			pending -= c->done != 0;
		}
	}
	for (int i = 0; i < n; i++) {
		struct conn *c = &cs[i];
		if (c->done == 1 && c->status >= 200 && c->status < 300) {
			answered++;
			lat[nlat++] = c->end - c->start;
		} else {
			failed++;
			if (c->fd >= 0)
				close(c->fd);
		}
	}
	qsort(lat, nlat, sizeof(*lat), cmp_double);
	printf("{\"n\":%d,\"answered\":%d,\"failed\":%d,\"wall_ms\":%.1f,\"p50_ms\":%.3f,\"p99_ms\":%.3f,"
	       "\"max_ms\":%.3f}\n",
	       n, answered, failed, (mono_s() - t0) * 1e3, nlat ? lat[nlat / 2] * 1e3 : 0.0,
	       nlat ? lat[(size_t)((double)(nlat - 1) * 0.99)] * 1e3 : 0.0, nlat ? lat[nlat - 1] * 1e3 : 0.0);
	free(cs);
	free(lat);
	close(ep);
	return failed ? 1 : 0;
}
