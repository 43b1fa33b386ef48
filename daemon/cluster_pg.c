/*
 * libpq for the cluster thread (see cluster_pg.h).  Everything is
 * asynchronous (PQconnectStart/PQconnectPoll, PQsendQuery, PQconsumeInput)
 * and waits in poll() on the database's socket and the thread's wake pipe,
 * so a database that stops answering costs the thread a deadline and never
 * holds up the daemon's shutdown.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "cluster_pg.h"
#include "migrations.h"

/* Both keys are arbitrary; they only need to be the same on every node. */
#define CPG_MIGRATE_LOCK "7235000"

/* Copies libpq's message (one line, its trailing newline dropped) into p->error. */
static void set_error(struct cluster_pg *p, const char *what, const char *msg)
{
	size_t n;

	snprintf(p->error, sizeof(p->error), "%s: %s", what, msg && *msg ? msg : "unknown error");
	n = strlen(p->error);
	while (n > 0 && (p->error[n - 1] == '\n' || p->error[n - 1] == ' '))
		p->error[--n] = '\0';
	/* libpq's messages span lines with tab indents: one line, single spaces. */
	char *w = p->error;
	for (const char *r = p->error; *r; r++) {
		char ch = (*r == '\n' || *r == '\t') ? ' ' : *r;
		if (ch != ' ' || (w > p->error && w[-1] != ' '))
			*w++ = ch;
	}
	*w = '\0';
}

void cpg_close(struct cluster_pg *p)
{
	if (p->conn)
		PQfinish(p->conn);
	p->conn = NULL;
}

/*
 * Waits until fd is ready for events, the deadline passes or the pipe
 * wakes us.  1: ready; 0: timed out, or kicked when kick_ends; -1: stop.
 * A wake without stop sets p->kicked, and ends the wait only when
 * kick_ends: a statement in flight or a back-off is not cut short by one.
 */
static int wait_fd(struct cluster_pg *p, int fd, short events, double deadline, bool kick_ends)
{
	for (;;) {
		struct pollfd fds[2] = {{.fd = p->wake_fd, .events = POLLIN}, {.fd = fd, .events = events}};
		double left = deadline - clock_mono_s();
		char buf[64];
		int rc;

		if (atomic_load(p->stop))
			return -1;
		if (left <= 0)
			return 0;
		rc = poll(fds, fd >= 0 ? 2 : 1, (int)(left * 1000.0) + 1);
		if (rc < 0 && errno != EINTR)
			return -1;
		if (rc > 0 && (fds[0].revents & POLLIN)) {
			while (read(p->wake_fd, buf, sizeof(buf)) > 0)
				;
			if (atomic_load(p->stop))
				return -1;
			p->kicked = true;
			if (kick_ends)
				return 0;
		}
		if (rc > 0 && fds[1].revents)
			return 1;
	}
}

int cpg_connect(struct cluster_pg *p, const char *conninfo, double timeout_s)
{
	static const char *const keys[] = {"dbname", "fallback_application_name", NULL};
	const char *vals[] = {conninfo, "dlprofd", NULL};
	PostgresPollingStatusType st = PGRES_POLLING_WRITING;
	double deadline = clock_mono_s() + timeout_s;
	int rc;

	cpg_close(p);
	/* expand_dbname: conninfo is a whole connection string or URI. */
	if (!(p->conn = PQconnectStartParams(keys, vals, 1))) {
		set_error(p, "connect", "out of memory");
		return -1;
	}
	if (PQstatus(p->conn) == CONNECTION_BAD)
		goto fail;
	while (st != PGRES_POLLING_OK) {
		if (st == PGRES_POLLING_FAILED)
			goto fail;
		rc = wait_fd(p, PQsocket(p->conn), st == PGRES_POLLING_READING ? POLLIN : POLLOUT, deadline, false);
		if (rc <= 0) {
			set_error(p, "connect", rc == 0 ? "timed out" : "stopping");
			cpg_close(p);
			return -1;
		}
		st = PQconnectPoll(p->conn);
	}
	if (PQsetnonblocking(p->conn, 1) != 0)
		goto fail;
	return 0;
fail:
	set_error(p, "connect", PQerrorMessage(p->conn));
	cpg_close(p);
	return -1;
}

/* Sends what libpq has buffered; -1 when the connection broke or the wait ended. */
static int flush(struct cluster_pg *p, double deadline)
{
	int rc;

	while ((rc = PQflush(p->conn)) == 1) {
		int w = wait_fd(p, PQsocket(p->conn), POLLIN | POLLOUT, deadline, false);
		if (w <= 0) {
			set_error(p, "query", w == 0 ? "timed out sending" : "stopping");
			return -1;
		}
		/* The server may answer (or complain) before it read everything. */
		if (!PQconsumeInput(p->conn))
			break;
	}
	if (rc != 0) {
		set_error(p, "query", PQerrorMessage(p->conn));
		return -1;
	}
	return 0;
}

/* Reads input until a whole result is there; -1 as flush. */
static int await_result(struct cluster_pg *p, double deadline)
{
	while (PQisBusy(p->conn)) {
		int w = wait_fd(p, PQsocket(p->conn), POLLIN, deadline, false);
		if (w <= 0) {
			set_error(p, "query", w == 0 ? "timed out waiting for the answer" : "stopping");
			return -1;
		}
		if (!PQconsumeInput(p->conn)) {
			set_error(p, "query", PQerrorMessage(p->conn));
			return -1;
		}
	}
	return 0;
}

PGresult *cpg_query(struct cluster_pg *p, const char *sql, int nparams, const char *const *values,
		    double timeout_s)
{
	double deadline = clock_mono_s() + timeout_s;
	PGresult *res, *last = NULL;
	ExecStatusType st;
	int sent;

	if (!p->conn) {
		set_error(p, "query", "not connected");
		return NULL;
	}
	sent = nparams > 0 ? PQsendQueryParams(p->conn, sql, nparams, NULL, values, NULL, NULL, 0)
			   : PQsendQuery(p->conn, sql);
	if (!sent) {
		set_error(p, "query", PQerrorMessage(p->conn));
		goto broken;
	}
	if (flush(p, deadline) < 0)
		goto broken;
	for (;;) {
		if (await_result(p, deadline) < 0)
			goto broken;
		if (!(res = PQgetResult(p->conn)))
			break;
		/* The first error is the one that explains; later results are the skipped rest. */
		if (last && PQresultStatus(last) == PGRES_FATAL_ERROR) {
			PQclear(res);
			continue;
		}
		PQclear(last);
		last = res;
	}
	st = last ? PQresultStatus(last) : PGRES_FATAL_ERROR;
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		set_error(p, "query", last ? PQresultErrorMessage(last) : PQerrorMessage(p->conn));
		PQclear(last);
		if (PQstatus(p->conn) != CONNECTION_OK)
			cpg_close(p);
		return NULL;
	}
	return last;
broken:
	PQclear(last);
	cpg_close(p);
	return NULL;
}

int cpg_push_outbox(struct cluster_pg *p, const char *sql, const struct cpg_outbox *ob, long long *answer)
{
	json_t *rows = NULL, *row;
	int64_t last = 0;
	const char *vals[1];
	PGresult *r = NULL;
	char *text = NULL;
	size_t i, n;

	*answer = 0;
	if (ob->peek(ob->st, ob->max, &rows, &last) != 0)
		return -1;
	n = json_array_size(rows);
	json_array_foreach(rows, i, row) {
		json_object_set_new(row, "store_id", json_string(ob->store_id));
		json_object_set_new(row, ob->node_key, json_string(ob->node));
	}
	if (n > 0 && !(text = json_dumps(rows, JSON_COMPACT))) {
		json_decref(rows);
		return -1;
	}
	json_decref(rows);
	if (n > 0) {
		vals[0] = text;
		r = cpg_query(p, sql, 1, vals, ob->timeout_s);
		free(text);
		if (!r)
			return -1;
		*answer = atoll(PQgetvalue(r, 0, 0));
		PQclear(r);
	}
	/* Committed there (or nothing to send: entries the peek's joins skipped leave too). */
	if (last > 0 && ob->done(ob->st, last) != 0)
		return -1;
	return (int)n;
}

int cpg_wait(struct cluster_pg *p, const char *channel, const char *payload, double timeout_s)
{
	PGnotify *n;
	int count = 0, w;

	if (!p->conn)
		return -1;
	w = wait_fd(p, PQsocket(p->conn), POLLIN, clock_mono_s() + timeout_s, true);
	if (w < 0)
		return -1;
	if (w > 0 && !PQconsumeInput(p->conn)) {
		set_error(p, "listen", PQerrorMessage(p->conn));
		cpg_close(p);
		return -1;
	}
	while ((n = PQnotifies(p->conn))) {
		if (strcmp(n->relname, channel) == 0 && strcmp(n->extra, payload) == 0)
			count++;
		PQfreemem(n);
	}
	return count;
}

void cpg_sleep(struct cluster_pg *p, double timeout_s)
{
	(void)wait_fd(p, -1, 0, clock_mono_s() + timeout_s, false);
}

/* Runs one statement without parameters; 0 or -1 (p->error set). */
static int exec(struct cluster_pg *p, const char *sql)
{
	PGresult *r = cpg_query(p, sql, 0, NULL, 30.0);

	PQclear(r);
	return r ? 0 : -1;
}

static int schema_version(struct cluster_pg *p, int *version)
{
	PGresult *r = cpg_query(p, "SELECT coalesce(max(version), 0) FROM dlprofd_schema", 0, NULL, 30.0);

	if (!r)
		return -1;
	*version = atoi(PQgetvalue(r, 0, 0));
	PQclear(r);
	return 0;
}

/* Applies migration m in one transaction with its version; rolls back on failure. */
static int apply(struct cluster_pg *p, const struct migration *m)
{
	size_t len = strlen(m->sql) + 200;
	char *sql = malloc(len);
	int rc;

	if (!sql) {
		set_error(p, "migrate", "out of memory");
		return -1;
	}
	snprintf(sql, len, "BEGIN;\n%s\n;DELETE FROM dlprofd_schema; INSERT INTO dlprofd_schema VALUES (%d);\nCOMMIT;",
		 m->sql, m->version);
	rc = exec(p, sql);
	free(sql);
	if (rc < 0 && p->conn) {
		char why[sizeof(p->error)];
		memcpy(why, p->error, sizeof(why));
		(void)exec(p, "ROLLBACK");
		set_error(p, m->name, why);
	}
	return rc;
}

int cpg_migrate(struct cluster_pg *p, int *version)
{
	const struct migration *m;
	int rc = -1;

	if (exec(p, "SELECT pg_advisory_lock(" CPG_MIGRATE_LOCK ")") < 0)
		return -1;
	if (exec(p, "CREATE TABLE IF NOT EXISTS dlprofd_schema (version integer NOT NULL)") < 0 ||
	    schema_version(p, version) < 0)
		goto unlock;
	for (m = cluster_migrations; m->version; m++) {
		if (m->version <= *version)
			continue;
		if (apply(p, m) < 0)
			goto unlock;
		*version = m->version;
	}
	rc = 0;
unlock:
	/* A connection that broke took the lock with it. */
	if (p->conn) {
		char why[sizeof(p->error)];
		memcpy(why, p->error, sizeof(why));
		(void)exec(p, "SELECT pg_advisory_unlock(" CPG_MIGRATE_LOCK ")");
		memcpy(p->error, why, sizeof(why));
	}
	return rc;
}
