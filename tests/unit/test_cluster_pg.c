/*
 * Tests of the cluster thread's link to PostgreSQL (daemon/cluster_pg.c)
 * against a private server that the test starts as an unprivileged user
 * (tests/integration/pgserver.py, as the integration suite does): the
 * shared schema migrated once however many nodes start together, a failed
 * statement leaving the link usable, an outbox pushed in batches and
 * trimmed only after the commit (a batch sent twice stored once), and
 * every wait ended by a notification, a kick, a deadline or the daemon
 * stopping from another thread.  Without PostgreSQL's server binaries on
 * the machine (the evidence pgserver.py itself goes by) every case skips.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "clock.h"
#include "cluster_pg.h"
#include "cluster_sql.h"
#include "migrations.h"
#include "store_cluster.h"
#include "store_fixture.h"
#include "store_tuner.h"

#define T0 1700000000.0
#define QUERY_S 10.0

/* The private server: pgserver.py's process (it stops the server when its stdin closes). */
struct pg_server {
	pid_t pid;
	int to_child;                  /* its stdin */
	char conninfo[512];
};

/* Whether this machine has a PostgreSQL server for pgserver.py to run (its own test: bindir()). */
static bool
pg_installed(void)
{
	glob_t g;
	bool any = glob("/usr/lib/postgresql/*/bin/postgres", 0, NULL, &g) == 0 && g.gl_pathc > 0;

	globfree(&g);
	return any;
}

/* Starts pgserver.py and reads its conninfo; 0 or -1. */
static int
pg_start(struct pg_server *s)
{
	const char *src = getenv("DLPROF_SRCDIR");
	char script[1024], line[2048];
	int in[2], out[2];
	json_t *info;
	FILE *f;

	snprintf(script, sizeof(script), "%s/tests/integration/pgserver.py", src != NULL ? src : ".");
	if (pipe(in) < 0 || pipe(out) < 0)
		return -1;
	if ((s->pid = fork()) == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl("/usr/bin/python3", "python3", script, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	s->to_child = in[1];
	if (s->pid < 0 || (f = fdopen(out[0], "r")) == NULL)
		return -1;
	if (fgets(line, sizeof(line), f) == NULL) {
		fclose(f);
		return -1;
	}
	fclose(f);
	info = json_loads(line, 0, NULL);
	const char *conninfo = json_string_value(json_object_get(info, "conninfo"));
	snprintf(s->conninfo, sizeof(s->conninfo), "%s", conninfo != NULL ? conninfo : "");
	json_decref(info);
	return s->conninfo[0] != '\0' ? 0 : -1;
}

static void
pg_stop(struct pg_server *s)
{
	int status;

	close(s->to_child);
	waitpid(s->pid, &status, 0);
}

static int
group_setup(void **state)
{
	static struct pg_server s;

	signal(SIGPIPE, SIG_IGN);
	if (!pg_installed()) {
		*state = NULL;             /* each case skips, saying why */
		return 0;
	}
	if (pg_start(&s) < 0) {
		print_error("pgserver.py did not start a server\n");
		return -1;
	}
	*state = &s;
	return 0;
}

static int
group_teardown(void **state)
{
	if (*state != NULL)
		pg_stop(*state);
	return 0;
}

/* A link as the cluster thread has one: a wake pipe and a stop flag. */
struct link {
	struct cluster_pg pg;
	int pipe[2];
	atomic_bool stop;
};

/* The link's pipe and flag, not connected; 0 or -1 (no cmocka here: threads call it). */
static int
link_init(struct link *l)
{
	memset(l, 0, sizeof(*l));
	atomic_init(&l->stop, false);
	if (pipe2(l->pipe, O_NONBLOCK | O_CLOEXEC) < 0)
		return -1;
	l->pg.wake_fd = l->pipe[0];
	l->pg.stop = &l->stop;
	return 0;
}

static void
link_open(struct link *l, const char *conninfo)
{
	assert_int_equal(link_init(l), 0);
	if (cpg_connect(&l->pg, conninfo, QUERY_S) < 0)
		fail_msg("connect: %s", l->pg.error);
}

static void
link_close(struct link *l)
{
	cpg_close(&l->pg);
	close(l->pipe[0]);
	close(l->pipe[1]);
}

static void
wake(struct link *l)
{
	assert_int_equal(write(l->pipe[1], "x", 1), 1);
}

/* The first column of sql's only row as text (a static copy), or fails. */
static const char *
value(struct link *l, const char *sql)
{
	static char buf[256];
	PGresult *r = cpg_query(&l->pg, sql, 0, NULL, QUERY_S);

	if (r == NULL)
		fail_msg("%s: %s", sql, l->pg.error);
	snprintf(buf, sizeof(buf), "%s", PQgetvalue(r, 0, 0));
	PQclear(r);
	return buf;
}

/* Runs a statement that returns no rows, or fails. */
static void
run(struct link *l, const char *sql)
{
	PGresult *r = cpg_query(&l->pg, sql, 0, NULL, QUERY_S);

	if (r == NULL)
		fail_msg("%s: %s", sql, l->pg.error);
	PQclear(r);
}

static struct pg_server *
server_or_skip(void **state)
{
	if (*state == NULL) {
		print_message("no PostgreSQL server under /usr/lib/postgresql (apt-get install postgresql): skipped\n");
		skip();
	}
	return *state;
}

static int
newest_cluster_migration(void)
{
	int v = 0;

	for (const struct migration *m = cluster_migrations; m->version; m++)
		v = m->version;
	return v;
}

struct migrate_arg {
	const char *conninfo;
	int rc, version;
	char error[512];
};

static void *
migrate_thread(void *arg)
{
	struct migrate_arg *a = arg;
	struct link l;

	if (link_init(&l) < 0)
		return NULL;
	a->rc = cpg_connect(&l.pg, a->conninfo, QUERY_S) == 0 ? cpg_migrate(&l.pg, &a->version) : -1;
	memcpy(a->error, l.pg.error, sizeof(a->error));
	link_close(&l);
	return NULL;
}

static void
nodes_starting_together_migrate_once(void **state)
{
	struct pg_server *s = server_or_skip(state);
	char conninfo[600];
	struct migrate_arg a[3];
	pthread_t th[3];
	struct link l;

	link_open(&l, s->conninfo);
	run(&l, "CREATE DATABASE migrate_once");
	snprintf(conninfo, sizeof(conninfo), "%s dbname=migrate_once", s->conninfo);
	for (int i = 0; i < 3; i++) {
		a[i] = (struct migrate_arg){.conninfo = conninfo, .rc = -2};
		assert_int_equal(pthread_create(&th[i], NULL, migrate_thread, &a[i]), 0);
	}
	for (int i = 0; i < 3; i++) {
		pthread_join(th[i], NULL);
		if (a[i].rc != 0)
			fail_msg("migrate: %s", a[i].error);
		assert_int_equal(a[i].version, newest_cluster_migration());
	}
	link_close(&l);
	link_open(&l, conninfo);
	assert_string_equal(value(&l, "SELECT count(*) FROM dlprofd_schema"), "1");
	assert_int_equal(atoi(value(&l, "SELECT version FROM dlprofd_schema")), newest_cluster_migration());
	assert_string_equal(value(&l, "SELECT count(*) FROM pg_proc WHERE proname IN ('dlprofd_push', 'dlprofd_push_ranks')"),
			    "2");
	link_close(&l);
}

static void
a_failed_statement_leaves_the_link_usable(void **state)
{
	struct pg_server *s = server_or_skip(state);
	const char *params[] = {"41"};
	struct link l;
	PGresult *r;

	link_open(&l, s->conninfo);
	r = cpg_query(&l.pg, "SELECT $1::int + 1", 1, params, QUERY_S);
	assert_non_null(r);
	assert_string_equal(PQgetvalue(r, 0, 0), "42");
	PQclear(r);
	/* Several statements: the last one's result; the first error when one fails, on one line. */
	assert_string_equal(value(&l, "SELECT 1; SELECT 2"), "2");
	assert_null(cpg_query(&l.pg, "SELECT 1/0; SELECT 2", 0, NULL, QUERY_S));
	assert_non_null(strstr(l.pg.error, "division by zero"));
	assert_null(strchr(l.pg.error, '\n'));
	assert_non_null(l.pg.conn);
	assert_string_equal(value(&l, "SELECT 'still here'"), "still here");
	link_close(&l);
	/* Not connected: said, not crashed. */
	assert_null(cpg_query(&l.pg, "SELECT 1", 0, NULL, QUERY_S));
	assert_non_null(strstr(l.pg.error, "not connected"));
}

/* The local outbox: a store with the cluster store on and n trials waiting. */
static void
seed_trials(struct store *st, int n, char *store_id, size_t len)
{
	int64_t job = store_fixture_job(st, "shared", NULL, NULL, 0, T0);

	assert_true(job > 0);
	assert_int_equal(store_cluster_enable(st, true, 100, store_id, len), STORE_OK);
	for (int i = 1; i <= n; i++) {
		char config[48];
		struct store_trial tr = {.job_id = job, .phase = "", .config_json = config, .objective = "throughput",
					 .n = 8, .mean = 100.0 * i, .m2 = 2, .t_start = T0 + i, .t_end = T0 + i + 1};
		snprintf(config, sizeof(config), "{\"intra_threads\":%d}", i);
		assert_int_equal(store_trial_add(st, &tr), STORE_OK);
	}
}

static void
outbox_pushed_in_batches_and_trimmed_after_the_commit(void **state)
{
	struct pg_server *s = server_or_skip(state);
	struct store_fixture f;
	char store_id[STORE_CLUSTER_ID_MAX], sql[256];
	long long answer;
	long waiting, dropped;
	struct link l;
	sqlite3 *db;

	assert_int_equal(store_fixture_open(&f), 0);
	seed_trials(f.st, 3, store_id, sizeof(store_id));
	link_open(&l, s->conninfo);
	{
		int version;
		assert_int_equal(cpg_migrate(&l.pg, &version), 0);
	}
	const struct cpg_outbox ob = {f.st, 2, store_cluster_outbox_peek, store_cluster_outbox_done, store_id, "node",
				      "node-a", QUERY_S};

	assert_int_equal(cpg_push_outbox(&l.pg, cluster_sql_push, &ob, &answer), 2);
	assert_int_equal(answer, 2);
	assert_int_equal(store_cluster_outbox_stats(f.st, &waiting, &dropped), STORE_OK);
	assert_int_equal(waiting, 1);
	assert_int_equal(cpg_push_outbox(&l.pg, cluster_sql_push, &ob, &answer), 1);
	assert_int_equal(answer, 1);
	assert_int_equal(cpg_push_outbox(&l.pg, cluster_sql_push, &ob, &answer), 0);
	assert_int_equal(answer, 0);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM dlprofd_trials WHERE store_id = '%s' AND node = 'node-a' "
		 "AND workload = 'shared' AND hw_class = 'test'", store_id);
	assert_string_equal(value(&l, sql), "3");

	/* A crash between the shared commit and the local delete: the batch goes again and is stored once. */
	assert_int_equal(sqlite3_open(f.path, &db), SQLITE_OK);
	sqlite3_busy_timeout(db, 5000);
	assert_int_equal(sqlite3_exec(db, "INSERT INTO cluster_outbox (trial_id) SELECT id FROM trials", NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(cpg_push_outbox(&l.pg, cluster_sql_push, &ob, &answer), 2);
	assert_int_equal(answer, 0);
	assert_int_equal(cpg_push_outbox(&l.pg, cluster_sql_push, &ob, &answer), 1);
	assert_int_equal(answer, 0);
	assert_string_equal(value(&l, sql), "3");

	/* The database refuses the batch: nothing leaves the outbox. */
	assert_int_equal(sqlite3_open(f.path, &db), SQLITE_OK);
	sqlite3_busy_timeout(db, 5000);
	assert_int_equal(sqlite3_exec(db, "INSERT INTO cluster_outbox (trial_id) SELECT id FROM trials", NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(cpg_push_outbox(&l.pg, "SELECT no_such_function($1::json)", &ob, &answer), -1);
	assert_non_null(strstr(l.pg.error, "no_such_function"));
	assert_int_equal(store_cluster_outbox_stats(f.st, &waiting, &dropped), STORE_OK);
	assert_int_equal(waiting, 3);
	link_close(&l);
	assert_int_equal(store_fixture_close(&f), 0);
}

static void
ranks_pushed_under_the_sharing_node(void **state)
{
	struct pg_server *s = server_or_skip(state);
	struct job_rank_spec rk = {.rank = 1, .local_rank = 0, .world_size = 2, .nodes = 2, .node = "n2"};
	struct store_fixture f;
	char store_id[STORE_CLUSTER_ID_MAX];
	long long answer;
	struct link l;
	int version;

	assert_int_equal(store_fixture_open(&f), 0);
	assert_int_equal(store_cluster_enable(f.st, true, 100, store_id, sizeof(store_id)), STORE_OK);
	assert_true(store_fixture_job(f.st, "dist", "run:pg", &rk, 77, T0) > 0);
	link_open(&l, s->conninfo);
	assert_int_equal(cpg_migrate(&l.pg, &version), 0);
	const struct cpg_outbox ob = {f.st, 10, store_cluster_ranks_peek, store_cluster_ranks_done, store_id,
				      "shared_by", "node-b", QUERY_S};

	assert_int_equal(cpg_push_outbox(&l.pg, cluster_sql_push_ranks, &ob, &answer), 1);
	assert_int_equal(answer, 1);
	assert_int_equal(cpg_push_outbox(&l.pg, cluster_sql_push_ranks, &ob, &answer), 0);
	assert_string_equal(value(&l, "SELECT shared_by || ' ' || node || ' ' || pid || ' ' || state FROM dlprofd_ranks "
				      "WHERE job_key = 'run:pg' AND rank = 1"),
			    "node-b n2 77 running");
	link_close(&l);
	assert_int_equal(store_fixture_close(&f), 0);
}

static void
waits_end_on_notification_kick_or_deadline(void **state)
{
	struct pg_server *s = server_or_skip(state);
	struct link l, other;
	PGresult *r;
	double t0;

	link_open(&l, s->conninfo);
	link_open(&other, s->conninfo);
	run(&l, "LISTEN dlprofd_trials");
	value(&other, "SELECT pg_notify('dlprofd_trials', 'class-a')");
	assert_int_equal(cpg_wait(&l.pg, "dlprofd_trials", "class-a", QUERY_S), 1);
	/* Another class's trials wake the connection but count for nothing. */
	value(&other, "SELECT pg_notify('dlprofd_trials', 'class-b')");
	assert_int_equal(cpg_wait(&l.pg, "dlprofd_trials", "class-a", QUERY_S), 0);

	/*
	 * A kick (an ask, a view wanted) ends a wait without a notification:
	 * the deadline is far, and the notification that follows is left for
	 * the next wait, not lost.
	 */
	l.pg.kicked = false;
	wake(&l);
	t0 = clock_mono_s();
	assert_int_equal(cpg_wait(&l.pg, "dlprofd_trials", "class-a", 60), 0);
	assert_true(l.pg.kicked);
	assert_true(clock_mono_s() - t0 < 30);   /* ended by the kick, not by its deadline */
	value(&other, "SELECT pg_notify('dlprofd_trials', 'class-a')");
	assert_int_equal(cpg_wait(&l.pg, "dlprofd_trials", "class-a", QUERY_S), 1);
	/* A back-off is not cut short by one: the kick is noted, the sleep runs to its end. */
	l.pg.kicked = false;
	wake(&l);
	cpg_sleep(&l.pg, 0.2);
	assert_true(l.pg.kicked);
	{
		char byte;
		assert_int_equal(read(l.pipe[0], &byte, 1), -1);   /* the sleep drained the pipe */
	}

	/* A statement past its deadline: the link is given up, the reason said. */
	r = cpg_query(&l.pg, "SELECT pg_sleep(30)", 0, NULL, 0.3);
	assert_null(r);
	assert_non_null(strstr(l.pg.error, "timed out"));
	assert_null(l.pg.conn);
	link_close(&l);
	link_close(&other);
}

struct stopper {
	struct link *l;
	struct timespec after;
};

static void *
stop_thread(void *arg)
{
	struct stopper *st = arg;

	nanosleep(&st->after, NULL);
	atomic_store(&st->l->stop, true);
	wake(st->l);
	return NULL;
}

static void
the_daemon_stopping_ends_every_wait(void **state)
{
	struct pg_server *s = server_or_skip(state);
	struct stopper st = {.after = {0, 200 * 1000 * 1000}};
	pthread_t th;
	struct link l;

	link_open(&l, s->conninfo);
	st.l = &l;
	/* The daemon stops while the thread waits on a slow statement (its deadline far off). */
	assert_int_equal(pthread_create(&th, NULL, stop_thread, &st), 0);
	assert_null(cpg_query(&l.pg, "SELECT pg_sleep(30)", 0, NULL, 60));
	pthread_join(th, NULL);
	assert_non_null(strstr(l.pg.error, "stopping"));
	assert_null(l.pg.conn);
	/* Stopped: a connect gives up at once, however long it was allowed. */
	assert_int_equal(cpg_connect(&l.pg, s->conninfo, 60), -1);
	assert_non_null(strstr(l.pg.error, "stopping"));
	link_close(&l);

	/* No server at that address: the reason is libpq's, and the link stays closed. */
	assert_int_equal(link_init(&l), 0);
	assert_int_equal(cpg_connect(&l.pg, "host=/nonexistent-dlprof-socket-dir port=5432 user=x dbname=x", 5), -1);
	assert_non_null(strstr(l.pg.error, "connect:"));
	assert_null(l.pg.conn);
	link_close(&l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nodes_starting_together_migrate_once),
		cmocka_unit_test(a_failed_statement_leaves_the_link_usable),
		cmocka_unit_test(outbox_pushed_in_batches_and_trimmed_after_the_commit),
		cmocka_unit_test(ranks_pushed_under_the_sharing_node),
		cmocka_unit_test(waits_end_on_notification_kick_or_deadline),
		cmocka_unit_test(the_daemon_stopping_ends_every_wait),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
