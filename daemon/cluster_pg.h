/*
 * The cluster thread's connection to PostgreSQL (cluster_pg.c): libpq used
 * without blocking, each wait bounded by a deadline and cut short by the
 * thread's wake pipe when the daemon stops, and the shared schema's
 * migrations.  Only the cluster thread's files (cluster*.c) include this;
 * only cluster_pg.c calls libpq's connection functions.
 */
#ifndef DLPROF_CLUSTER_PG_H
#define DLPROF_CLUSTER_PG_H

#include <jansson.h>
#include <libpq-fe.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct store;

struct cluster_pg {
	PGconn *conn;                 /* NULL: not connected */
	int wake_fd;                  /* read end of the thread's wake pipe (non-blocking) */
	const atomic_bool *stop;      /* set with a byte on the pipe: abandon every wait */
	bool kicked;                  /* a byte came on the pipe without stop: someone wants the thread */
	char error[512];              /* the last failure, for logs and status */
};

/* Connects within timeout_s; -1 with p->error on failure or stop. */
int cpg_connect(struct cluster_pg *p, const char *conninfo, double timeout_s);
void cpg_close(struct cluster_pg *p);

/*
 * Runs sql (several statements when nparams is 0, else one with $1...) and
 * returns its last result, or NULL with p->error set.  A failure of the
 * statement leaves the connection usable; a broken or timed-out connection
 * is closed (p->conn NULL).
 */
PGresult *cpg_query(struct cluster_pg *p, const char *sql, int nparams, const char *const *values,
		    double timeout_s);

/*
 * A local outbox of rows waiting for the shared store (the trials', the
 * ranks'): peek gives up to max rows and the last entry they cover, done
 * deletes the entries up to it; each row is sent with this node's store_id
 * and its name under node_key.
 */
struct cpg_outbox {
	struct store *st;
	int max;
	int (*peek)(struct store *st, int max, json_t **rows, int64_t *last);
	int (*done)(struct store *st, int64_t last);
	const char *store_id, *node_key, *node;
	double timeout_s;             /* the call's */
};

/*
 * Sends one batch of ob in one call of sql ($1 the rows as a JSON array),
 * then trims the outbox up to what the batch covered, once committed there
 * (a crash in between sends them again; the statements store them once).
 * How many rows it sent (0: none waiting), with *answer the answer's first
 * column as an integer (0 when nothing was sent); -1 when the store or the
 * database failed (p->error says which for the database).
 */
int cpg_push_outbox(struct cluster_pg *p, const char *sql, const struct cpg_outbox *ob, long long *answer);

/*
 * Waits up to timeout_s for a notification or a wake; returns how many
 * notifications on channel carried payload (0 on timeout or a kick: a
 * byte on the pipe without stop, p->kicked set), -1 on stop or a broken
 * connection (closed).
 */
int cpg_wait(struct cluster_pg *p, const char *channel, const char *payload, double timeout_s);

/*
 * Sleeps timeout_s, or less when the daemon stops; a kick is noted in
 * p->kicked but does not cut the sleep (a back-off) short.  No connection
 * needed.
 */
void cpg_sleep(struct cluster_pg *p, double timeout_s);

/*
 * Brings the shared schema to this daemon's version (sql/cluster/), under
 * an advisory lock so nodes starting together migrate once; *version the
 * schema's version after.  A newer schema (a newer dlprofd elsewhere) is
 * used as it is: its migrations only add.
 */
int cpg_migrate(struct cluster_pg *p, int *version);

#endif
