/*
 * A job's lifecycle: registration, adoption, its metrics, its end.  This
 * module decides; the API handlers (api_jobs.c, api_ingest.c) and discovery
 * (discovery.c) only carry requests and processes to it, so who may claim a
 * process, who may change a job, and what the store and the tuner are told
 * are written once.
 *
 * The rules:
 * - a job belongs to a uid: the owner of its process when it names one (pid),
 *   else the caller who registered it; a job with no known owner (registered
 *   with the bearer token from afar) may be changed by any caller;
 * - a caller of known uid may claim (register, adopt with) only a process
 *   whose real, effective and saved uids are its own, as ptrace(2) would
 *   require; root and bearers of the token may claim any process; a caller
 *   whose uid is unknown and who holds no token may claim none;
 * - a pid that names no process is refused;
 * - adopting a job by external id keeps its owner and is refused to another
 *   uid (root and token bearers excepted);
 * - metrics carrying a batch sequence are stored at most once (see
 *   jobs_ingest).
 *
 * Thread-safe: it holds no state of its own beyond what jobs_new was given;
 * the store and the tuner guard theirs.
 */
#ifndef DLPROF_JOBS_H
#define DLPROF_JOBS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "store.h"

struct tuner;
struct jobs;
struct store_running_job;

/*
 * What jobs_* return besides STORE_OK and the (negative) enum store_err
 * values they pass on; these are further below, so both fit in one int.
 */
enum jobs_err {
	JOBS_EFORBIDDEN = -100,  /* the caller may not do this (why says) */
	JOBS_ENOPROC = -101,     /* the pid names no process */
	JOBS_EENDED = -102,      /* the job has ended */
};

/* Who asks.  The daemon itself (discovery) is root. */
struct jobs_caller {
	bool has_uid;            /* uid below is the caller's (Unix socket, loopback TCP) */
	uid_t uid;
	bool token;              /* presented the configured bearer token */
};

/*
 * store outlives the module; tuner may be NULL (no tuning); hw_class is
 * copied; proc_root is where the pids of registrations are looked up
 * (the sampler's root, so the API and discovery see the same processes).
 * NULL after logging why.
 */
struct jobs *jobs_new(struct store *store, struct tuner *tuner, const char *hw_class, const char *proc_root);
void jobs_free(struct jobs *j);

/*
 * The ranks of local job id that run elsewhere, appended to the malloc'd
 * *rows (*n grows), each rank once (cluster_ranks_append); 0, or -1.
 */
typedef int jobs_remote_ranks_fn(void *ctx, int64_t id, struct rank_row **rows, size_t *n);
/*
 * Rank 0's throughput, the job's global one, adds the latest of the ranks
 * fn gives (set before the daemon serves; NULL fn: the node's own ranks).
 */
void jobs_set_remote_ranks(struct jobs *j, jobs_remote_ranks_fn *fn, void *ctx);

/*
 * Registers a job, or adopts the running one of the same external id.
 * spec's hw_class, uid and source are filled here; knobs is the declared
 * knobs object (or NULL).  On STORE_OK: *id, *adopted and *config (a new
 * reference: the config the job starts with).  Otherwise a JOBS_E* or
 * store error, with why filled for JOBS_E*.
 */
int jobs_register(struct jobs *j, const struct jobs_caller *who, struct job_spec *spec, const json_t *knobs,
		  int64_t *id, bool *adopted, json_t **config, char *why, size_t why_len);

/*
 * A Slurm job that discovery found on the node: registered as the daemon's
 * own act, owned by the uid of its first process, first_pid (no owner when
 * that process is gone already).
 */
int jobs_register_found(struct jobs *j, struct job_spec *spec, int64_t first_pid, int64_t *id);

/*
 * Ends job id for caller who: JOBS_EFORBIDDEN, STORE_ENOTFOUND, or STORE_OK.
 * rank >= 0: ends that rank of a distributed job, and the job only when it
 * was its last rank running here (STORE_ENOTFOUND: no such rank).
 */
int jobs_end(struct jobs *j, const struct jobs_caller *who, int64_t id, int rank, double when, bool has_exit,
	     int exit_status, char *why, size_t why_len);
/* Discovery saw the last process of job id go: ends it (the tuner is told). */
int jobs_end_gone(struct jobs *j, int64_t id, double when);

/*
 * Whether caller who may report metrics for job id: STORE_OK, or
 * JOBS_EFORBIDDEN / JOBS_EENDED (why filled) / a store error.
 */
int jobs_may_ingest(struct jobs *j, const struct jobs_caller *who, int64_t id, char *why, size_t why_len);

/* A batch of one job's metrics; stream and seq as the client sent them. */
struct jobs_batch {
	int64_t id;
	const struct sample *samples;
	size_t n;
	const json_t *config;    /* what the job ran with, or NULL */
	const char *stream;      /* the sender's stream name; "" when it gave none */
	int64_t seq;             /* > 0: the stream's batch number; 0: none (stored every time) */
	bool has_rank;           /* sent by a rank of a distributed job: */
	int rank;                /* ... this one */
};

/*
 * Stores a batch (one transaction) and shows it to the tuner.  A rank's
 * batch (has_rank) also adds to the rank's figures; rank 0's throughput
 * becomes the job's global one, other ranks' samples their own series
 * ("rank<N>.<name>"), and only rank 0's are shown to the tuner.  A batch whose
 * seq is not above the highest stored for (job, stream) was stored before:
 * nothing is stored or counted and *duplicate is set.  *config: a new
 * reference to the config the job should run from now on.
 */
int jobs_ingest(struct jobs *j, const struct jobs_batch *b, bool *duplicate, json_t **config);

/* Within how many steps job id should report again (tuner_job_report_within); 0 without a tuner. */
long jobs_report_within(struct jobs *j, int64_t id);

/* The store's running jobs and their generation, for discovery (see store_jobs_running). */
unsigned long jobs_generation(struct jobs *j);
int jobs_running(struct jobs *j, struct store_running_job **out, size_t *n);
/* Their ranks' processes (see store_ranks_running), read with the same generation. */
int jobs_running_ranks(struct jobs *j, struct store_rank_pid **out, size_t *n);

#endif
