/*
 * Implementation of mhd_pool.h.
 *
 * Why not MHD_OPTION_THREAD_POOL_SIZE: there every worker polls the shared
 * listening socket, and the one that wakes accepts up to ten connections in
 * a row.  Clients that connect together (wrk's eight, a dashboard and a
 * scraper, the jobs of one allocation) landed 0-6-1-1 or 4-4-0-0 on four
 * workers, and a crowded worker's connections all wait whenever its thread
 * is descheduled.  On the 2-core bench machine recommend's p99 at 8
 * connections went from 0.2 to 3.4 ms between runs; spread evenly, its
 * median over six runs fell from 1.41 to 0.53 ms (bench/RESULTS.md, findings).
 *
 * Here one thread accepts and gives each connection to the worker with the
 * fewest open, ties going round-robin so that a burst accepted before the
 * workers have seen any of it still spreads.  A worker's count rises when a
 * connection is handed to it (MHD reports the start later, in the worker's
 * thread) and falls when MHD reports it closed or refuses it.  When the
 * pool holds max_connections the acceptor stops accepting until one closes,
 * so further clients wait in the listen backlog, as with MHD's own pool.
 */
#include "mhd_pool.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"

/* How long the acceptor rests after accept() ran out of descriptors or memory. */
#define ACCEPT_BACKOFF_MS 100

struct mhd_worker {
	struct mhd_pool *pool;
	struct MHD_Daemon *mhd;
	_Atomic unsigned open;           /* handed over and not yet closed */
};

struct mhd_pool {
	int listen_fd;
	int wake_fd;                     /* eventfd: a close while full, or the stop */
	_Atomic bool stopping;
	_Atomic bool full;               /* the acceptor waits for a close */
	bool accepting;                  /* the acceptor thread runs */
	pthread_t acceptor;
	/* The acceptor's own. */
	unsigned next;                   /* where the round-robin over ties resumes */
	bool accept_failing;             /* logged once until accept() works again */

	unsigned max_connections;
	MHD_NotifyConnectionCallback on_connection;
	void *connection_cls;
	unsigned nworkers;
	struct mhd_worker *workers;
	char name[128];
};

static void wake(struct mhd_pool *pool)
{
	uint64_t one = 1;
	/* Fails only when the counter is full, and then the acceptor is awake already. */
	ssize_t n = write(pool->wake_fd, &one, sizeof(one));
	(void)n;
}

/* Passes MHD's news on, and keeps the worker's count. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct mhd_worker *w = cls;
	struct mhd_pool *pool = w->pool;

	if (pool->on_connection)
		pool->on_connection(pool->connection_cls, conn, socket_context, toe);
	if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
		atomic_fetch_sub(&w->open, 1);
		if (atomic_load(&pool->full))
			wake(pool);
	}
}

/* The worker holding the fewest connections, ties round-robin; NULL when the pool is full. */
static struct mhd_worker *least_loaded(struct mhd_pool *pool)
{
	struct mhd_worker *best = NULL;
	unsigned best_open = 0, total = 0;

	for (unsigned k = 0; k < pool->nworkers; k++) {
		struct mhd_worker *w = &pool->workers[(pool->next + k) % pool->nworkers];
		unsigned open = atomic_load(&w->open);
		total += open;
		if (!best || open < best_open) {
			best = w;
			best_open = open;
		}
	}
	return total < pool->max_connections ? best : NULL;
}

static struct mhd_worker *pick(struct mhd_pool *pool)
{
	struct mhd_worker *w = least_loaded(pool);

	if (!w) {
		atomic_store(&pool->full, true);
		/* A close between the look and the flag woke nobody: look again. */
		w = least_loaded(pool);
	}
	if (w && atomic_load(&pool->full))
		atomic_store(&pool->full, false);
	return w;
}

/* Accepts until the backlog is empty or the pool full; false when accept() should rest. */
static bool accept_ready(struct mhd_pool *pool)
{
	struct mhd_worker *w;

	while (!atomic_load(&pool->stopping) && (w = pick(pool))) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		int fd = accept4(pool->listen_fd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return true;
			if (!pool->accept_failing)
				log_warn("http: %s: accept", pool->name);
			pool->accept_failing = true;
			return false;
		}
		pool->accept_failing = false;
		/* Only a hand-over moves the round-robin on: looks for room do not. */
		pool->next = (unsigned)(w - pool->workers) + 1;
		atomic_fetch_add(&w->open, 1);
		/* Refused (the accept policy, memory): MHD closed the socket and said why. */
		if (MHD_add_connection(w->mhd, fd, (struct sockaddr *)&ss, len) != MHD_YES)
			atomic_fetch_sub(&w->open, 1);
	}
	return true;
}

static void *acceptor_main(void *arg)
{
	struct mhd_pool *pool = arg;
	bool rest = false;

	while (!atomic_load(&pool->stopping)) {
		struct pollfd pfd[2] = {{.fd = pool->wake_fd, .events = POLLIN},
					{.fd = pool->listen_fd, .events = POLLIN}};
		bool room = pick(pool) != NULL;
		uint64_t wakes;

		if (poll(pfd, room && !rest ? 2 : 1, rest ? ACCEPT_BACKOFF_MS : -1) < 0) {
			if (errno == EINTR)
				continue;
			log_warn("http: %s: poll", pool->name);
			break;
		}
		if ((pfd[0].revents & POLLIN) && read(pool->wake_fd, &wakes, sizeof(wakes)) < 0 && errno != EAGAIN)
			log_warn("http: %s: eventfd", pool->name);
		rest = false;
		if (pfd[1].revents & POLLIN)
			rest = !accept_ready(pool);
	}
	return NULL;
}

static int worker_start(struct mhd_pool *pool, struct mhd_worker *w, const struct mhd_pool_options *opt)
{
	/* ITC: MHD_add_connection from the acceptor wakes the worker's thread at once. */
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC | MHD_USE_NO_LISTEN_SOCKET |
			 MHD_ALLOW_SUSPEND_RESUME;   /* live.c's streams wait for a tick suspended */

	if (opt->logger)
		flags |= MHD_USE_ERROR_LOG;
	w->pool = pool;
	w->mhd = MHD_start_daemon(flags, 0, opt->accept_policy, opt->accept_cls, opt->on_request, opt->request_cls,
				  /*
				   * The acceptor keeps the pool's limit.  MHD's own count drops a
				   * moment after it reports a close, so it may hold up to twice
				   * the pool's; a lower limit would refuse what the pool made room for.
				   */
				  MHD_OPTION_CONNECTION_LIMIT, 2 * pool->max_connections,
				  MHD_OPTION_CONNECTION_TIMEOUT, opt->connection_timeout_s ? opt->connection_timeout_s : 30u,
				  MHD_OPTION_CONNECTION_MEMORY_LIMIT,
				  opt->connection_memory ? opt->connection_memory : (size_t)32 * 1024,
				  MHD_OPTION_NOTIFY_COMPLETED, opt->on_completed, opt->completed_cls,
				  MHD_OPTION_NOTIFY_CONNECTION, on_connection, w,
				  MHD_OPTION_EXTERNAL_LOGGER, opt->logger, NULL,
				  MHD_OPTION_END);
	if (!w->mhd) {
		log_warnx("http: %s: cannot start a server thread", pool->name);
		return -1;
	}
	return 0;
}

struct mhd_pool *mhd_pool_start(int listen_fd, const char *name, const struct mhd_pool_options *opt)
{
	struct mhd_pool *pool = calloc(1, sizeof(*pool));
	unsigned n = opt->workers ? opt->workers : 4u;

	if (!pool || !(pool->workers = calloc(n, sizeof(*pool->workers)))) {
		log_warnx("%s: out of memory", __func__);
		free(pool);
		return NULL;
	}
	pool->listen_fd = listen_fd;
	pool->nworkers = n;
	pool->max_connections = opt->max_connections ? opt->max_connections : 1024u;
	pool->on_connection = opt->on_connection;
	pool->connection_cls = opt->connection_cls;
	snprintf(pool->name, sizeof(pool->name), "%s", name);
	if ((pool->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
		log_warn("http: %s: eventfd", name);
		goto fail;
	}
	for (unsigned i = 0; i < n; i++)
		if (worker_start(pool, &pool->workers[i], opt) < 0)
			goto fail;
	if ((errno = pthread_create(&pool->acceptor, NULL, acceptor_main, pool)) != 0) {
		log_warn("http: %s: cannot start the accepting thread", name);
		goto fail;
	}
	pool->accepting = true;
	return pool;
fail:
	mhd_pool_stop(pool);
	return NULL;
}

void mhd_pool_quiesce(struct mhd_pool *pool)
{
	if (!pool->accepting)
		return;
	atomic_store(&pool->stopping, true);
	wake(pool);
	pthread_join(pool->acceptor, NULL);
	pool->accepting = false;
}

unsigned mhd_pool_connections(struct mhd_pool *pool)
{
	unsigned n = 0;

	for (unsigned i = 0; i < pool->nworkers; i++) {
		const union MHD_DaemonInfo *di;
		if (!pool->workers[i].mhd)
			continue;
		di = MHD_get_daemon_info(pool->workers[i].mhd, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
		n += di ? di->num_connections : 0;
	}
	return n;
}

void mhd_pool_stop(struct mhd_pool *pool)
{
	if (!pool)
		return;
	mhd_pool_quiesce(pool);
	for (unsigned i = 0; i < pool->nworkers; i++)
		if (pool->workers[i].mhd)
			MHD_stop_daemon(pool->workers[i].mhd);
	if (pool->wake_fd >= 0)
		close(pool->wake_fd);
	free(pool->workers);
	free(pool);
}
