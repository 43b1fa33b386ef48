/*
 * The cluster store's thread (see cluster.h).  One loop: connect (with a
 * doubling back-off while the database is away), migrate the shared
 * schema, LISTEN, then push the outbox and pull what other nodes of this
 * hardware class sent since the last pull, each on its own schedule, and
 * read the cluster view when a reader asked; in between it waits on the
 * socket.
 *
 * Why LISTEN/NOTIFY and a poll: a notification reaches every listening
 * node within milliseconds of the commit, so a trial is known everywhere
 * within the push delay (the outbox is read every PUSH_EVERY_S) and one
 * PULL_GAP_S; the pull itself reads "seq > cursor", so however many
 * notifications arrive a node pulls at most once per PULL_GAP_S, and
 * nothing is lost when a notification is (the connection was down, a
 * notification queue overflowed): the poll every poll_interval_s catches up.
 *
 * Why a poll alone on large sites (cluster_updates = poll): PostgreSQL
 * signals every listening backend of the database on each NOTIFY, whatever
 * the channel, so with N listening nodes each trial costs N wake-ups and N
 * pulls; at 1,000 nodes that saturated the database (bench/RESULTS.md).
 * Polling nodes cost N / poll_interval_s index lookups a second, whatever
 * the trial rate, and each gap is drawn from 0.8x to 1.2x the interval, so
 * nodes that started (or reconnected) together spread out instead of
 * pulling in step.  The reconnect back-off is jittered for the same reason.
 * The cluster view is read only on demand (VIEW_FRESH_S).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "cluster.h"
#include "cluster_pg.h"
#include "cluster_ranks.h"
#include "cluster_sql.h"
#include "config.h"
#include "log.h"
#include "store_cluster.h"
#include "tuner.h"

#define CHANNEL "dlprofd_trials"
#define CONNECT_TIMEOUT_S 10.0
#define QUERY_TIMEOUT_S 30.0
#define BACKOFF_MIN_S 1.0
#define BACKOFF_MAX_S 30.0
#define PUSH_EVERY_S 0.5      /* the outbox is looked at this often */
#define PUSH_BATCH 500        /* trials per push */
#define PULL_GAP_S 1.0        /* at most one pull per this, however many notifications */
#define PULL_BATCH 2000       /* trials per pull query */
/*
 * The cluster view aggregates the whole shared table: it is read only when
 * a reader asks (1,000 nodes refreshing it on a timer would cost the
 * database more than all their pulls), at most once per VIEW_FRESH_S.
 */
#define VIEW_FRESH_S 2.0
/*
 * Other classes as a prior (tuner_set_other_ask): a variant without trials
 * of this class is asked about when a job of it starts or it is
 * recommended; the thread answers each ask with one query on the
 * workload's index.  At most PRIOR_QUEUE asks wait (beyond, an ask is
 * dropped and counted: the next job start asks again), and a variant asked
 * in the last PRIOR_AGAIN_S (of the last PRIOR_RECENT asked) is not asked
 * again, so a node costs the database at most one such query per new
 * variant per PRIOR_AGAIN_S, whatever its job rate.
 */
#define PRIOR_QUEUE 32
#define PRIOR_RECENT 256
#define PRIOR_AGAIN_S 600.0
#define PRIOR_ROWS 4096       /* (variant, class, config) rows per answer */

/* One variant asked about. */
struct prior_ask {
	char *workload, *params;              /* NULL workload: a free slot */
	enum objective objective;
	double t;                             /* mono time asked */
};

struct cluster {
	pthread_t thread;
	int wake[2];                  /* the thread waits on wake[0]; stop and kicks write wake[1] */
	atomic_bool stop;
	struct store *st;
	struct tuner *tuner;
	char *conninfo, *node, *hw_class;
	char store_id[STORE_CLUSTER_ID_MAX];
	bool listen;                  /* LISTEN for pushes, else poll only */
	double poll_interval_s;
	struct cluster_ranks *ranks;  /* the distributed jobs' ranks: shared, and the others' read back */

	/* Owned by the thread. */
	struct cluster_pg pg;
	long long cursor;             /* the highest seq pulled */
	double backoff_s;
	double next_push, next_pull, last_pull_mono;
	double view_read_mono;        /* when the view was last read; 0: never */
	uint64_t jitter_state;        /* xorshift64 state for the poll's and back-off's jitter */
	bool push_failing;
	bool prior_failing;           /* the last ask's query failed (logged once until one succeeds) */
	double ranks_due;             /* mono time the ranks are next pushed or read (cluster_ranks_serve) */

	/* Guarded by lock: what status and the view show. */
	pthread_mutex_t lock;
	bool connected;
	int schema_version;
	char error[512];
	long long pushed, pulled;
	double last_pull;             /* wall time of the last successful pull; 0: none */
	json_t *view;                 /* the workloads array; NULL until read */
	double view_t;                /* wall time it was read */
	double view_wanted;           /* mono time a reader last found it old */
	struct prior_ask asks[PRIOR_QUEUE];   /* waiting for the thread, oldest first */
	int nasks;
	struct prior_ask recent[PRIOR_RECENT]; /* asked lately; a ring */
	int recent_next;
	long long prior_asked, prior_answered, prior_dropped;
};

/* Records the link's state; logs only when it changes (a database down for a day logs twice). */
static void set_state(struct cluster *c, bool connected, const char *error)
{
	bool was;
	char before[sizeof(c->error)];

	pthread_mutex_lock(&c->lock);
	was = c->connected;
	memcpy(before, c->error, sizeof(before));
	c->connected = connected;
	snprintf(c->error, sizeof(c->error), "%s", error ? error : "");
	pthread_mutex_unlock(&c->lock);
	if (connected && !was)
		log_info("cluster: connected to the shared store (schema %d), node %s, class %s", c->schema_version,
			 c->node, c->hw_class);
	else if (error && strcmp(before, error) != 0)
		log_warnx("cluster: %s; trials wait in the outbox, retrying", error);
}

/* ---- jitter ---- */

/* Uniform in [0, 1), from the thread's own xorshift64 (no shared state, no lock). */
static double jitter_unit(struct cluster *c)
{
	uint64_t x = c->jitter_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	c->jitter_state = x;
	return (double)(x >> 11) / 9007199254740992.0;
}

/* The gap before the next pull: the interval itself while listening, else 0.8x to 1.2x of it. */
static double poll_gap(struct cluster *c)
{
	return c->listen ? c->poll_interval_s : c->poll_interval_s * (0.8 + 0.4 * jitter_unit(c));
}

/* A seed that differs between nodes started at the same instant (their store ids differ). */
static uint64_t jitter_seed(const char *store_id)
{
	uint64_t h = 1469598103934665603ULL ^ (uint64_t)getpid() ^ (uint64_t)(clock_now_s() * 1e6);

	for (; *store_id; store_id++)
		h = (h ^ (unsigned char)*store_id) * 1099511628211ULL;
	return h ? h : 0x9e3779b97f4a7c15ULL;
}

/* ---- push ---- */

/* Sends one batch of the outbox; how many trials left it, or -1. */
static int push_batch(struct cluster *c)
{
	const struct cpg_outbox ob = {c->st, PUSH_BATCH, store_cluster_outbox_peek, store_cluster_outbox_done,
				      c->store_id, "node", c->node, QUERY_TIMEOUT_S};
	long long added;
	int n = cpg_push_outbox(&c->pg, cluster_sql_push, &ob, &added);

	if (n > 0) {
		pthread_mutex_lock(&c->lock);
		c->pushed += added;
		pthread_mutex_unlock(&c->lock);
	}
	return n;
}

static void push(struct cluster *c)
{
	int n;

	while ((n = push_batch(c)) >= PUSH_BATCH && !atomic_load(&c->stop))
		;
	if (n < 0 && c->pg.conn && !c->push_failing)
		log_warnx("cluster: push: %s; the trials stay in the outbox", c->pg.error);
	c->push_failing = n < 0;
	/* A database that refuses writes (read-only, full) is asked again later, not every half second. */
	c->next_push = clock_mono_s() + (n < 0 ? c->backoff_s : PUSH_EVERY_S);
}

/* ---- pull ---- */

/* Teaches one pulled trial to the tuner. */
static void learn(struct cluster *c, const json_t *row)
{
	json_t *params = json_loads(json_string_value(json_object_get(row, "params")), 0, NULL);
	const char *objective = json_string_value(json_object_get(row, "objective"));
	struct tuner_remote_trial r = {
		.workload = json_string_value(json_object_get(row, "workload")),
		.params = params,
		.objective = config_objective(objective),
		.phase = json_string_value(json_object_get(row, "phase")),
		.config = json_string_value(json_object_get(row, "config")),
		.declared_json = json_string_value(json_object_get(row, "declared")),
		.n = (long)json_integer_value(json_object_get(row, "n")),
		.mean = json_number_value(json_object_get(row, "mean")),
		.m2 = json_number_value(json_object_get(row, "m2")),
		.t_start = json_number_value(json_object_get(row, "t_start")),
	};

	if (r.workload && objective && r.config && json_is_object(params))
		(void)tuner_learn_remote(c->tuner, &r);
	json_decref(params);
}

/* One pull query; how many trials it brought, or -1. */
static int pull_batch(struct cluster *c)
{
	char cursor[32], limit[16];
	const char *vals[4] = {c->hw_class, cursor, c->store_id, limit};
	json_t *rows, *row;
	PGresult *r;
	size_t i, n;

	snprintf(cursor, sizeof(cursor), "%lld", c->cursor);
	snprintf(limit, sizeof(limit), "%d", PULL_BATCH);
	if (!(r = cpg_query(&c->pg, cluster_sql_pull, 4, vals, QUERY_TIMEOUT_S)))
		return -1;
	rows = json_loads(PQgetvalue(r, 0, 0), 0, NULL);
	c->cursor = atoll(PQgetvalue(r, 0, 1));
	PQclear(r);
	n = json_array_size(rows);
	json_array_foreach(rows, i, row)
		learn(c, row);
	json_decref(rows);
	pthread_mutex_lock(&c->lock);
	c->pulled += (long long)n;
	c->last_pull = clock_now_s();
	pthread_mutex_unlock(&c->lock);
	return (int)n;
}

static void pull(struct cluster *c)
{
	int n;

	while ((n = pull_batch(c)) >= PULL_BATCH && !atomic_load(&c->stop))
		;
	c->last_pull_mono = clock_mono_s();
	c->next_pull = c->last_pull_mono + (n < 0 ? c->backoff_s : poll_gap(c));
}

/* ---- the cluster view ---- */

static void view_refresh(struct cluster *c)
{
	PGresult *r = cpg_query(&c->pg, cluster_sql_view, 0, NULL, QUERY_TIMEOUT_S);
	json_t *v = r ? json_loads(PQgetvalue(r, 0, 0), 0, NULL) : NULL;

	PQclear(r);
	c->view_read_mono = clock_mono_s();
	if (!json_is_array(v)) {
		json_decref(v);
		return;
	}
	pthread_mutex_lock(&c->lock);
	json_decref(c->view);
	c->view = v;
	c->view_t = clock_now_s();
	pthread_mutex_unlock(&c->lock);
}

/* Whether a reader found the view old since the last refresh; consume clears the wish. */
static bool view_wanted(struct cluster *c, bool consume)
{
	bool wanted;

	pthread_mutex_lock(&c->lock);
	wanted = c->view_wanted > 0;
	if (consume)
		c->view_wanted = 0;
	pthread_mutex_unlock(&c->lock);
	return wanted;
}

/* When the view may be read again: VIEW_FRESH_S after the last read. */
static double view_due(const struct cluster *c)
{
	return c->view_read_mono > 0 ? c->view_read_mono + VIEW_FRESH_S : 0;
}

/* ---- other classes as a prior ---- */

static void wake(struct cluster *c)
{
	ssize_t rc = write(c->wake[1], "x", 1);

	(void)rc; /* a full pipe already wakes the thread */
}

static void ask_clear(struct prior_ask *a)
{
	free(a->workload);
	free(a->params);
	memset(a, 0, sizeof(*a));
}

static bool ask_same(const struct prior_ask *a, const char *workload, const char *params, enum objective objective)
{
	return a->workload && strcmp(a->workload, workload) == 0 && strcmp(a->params, params) == 0 &&
	       a->objective == objective;
}

static int ask_set(struct prior_ask *a, const char *workload, const char *params, enum objective objective, double t)
{
	ask_clear(a);
	a->workload = strdup(workload);
	a->params = strdup(params);
	a->objective = objective;
	a->t = t;
	if (a->workload && a->params)
		return 0;
	ask_clear(a);
	return -1;
}

/* Forgets that a variant was asked (its answer failed): the next job start asks again. */
static void recent_forget(struct cluster *c, const struct prior_ask *q)
{
	int i;

	pthread_mutex_lock(&c->lock);
	for (i = 0; i < PRIOR_RECENT; i++)
		if (ask_same(&c->recent[i], q->workload, q->params, q->objective))
			ask_clear(&c->recent[i]);
	pthread_mutex_unlock(&c->lock);
}

void cluster_ask_other_classes(void *ctx, const char *workload, const json_t *params, enum objective objective)
{
	struct cluster *c = ctx;
	char *ptext = params ? json_dumps(params, JSON_COMPACT | JSON_SORT_KEYS) : strdup("{}");
	double now = clock_mono_s();
	bool queued = false;
	int i;

	if (!ptext)
		return;
	pthread_mutex_lock(&c->lock);
	for (i = 0; i < PRIOR_RECENT; i++)
		if (ask_same(&c->recent[i], workload, ptext, objective) && now - c->recent[i].t < PRIOR_AGAIN_S)
			break;
	if (i < PRIOR_RECENT) {
		/* asked lately: its answer is in the tuner, or there was none */
	} else if (c->nasks == PRIOR_QUEUE) {
		c->prior_dropped++;
	} else if (ask_set(&c->asks[c->nasks], workload, ptext, objective, now) == 0) {
		c->nasks++;
		c->prior_asked++;
		(void)ask_set(&c->recent[c->recent_next], workload, ptext, objective, now);
		c->recent_next = (c->recent_next + 1) % PRIOR_RECENT;
		queued = true;
	}
	pthread_mutex_unlock(&c->lock);
	free(ptext);
	if (queued)
		wake(c);
}

/* Takes the oldest ask into *q; false when none waits. */
static bool ask_take(struct cluster *c, struct prior_ask *q)
{
	bool any;

	pthread_mutex_lock(&c->lock);
	any = c->nasks > 0;
	if (any) {
		*q = c->asks[0];
		memmove(&c->asks[0], &c->asks[1], (size_t)(c->nasks - 1) * sizeof(c->asks[0]));
		memset(&c->asks[--c->nasks], 0, sizeof(c->asks[0]));
	}
	pthread_mutex_unlock(&c->lock);
	return any;
}

static bool asks_waiting(struct cluster *c)
{
	bool any;

	pthread_mutex_lock(&c->lock);
	any = c->nasks > 0;
	pthread_mutex_unlock(&c->lock);
	return any;
}

/* Fetches what other classes measured of q's workload and gives it to the tuner; -1 when the query failed. */
static int prior_fetch(struct cluster *c, struct prior_ask *q)
{
	char limit[16];
	const char *vals[4] = {q->workload, config_objective_name(q->objective), c->hw_class, limit};
	json_t *rows, *params;
	PGresult *r;

	snprintf(limit, sizeof(limit), "%d", PRIOR_ROWS);
	if (!(r = cpg_query(&c->pg, cluster_sql_other_classes, 4, vals, QUERY_TIMEOUT_S)))
		return -1;
	rows = json_loads(PQgetvalue(r, 0, 0), 0, NULL);
	PQclear(r);
	params = json_loads(q->params, 0, NULL);
	if (json_array_size(rows) > 0 && json_is_object(params)) {
		struct tuner_other_answer a = {.workload = q->workload, .params = params, .objective = q->objective,
					       .rows = rows};
		(void)tuner_learn_other_class(c->tuner, &a);
	}
	json_decref(params);
	json_decref(rows);
	pthread_mutex_lock(&c->lock);
	c->prior_answered++;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

/* Answers the asks waiting; one that fails is forgotten, to be asked again. */
static void prior_answer(struct cluster *c)
{
	struct prior_ask q;

	while (c->pg.conn && !atomic_load(&c->stop) && ask_take(c, &q)) {
		bool failed = prior_fetch(c, &q) < 0;
		if (failed && !c->prior_failing)
			log_warnx("cluster: other classes' trials of %s: %s; asked again at its next job", q.workload,
				  c->pg.error);
		if (failed)
			recent_forget(c, &q);
		c->prior_failing = failed;
		ask_clear(&q);
	}
}

/* ---- the loop ---- */

/* Connects, migrates and listens; 0, or -1 after recording why. */
static int link_up(struct cluster *c)
{
	int version = 0;
	PGresult *r;

	if (cpg_connect(&c->pg, c->conninfo, CONNECT_TIMEOUT_S) < 0 || cpg_migrate(&c->pg, &version) < 0)
		goto fail;
	if (c->listen) {
		if (!(r = cpg_query(&c->pg, "LISTEN " CHANNEL, 0, NULL, QUERY_TIMEOUT_S)))
			goto fail;
		PQclear(r);
	}
	pthread_mutex_lock(&c->lock);
	c->schema_version = version;
	pthread_mutex_unlock(&c->lock);
	c->backoff_s = BACKOFF_MIN_S;
	c->next_push = c->next_pull = clock_mono_s();
	cluster_ranks_link_up(c->ranks);
	c->ranks_due = c->next_push;
	set_state(c, true, NULL);
	return 0;
fail:
	cpg_close(&c->pg);
	set_state(c, false, c->pg.error);
	return -1;
}

static double earliest(struct cluster *c)
{
	double t = c->next_push;

	if (c->next_pull < t)
		t = c->next_pull;
	if (c->ranks_due < t)
		t = c->ranks_due;
	return view_wanted(c, false) && view_due(c) < t ? view_due(c) : t;
}

/* Serves one connection until it breaks or the daemon stops. */
static void link_serve(struct cluster *c)
{
	while (c->pg.conn && !atomic_load(&c->stop)) {
		double now = clock_mono_s(), wait;
		int notes;

		if (now >= c->next_push)
			push(c);
		if (c->pg.conn && now >= c->next_pull)
			pull(c);
		if (c->pg.conn && now >= view_due(c) && view_wanted(c, true))
			view_refresh(c);
		prior_answer(c);
		if (c->pg.conn)
			c->ranks_due = cluster_ranks_serve(c->ranks, &c->pg);
		if (!c->pg.conn)
			break;
		wait = asks_waiting(c) ? 0 : earliest(c) - clock_mono_s();
		c->pg.kicked = false;
		notes = cpg_wait(&c->pg, CHANNEL, c->hw_class, wait > 0 ? wait : 0);
		if (notes > 0 && c->next_pull > c->last_pull_mono + PULL_GAP_S)
			c->next_pull = c->last_pull_mono + PULL_GAP_S;
	}
	if (!atomic_load(&c->stop))
		set_state(c, false, c->pg.error);
	cpg_close(&c->pg);
}

static void *cluster_main(void *arg)
{
	struct cluster *c = arg;

	while (!atomic_load(&c->stop)) {
		if (link_up(c) == 0) {
			link_serve(c);
			continue;
		}
		/* 0.5x to 1x of the back-off: nodes cut off together do not all come back at once. */
		cpg_sleep(&c->pg, c->backoff_s * (0.5 + 0.5 * jitter_unit(c)));
		c->backoff_s = c->backoff_s * 2 > BACKOFF_MAX_S ? BACKOFF_MAX_S : c->backoff_s * 2;
	}
	cpg_close(&c->pg);
	return NULL;
}

static void cluster_free(struct cluster *c)
{
	int i;

	for (i = 0; i < PRIOR_QUEUE; i++)
		ask_clear(&c->asks[i]);
	for (i = 0; i < PRIOR_RECENT; i++)
		ask_clear(&c->recent[i]);
	if (c->wake[0] >= 0)
		close(c->wake[0]);
	if (c->wake[1] >= 0)
		close(c->wake[1]);
	json_decref(c->view);
	cluster_ranks_free(c->ranks);
	pthread_mutex_destroy(&c->lock);
	free(c->conninfo);
	free(c->node);
	free(c->hw_class);
	free(c);
}

struct cluster *cluster_start(struct store *st, struct tuner *t, const struct cluster_options *opt)
{
	struct cluster *c = calloc(1, sizeof(*c));
	int rc;

	if (!c) {
		log_warn("%s", __func__);
		return NULL;
	}
	c->wake[0] = c->wake[1] = -1;
	pthread_mutex_init(&c->lock, NULL);
	atomic_init(&c->stop, false);
	c->st = st;
	c->tuner = t;
	c->backoff_s = BACKOFF_MIN_S;
	c->conninfo = strdup(opt->conninfo);
	c->node = strdup(opt->node);
	c->hw_class = strdup(opt->hw_class);
	c->listen = opt->listen;
	c->poll_interval_s = opt->poll_interval_s > 0 ? opt->poll_interval_s : 5.0;
	if (!c->conninfo || !c->node || !c->hw_class || pipe2(c->wake, O_CLOEXEC | O_NONBLOCK) < 0) {
		log_warn("%s", __func__);
		cluster_free(c);
		return NULL;
	}
	c->pg.wake_fd = c->wake[0];
	c->pg.stop = &c->stop;
	/* A database that cannot be written now still lets the node learn from the others. */
	if (store_cluster_enable(st, true, opt->outbox_limit, c->store_id, sizeof(c->store_id)) != STORE_OK) {
		log_warnx("cluster: the outbox could not be enabled; trials of this node are not shared");
		snprintf(c->store_id, sizeof(c->store_id), "unknown");
	}
	c->jitter_state = jitter_seed(c->store_id);
	if (!(c->ranks = cluster_ranks_new(st, c->store_id, c->node))) {
		cluster_free(c);
		return NULL;
	}
	if ((rc = pthread_create(&c->thread, NULL, cluster_main, c)) != 0) {
		log_warnx("%s: pthread_create: %s", __func__, strerror(rc));
		cluster_free(c);
		return NULL;
	}
	log_info("cluster: sharing trials as node %s (store %s), class %s; %s, a pull at least every %.3g s", c->node,
		 c->store_id, c->hw_class, c->listen ? "listening for updates" : "polling (no LISTEN)", c->poll_interval_s);
	return c;
}

void cluster_stop(struct cluster *c)
{
	if (!c)
		return;
	atomic_store(&c->stop, true);
	wake(c);
	pthread_join(c->thread, NULL);
	cluster_free(c);
}

struct cluster_ranks *cluster_ranks_of(struct cluster *c)
{
	return c ? c->ranks : NULL;
}

json_t *cluster_status(struct cluster *c)
{
	long waiting = 0, dropped = 0;
	json_t *o;

	if (!c)
		return json_pack("{s:b}", "configured", 0);
	if (store_cluster_outbox_stats(c->st, &waiting, &dropped) != STORE_OK)
		waiting = dropped = -1;
	pthread_mutex_lock(&c->lock);
	o = json_pack("{s:b, s:b, s:s, s:f, s:s, s:s, s:s, s:i, s:s?, s:I, s:I, s:{s:I, s:I}, s:o, s:{s:I, s:I, s:I}}",
		      "configured", 1, "connected", c->connected, "updates", c->listen ? "notify" : "poll",
		      "poll_interval", c->poll_interval_s, "node", c->node, "hw_class", c->hw_class, "store_id",
		      c->store_id, "schema_version", c->schema_version, "error", c->error[0] ? c->error : NULL,
		      "pushed", (json_int_t)c->pushed, "pulled", (json_int_t)c->pulled, "outbox", "waiting",
		      (json_int_t)waiting, "dropped", (json_int_t)dropped, "last_pull",
		      c->last_pull > 0 ? json_real(c->last_pull) : json_null(), "other_classes", "asked",
		      (json_int_t)c->prior_asked, "answered", (json_int_t)c->prior_answered, "dropped",
		      (json_int_t)c->prior_dropped);
	pthread_mutex_unlock(&c->lock);
	json_object_set_new(o, "ranks", cluster_ranks_status(c->ranks));
	return o;
}

json_t *cluster_workloads(struct cluster *c, const char *name)
{
	json_t *list, *w, *out = NULL;
	size_t i;
	bool kick;

	pthread_mutex_lock(&c->lock);
	kick = !c->view || clock_now_s() - c->view_t > VIEW_FRESH_S;
	if (kick)
		c->view_wanted = clock_mono_s();
	list = c->view ? json_deep_copy(c->view) : json_array();
	out = json_pack("{s:o, s:o}", "as_of", c->view ? json_real(c->view_t) : json_null(), "workloads", list);
	pthread_mutex_unlock(&c->lock);
	if (kick)
		wake(c);
	if (!name)
		return out;
	json_array_foreach(list, i, w)
		if (json_is_string(json_object_get(w, "name")) &&
		    strcmp(json_string_value(json_object_get(w, "name")), name) == 0) {
			json_t *one = json_pack("{s:O, s:O}", "as_of", json_object_get(out, "as_of"), "workload", w);
			json_decref(out);
			return one;
		}
	json_decref(out);
	return NULL;
}

void cluster_prometheus(struct cluster *c, FILE *out)
{
	static const struct {
		const char *name, *type, *help, *key, *sub;
	} rows[] = {
		{"up", "gauge", "1 while the link to the shared store (cluster_store) is up", "connected", NULL},
		{"outbox_trials", "gauge", "Trials waiting in the outbox for the shared store", "outbox", "waiting"},
		{"outbox_dropped_total", "counter", "Trials dropped from a full outbox (cluster_outbox_limit)", "outbox",
		 "dropped"},
		{"pushed_trials_total", "counter", "Trials this node added to the shared store", "pushed", NULL},
		{"pulled_trials_total", "counter", "Trials of other nodes learned from the shared store", "pulled", NULL},
		{"last_pull_timestamp_seconds", "gauge", "When the shared store was last read", "last_pull", NULL},
	};
	json_t *st = cluster_status(c);
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		json_t *v = json_object_get(st, rows[i].key);
		double x;
		if (rows[i].sub)
			v = json_object_get(v, rows[i].sub);
		x = json_is_boolean(v) ? (json_is_true(v) ? 1.0 : 0.0) : json_number_value(v);
		fprintf(out, "# HELP dlprofd_cluster_%s %s.\n# TYPE dlprofd_cluster_%s %s\ndlprofd_cluster_%s %.17g\n",
			rows[i].name, rows[i].help, rows[i].name, rows[i].type, rows[i].name, x);
	}
	json_decref(st);
}
