/*
 * The library's ceiling for the API benchmarks: a libmicrohttpd server that
 * answers every request with one fixed 200-byte JSON body.  It runs MHD the
 * way dlprofd does (its own listening socket, the same pool of epoll workers
 * fed by one accepting thread: daemon/mhd_pool.c, the same connection limit,
 * timeout and memory pool per connection: daemon/server.c), so the gap
 * between the two is what dlprofd's routing, handlers and storage cost.
 *
 *   mhd_fixed [--listen 127.0.0.1:0] [--threads 4]
 *
 * Prints "listening on ADDR:PORT" on stderr, serves until SIGTERM or SIGINT.
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mhd_pool.h"

/* 200 bytes exactly; main() checks. */
static const char fixed_body[] =
	"{\"workload\":\"bench\",\"source\":\"default\",\"config\":{\"intra_threads\":2,"
	"\"interop_threads\":1,\"dataloader_workers\":1,\"affinity\":\"close\",\"allocator\":"
	"\"default\",\"gpus\":0},\"trials\":0,\"expected_gain\":0,\"pad\":\"x\"}";

static enum MHD_Result answer(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
			      const char *version, const char *upload_data, size_t *upload_data_size,
			      void **req_cls)
{
	struct MHD_Response *resp = cls;

	(void)url;
	(void)method;
	(void)version;
	(void)upload_data;
	/*
	 * The first call only sees the headers: MHD closes the connection after
	 * a response queued that early (the body could still be coming), so it
	 * answers on the second call, as dlprofd does, to keep connections alive.
	 */
	if (*req_cls == NULL) {
		*req_cls = (void *)1;
		return MHD_YES;
	}
	if (*upload_data_size > 0) {
		*upload_data_size = 0;
		return MHD_YES;
	}
	return MHD_queue_response(conn, MHD_HTTP_OK, resp);
}

static int listen_on(const char *spec)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	socklen_t len = sizeof(sin);
	char host[64];
	const char *colon = strrchr(spec, ':');
	int fd, one = 1;

	if (!colon || (size_t)(colon - spec) >= sizeof(host)) {
		fprintf(stderr, "mhd_fixed: --listen wants IPV4:PORT\n");
		return -1;
	}
	memcpy(host, spec, (size_t)(colon - spec));
	host[colon - spec] = '\0';
	sin.sin_port = htons((uint16_t)atoi(colon + 1));
	if (inet_pton(AF_INET, host, &sin.sin_addr) != 1) {
		fprintf(stderr, "mhd_fixed: %s: not an IPv4 address\n", host);
		return -1;
	}
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(fd, 1024) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) < 0) {
		perror("mhd_fixed: bind");
		close(fd);
		return -1;
	}
	fprintf(stderr, "listening on %s:%u\n", host, ntohs(sin.sin_port));
	return fd;
}

int main(int argc, char **argv)
{
	const char *spec = "127.0.0.1:0";
	unsigned threads = 4;
	struct MHD_Response *resp;
	struct mhd_pool *pool;
	sigset_t set;
	int fd, sig;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--listen") == 0)
			spec = argv[i + 1];
		else if (strcmp(argv[i], "--threads") == 0)
			threads = (unsigned)atoi(argv[i + 1]);
	}
	if (sizeof(fixed_body) - 1 != 200) {
		fprintf(stderr, "mhd_fixed: body is %zu bytes, not 200\n", sizeof(fixed_body) - 1);
		return 1;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	if ((fd = listen_on(spec)) < 0)
		return 1;
	resp = MHD_create_response_from_buffer(sizeof(fixed_body) - 1, (void *)fixed_body, MHD_RESPMEM_PERSISTENT);
	if (!resp)
		return 1;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	pool = mhd_pool_start(fd, spec, &(struct mhd_pool_options){
		.workers = threads, .max_connections = 1024, .connection_timeout_s = 30,
		.connection_memory = 16u * 1024, .on_request = answer, .request_cls = resp});
	if (!pool)
		return 1;
	sigwait(&set, &sig);
	mhd_pool_stop(pool);
	MHD_destroy_response(resp);
	close(fd);
	return 0;
}
