/*
 * A load generator standing in for many dlprofd nodes sharing one cluster
 * store (bench/cluster drives it).  Each simulated node behaves as
 * daemon/cluster.c does, with the daemon's own statements (cluster_sql.h):
 * it holds one connection that LISTENs, pushes its trials (Poisson, --rate
 * per node per second, one trial per push as a node's outbox would hold
 * between two 0.5 s looks), and pulls its class's new trials when notified
 * (at most once a second) and every 5 s in any case; with --poll S it does
 * not LISTEN and pulls every S seconds, each gap drawn from 0.8 S to 1.2 S
 * (the daemon's cluster_updates = poll).  Pushes and pulls run
 * on a pool of --pool connections, the listeners only listen, so one
 * process can stand in for 1,000 nodes.
 *
 * Prints one JSON object: counts, push and pull latencies, rows and bytes
 * per pull, and the time each trial took to reach every node of its class
 * (from the push's commit to the end of the first pull of each node that
 * read up to it).  --cold: one node's first pull of its class from
 * cursor 0 instead.  --view: the cluster view's query once.  --prior
 * CLASS: what a node of CLASS asks about a workload its class never
 * measured (other classes' trials of it), for 500 random workloads.
 */
#include <getopt.h>
#include <libpq-fe.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cluster_sql.h"

#define PULL_GAP_S 1.0
#define POLL_EVERY_S 5.0
#define PULL_BATCH "2000"
#define MAX_TRIALS_TRACKED 200000

struct span {
	double start, end;
	long long cursor;         /* the seq the pull read up to */
};

struct node {
	int cls;
	char store_id[32];
	long long cursor, next_trial;
	long long *seq;           /* by trial id, read back after the run */
	double next_push, next_pull, last_pull;
	int pulling;
	struct span *pulls;
	size_t npulls, cap;
	PGconn *listen;
};

struct op {
	int kind;     /* 0 push, 1 pull */
	int node;
	double sent;
	long long id; /* push: the trial's id on its node */
};

struct trial {
	double committed;
	int node;
	long long id, seq;        /* seq: read back from the table after the run */
};

struct load {
	int nodes, classes, workloads, pool;
	double rate, seconds;
	double poll_s;            /* > 0: nodes poll this often, jittered, and do not LISTEN */
	struct node *n;
	PGconn **conn;
	struct op *busy;          /* per pool connection; kind -1: idle */
	struct op *queue;
	size_t qhead, qtail, qcap;
	struct trial *trials;
	size_t ntrials;
	double *push_ms, *pull_ms;
	size_t npush, npull;
	long long pull_rows, pull_bytes, notifies;
	unsigned seed;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double rnd(struct load *l)
{
	return (double)rand_r(&l->seed) / ((double)RAND_MAX + 1.0);
}

static PGconn *connect_or_die(const char *conninfo)
{
	PGconn *c = PQconnectdb(conninfo);

	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "cluster_load: connect: %s", PQerrorMessage(c));
		exit(1);
	}
	return c;
}

static void cls_name(int cls, char *buf, size_t len)
{
	snprintf(buf, len, "bench-class-%d", cls);
}

static void enqueue(struct load *l, int kind, int node)
{
	if (l->qtail - l->qhead == l->qcap) {
		fprintf(stderr, "cluster_load: queue overflow: the database cannot keep up\n");
		exit(1);
	}
	l->queue[l->qtail++ % l->qcap] = (struct op){kind, node, 0, 0};
}

static void send_op(struct load *l, int k, struct op op)
{
	struct node *n = &l->n[op.node];
	char batch[1024], cls[64], cursor[32];
	const char *vals[4];

	cls_name(n->cls, cls, sizeof(cls));
	if (op.kind == 0) {
		int w = (int)(rnd(l) * l->workloads), threads = 1 + (int)(rnd(l) * 16);
		long long id = ++n->next_trial;
		op.id = id;
		snprintf(batch, sizeof(batch),
			 "[{\"store_id\":\"%s\",\"trial_id\":%lld,\"node\":\"n%d\",\"hw_class\":\"%s\","
			 "\"workload\":\"w%d\",\"params\":\"{\\\"batch\\\":64}\",\"objective\":\"throughput\","
			 "\"phase\":\"\",\"config\":\"{\\\"intra_threads\\\":%d}\",\"job_id\":%lld,\"n\":12,"
			 "\"mean\":%.3f,\"m2\":4.2,\"t_start\":1.7e9,\"t_end\":1.7e9,\"declared\":null}]",
			 n->store_id, id, op.node, cls, w, threads, id / 20,
			 500.0 + 100.0 * rnd(l));
		vals[0] = batch;
		if (!PQsendQueryParams(l->conn[k], cluster_sql_push, 1, NULL, vals, NULL, NULL, 0))
			goto fail;
	} else {
		snprintf(cursor, sizeof(cursor), "%lld", n->cursor);
		vals[0] = cls;
		vals[1] = cursor;
		vals[2] = n->store_id;
		vals[3] = PULL_BATCH;
		if (!PQsendQueryParams(l->conn[k], cluster_sql_pull, 4, NULL, vals, NULL, NULL, 0))
			goto fail;
	}
	op.sent = now_s();
	l->busy[k] = op;
	return;
fail:
	fprintf(stderr, "cluster_load: send: %s", PQerrorMessage(l->conn[k]));
	exit(1);
}

static void add_pull(struct node *n, double start, double end, long long cursor)
{
	if (n->npulls == n->cap) {
		n->cap = n->cap ? 2 * n->cap : 64;
		n->pulls = realloc(n->pulls, n->cap * sizeof(*n->pulls));
		if (!n->pulls)
			exit(1);
	}
	n->pulls[n->npulls++] = (struct span){start, end, cursor};
}

static void complete(struct load *l, int k, PGresult *r)
{
	struct op op = l->busy[k];
	struct node *n = &l->n[op.node];
	double t = now_s();

	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		fprintf(stderr, "cluster_load: %s", PQresultErrorMessage(r));
		exit(1);
	}
	if (op.kind == 0) {
		l->push_ms[l->npush++] = (t - op.sent) * 1e3;
		if (l->ntrials < MAX_TRIALS_TRACKED)
			l->trials[l->ntrials++] = (struct trial){t, op.node, op.id, 0};
		return;
	}
	l->pull_ms[l->npull++] = (t - op.sent) * 1e3;
	l->pull_bytes += PQgetlength(r, 0, 0);
	{
		long long rows = 0;
		for (const char *p = PQgetvalue(r, 0, 0); (p = strstr(p, "\"seq\"")); p++)
			rows++;
		l->pull_rows += rows;
		n->cursor = atoll(PQgetvalue(r, 0, 1));
		add_pull(n, op.sent, t, n->cursor);
		n->last_pull = t;
		n->next_pull = rows >= atoi(PULL_BATCH) ? t
			       : t + (l->poll_s > 0 ? l->poll_s * (0.8 + 0.4 * rnd(l)) : POLL_EVERY_S);
	}
	n->pulling = 0;
}

/* Reads what a pool connection has; completes its op when the answer is whole. */
static void drain_pool(struct load *l, int k)
{
	PGresult *r, *last = NULL;

	if (!PQconsumeInput(l->conn[k])) {
		fprintf(stderr, "cluster_load: %s", PQerrorMessage(l->conn[k]));
		exit(1);
	}
	if (PQisBusy(l->conn[k]))
		return;
	while ((r = PQgetResult(l->conn[k]))) {
		PQclear(last);
		last = r;
	}
	complete(l, k, last);
	PQclear(last);
	l->busy[k].kind = -1;
}

static void drain_listener(struct load *l, int i)
{
	struct node *n = &l->n[i];
	char cls[64];
	PGnotify *nt;

	cls_name(n->cls, cls, sizeof(cls));
	PQconsumeInput(n->listen);
	while ((nt = PQnotifies(n->listen))) {
		l->notifies++;
		if (strcmp(nt->extra, cls) == 0 && n->next_pull > n->last_pull + PULL_GAP_S)
			n->next_pull = n->last_pull + PULL_GAP_S;
		PQfreemem(nt);
	}
}

static void schedule(struct load *l, double t, double end)
{
	for (int i = 0; i < l->nodes; i++) {
		struct node *n = &l->n[i];
		if (t < end && n->next_push <= t) {
			enqueue(l, 0, i);
			n->next_push = t - log(1.0 - rnd(l)) / l->rate;
		}
		if (!n->pulling && n->next_pull <= t) {
			enqueue(l, 1, i);
			n->pulling = 1;
			n->next_pull = INFINITY;
		}
	}
	for (int k = 0; k < l->pool && l->qhead < l->qtail; k++)
		if (l->busy[k].kind < 0)
			send_op(l, k, l->queue[l->qhead++ % l->qcap]);
}

static void run(struct load *l, const char *conninfo)
{
	struct pollfd *fds = calloc((size_t)(l->pool + l->nodes), sizeof(*fds));
	double t0 = now_s(), end = t0 + l->seconds, t;

	for (int i = 0; i < l->nodes; i++) {
		struct node *n = &l->n[i];
		PGresult *r;
		n->cls = i % l->classes;
		snprintf(n->store_id, sizeof(n->store_id), "bench-node-%d", i);
		/* A polling node holds its connection too (idle between pulls): the backends are the same. */
		n->listen = connect_or_die(conninfo);
		if (l->poll_s <= 0) {
			r = PQexec(n->listen, "LISTEN dlprofd_trials");
			PQclear(r);
		}
		PQsetnonblocking(n->listen, 1);
		n->next_push = t0 - log(1.0 - rnd(l)) / l->rate;
		n->next_pull = t0 + (l->poll_s > 0 ? l->poll_s : POLL_EVERY_S) * rnd(l);
		n->last_pull = t0 - POLL_EVERY_S;
	}
	/* Nodes start with their class read: the cursor at the table's end. */
	{
		PGresult *r = PQexec(l->conn[0], "SELECT coalesce(max(seq), 0) FROM dlprofd_trials");
		long long top = atoll(PQgetvalue(r, 0, 0));
		PQclear(r);
		for (int i = 0; i < l->nodes; i++)
			l->n[i].cursor = top;
	}
	/* Connecting 1,000 nodes takes seconds: the schedule starts now, not before that (no burst of overdue pushes). */
	t = now_s() - t0;
	t0 += t;
	for (int i = 0; i < l->nodes; i++) {
		l->n[i].next_push += t;
		l->n[i].next_pull += t;
		l->n[i].last_pull += t;
	}
	end = t0 + l->seconds;
	/* Runs the load, then lets the last trials propagate for 8 s more. */
	while ((t = now_s()) < end + 8.0) {
		int nfds = 0, rc;
		schedule(l, t, end);
		for (int k = 0; k < l->pool; k++)
			fds[nfds++] = (struct pollfd){.fd = PQsocket(l->conn[k]), .events = POLLIN};
		for (int i = 0; i < l->nodes; i++)
			fds[nfds++] = (struct pollfd){.fd = PQsocket(l->n[i].listen), .events = POLLIN};
		rc = poll(fds, (nfds_t)nfds, 5);
		if (rc <= 0)
			continue;
		for (int k = 0; k < l->pool; k++)
			if (fds[k].revents && l->busy[k].kind >= 0)
				drain_pool(l, k);
		for (int i = 0; i < l->nodes; i++)
			if (fds[l->pool + i].revents)
				drain_listener(l, i);
	}
	free(fds);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double p)
{
	if (n == 0)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_double);
	return v[(size_t)fmin((double)n - 1, floor(p * (double)n))];
}

/* "key":value, or null for no value (JSON has no NaN). */
static void put_num(const char *key, double v, const char *after)
{
	if (isfinite(v))
		printf("\"%s\":%.3f%s", key, v, after);
	else
		printf("\"%s\":null%s", key, after);
}

/* Reads back the seq each pushed trial got, by node and trial id. */
static void read_seqs(struct load *l, const char *conninfo)
{
	PGconn *c = connect_or_die(conninfo);
	PGresult *r = PQexec(c, "SELECT substr(store_id, 12)::int, trial_id, seq FROM dlprofd_trials "
				"WHERE store_id LIKE 'bench-node-%'");

	for (int i = 0; i < l->nodes; i++)
		l->n[i].seq = calloc((size_t)l->n[i].next_trial + 1, sizeof(long long));
	for (int row = 0; row < PQntuples(r); row++) {
		int i = atoi(PQgetvalue(r, row, 0));
		long long id = atoll(PQgetvalue(r, row, 1));
		if (i >= 0 && i < l->nodes && id >= 1 && id <= l->n[i].next_trial)
			l->n[i].seq[id] = atoll(PQgetvalue(r, row, 2));
	}
	PQclear(r);
	PQfinish(c);
	for (size_t x = 0; x < l->ntrials; x++)
		l->trials[x].seq = l->n[l->trials[x].node].seq[l->trials[x].id];
}

/*
 * Per tracked trial committed in the load window: when the last node of its
 * class had it (the end of its first pull that read up to the trial's seq),
 * counted from the push's commit as the pusher saw it.
 */
static void propagation(struct load *l, double window_end)
{
	double *all = malloc((l->ntrials + 1) * sizeof(double));
	size_t n = 0, missed = 0;

	for (size_t x = 0; x < l->ntrials; x++) {
		const struct trial *tr = &l->trials[x];
		double worst = 0;
		int reached = 1;
		if (tr->committed > window_end || tr->seq == 0)
			continue;
		for (int i = 0; i < l->nodes && reached; i++) {
			const struct node *nd = &l->n[i];
			size_t lo = 0, hi = nd->npulls;
			if (nd->cls != l->n[tr->node].cls || i == tr->node)
				continue;
			while (lo < hi) {
				size_t mid = (lo + hi) / 2;
				if (nd->pulls[mid].cursor >= tr->seq)
					hi = mid;
				else
					lo = mid + 1;
			}
			if (lo == nd->npulls)
				reached = 0;
			else if (nd->pulls[lo].end - tr->committed > worst)
				worst = nd->pulls[lo].end - tr->committed;
		}
		if (reached)
			all[n++] = worst;
		else
			missed++;
	}
	printf("\"propagation_s\":{\"trials\":%zu,\"not_reached\":%zu,", n, missed);
	put_num("p50", pct(all, n, 0.5), ",");
	put_num("p95", pct(all, n, 0.95), ",");
	put_num("max", pct(all, n, 1.0), "}");
	free(all);
}

/* One node joining: its whole class read from cursor 0, batch after batch. */
static void cold(const char *conninfo, const char *cls)
{
	PGconn *c = connect_or_die(conninfo);
	char cursor[32] = "0";
	const char *vals[4] = {cls, cursor, "bench-cold", PULL_BATCH};
	long long bytes = 0, rows = 0;
	int queries = 0;
	double t = now_s();

	for (;;) {
		PGresult *r = PQexecParams(c, cluster_sql_pull, 4, NULL, vals, NULL, NULL, 0);
		long long n = 0;
		if (PQresultStatus(r) != PGRES_TUPLES_OK) {
			fprintf(stderr, "cluster_load: %s", PQresultErrorMessage(r));
			exit(1);
		}
		bytes += PQgetlength(r, 0, 0);
		for (const char *p = PQgetvalue(r, 0, 0); (p = strstr(p, "\"seq\"")); p++)
			n++;
		snprintf(cursor, sizeof(cursor), "%s", PQgetvalue(r, 0, 1));
		PQclear(r);
		rows += n;
		queries++;
		if (n < atoi(PULL_BATCH))
			break;
	}
	printf("{\"cold_pull\":{\"seconds\":%.3f,\"rows\":%lld,\"bytes\":%lld,\"queries\":%d}}\n", now_s() - t, rows,
	       bytes, queries);
	PQfinish(c);
}

static void view(const char *conninfo)
{
	PGconn *c = connect_or_die(conninfo);
	double t = now_s();
	PGresult *r = PQexec(c, cluster_sql_view);

	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		fprintf(stderr, "cluster_load: %s", PQresultErrorMessage(r));
		exit(1);
	}
	printf("{\"view\":{\"seconds\":%.3f,\"bytes\":%d}}\n", now_s() - t, PQgetlength(r, 0, 0));
	PQclear(r);
	PQfinish(c);
}

/* A node of class cls asking about 500 workloads in turn, as daemon/cluster.c asks for a prior. */
static void prior(const char *conninfo, const char *cls, int workloads)
{
	enum { ASKS = 500 };
	PGconn *c = connect_or_die(conninfo);
	char name[32];
	const char *vals[4] = {name, "throughput", cls, "4096"};
	double ms[ASKS], t0 = now_s();
	long long bytes = 0, rows = 0;
	unsigned seed = 11;

	for (int i = 0; i < ASKS; i++) {
		double t = now_s();
		PGresult *r;
		seed = seed * 1103515245u + 12345u;
		snprintf(name, sizeof(name), "w%u", (seed >> 8) % (unsigned)workloads);
		r = PQexecParams(c, cluster_sql_other_classes, 4, NULL, vals, NULL, NULL, 0);
		if (PQresultStatus(r) != PGRES_TUPLES_OK) {
			fprintf(stderr, "cluster_load: %s", PQresultErrorMessage(r));
			exit(1);
		}
		ms[i] = 1000.0 * (now_s() - t);
		bytes += PQgetlength(r, 0, 0);
		for (const char *p = PQgetvalue(r, 0, 0); (p = strstr(p, "\"hw_class\"")); p++)
			rows++;
		PQclear(r);
	}
	printf("{\"prior\":{\"asks\":%d,\"seconds\":%.3f,", ASKS, now_s() - t0);
	put_num("p50_ms", pct(ms, ASKS, 0.5), ",");
	put_num("p95_ms", pct(ms, ASKS, 0.95), ",");
	printf("\"rows\":%.1f,\"bytes\":%.0f}}\n", (double)rows / ASKS, (double)bytes / ASKS);
	PQfinish(c);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"conninfo", required_argument, NULL, 'c'}, {"nodes", required_argument, NULL, 'n'},
		{"classes", required_argument, NULL, 'k'},  {"workloads", required_argument, NULL, 'w'},
		{"rate", required_argument, NULL, 'r'},     {"seconds", required_argument, NULL, 's'},
		{"pool", required_argument, NULL, 'p'},     {"cold", required_argument, NULL, 'C'},
		{"view", no_argument, NULL, 'V'},           {"prior", required_argument, NULL, 'P'},
		{"poll", required_argument, NULL, 'T'},
		{NULL, 0, NULL, 0},
	};
	struct load l = {.nodes = 1000, .classes = 4, .workloads = 10000, .pool = 16, .rate = 1.0 / 30,
			 .seconds = 60, .seed = 7};
	const char *conninfo = NULL, *cold_cls = NULL, *prior_cls = NULL;
	int o, want_view = 0;
	double end;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'c': conninfo = optarg; break;
		case 'n': l.nodes = atoi(optarg); break;
		case 'k': l.classes = atoi(optarg); break;
		case 'w': l.workloads = atoi(optarg); break;
		case 'r': l.rate = atof(optarg); break;
		case 's': l.seconds = atof(optarg); break;
		case 'p': l.pool = atoi(optarg); break;
		case 'C': cold_cls = optarg; break;
		case 'V': want_view = 1; break;
		case 'P': prior_cls = optarg; break;
		case 'T': l.poll_s = atof(optarg); break;
		default: return 2;
		}
	}
	if (!conninfo)
		return 2;
	if (cold_cls) {
		cold(conninfo, cold_cls);
		return 0;
	}
	if (want_view) {
		view(conninfo);
		return 0;
	}
	if (prior_cls) {
		prior(conninfo, prior_cls, l.workloads);
		return 0;
	}
	l.n = calloc((size_t)l.nodes, sizeof(*l.n));
	l.conn = calloc((size_t)l.pool, sizeof(*l.conn));
	l.busy = calloc((size_t)l.pool, sizeof(*l.busy));
	l.qcap = (size_t)l.nodes * 4;
	l.queue = calloc(l.qcap, sizeof(*l.queue));
	l.trials = calloc(MAX_TRIALS_TRACKED, sizeof(*l.trials));
	l.push_ms = calloc(4000000, sizeof(double));
	l.pull_ms = calloc(4000000, sizeof(double));
	if (!l.n || !l.conn || !l.busy || !l.queue || !l.trials || !l.push_ms || !l.pull_ms)
		return 1;
	for (int k = 0; k < l.pool; k++) {
		l.conn[k] = connect_or_die(conninfo);
		l.busy[k].kind = -1;
	}
	run(&l, conninfo);
	read_seqs(&l, conninfo);
	end = l.ntrials ? l.trials[0].committed - 1 : 0;
	for (size_t x = 0; x < l.ntrials; x++)
		if (l.trials[x].committed > end)
			end = l.trials[x].committed;
	printf("{\"nodes\":%d,\"poll_s\":%g,\"classes\":%d,\"workloads\":%d,\"rate_per_node\":%.4f,\"seconds\":%.0f,"
	       "\"pushes\":%zu,\"pulls\":%zu,\"pull_rows\":%lld,\"pull_bytes\":%lld,\"notifies\":%lld,",
	       l.nodes, l.poll_s, l.classes, l.workloads, l.rate, l.seconds, l.npush, l.npull, l.pull_rows, l.pull_bytes,
	       l.notifies);
	printf("\"push_ms\":{");
	put_num("p50", pct(l.push_ms, l.npush, 0.5), ",");
	put_num("p95", pct(l.push_ms, l.npush, 0.95), "},");
	printf("\"pull_ms\":{");
	put_num("p50", pct(l.pull_ms, l.npull, 0.5), ",");
	put_num("p95", pct(l.pull_ms, l.npull, 0.95), "},");
	/* Trials of the last 8 s of the load may not have reached everyone by the end. */
	propagation(&l, end - 8.0);
	printf("}\n");
	return 0;
}
