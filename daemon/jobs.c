/*
 * Implementation of jobs.h: the one place that decides a job's lifecycle.
 * A process's owner is read from PROC/PID/status (its Uid: line: real,
 * effective, saved, file-system uids), which every user may read and which
 * the unit's CAP_SYS_PTRACE keeps readable under ProtectProc=invisible.
 * The checks run before the store is written; the store's adoption keeps an
 * owner it already has, so two registrations racing cannot move a job to
 * another uid either.
 */
#include "jobs.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "diag_rules.h"
#include "log.h"
#include "reported.h"
#include "procfs.h"
#include "store_events.h"
#include "store_series.h"
#include "tuner.h"
#include "validate.h"

struct jobs {
	struct store *store;
	struct tuner *tuner;         /* NULL: no tuning */
	char hw_class[128];          /* as node_info.hw_class */
	char proc_root[256];
	jobs_remote_ranks_fn *remote_ranks;  /* the job's ranks on other nodes; NULL: none known */
	void *remote_ctx;
};

struct jobs *jobs_new(struct store *store, struct tuner *tuner, const char *hw_class, const char *proc_root)
{
	struct jobs *j = calloc(1, sizeof(*j));

	if (!j) {
		log_warn("%s: calloc", __func__);
		return NULL;
	}
	j->store = store;
	j->tuner = tuner;
	snprintf(j->hw_class, sizeof(j->hw_class), "%s", hw_class ? hw_class : "unknown");
	snprintf(j->proc_root, sizeof(j->proc_root), "%s", proc_root ? proc_root : "/proc");
	return j;
}

void jobs_free(struct jobs *j)
{
	free(j);
}

/* Root and bearers of the token act for the node's admin. */
static bool privileged(const struct jobs_caller *who)
{
	return (who->has_uid && who->uid == 0) || who->token;
}

/*
 * The uids of process pid (real, effective, saved): 0, or -1 when no such
 * process is there (a zombie has run its course: none either).
 */
static int process_uids(const struct jobs *j, int64_t pid, uid_t uids[3])
{
	char buf[4096], *line;
	unsigned long r, e, s;

	if (procfs_readf(buf, sizeof(buf), "%s/%lld/status", j->proc_root, (long long)pid) < 0)
		return -1;
	line = strstr(buf, "\nState:");
	if (line && (strncmp(line + 7, "\tZ", 2) == 0 || strncmp(line + 7, "\tX", 2) == 0))
		return -1;
	line = strstr(buf, "\nUid:");
	if (!line || sscanf(line + 5, "%lu %lu %lu", &r, &e, &s) != 3)
		return -1;
	uids[0] = (uid_t)r;
	uids[1] = (uid_t)e;
	uids[2] = (uid_t)s;
	return 0;
}

/*
 * Whether who may claim process pid for a job; *owner gets the process's
 * real uid.  STORE_OK, JOBS_ENOPROC or JOBS_EFORBIDDEN with why filled.
 */
static int may_claim(const struct jobs *j, const struct jobs_caller *who, int64_t pid, uid_t *owner, char *why,
		     size_t why_len)
{
	uid_t uids[3];

	if (process_uids(j, pid, uids) < 0) {
		snprintf(why, why_len, "pid %lld: no such process", (long long)pid);
		return JOBS_ENOPROC;
	}
	*owner = uids[0];
	if (privileged(who))
		return STORE_OK;
	if (!who->has_uid) {
		snprintf(why, why_len,
			 "pid %lld: the daemon cannot tell your uid on this connection; register "
			 "through the Unix socket", (long long)pid);
		return JOBS_EFORBIDDEN;
	}
	if (uids[0] != who->uid || uids[1] != who->uid || uids[2] != who->uid) {
		snprintf(why, why_len, "pid %lld belongs to another user; uid %u may claim only its own processes",
			 (long long)pid, (unsigned)who->uid);
		return JOBS_EFORBIDDEN;
	}
	return STORE_OK;
}

/* Whether who may change a job owned as b says; why filled when not. */
static bool may_change(const struct jobs_caller *who, const struct job_brief *b, char *why, size_t why_len)
{
	if (!b->has_uid || privileged(who) || (who->has_uid && who->uid == b->uid))
		return true;
	snprintf(why, why_len, "job %lld belongs to uid %u", (long long)b->id, (unsigned)b->uid);
	return false;
}

/*
 * The running job of the same external id, if any, when who may take it
 * over: STORE_OK with *id (0: none to adopt), or JOBS_EFORBIDDEN.
 */
static int adoptable(struct jobs *j, const struct jobs_caller *who, const char *external_id, int64_t *id,
		     char *why, size_t why_len)
{
	struct job_brief b;

	*id = 0;
	if (!external_id || store_job_find_external(j->store, external_id, id) != STORE_OK) {
		*id = 0;
		return STORE_OK;
	}
	if (store_job_brief(j->store, *id, &b) != STORE_OK || !b.running) {
		*id = 0;
		return STORE_OK;
	}
	if (!may_change(who, &b, why, why_len)) {
		snprintf(why, why_len, "%s is job %lld of uid %u; another user may not adopt it", external_id,
			 (long long)b.id, (unsigned)b.uid);
		return JOBS_EFORBIDDEN;
	}
	return STORE_OK;
}

/*
 * A job the sampler already found (its Slurm id) is adopted rather than
 * registered twice: a prologue or the client often registers a job that
 * discovery saw first.
 */
static int register_or_adopt(struct jobs *j, const struct jobs_caller *who, const struct job_spec *spec,
			     int64_t *id, bool *adopted, char *why, size_t why_len)
{
	int64_t found;
	int r;

	if ((r = adoptable(j, who, spec->external_id, &found, why, why_len)) != STORE_OK)
		return r;
	if (found > 0) {
		r = store_job_adopt(j->store, found, spec);
		if (r != STORE_ENOTFOUND) {
			*id = found;
			*adopted = r == STORE_OK;
			return r;
		}
	}
	return store_job_register(j->store, spec, id);
}

/*
 * A rank of a distributed job joins the job of its shared id, registered
 * by whichever rank comes first: the lookup and the insert are one store
 * transaction (store_job_join), so ranks that start together make one job.
 */
static int join(struct jobs *j, const struct jobs_caller *who, const struct job_spec *spec, int64_t *id,
		bool *adopted, char *why, size_t why_len)
{
	int64_t found;
	int r;

	if ((r = adoptable(j, who, spec->external_id, &found, why, why_len)) != STORE_OK)
		return r;
	return store_job_join(j->store, spec, id, adopted);
}

/* Why the tuner gave job id the config it answered last, for its timeline; NULL without a tuner. */
static const char *why_given(struct jobs *j, int64_t id)
{
	return j->tuner ? tuner_job_why(j->tuner, id) : NULL;
}

/* The config a new job starts with: the tuner's choice, or none yet. */
static json_t *initial_config(struct jobs *j, int64_t id, const struct job_spec *spec, const json_t *knobs)
{
	json_t *config = NULL;

	if (j->tuner)
		config = tuner_job_start(j->tuner, id, spec->workload, spec->params_json, spec->objective, knobs);
	return config ? config : json_object();
}

/* The config a job runs now, as stored: what a duplicate batch is answered with. */
static json_t *stored_config(struct jobs *j, int64_t id)
{
	json_t *job = NULL, *config;

	if (store_job_get(j->store, id, &job) != STORE_OK)
		return json_object();
	config = json_object_get(job, "config");
	config = json_is_object(config) ? json_incref(config) : json_object();
	json_decref(job);
	return config;
}

int jobs_register(struct jobs *j, const struct jobs_caller *who, struct job_spec *spec, const json_t *knobs,
		  int64_t *id, bool *adopted, json_t **config, char *why, size_t why_len)
{
	char *text;
	uid_t owner;
	int r;

	*adopted = false;
	*config = NULL;
	spec->hw_class = j->hw_class;
	spec->has_uid = who->has_uid;
	spec->uid = who->uid;
	if (spec->pid > 0) {
		if ((r = may_claim(j, who, spec->pid, &owner, why, why_len)) != STORE_OK)
			return r;
		/* Root's prologue registering a user's process registers the user's job. */
		spec->has_uid = true;
		spec->uid = owner;
	}
	spec->source = spec->external_id && strncmp(spec->external_id, "slurm:", 6) == 0 ? "slurm" : "registered";
	if (spec->rank != NULL)
		r = join(j, who, spec, id, adopted, why, why_len);
	else
		r = register_or_adopt(j, who, spec, id, adopted, why, why_len);
	if (r != STORE_OK)
		return r;
	if (spec->rank != NULL && *adopted) {
		/* The job's config is chosen once, when it starts: every rank runs the same. */
		*config = stored_config(j, *id);
		return STORE_OK;
	}
	*config = initial_config(j, *id, spec, knobs);
	text = json_dumps(*config, JSON_COMPACT | JSON_SORT_KEYS);
	r = text ? store_job_set_config(j->store, *id, text, spec->started, why_given(j, *id)) : STORE_OK;
	free(text);
	if (r != STORE_OK) {
		json_decref(*config);
		*config = NULL;
	}
	return r;
}

int jobs_register_found(struct jobs *j, struct job_spec *spec, int64_t first_pid, int64_t *id)
{
	uid_t uids[3];

	spec->hw_class = j->hw_class;
	spec->has_uid = process_uids(j, first_pid, uids) == 0;
	spec->uid = spec->has_uid ? uids[0] : 0;
	spec->source = "slurm";
	return store_job_register(j->store, spec, id);
}

/* A rank's end for the job's timeline; the rank's row keeps its state, not when it left. */
static void rank_left(struct jobs *j, int64_t id, int rank, double when, bool has_exit, int exit_status)
{
	json_t *detail = json_pack("{s:i,s:o}", "rank", rank, "exit_status",
				   has_exit ? json_integer(exit_status) : json_null());

	/* The rank has ended either way: a failure here (logged by the store) loses one line of the story. */
	if (detail)
		(void)store_job_event(j->store, id, when, "rank_left", detail);
	json_decref(detail);
}

int jobs_end(struct jobs *j, const struct jobs_caller *who, int64_t id, int rank, double when, bool has_exit,
	     int exit_status, char *why, size_t why_len)
{
	struct job_brief b;
	bool ended = true;
	int r;

	if ((r = store_job_brief(j->store, id, &b)) != STORE_OK)
		return r;
	if (!may_change(who, &b, why, why_len))
		return JOBS_EFORBIDDEN;
	if (rank >= 0)
		r = store_rank_end(j->store, id, rank, when, has_exit, exit_status, &ended);
	else
		r = store_job_end(j->store, id, when, has_exit, exit_status);
	if (r != STORE_OK)
		return r;
	if (rank >= 0)
		rank_left(j, id, rank, when, has_exit, exit_status);
	if (ended && j->tuner)
		tuner_job_end(j->tuner, id);
	return STORE_OK;
}

int jobs_end_gone(struct jobs *j, int64_t id, double when)
{
	int r = store_job_end(j->store, id, when, false, 0);

	if (r != STORE_OK)
		return r;
	if (j->tuner)
		tuner_job_end(j->tuner, id);
	log_info("%s: job %lld ended: no process left", __func__, (long long)id);
	return STORE_OK;
}

int jobs_may_ingest(struct jobs *j, const struct jobs_caller *who, int64_t id, char *why, size_t why_len)
{
	struct job_brief b;
	int r;

	if ((r = store_job_brief(j->store, id, &b)) != STORE_OK)
		return r;
	if (!may_change(who, &b, why, why_len))
		return JOBS_EFORBIDDEN;
	if (!b.running) {
		snprintf(why, why_len, "job %lld has ended; register a new job", (long long)id);
		return JOBS_EENDED;
	}
	return STORE_OK;
}

/* The config the tuner answered (or the one reported) becomes the job's when it differs. */
static void keep_config(struct jobs *j, const struct jobs_batch *b, json_t **config)
{
	char *text;

	if (!*config)
		*config = b->config ? json_deep_copy(b->config) : json_object();
	if (!b->config || !json_equal(*config, b->config)) {
		text = json_dumps(*config, JSON_COMPACT | JSON_SORT_KEYS);
		/* The samples are committed; a failure here only delays the job view. */
		if (text)
			store_job_set_config(j->store, b->id, text, clock_now_s(), why_given(j, b->id));
		free(text);
	}
}

/* The CPU and CPU-wait seconds of all threads of process pid so far; -1 when it is gone. */
static int process_cpu(const struct jobs *j, int64_t pid, double *cpu_s, double *wait_s)
{
	char dir[300], buf[256];
	struct procfs_schedstat ss;
	pid_t *tids = NULL;
	ssize_t n, i;

	snprintf(dir, sizeof(dir), "%s/%lld/task", j->proc_root, (long long)pid);
	if ((n = procfs_list_ids(dir, &tids)) <= 0) {
		free(tids);
		return -1;
	}
	*cpu_s = *wait_s = 0;
	for (i = 0; i < n; i++)
		if (procfs_readf(buf, sizeof(buf), "%s/%d/schedstat", dir, (int)tids[i]) >= 0 &&
		    procfs_parse_schedstat(buf, &ss) == 0) {
			*cpu_s += (double)ss.cpu_ns / 1e9;
			*wait_s += (double)ss.wait_ns / 1e9;
		}
	free(tids);
	return 0;
}

/*
 * What a rank's batch adds to its row: its steps (step_time_s), the time
 * waiting in collectives (comm_wait_s, which the client times per step),
 * in data phases, and its newest throughput; and what the daemon reads of
 * its process now.
 */
static void rank_summary(const struct jobs *j, const struct jobs_batch *b, int64_t pid, struct rank_report *r)
{
	double newest = -1;
	size_t i;

	*r = (struct rank_report){.job_id = b->id, .rank = b->rank, .samples_per_s = NAN};
	for (i = 0; i < b->n; i++) {
		const struct sample *s = &b->samples[i];
		r->t = s->t > r->t ? s->t : r->t;
		switch (reported_of(s->name)) {
		case REPORTED_STEP_TIME_S:
			r->steps++;
			r->step_s += s->value;
			break;
		case REPORTED_COMM_WAIT_S:
			r->comm_s += s->value;
			break;
		case REPORTED_PHASE_TIME_S:
			if (diag_phase_class(s->phase) == DIAG_PHASE_DATA)
				r->data_s += s->value;
			break;
		case REPORTED_SAMPLES_PER_S:
			if (s->t >= newest) {
				newest = s->t;
				r->samples_per_s = s->value;
			}
			break;
		default:
			break;
		}
	}
	if (pid > 0 && process_cpu(j, pid, &r->cpu_s, &r->wait_s) == 0) {
		r->has_cpu = true;
		r->t_mono = clock_mono_s();
	}
}

void jobs_set_remote_ranks(struct jobs *j, jobs_remote_ranks_fn *fn, void *ctx)
{
	j->remote_ranks = fn;
	j->remote_ctx = ctx;
}

/*
 * The latest throughput of the job's other running ranks, here and on the
 * other nodes that shared theirs (each rank once), summed, and rank's pid.
 */
static void other_ranks(struct jobs *j, int64_t id, int rank, double *others, int64_t *pid)
{
	struct rank_row *v = NULL;
	size_t n = 0, i;

	*others = 0;
	*pid = 0;
	if (store_job_ranks(j->store, id, &v, &n) != STORE_OK)
		return;
	/* Without memory for them the other nodes' ranks are left out of this batch's sum. */
	if (j->remote_ranks && rank == 0)
		(void)j->remote_ranks(j->remote_ctx, id, &v, &n);
	for (i = 0; i < n; i++) {
		if (v[i].rank == rank)
			*pid = v[i].pid;
		else if (v[i].running && isfinite(v[i].samples_per_s))
			*others += v[i].samples_per_s;
	}
	free(v);
}

/*
 * A rank's samples as the job stores them.  Rank 0 speaks for the job: its
 * samples_per_s becomes the job's global throughput (its own plus the
 * latest of every other running rank, so each sample is counted once);
 * other ranks' samples are kept as their own series, "rank<N>.<name>"
 * (a name that would pass 64 bytes so is dropped).  names holds the new
 * names; *out the copy (free it).
 */
static int rank_samples(const struct jobs_batch *b, double others, struct sample **out, size_t *n, char **names)
{
	struct sample *v = b->n ? calloc(b->n, sizeof(*v)) : NULL;
	char *p = b->n ? calloc(b->n, VALIDATE_NAME_MAX + 1) : NULL;
	size_t i, k = 0;

	*out = v;
	*names = p;
	*n = 0;
	if (b->n && (!v || !p)) {
		log_warn("%s: calloc", __func__);
		return STORE_EIO;
	}
	for (i = 0; i < b->n; i++) {
		v[k] = b->samples[i];
		if (b->rank == 0) {
			if (reported_of(v[k].name) == REPORTED_SAMPLES_PER_S)
				v[k].value += others;
		} else {
			char *name = p + i * (VALIDATE_NAME_MAX + 1);
			int len = snprintf(name, VALIDATE_NAME_MAX + 1, "rank%d.%s", b->rank, v[k].name);
			if (len < 0 || len > VALIDATE_NAME_MAX)
				continue;
			v[k].name = name;
		}
		k++;
	}
	*n = k;
	return STORE_OK;
}

/*
 * A rank's batch (see jobs_ingest): stored as rank_samples says, added to
 * the rank's row, and shown to the tuner only from rank 0, whose figures
 * are the job's.  The rank row is written after the samples commit: a
 * failure between loses one batch's share of the rank's means, no sample.
 */
static int ingest_rank(struct jobs *j, const struct jobs_batch *b, bool *duplicate, json_t **config)
{
	struct jobs_batch own = *b;
	struct rank_report rep;
	struct sample *v;
	char *names;
	double others;
	int64_t pid;
	int r;

	other_ranks(j, b->id, b->rank, &others, &pid);
	if ((r = rank_samples(b, others, &v, &own.n, &names)) == STORE_OK) {
		own.samples = v;
		r = store_samples_write_once(j->store, b->id, b->stream, b->seq, v, own.n, duplicate);
	}
	if (r == STORE_OK && !*duplicate) {
		rank_summary(j, b, pid, &rep);
		store_rank_report(j->store, &rep);
		if (b->rank == 0) {
			if (j->tuner)
				*config = tuner_job_observe(j->tuner, b->id, v, own.n, b->config);
			keep_config(j, b, config);
		}
	}
	free(v);
	free(names);
	if (r == STORE_OK && !*config)
		*config = stored_config(j, b->id);
	return r;
}

int jobs_ingest(struct jobs *j, const struct jobs_batch *b, bool *duplicate, json_t **config)
{
	int r;

	*config = NULL;
	if (b->has_rank)
		return ingest_rank(j, b, duplicate, config);
	r = store_samples_write_once(j->store, b->id, b->stream, b->seq, b->samples, b->n, duplicate);
	if (r != STORE_OK)
		return r;
	if (*duplicate) {
		*config = stored_config(j, b->id);
		return STORE_OK;
	}
	if (j->tuner)
		*config = tuner_job_observe(j->tuner, b->id, b->samples, b->n, b->config);
	keep_config(j, b, config);
	return STORE_OK;
}

long jobs_report_within(struct jobs *j, int64_t id)
{
	return j->tuner ? tuner_job_report_within(j->tuner, id) : 0;
}

unsigned long jobs_generation(struct jobs *j)
{
	return store_jobs_generation(j->store);
}

int jobs_running(struct jobs *j, struct store_running_job **out, size_t *n)
{
	return store_jobs_running(j->store, out, n);
}

int jobs_running_ranks(struct jobs *j, struct store_rank_pid **out, size_t *n)
{
	return store_ranks_running(j->store, out, n);
}
