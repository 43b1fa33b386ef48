/*
 * The SQLite store.  One writer thread owns the write connection and commits
 * queued operations in batched transactions; callers of the write functions
 * block until their operation is committed, so a 2xx answer built on a
 * successful return is durable.  Readers borrow connections from a small
 * pool.  Only store*.c call sqlite3_*.
 *
 * Functions return STORE_OK (0) or a negative enum store_err; the store logs
 * the underlying SQLite error once, callers map the code to a status.
 */
#ifndef DLPROF_STORE_H
#define DLPROF_STORE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"

enum store_err {
	STORE_OK = 0,
	STORE_ENOTFOUND = -1,    /* no such row */
	STORE_EBUSY = -2,        /* the write queue is full: try again later */
	STORE_EIO = -3,          /* the database cannot be written (disk full, read-only, I/O) */
	STORE_ECLOSED = -4,      /* the store is shutting down */
	STORE_EINVAL = -5,       /* rejected by a constraint */
	STORE_EFULL = -6,        /* the disk is full (a kind of STORE_EIO, named for the answer) */
	STORE_EREADONLY = -7,    /* the database or its file system is read-only */
	STORE_EMOVED = -8,       /* the database file was removed or replaced under the daemon */
};

const char *store_strerror(int err);

struct store;

/*
 * How long each tier of the series keeps them and the size the store keeps
 * to (store_tiers.c); 0 for a time: kept, for the budget: none.
 */
struct store_limits {
	double raw_s;            /* dense series' points as sent (a job's steps): raw_hours */
	double second_s;         /* per-second data (the sampler's points, steps' summaries): retention_days */
	double minute_s;         /* per-minute summaries */
	int64_t budget;          /* bytes on disk: the database, its WAL and shared memory */
};

struct store_options {
	size_t queue_limit;      /* queued write operations before STORE_EBUSY */
	int readers;             /* read connections in the pool */
	bool synchronous_full;   /* fsync every commit (survives power loss) */
	struct store_limits limits;
};

/*
 * Opens or creates the database at path, applies migrations and starts the
 * writer.  Refuses a database of a newer schema or a file that is not a
 * dlprofd database.  Logs why and returns NULL on failure.
 */
/*
 * A number that changes whenever the running jobs change (registration,
 * adoption, end), so the sampler re-reads them only then.  Read it before
 * store_jobs_running: a change in between shows at the next comparison.
 */
unsigned long store_jobs_generation(struct store *st);
/*
 * A number that changes with every committed batch of writes (after the
 * commit, before its callers are told): what was read while it stayed the
 * same is what the store holds.
 */
unsigned long store_generation(struct store *st);
struct store *store_open(const char *path, const struct store_options *opt);
/* Drains the queue, stops the writer, closes every connection. */
void store_close(struct store *st);
/* The schema version this binary writes (the highest migration). */
int store_schema_version(void);
/* Whether the store can currently write; why receives a reason if not. */
bool store_writable(struct store *st, char *why, size_t why_len);
/* Write operations queued and not yet committed. */
size_t store_queue_depth(struct store *st);
/* New limits (SIGHUP): the next upkeep keeps to them. */
void store_set_limits(struct store *st, const struct store_limits *l);

/* ---- node ---- */
int store_node_save(struct store *st, const char *hostname, const char *hw_class, const char *topology_json);

/* ---- jobs ---- */

/* One rank of a distributed job, as it joins (store_ranks.c). */
struct job_rank_spec {
	int rank;                  /* 0 .. world_size-1 */
	int local_rank;            /* on its node; -1: not said */
	int world_size;            /* ranks in the whole job */
	int nodes;                 /* nodes the job spans; 0: not said */
	const char *node;          /* the rank's node (hostname) */
};

struct job_spec {
	const char *workload;      /* name */
	const char *params_json;   /* canonical JSON object (sorted keys) */
	const char *hw_class;
	int64_t pid;               /* 0: none */
	const char *external_id;   /* e.g. "slurm:123", or NULL */
	bool has_uid;
	uid_t uid;
	enum objective objective;
	const char *knobs_json;    /* declared knobs, or NULL */
	const char *config_json;   /* the config it starts with, or NULL */
	const char *source;        /* registered|slurm|discovered */
	const char *command;       /* command line, or NULL */
	double started;            /* unix seconds */
	const struct job_rank_spec *rank;  /* a rank of a distributed job (external_id set), or NULL */
};

int store_job_register(struct store *st, const struct job_spec *spec, int64_t *id_out);
/*
 * A registration for a running job found by discovery (same external id):
 * the job takes the registration's workload, pid, objective and knobs, and
 * keeps its owner (the registration's uid only when it had none).
 * STORE_ENOTFOUND when it is no longer running.
 */
int store_job_adopt(struct store *st, int64_t id, const struct job_spec *spec);
/*
 * Marks a job ended; STORE_ENOTFOUND if unknown.  Ending an ended job keeps
 * its end time and records an exit status it did not have yet.
 */
int store_job_end(struct store *st, int64_t id, double ended, bool has_exit, int exit_status);
/*
 * A rank joins its distributed job: in one transaction, the running job of
 * spec->external_id is found, or registered when there is none, and the
 * rank's row (spec->rank) is written, so ranks that start together make one
 * job.  Rank 0 joining a job that discovery found (one no registration
 * configured) names its workload and objective; any job it joins gets the
 * pid, knobs and command it lacks.  *adopted: the job was there before.
 */
int store_job_join(struct store *st, const struct job_spec *spec, int64_t *id_out, bool *adopted);
/*
 * Ends one rank (exit status recorded); when it was the last running rank
 * of the job on this node, ends the job too, with the first failing rank's
 * status (0 when none failed): *job_ended says so.
 */
int store_rank_end(struct store *st, int64_t id, int rank, double ended, bool has_exit, int exit_status,
		   bool *job_ended);

/* What one batch of a rank adds to its row. */
struct rank_report {
	int64_t job_id;
	int rank;
	double t;                  /* the batch's newest sample */
	int steps;
	double step_s, comm_s, data_s;  /* sums over the batch's steps */
	double samples_per_s;      /* the rank's newest throughput; NAN: none */
	bool has_cpu;              /* the daemon read the rank's process (below) */
	double cpu_s, wait_s, t_mono;   /* its CPU and CPU-wait seconds, at monotonic time t_mono */
};
int store_rank_report(struct store *st, const struct rank_report *r);

/* One rank's row, read back: sums as stored; NAN where not measured. */
struct rank_row {
	int rank, local_rank;      /* local_rank -1: not said */
	char node[128];
	int64_t pid;
	bool running;
	double joined;
	int64_t steps;
	double step_s, comm_s, data_s, samples_per_s;
	double cpu_cores, wait_cores;   /* means since its first report; NAN: fewer than two reads */
};
/* A running rank's process, for discovery: the job's processes are its ranks' too. */
struct store_rank_pid {
	int64_t job_id;
	int64_t pid;
	double joined;             /* unix seconds: a process started later is another one */
};
/* The running ranks of running jobs that named a pid, into a malloc'd *out (*n may be 0). */
int store_ranks_running(struct store *st, struct store_rank_pid **out, size_t *n);

/* The ranks of job id in rank order into a malloc'd *out (*n may be 0). */
int store_job_ranks(struct store *st, int64_t id, struct rank_row **out, size_t *n);
/*
 * One rank of a job's view (a new object): its means per step and its
 * share of the step spent waiting in collectives.
 */
json_t *store_rank_row_json(const struct rank_row *k);

/*
 * The job's config from now on (canonical JSON object text).  When it is
 * another than the one the job had, the change is also kept as the job's
 * timeline event at t with why it was given (the tuner's reason, or NULL),
 * in the same transaction (store_events.h).  STORE_ENOTFOUND: no such job.
 */
int store_job_set_config(struct store *st, int64_t id, const char *config_json, double t, const char *why);
/* The jobs which passes, newest first (at most 1000).  *out: a JSON array. */
int store_jobs_list(struct store *st, enum job_filter which, json_t **out);
/* One job as a JSON object, with its trials and phases. */
int store_job_get(struct store *st, int64_t id, json_t **out);

/* The newest value of each series of a job (0: the node) as a JSON object. */
int store_latest(struct store *st, int64_t job_id, json_t **out);

/* What a write needs to know about a job, read cheaply. */
struct job_brief {
	int64_t id;
	bool running;
	bool has_uid;
	uid_t uid;
	int64_t workload_id;
	char workload[128];
};
int store_job_brief(struct store *st, int64_t id, struct job_brief *out);

/* ---- samples ---- */
struct sample {
	int64_t job_id;      /* 0: the node itself */
	double t;            /* unix seconds, the sample's own time */
	const char *name;    /* [a-z0-9_.]{1,64} */
	double value;
	const char *phase;   /* NULL: none */
};

/* Stores a batch in one transaction; returns when it is committed. */
int store_samples_write(struct store *st, const struct sample *s, size_t n);
/*
 * The same for a batch that job_id's sender numbered seq (> 0) in its stream:
 * stored only when seq is above the highest stored for (job_id, stream), in
 * the same transaction; otherwise nothing is stored and *duplicate is set.
 * seq 0: no number, stored as store_samples_write does.
 */
int store_samples_write_once(struct store *st, int64_t job_id, const char *stream, int64_t seq,
			     const struct sample *s, size_t n, bool *duplicate);
/*
 * Queues a copy of the batch and returns at once (the sampler's path).  Its
 * points without a phase are kept in the writer's memory until their span
 * is encoded (store_pending.c), not staged: a crash loses at most the open
 * span; store_close stages them.  `latest` is written as for any batch.
 */
int store_samples_post(struct store *st, const struct sample *s, size_t n);

#endif
