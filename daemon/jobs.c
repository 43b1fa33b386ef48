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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "procfs.h"
#include "store_series.h"
#include "tuner.h"

struct jobs {
	struct store *store;
	struct tuner *tuner;         /* NULL: no tuning */
	char hw_class[64];
	char proc_root[256];
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

/* The config a new job starts with: the tuner's choice, or none yet. */
static json_t *initial_config(struct jobs *j, int64_t id, const struct job_spec *spec, const json_t *knobs)
{
	json_t *config = NULL;

	if (j->tuner)
		config = tuner_job_start(j->tuner, id, spec->workload, spec->params_json,
					 spec->objective ? spec->objective : "throughput", knobs);
	return config ? config : json_object();
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
	if ((r = register_or_adopt(j, who, spec, id, adopted, why, why_len)) != STORE_OK)
		return r;
	*config = initial_config(j, *id, spec, knobs);
	text = json_dumps(*config, JSON_COMPACT | JSON_SORT_KEYS);
	r = text ? store_job_set_config(j->store, *id, text) : STORE_OK;
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

int jobs_end(struct jobs *j, const struct jobs_caller *who, int64_t id, double when, bool has_exit,
	     int exit_status, char *why, size_t why_len)
{
	struct job_brief b;
	int r;

	if ((r = store_job_brief(j->store, id, &b)) != STORE_OK)
		return r;
	if (!may_change(who, &b, why, why_len))
		return JOBS_EFORBIDDEN;
	if ((r = store_job_end(j->store, id, when, has_exit, exit_status)) != STORE_OK)
		return r;
	if (j->tuner)
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

int jobs_ingest(struct jobs *j, const struct jobs_batch *b, bool *duplicate, json_t **config)
{
	char *text;
	int r;

	*config = NULL;
	r = store_samples_write_once(j->store, b->id, b->stream, b->seq, b->samples, b->n, duplicate);
	if (r != STORE_OK)
		return r;
	if (*duplicate) {
		*config = stored_config(j, b->id);
		return STORE_OK;
	}
	if (j->tuner)
		*config = tuner_job_observe(j->tuner, b->id, b->samples, b->n, b->config);
	if (!*config)
		*config = b->config ? json_deep_copy(b->config) : json_object();
	if (!b->config || !json_equal(*config, b->config)) {
		text = json_dumps(*config, JSON_COMPACT | JSON_SORT_KEYS);
		/* The samples are committed; a failure here only delays the job view. */
		if (text)
			store_job_set_config(j->store, b->id, text);
		free(text);
	}
	return STORE_OK;
}

unsigned long jobs_generation(struct jobs *j)
{
	return store_jobs_generation(j->store);
}

int jobs_running(struct jobs *j, struct store_running_job **out, size_t *n)
{
	return store_jobs_running(j->store, out, n);
}
