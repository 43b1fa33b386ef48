/*
 * dlprofd's entry point: reads the configuration, opens the store, probes
 * the node, starts the tuner, the sampler and the HTTP server, then waits
 * for signals on the main thread: SIGHUP reloads the configuration,
 * SIGTERM/SIGINT stop everything in order (server first, so no request is
 * cut off, store last, so every acknowledged write is flushed).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef HAVE_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif
#ifdef HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "alloc_watch.h"
#include "app.h"
#include "config.h"
#include "cluster.h"
#include "cluster_ranks.h"
#include "diag_report.h"
#include "gpu_pick.h"
#include "job_view.h"
#include "jobs.h"
#include "live.h"
#include "log.h"
#include "node.h"
#include "router.h"
#include "sampler.h"
#include "server.h"
#include "stats.h"
#include "store.h"
#include "store_cluster.h"
#include "tuner.h"

/* Live event streams open at once (live.h); more get 503 and poll instead. */
#define LIVE_MAX_STREAMS 32

#ifdef HAVE_JEMALLOC
/*
 * jemalloc's start-up options (it reads this symbol): one arena is plenty
 * for a daemon whose threads mostly wait, and freed pages go back to the
 * kernel at once.  With any decay time, the pages freed during a burst of
 * connections (a prologue storm: MHD's pools) stayed resident beside those
 * in use, and the storm peaked 5-10 MB higher; without a background thread
 * a decay only runs when something allocates, so an idle daemon kept them
 * for good.  Purging at once costs a madvise per freed large block or empty
 * slab: CPU per recommend request and per ingested sample stayed within the
 * run-to-run noise.
 */
const char *malloc_conf = "narenas:1,dirty_decay_ms:0,muzzy_decay_ms:0";
#endif

/* Everything main starts, so that shutdown can stop it in reverse. */
struct daemon {
	struct config *cfg;
	struct app app;
	struct node_info node;
	struct server *server;
	char *web_root;            /* not reloadable: owned here, not by cfg */
	int argc;
	char **argv;
};

static void notify(const char *state)
{
#ifdef HAVE_SYSTEMD
	sd_notify(0, state);
#else
	(void)state;
#endif
}

/* The watchdog period in seconds, or 0 when systemd asks for none. */
static double watchdog_period(void)
{
#ifdef HAVE_SYSTEMD
	uint64_t usec = 0;
	if (sd_watchdog_enabled(0, &usec) > 0)
		return (double)usec / 1e6;
#endif
	return 0;
}

static void apply_limits(struct app *app, const struct config *cfg)
{
	atomic_store(&app->limits.max_samples, (size_t)cfg->max_samples);
	/* Samples may be as old as what is still kept raw, and a little in the future (clock skew). */
	atomic_store(&app->limits.max_sample_age_s, cfg->retention_days * 86400.0);
	atomic_store(&app->limits.max_sample_skew_s, 300.0);
}

/* Per-minute summaries are kept this long (store_tiers.c); hours are kept. */
#define MINUTE_KEEP_DAYS 90.0

/* The store's tiers and budget; a raw window longer than the per-second retention is cut to it. */
static struct store_limits store_limits_of(const struct config *cfg)
{
	double second_s = cfg->retention_days * 86400.0, raw_s = cfg->raw_hours * 3600.0;

	return (struct store_limits){.raw_s = raw_s < second_s ? raw_s : second_s, .second_s = second_s,
				     .minute_s = MINUTE_KEEP_DAYS * 86400.0 > second_s ? MINUTE_KEEP_DAYS * 86400.0 : second_s,
				     .budget = cfg->storage_budget};
}

/* The sampler's tick hook: the live streams send the tick it just published. */
static void wake_live_streams(void *live)
{
	live_notify(live);
}

static void apply_log_level(const struct config *cfg)
{
	log_set_level((enum log_level)cfg->log_level);
}

/* A development run points --db at var/...: create that directory. */
static int ensure_parent_dir(const char *path)
{
	char dir[1024];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0750) < 0 && errno != EEXIST) {
		log_warn("db: cannot create %s", dir);
		return -1;
	}
	return 0;
}

static int daemon_start(struct daemon *d)
{
	const struct config *cfg = d->cfg;
	struct store_options so = {.queue_limit = (size_t)cfg->queue_limit, .readers = 4,
				   .limits = store_limits_of(cfg)};
	struct diag_options dio = diag_options_of(cfg);
	struct diag_sources dis;
	struct tuner_options to = {.gain_threshold = cfg->gain_threshold};
	struct sampler_options sam = {.interval_s = cfg->interval_s, .store_interval_s = cfg->store_interval_s,
				      .discovery_interval_s = cfg->discovery_interval_s,
				      .proc_root = cfg->proc_root, .sys_root = cfg->sys_root};
	struct server_options srv = {.listen = cfg->listen, .nlisten = cfg->nlisten,
				     .socket_path = cfg->socket_path, .socket_optional = !cfg->socket_given,
				     .max_body = (size_t)cfg->max_body_bytes,
				     .threads = (unsigned)cfg->http_threads,
				     .max_connections = (unsigned)cfg->max_connections,
				     .connection_timeout_s = (unsigned)cfg->connection_timeout_s,
				     .max_connections_per_ip = (unsigned)cfg->max_connections_per_ip,
				     .ingest_rate = cfg->ingest_rate,
				     .ingest_burst = cfg->ingest_burst};
	json_t *topo;
	char *topo_text;

	apply_limits(&d->app, cfg);
	d->web_root = strdup(cfg->web_root);
	d->app.web_root = d->web_root;
	if (node_probe(cfg->sys_root, cfg->proc_root, &d->node) < 0)
		return -1;
	/* Nodes a site knows to be alike (or tests standing in for other hardware) name their class. */
	if (cfg->hw_class[0])
		snprintf(d->node.hw_class, sizeof(d->node.hw_class), "%s", cfg->hw_class);
	d->app.node = &d->node;
	if (ensure_parent_dir(cfg->db_path) < 0 || !(d->app.store = store_open(cfg->db_path, &so)))
		return -1;
	topo = node_json(&d->node);
	topo_text = json_dumps(topo, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(topo);
	/*
	 * A database that cannot be written now (read-only file system, disk
	 * full) still serves reads; ingest answers 503 until writes succeed.
	 */
	if (topo_text && store_node_save(d->app.store, d->node.hostname, d->node.hw_class, topo_text) != STORE_OK)
		log_warnx("store: the node's description was not saved; starting anyway");
	free(topo_text);
	if (!(d->app.stats = stats_new(dlprof_routes)))
		return -1;
	if (!(d->app.tuner = tuner_open(d->app.store, &d->node, &to)))
		return -1;
	if (!(d->app.jobs = jobs_new(d->app.store, d->app.tuner, d->node.hw_class, cfg->proc_root)))
		return -1;
	/* A few dashboards' worth: a stream holds a connection for as long as its page is open. */
	if (!(d->app.live = live_new(LIVE_MAX_STREAMS)))
		return -1;
	if (!(d->app.gpu_leases = gpu_leases_new(GPU_PICK_LEASE_S)))
		return -1;
	if (!(d->app.job_views = job_views_new()))
		return -1;
	/* Unset: trials stop entering the outbox (what waits there is sent if it is set again). */
	if (!cfg->cluster_store[0] &&
	    store_cluster_enable(d->app.store, false, cfg->cluster_outbox_limit, NULL, 0) != STORE_OK)
		log_warnx("cluster: the outbox could not be turned off; starting anyway");
	if (cfg->cluster_store[0]) {
		struct cluster_options co = {.conninfo = cfg->cluster_store,
					     .node = cfg->cluster_node[0] ? cfg->cluster_node : d->node.hostname,
					     .hw_class = d->node.hw_class, .outbox_limit = cfg->cluster_outbox_limit,
					     .listen = cfg->cluster_updates == CLUSTER_UPDATES_NOTIFY,
					     .poll_interval_s = cfg->cluster_poll_interval_s};
		if (!(d->app.cluster = cluster_start(d->app.store, d->app.tuner, &co)))
			return -1;
		tuner_set_other_ask(d->app.tuner, cluster_ask_other_classes, d->app.cluster);
		jobs_set_remote_ranks(d->app.jobs, cluster_ranks_append, cluster_ranks_of(d->app.cluster));
	}
	if (!(d->app.sampler = sampler_start(d->app.store, d->app.jobs, &sam)))
		return -1;
	sampler_set_tick_hook(d->app.sampler, wake_live_streams, d->app.live);
	/* The diagnosis reads the parts above: created once they all exist. */
	dis = (struct diag_sources){.store = d->app.store, .tuner = d->app.tuner, .sampler = d->app.sampler,
				    .ranks = d->app.cluster ? cluster_ranks_of(d->app.cluster) : NULL};
	if (!(d->app.diag = diag_new(&dio, &dis)))
		return -1;
	if (!(d->server = server_start(&d->app, &srv)))
		return -1;
	server_set_access(d->server, cfg->token, cfg->read_access);
	log_info("dlprofd %s started: db %s, node %s (%s), sampling every %gs, per-thread detail every %gs", PACKAGE_VERSION,
		 cfg->db_path, d->node.hostname, d->node.hw_class, cfg->interval_s,
		 cfg->store_interval_s > cfg->interval_s ? cfg->store_interval_s : cfg->interval_s);
	return 0;
}

static void daemon_stop(struct daemon *d)
{
	/* Live streams end first: the server's drain then finds their connections closing. */
	if (d->app.live)
		live_stop(d->app.live);
	server_stop(d->server);
	sampler_stop(d->app.sampler);
	live_free(d->app.live);
	gpu_leases_free(d->app.gpu_leases);
	job_views_free(d->app.job_views);
	jobs_free(d->app.jobs);
	if (d->app.tuner)
		tuner_set_other_ask(d->app.tuner, NULL, NULL);
	cluster_stop(d->app.cluster);
	if (d->app.tuner)
		tuner_close(d->app.tuner);
	store_close(d->app.store);
	diag_free(d->app.diag);
	stats_free(d->app.stats);
	free(d->web_root);
	config_free(d->cfg);
}

static void daemon_reload(struct daemon *d)
{
	struct config *fresh = config_reload(d->cfg, d->argc, d->argv);
	struct diag_options diag_options;
	char restart[256];

	if (!fresh) {
		log_warnx("reload: the configuration has errors; keeping the one in force");
		return;
	}
	config_restart_keys(d->cfg, fresh, restart, sizeof(restart));
	if (restart[0])
		log_warnx("reload: %s changed; that takes a restart", restart);
	apply_log_level(fresh);
	apply_limits(&d->app, fresh);
	{
		struct store_limits limits = store_limits_of(fresh);
		store_set_limits(d->app.store, &limits);
	}
	server_set_access(d->server, fresh->token, fresh->read_access);
	sampler_set_interval(d->app.sampler, fresh->interval_s, fresh->store_interval_s, fresh->discovery_interval_s);
	diag_options = diag_options_of(fresh);
	diag_set_options(d->app.diag, &diag_options);
	config_free(d->cfg);
	d->cfg = fresh;
	log_info("reload: configuration %s applied", fresh->config_path);
}

/*
 * The write end of the self-pipe that signal handlers write to: the one
 * place a handler can safely reach, hence a file-scope variable.
 */
static int signal_pipe_w = -1;

static void on_signal(int sig)
{
	unsigned char b = (unsigned char)sig;
	int saved = errno;
	ssize_t w = write(signal_pipe_w, &b, 1);

	(void)w;
	errno = saved;
}

/*
 * Handlers rather than sigwait: a library may unblock signals in a thread it
 * runs in (collectors' init does), and a handler still routes the signal to
 * the main loop whichever thread takes it.  Other threads start with the
 * signals blocked; main unblocks them once everything is up.
 */
static int signals_install(int pipe_fds[2], sigset_t *set)
{
	struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};

	if (pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) < 0) {
		log_warn("%s: pipe2", __func__);
		return -1;
	}
	signal_pipe_w = pipe_fds[1];
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGHUP);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	pthread_sigmask(SIG_BLOCK, set, NULL);
	return 0;
}

/* Waits for signals; returns when asked to stop. */
static void daemon_wait(struct daemon *d, int signal_fd)
{
	double wd = watchdog_period();
	int timeout_ms = wd > 0 ? (int)(wd * 1000 / 2) : 1000;

	for (;;) {
		struct pollfd pfd = {.fd = signal_fd, .events = POLLIN};
		unsigned char sig;

		if (poll(&pfd, 1, timeout_ms) <= 0 || read(signal_fd, &sig, 1) != 1) {
			/* Only a daemon whose sampler still ticks tells systemd it is alive. */
			if (wd > 0 && sampler_alive(d->app.sampler))
				notify("WATCHDOG=1");
			continue;
		}
		if (sig == SIGHUP) {
			notify("RELOADING=1");
			daemon_reload(d);
			notify("READY=1");
			continue;
		}
		log_info("%s: stopping", strsignal(sig));
		return;
	}
}

int main(int argc, char **argv)
{
	struct daemon d = {.argc = argc, .argv = argv};
	int pipe_fds[2] = {-1, -1};
	sigset_t set;
	int rc = 0;

	alloc_watch_install();   /* before any JSON exists: see router_handle */
	switch (config_load(argc, argv, &d.cfg)) {
	case CONFIG_EXIT_OK:
		return 0;
	case CONFIG_ERROR:
		return 2;
	case CONFIG_OK:
		break;
	}
	apply_log_level(d.cfg);
	if (signals_install(pipe_fds, &set) < 0 || daemon_start(&d) < 0) {
		log_err("dlprofd: cannot start; see the messages above");
		rc = 1;
	} else {
		pthread_sigmask(SIG_UNBLOCK, &set, NULL);
		notify("READY=1");
		daemon_wait(&d, pipe_fds[0]);
		notify("STOPPING=1");
	}
	daemon_stop(&d);
	if (pipe_fds[0] >= 0) {
		close(pipe_fds[0]);
		close(pipe_fds[1]);
	}
	if (rc == 0)
		log_info("dlprofd stopped");
	return rc;
}
