/*
 * The ingest load generator: C concurrent clients, each on one kept-alive
 * connection (TCP or the Unix socket), posting batches of B samples (the
 * rows of rows.h) to POST /api/v1/jobs/{id}/metrics as fast as answers come
 * back, for a fixed time.  Bodies are built once per client, so the
 * generator spends its CPU on the socket, not on JSON.
 *
 *   ingest_load (--tcp HOST:PORT | --unix PATH) --jobs ID[,ID...]
 *               [--clients 4] [--batch 1000] [--seconds 5] [--no-config]
 *
 * Client i posts to the i-th job id (cycling).  Prints one JSON object:
 * requests, samples, errors, seconds, samples_per_s, p50_ms, p99_ms.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "rows.h"

#define MAX_CLIENTS 64

struct target {
	const char *tcp;     /* "HOST:PORT" or NULL */
	const char *unix_path;
};

struct client {
	pthread_t thread;
	const struct target *to;
	long long job;
	size_t batch;
	int with_config;
	double seconds;
	char *request;       /* headers + body */
	size_t request_len;
	long long requests, errors;
	double *lat;         /* seconds per request */
	size_t nlat, caplat;
};

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int dial(const struct target *to)
{
	int fd;

	if (to->unix_path) {
		struct sockaddr_un sun = {.sun_family = AF_UNIX};
		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", to->unix_path);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0)
			return fd;
	} else {
		struct sockaddr_in sin = {.sin_family = AF_INET};
		char host[64];
		const char *colon = strrchr(to->tcp, ':');
		int one = 1;
		if (!colon || (size_t)(colon - to->tcp) >= sizeof(host))
			return -1;
		memcpy(host, to->tcp, (size_t)(colon - to->tcp));
		host[colon - to->tcp] = '\0';
		sin.sin_port = htons((uint16_t)atoi(colon + 1));
		inet_pton(AF_INET, host, &sin.sin_addr);
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0)
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (fd >= 0 && connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0)
			return fd;
	}
	if (fd >= 0)
		close(fd);
	return -1;
}

/* The whole request, built once: a JSON body of batch rows. */
static int build_request(struct client *c)
{
	size_t cap = 256 + c->batch * 110, len = 0, hlen;
	char *body = malloc(cap), *req;
	double t0 = (double)time(NULL) - 30;

	if (!body)
		return -1;
	len += (size_t)snprintf(body + len, cap - len, "{\"samples\":[");
	for (size_t i = 0; i < c->batch; i++) {
		struct bench_row r = bench_row(i, t0);
		len += (size_t)snprintf(body + len, cap - len, "%s{\"t\":%.3f,\"name\":\"%s\",\"value\":%.4f", i ? "," : "",
					r.t, r.name, r.value);
		if (r.phase)
			len += (size_t)snprintf(body + len, cap - len, ",\"phase\":\"%s\"", r.phase);
		len += (size_t)snprintf(body + len, cap - len, "}");
	}
	len += (size_t)snprintf(body + len, cap - len, "]%s}",
				c->with_config ? ",\"config\":{\"intra_threads\":2,\"interop_threads\":1}" : "");
	req = malloc(len + 256);
	if (!req) {
		free(body);
		return -1;
	}
	hlen = (size_t)snprintf(req, 256,
				"POST /api/v1/jobs/%lld/metrics HTTP/1.1\r\nHost: bench\r\n"
				"Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n",
				c->job, len);
	memcpy(req + hlen, body, len);
	free(body);
	c->request = req;
	c->request_len = hlen + len;
	return 0;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * Reads one response; returns its status, or -1 when the connection broke.
 * *keep is cleared when the server will close the connection.
 */
static int read_response(int fd, int *keep)
{
	char buf[16384];
	size_t have = 0, need;
	char *end = NULL, *cl;
	int status;

	while (!end) {
		ssize_t r = read(fd, buf + have, sizeof(buf) - 1 - have);
		if (r <= 0)
			return -1;
		have += (size_t)r;
		buf[have] = '\0';
		end = strstr(buf, "\r\n\r\n");
		if (!end && have == sizeof(buf) - 1)
			return -1;
	}
	if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1)
		return -1;
	*keep = strcasestr(buf, "\r\nConnection: close") == NULL;
	cl = strcasestr(buf, "\r\nContent-Length:");
	need = (size_t)(end + 4 - buf) + (cl ? (size_t)atol(cl + 17) : 0);
	if (status >= 300 && have < sizeof(buf) - 1) {
		static int told;
		if (!__atomic_exchange_n(&told, 1, __ATOMIC_RELAXED))
			fprintf(stderr, "ingest_load: HTTP %d: %.300s\n", status, end + 4);
	}
	while (have < need) {
		ssize_t r = read(fd, buf, sizeof(buf) < need - have ? sizeof(buf) : need - have);
		if (r <= 0)
			return -1;
		have += (size_t)r;
	}
	return status;
}

static void record(struct client *c, double s)
{
	if (c->nlat == c->caplat) {
		size_t cap = c->caplat ? c->caplat * 2 : 4096;
		double *v = realloc(c->lat, cap * sizeof(*v));
		if (!v)
			return;
		c->lat = v;
		c->caplat = cap;
	}
	c->lat[c->nlat++] = s;
}

static void *client_main(void *arg)
{
	struct client *c = arg;
	double deadline = mono_s() + c->seconds;
	int fd = -1, keep = 1;

	while (mono_s() < deadline) {
		double t0;
		int status;

		if (fd < 0 && (fd = dial(c->to)) < 0) {
			c->errors++;
			usleep(10000);
			continue;
		}
		t0 = mono_s();
		if (write_all(fd, c->request, c->request_len) < 0 || (status = read_response(fd, &keep)) < 0) {
			c->errors++;
			close(fd);
			fd = -1;
			continue;
		}
		record(c, mono_s() - t0);
		if (status == 200)
			c->requests++;
		else
			c->errors++;
		if (!keep) {
			close(fd);
			fd = -1;
		}
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	struct target to = {0};
	static struct client cl[MAX_CLIENTS];
	long long jobs[MAX_CLIENTS], requests = 0, errors = 0;
	int njobs = 0, clients = 4, with_config = 1;
	size_t batch = 1000, nlat = 0, k = 0;
	double seconds = 5, start, wall, *lat;

	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : "";
		if (strcmp(argv[i], "--no-config") == 0) {
			with_config = 0;
			continue;
		}
		if (strcmp(argv[i], "--tcp") == 0)
			to.tcp = v;
		else if (strcmp(argv[i], "--unix") == 0)
			to.unix_path = v;
		else if (strcmp(argv[i], "--clients") == 0)
			clients = atoi(v);
		else if (strcmp(argv[i], "--batch") == 0)
			batch = (size_t)atol(v);
		else if (strcmp(argv[i], "--seconds") == 0)
			seconds = atof(v);
		else if (strcmp(argv[i], "--jobs") == 0)
			for (char *p = (char *)v; *p && njobs < MAX_CLIENTS; p += *p == ',')
				jobs[njobs++] = strtoll(p, &p, 10);
		i++;
	}
	if ((!to.tcp == !to.unix_path) || njobs == 0 || clients < 1 || clients > MAX_CLIENTS || batch == 0) {
		fprintf(stderr, "usage: ingest_load (--tcp HOST:PORT | --unix PATH) --jobs ID[,ID...] "
				"[--clients N] [--batch N] [--seconds S] [--no-config]\n");
		return 2;
	}
	for (int i = 0; i < clients; i++) {
		cl[i] = (struct client){.to = &to, .job = jobs[i % njobs], .batch = batch,
					.with_config = with_config, .seconds = seconds};
		if (build_request(&cl[i]) < 0)
			return 1;
	}
	start = mono_s();
	for (int i = 0; i < clients; i++)
		pthread_create(&cl[i].thread, NULL, client_main, &cl[i]);
	for (int i = 0; i < clients; i++) {
		pthread_join(cl[i].thread, NULL);
		requests += cl[i].requests;
		errors += cl[i].errors;
		nlat += cl[i].nlat;
	}
	wall = mono_s() - start;
	lat = calloc(nlat + 1, sizeof(*lat));
	for (int i = 0; lat && i < clients; i++)
		for (size_t j = 0; j < cl[i].nlat; j++)
			lat[k++] = cl[i].lat[j];
	if (lat && nlat)
		qsort(lat, nlat, sizeof(*lat), cmp_double);
	printf("{\"clients\":%d,\"batch\":%zu,\"requests\":%lld,\"samples\":%lld,\"errors\":%lld,\"seconds\":%.3f,"
	       "\"samples_per_s\":%.0f,\"p50_ms\":%.3f,\"p99_ms\":%.3f}\n",
	       clients, batch, requests, requests * (long long)batch, errors, wall,
	       (double)requests * (double)batch / wall, nlat ? lat[nlat / 2] * 1e3 : 0.0,
	       nlat ? lat[(size_t)((double)(nlat - 1) * 0.99)] * 1e3 : 0.0);
	for (int i = 0; i < clients; i++) {
		free(cl[i].request);
		free(cl[i].lat);
	}
	free(lat);
	return errors > 0 && requests == 0 ? 1 : 0;
}
