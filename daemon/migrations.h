/*
 * The schema migrations compiled from sql/ (see build-aux/sql2c.sh).  The
 * table ends with a row whose version is 0; versions ascend from 1.
 */
#ifndef DLPROF_MIGRATIONS_H
#define DLPROF_MIGRATIONS_H

struct migration {
	int version;         /* PRAGMA user_version after it ran */
	const char *name;    /* file name without .sql */
	const char *sql;     /* the statements */
};

extern const struct migration migrations[];
/* The cluster store's PostgreSQL schema (sql/cluster/), applied by cluster.c. */
extern const struct migration cluster_migrations[];

#endif
