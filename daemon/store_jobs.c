/*
 * The store's node, workload and job rows: registration (which creates the
 * workload on first sight), ending, the current config, and the JSON views
 * that /api/v1/jobs answers with.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "store_internal.h"

static const char sql_node_save[] =
	"INSERT INTO node (id, hostname, hw_class, topology, updated) VALUES (1, ?1, ?2, ?3, "
	"(julianday('now') - 2440587.5) * 86400.0) ON CONFLICT(id) DO UPDATE SET hostname = ?1, hw_class = ?2, "
	"topology = ?3, updated = excluded.updated";
static const char sql_workload_upsert[] =
	"INSERT INTO workloads (name, params, hw_class, created) VALUES (?1, ?2, ?3, ?4) "
	"ON CONFLICT(name, params, hw_class) DO UPDATE SET name = name RETURNING id";
/* ?2..?7 are bound by job_stmt() for both statements. */
static const char sql_job_insert[] =
	"INSERT INTO jobs (workload_id, pid, uid, objective, knobs, command, external_id, config, source, "
	"started) VALUES (?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)";
/* Adoption keeps the owner the job has (jobs.c refuses it to another uid). */
static const char sql_job_adopt[] =
	"UPDATE jobs SET workload_id = ?2, pid = coalesce(?3, pid), uid = coalesce(uid, ?4), objective = ?5, knobs = ?6, "
	"command = coalesce(?7, command) WHERE id = ?1 AND state = 'running'";
/*
 * Ending twice keeps the first end time but takes an exit status the first
 * did not have: discovery often sees a job's processes gone before the
 * Slurm epilog or the client reports how it exited.
 */
static const char sql_job_end[] =
	"UPDATE jobs SET state = 'ended', ended = coalesce(ended, ?2), exit_status = coalesce(exit_status, ?3) "
	"WHERE id = ?1";
static const char sql_job_find_running_external[] =
	"SELECT id FROM jobs WHERE external_id = ?1 AND state = 'running' ORDER BY id DESC LIMIT 1";
/* A job's end is its ranks' end too. */
static const char sql_job_end_ranks[] = "UPDATE job_ranks SET state = 'ended' WHERE job_id = ?1 AND state = 'running'";
/*
 * Rank 0 joining a job that only discovery knows (no registration gave it
 * a config) names it: workload, objective, knobs.  A job a launcher or a
 * prologue registered keeps what they said; rank 0 only fills what is missing.
 */
static const char sql_job_join_found[] =
	"UPDATE jobs SET workload_id = iif(config IS NULL, ?2, workload_id), pid = coalesce(pid, ?3), "
	"uid = coalesce(uid, ?4), objective = iif(config IS NULL, ?5, objective), knobs = coalesce(knobs, ?6), "
	"command = coalesce(command, ?7) WHERE id = ?1 AND state = 'running'";
static const char sql_job_exists[] = "SELECT 1 FROM jobs WHERE id = ?1";
/* Changes the row only when the config is another: a change is also a timeline event (sql/017). */
static const char sql_job_set_config[] = "UPDATE jobs SET config = ?2 WHERE id = ?1 AND config IS NOT ?2";
static const char sql_job_config_event[] =
	"INSERT INTO job_events (job_id, t, kind, detail) "
	"VALUES (?1, ?2, 'config', json_object('config', json(?3), 'why', ?4))";

#define JOB_COLUMNS                                                                          \
	"j.id, w.name, w.params, j.external_id, j.pid, j.uid, j.state, j.objective, j.knobs, " \
	"j.config, j.source, j.command, j.started, j.ended, j.exit_status, w.hw_class, "                  \
	"coalesce(j.world_size, 1), j.nodes "
static const char sql_jobs_running[] =
	"SELECT " JOB_COLUMNS "FROM jobs j JOIN workloads w ON w.id = j.workload_id "
	"WHERE j.state = 'running' ORDER BY j.id DESC LIMIT 1000";
static const char sql_jobs_ended[] =
	"SELECT " JOB_COLUMNS "FROM jobs j JOIN workloads w ON w.id = j.workload_id "
	"WHERE j.state = 'ended' ORDER BY j.id DESC LIMIT 1000";
static const char sql_jobs_all[] =
	"SELECT " JOB_COLUMNS "FROM jobs j JOIN workloads w ON w.id = j.workload_id "
	"ORDER BY j.id DESC LIMIT 1000";
static const char sql_job_one[] =
	"SELECT " JOB_COLUMNS "FROM jobs j JOIN workloads w ON w.id = j.workload_id WHERE j.id = ?1";
static const char sql_job_trials[] =
	"SELECT id, phase, config, objective, n, mean, m2, t_start, t_end FROM trials "
	"WHERE job_id = ?1 ORDER BY t_start, id";
/*
 * The job's first phase after ?2 (phases are never empty: '' starts), by one
 * probe of samples_job_phase (staged samples) and one of series_job_phase
 * (series already in blocks); those of its points in memory are added.
 */
static const char sql_job_next_phase[] =
	"SELECT min(p) FROM (SELECT min(phase) AS p FROM samples WHERE job_id = ?1 AND phase > ?2"
	" UNION ALL SELECT min(phase) FROM series WHERE job_id = ?1 AND phase > ?2)";
static const char sql_job_latest[] = "SELECT name, value FROM latest WHERE job_id = ?1";
static const char sql_job_brief[] =
	"SELECT j.id, j.state, j.uid, j.workload_id, w.name FROM jobs j "
	"JOIN workloads w ON w.id = j.workload_id WHERE j.id = ?1";

static void bind_text_or_null(sqlite3_stmt *s, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, i);
}

/* Steps a statement that returns no rows (or ignores them). */
/* ---- node ---- */

struct node_row {
	const char *hostname, *hw_class, *topology;
};

static int apply_node_save(struct store_conn *c, void *arg)
{
	struct node_row *r = arg;
	sqlite3_stmt *s = store_stmt(c, sql_node_save);

	if (!s)
		return STORE_EIO;
	sqlite3_bind_text(s, 1, r->hostname, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, r->hw_class, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, r->topology, -1, SQLITE_STATIC);
	return store_step(c, s, "save node");
}

int store_node_save(struct store *st, const char *hostname, const char *hw_class, const char *topology_json)
{
	struct node_row r = {hostname, hw_class, topology_json};
	return store_write(st, apply_node_save, &r);
}

/* ---- jobs: writes ---- */

struct job_insert {
	const struct job_spec *spec;
	int64_t id;
};

/* The workload's id, created on first sight. */
static int workload_id_of(struct store_conn *c, const struct job_spec *sp, int64_t *id)
{
	sqlite3_stmt *s = store_stmt(c, sql_workload_upsert);
	int rc;

	if (!s)
		return STORE_EIO;
	sqlite3_bind_text(s, 1, sp->workload, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, sp->params_json ? sp->params_json : "{}", -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, sp->hw_class, -1, SQLITE_STATIC);
	sqlite3_bind_double(s, 4, sp->started);
	rc = sqlite3_step(s);
	if (rc != SQLITE_ROW)
		return store_fail(c, rc, "upsert workload");
	*id = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	return STORE_OK;
}

/*
 * Registration's or adoption's statement (sql) into *out, with what both
 * set bound: ?2 the workload (created on first sight) .. ?7 command.
 * Returns STORE_OK or the failure.
 */
static int job_stmt(struct store_conn *c, const char *sql, const struct job_spec *sp, sqlite3_stmt **out)
{
	sqlite3_stmt *s;
	int64_t workload_id = 0;   /* set by workload_id_of; gcc -O2 cannot tell */
	int rc;

	if ((rc = workload_id_of(c, sp, &workload_id)) != STORE_OK)
		return rc;
	if (!(s = store_stmt(c, sql)))
		return STORE_EIO;
	sqlite3_bind_int64(s, 2, workload_id);
	if (sp->pid > 0)
		sqlite3_bind_int64(s, 3, sp->pid);
	if (sp->has_uid)
		sqlite3_bind_int64(s, 4, (sqlite3_int64)sp->uid);
	sqlite3_bind_text(s, 5, config_enum_name(config_objective_names, sp->objective), -1, SQLITE_STATIC);
	bind_text_or_null(s, 6, sp->knobs_json);
	bind_text_or_null(s, 7, sp->command);
	*out = s;
	return STORE_OK;
}

static int apply_job_register(struct store_conn *c, void *arg)
{
	struct job_insert *ji = arg;
	const struct job_spec *sp = ji->spec;
	sqlite3_stmt *s;
	int rc;

	if ((rc = job_stmt(c, sql_job_insert, sp, &s)) != STORE_OK)
		return rc;
	bind_text_or_null(s, 8, sp->external_id);
	bind_text_or_null(s, 9, sp->config_json);
	sqlite3_bind_text(s, 10, sp->source ? sp->source : "registered", -1, SQLITE_STATIC);
	sqlite3_bind_double(s, 11, sp->started);
	if ((rc = store_step(c, s, "insert job")) != STORE_OK)
		return rc;
	ji->id = sqlite3_last_insert_rowid(c->db);
	return STORE_OK;
}

int store_job_register(struct store *st, const struct job_spec *spec, int64_t *id_out)
{
	struct job_insert ji = {spec, 0};
	int r = store_write(st, apply_job_register, &ji);

	if (r == STORE_OK) {
		*id_out = ji.id;
		store_jobs_changed(st);
	}
	return r;
}

static int apply_job_adopt(struct store_conn *c, void *arg)
{
	struct job_insert *ji = arg;
	sqlite3_stmt *s;
	int rc;

	if ((rc = job_stmt(c, sql_job_adopt, ji->spec, &s)) != STORE_OK)
		return rc;
	sqlite3_bind_int64(s, 1, ji->id);
	if ((rc = store_step(c, s, "adopt job")) != STORE_OK)
		return rc;
	return sqlite3_changes(c->db) == 1 ? STORE_OK : STORE_ENOTFOUND;
}

int store_job_adopt(struct store *st, int64_t id, const struct job_spec *spec)
{
	struct job_insert ji = {spec, id};
	int r = store_write(st, apply_job_adopt, &ji);

	if (r == STORE_OK)
		store_jobs_changed(st);
	return r;
}

struct job_join {
	const struct job_spec *spec;
	int64_t id;
	bool adopted;
};

/*
 * Find or register, and the rank's row, in the writer's one transaction:
 * no other registration runs between the lookup and the insert.
 */
static int apply_job_join(struct store_conn *c, void *arg)
{
	struct job_join *jj = arg;
	sqlite3_stmt *s = store_stmt(c, sql_job_find_running_external);
	struct job_insert ji = {jj->spec, 0};
	int rc;

	if (!s)
		return STORE_EIO;
	sqlite3_bind_text(s, 1, jj->spec->external_id, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		ji.id = sqlite3_column_int64(s, 0);
	sqlite3_reset(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_fail(c, rc, "find job by external id");
	jj->adopted = ji.id > 0;
	rc = STORE_OK;
	if (!jj->adopted)
		rc = apply_job_register(c, &ji);
	else if (jj->spec->rank->rank == 0 && (rc = job_stmt(c, sql_job_join_found, jj->spec, &s)) == STORE_OK) {
		sqlite3_bind_int64(s, 1, ji.id);
		rc = store_step(c, s, "rank 0 takes over a found job");
	}
	if (rc != STORE_OK)
		return rc;
	jj->id = ji.id;
	return store_rank_insert(c, ji.id, jj->spec);
}

int store_job_join(struct store *st, const struct job_spec *spec, int64_t *id_out, bool *adopted)
{
	struct job_join jj = {spec, 0, false};
	int r;

	assert(spec->rank != NULL && spec->external_id != NULL);
	r = store_write(st, apply_job_join, &jj);
	if (r == STORE_OK) {
		*id_out = jj.id;
		*adopted = jj.adopted;
		store_jobs_changed(st);
	}
	return r;
}

struct job_end {
	int64_t id;
	double ended;
	bool has_exit;
	int exit_status;
};

/* STORE_OK when job id exists, STORE_ENOTFOUND when not, or the failure. */
static int job_exists(struct store_conn *c, int64_t id)
{
	sqlite3_stmt *s = store_stmt_id(c, sql_job_exists, id);
	int rc;

	if (!s)
		return STORE_EIO;
	rc = sqlite3_step(s);
	if (rc == SQLITE_DONE)
		return STORE_ENOTFOUND;
	return rc == SQLITE_ROW ? STORE_OK : store_fail(c, rc, "find job");
}

static int apply_job_end(struct store_conn *c, void *arg)
{
	struct job_end *e = arg;
	sqlite3_stmt *s;
	int rc;

	if ((rc = job_exists(c, e->id)) != STORE_OK)
		return rc;
	s = store_stmt(c, sql_job_end);
	if (!s)
		return STORE_EIO;
	sqlite3_bind_int64(s, 1, e->id);
	sqlite3_bind_double(s, 2, e->ended);
	if (e->has_exit)
		sqlite3_bind_int(s, 3, e->exit_status);
	if ((rc = store_step(c, s, "end job")) != STORE_OK)
		return rc;
	return store_run_id(c, sql_job_end_ranks, e->id, "end job's ranks");
}

int store_job_end(struct store *st, int64_t id, double ended, bool has_exit, int exit_status)
{
	struct job_end e = {id, ended, has_exit, exit_status};
	int r = store_write(st, apply_job_end, &e);

	if (r == STORE_OK)
		store_jobs_changed(st);
	return r;
}

struct job_config {
	int64_t id;
	const char *config;
	double t;
	const char *why;
};

static int apply_job_set_config(struct store_conn *c, void *arg)
{
	struct job_config *jc = arg;
	sqlite3_stmt *s = store_stmt_id(c, sql_job_set_config, jc->id);
	int r;

	if (!s)
		return STORE_EIO;
	sqlite3_bind_text(s, 2, jc->config, -1, SQLITE_STATIC);
	if ((r = store_step(c, s, "set job config")) != STORE_OK)
		return r;
	if (sqlite3_changes(c->db) == 0)
		return job_exists(c, jc->id);
	if (!(s = store_stmt_id(c, sql_job_config_event, jc->id)))
		return STORE_EIO;
	sqlite3_bind_double(s, 2, jc->t);
	sqlite3_bind_text(s, 3, jc->config, -1, SQLITE_STATIC);
	if (jc->why)
		sqlite3_bind_text(s, 4, jc->why, -1, SQLITE_STATIC);
	return store_step(c, s, "config event");
}

int store_job_set_config(struct store *st, int64_t id, const char *config_json, double t, const char *why)
{
	struct job_config jc = {id, config_json, t, why};
	return store_write(st, apply_job_set_config, &jc);
}

/* ---- jobs: reads ---- */

/* Reads one row of a query into arg (a JSON container, a struct). */
typedef void (*row_fn)(sqlite3_stmt *s, void *arg);

/*
 * Runs sql, a SELECT of the job with ?1 = id, on c and hands each row to
 * row(s, arg).  Returns STORE_OK, STORE_ENOTFOUND when must_exist and no
 * row came, or the failure (logged once with what).
 */
static int query_by_id(struct store_conn *c, const char *sql, int64_t id, bool must_exist, row_fn row, void *arg,
		       const char *what)
{
	sqlite3_stmt *s = store_stmt_id(c, sql, id);
	bool any = false;
	int rc;

	if (!s)
		return STORE_EIO;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		row(s, arg);
		any = true;
	}
	if (rc != SQLITE_DONE)
		return store_fail(c, rc, what);
	return must_exist && !any ? STORE_ENOTFOUND : STORE_OK;
}

static json_t *job_row_json(sqlite3_stmt *s)
{
	json_t *j = json_object();

	json_object_set_new(j, "id", json_integer(sqlite3_column_int64(s, 0)));
	json_object_set_new(j, "workload", store_col_text(s, 1));
	json_object_set_new(j, "params", store_col_json(s, 2));
	json_object_set_new(j, "external_id", store_col_text(s, 3));
	json_object_set_new(j, "pid", sqlite3_column_type(s, 4) == SQLITE_NULL
					      ? json_null() : json_integer(sqlite3_column_int64(s, 4)));
	json_object_set_new(j, "uid", sqlite3_column_type(s, 5) == SQLITE_NULL
					      ? json_null() : json_integer(sqlite3_column_int64(s, 5)));
	json_object_set_new(j, "state", store_col_text(s, 6));
	json_object_set_new(j, "objective", store_col_text(s, 7));
	json_object_set_new(j, "knobs", store_col_json(s, 8));
	json_object_set_new(j, "config", store_col_json(s, 9));
	json_object_set_new(j, "source", store_col_text(s, 10));
	json_object_set_new(j, "command", store_col_text(s, 11));
	json_object_set_new(j, "started", store_col_real(s, 12));
	json_object_set_new(j, "ended", store_col_real(s, 13));
	json_object_set_new(j, "exit_status", sqlite3_column_type(s, 14) == SQLITE_NULL
						      ? json_null() : json_integer(sqlite3_column_int(s, 14)));
	json_object_set_new(j, "hw_class", store_col_text(s, 15));
	json_object_set_new(j, "world_size", json_integer(sqlite3_column_int64(s, 16)));
	json_object_set_new(j, "nodes", sqlite3_column_type(s, 17) == SQLITE_NULL
						? json_null() : json_integer(sqlite3_column_int64(s, 17)));
	return j;
}

static void latest_row(sqlite3_stmt *s, void *latest)
{
	const char *name = store_col_str(s, 0);

	/* "": the name was lost to an allocation that failed; the watch makes the answer a 503. */
	if (name[0] != '\0')
		json_object_set_new(latest, name, json_real(sqlite3_column_double(s, 1)));
}

/* The latest value of each of the job's series (kept by store_samples.c). */
/*
 * The containers below are filled first and set on the job last: a set that
 * fails (out of memory) frees what it was given, so nothing may touch it
 * after.
 */
static int job_latest_json(struct store_conn *c, int64_t id, json_t *job)
{
	json_t *latest = json_object();
	int r = query_by_id(c, sql_job_latest, id, false, latest_row, latest, "latest samples");

	json_object_set_new(job, "latest", latest);
	return r;
}

int store_jobs_list(struct store *st, enum job_filter which, json_t **out)
{
	const char *sql = which == JOB_FILTER_RUNNING ? sql_jobs_running
			: which == JOB_FILTER_ENDED   ? sql_jobs_ended
						      : sql_jobs_all;
	struct store_conn *c = store_reader(st);
	sqlite3_stmt *s = store_stmt(c, sql);
	json_t *arr = json_array();
	int rc = SQLITE_DONE, r = STORE_OK;

	if (!s)
		r = STORE_EIO;
	while (s && (rc = sqlite3_step(s)) == SQLITE_ROW)
		json_array_append_new(arr, job_row_json(s));
	if (s && rc != SQLITE_DONE)
		r = store_fail(c, rc, "list jobs");
	for (size_t i = 0; r == STORE_OK && i < json_array_size(arr); i++) {
		json_t *job = json_array_get(arr, i);
		r = job_latest_json(c, json_integer_value(json_object_get(job, "id")), job);
		if (r == STORE_OK)
			r = store_ranks_json(c, json_integer_value(json_object_get(job, "id")), job);
	}
	store_reader_done(st, c);
	if (r != STORE_OK) {
		json_decref(arr);
		return r;
	}
	*out = arr;
	return STORE_OK;
}

static void trial_row(sqlite3_stmt *s, void *trials)
{
	json_t *t = json_object();
	sqlite3_int64 n = sqlite3_column_int64(s, 4);
	double m2 = sqlite3_column_double(s, 6);

	json_object_set_new(t, "id", json_integer(sqlite3_column_int64(s, 0)));
	json_object_set_new(t, "phase", store_col_text(s, 1));
	json_object_set_new(t, "config", store_col_json(s, 2));
	json_object_set_new(t, "objective", store_col_text(s, 3));
	json_object_set_new(t, "n", json_integer(n));
	json_object_set_new(t, "mean", store_col_real(s, 5));
	json_object_set_new(t, "std", n > 1 ? json_real(sqrt(fmax(0.0, m2 / (double)(n - 1)))) : json_null());
	json_object_set_new(t, "t_start", store_col_real(s, 7));
	json_object_set_new(t, "t_end", store_col_real(s, 8));
	json_array_append_new(trials, t);
}

static int job_trials_json(struct store_conn *c, int64_t id, json_t *job)
{
	json_t *trials = json_array();
	int r = query_by_id(c, sql_job_trials, id, false, trial_row, trials, "job trials");

	json_object_set_new(job, "trials", trials);
	return r;
}

/* Adds a phase of the job's points in memory to the sorted array of phases, unless it is there. */
static void phase_add_pending(const char *name, const char *phase, void *arg)
{
	json_t *phases = arg;
	size_t i, n = json_array_size(phases);
	int c = 1;

	(void)name;
	if (phase[0] == '\0')
		return;
	for (i = 0; i < n && (c = strcmp(json_string_value(json_array_get(phases, i)), phase)) < 0; i++)
		;
	if (c != 0)
		json_array_insert_new(phases, i, json_string(phase));
}

/*
 * The job's distinct phases by a loose index scan stepped from here, one
 * probe per phase.  As a recursive CTE the same scan needed an ephemeral
 * table on every job view, whose page cache was allocated and freed (a
 * madvise and page faults each time, the allocator returning freed pages
 * at once): GET /api/v1/jobs/{id} ran at half the rate.
 */
static int job_phases_json(struct store *st, struct store_conn *c, int64_t id, json_t *job)
{
	sqlite3_stmt *s = store_stmt(c, sql_job_next_phase);
	json_t *phases = json_array();
	const char *after = "";
	int rc, r = STORE_OK;

	if (!s) {
		json_object_set_new(job, "phases", phases);
		return STORE_EIO;
	}
	for (;;) {
		sqlite3_bind_int64(s, 1, id);
		sqlite3_bind_text(s, 2, after, -1, SQLITE_STATIC);
		if ((rc = sqlite3_step(s)) != SQLITE_ROW) {
			r = store_fail(c, rc, "job phases");
			break;
		}
		if (sqlite3_column_type(s, 0) == SQLITE_NULL)
			break;
		json_array_append_new(phases, store_col_text(s, 0));
		/* The array's copy outlives the reset that ends the row's text. */
		after = json_string_value(json_array_get(phases, json_array_size(phases) - 1));
		sqlite3_reset(s);
	}
	sqlite3_reset(s);
	sqlite3_clear_bindings(s);   /* nothing left pointing into the job's JSON */
	for (int k = 0; k < PENDING_KINDS && r == STORE_OK; k++)
		pending_job_names(store_pending_of(st, (enum pending_kind)k), id, phase_add_pending, phases);
	json_object_set_new(job, "phases", phases);
	return r;
}

/* The job's row as JSON into *(json_t **)arg. */
static void job_row(sqlite3_stmt *s, void *arg)
{
	*(json_t **)arg = job_row_json(s);
}

int store_job_get(struct store *st, int64_t id, json_t **out)
{
	struct store_conn *c = store_reader(st);
	json_t *job = NULL;
	int r = query_by_id(c, sql_job_one, id, true, job_row, &job, "get job");

	if (r == STORE_OK)
		r = job_trials_json(c, id, job);
	if (r == STORE_OK)
		r = job_phases_json(st, c, id, job);
	if (r == STORE_OK)
		r = job_latest_json(c, id, job);
	if (r == STORE_OK)
		r = store_ranks_json(c, id, job);
	store_reader_done(st, c);
	if (r != STORE_OK) {
		json_decref(job);
		return r;
	}
	*out = job;
	return STORE_OK;
}

int store_latest(struct store *st, int64_t job_id, json_t **out)
{
	struct store_conn *c = store_reader(st);
	json_t *holder = json_object();
	int r = job_latest_json(c, job_id, holder);

	store_reader_done(st, c);
	if (r == STORE_OK)
		*out = json_incref(json_object_get(holder, "latest"));
	json_decref(holder);
	return r;
}

static void brief_row(sqlite3_stmt *s, void *arg)
{
	struct job_brief *out = arg;

	memset(out, 0, sizeof(*out));
	out->id = sqlite3_column_int64(s, 0);
	out->running = config_enum_value(config_job_state_names, store_col_str(s, 1)) == JOB_STATE_RUNNING;
	out->has_uid = sqlite3_column_type(s, 2) != SQLITE_NULL;
	out->uid = (uid_t)sqlite3_column_int64(s, 2);
	out->workload_id = sqlite3_column_int64(s, 3);
	snprintf(out->workload, sizeof(out->workload), "%s", store_col_str(s, 4));
}

int store_job_brief(struct store *st, int64_t id, struct job_brief *out)
{
	struct store_conn *c = store_reader(st);
	int r = query_by_id(c, sql_job_brief, id, true, brief_row, out, "job brief");

	store_reader_done(st, c);
	return r;
}
