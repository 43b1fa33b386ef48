/*
 * The tuner's rows (see store_tuner.h): trials, declared knobs and phase
 * states, written in the writer thread and read back at start.  Writes find
 * the workload through the job, so the tuner needs no workload ids.
 */
#include <stdlib.h>

#include "log.h"
#include "store_internal.h"
#include "store_tuner.h"

#define NOW_SQL "(julianday('now') - 2440587.5) * 86400.0"

static const char sql_trial_add[] =
	"INSERT INTO trials (workload_id, job_id, phase, config, objective, n, mean, m2, t_start, t_end) "
	"SELECT workload_id, id, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9 FROM jobs WHERE id = ?1";
static const char sql_declared_save[] =
	"INSERT INTO tuner_workloads (workload_id, objective, declared, updated) "
	"SELECT workload_id, ?2, ?3, " NOW_SQL " FROM jobs WHERE id = ?1 "
	"ON CONFLICT(workload_id, objective) DO UPDATE SET declared = excluded.declared, updated = excluded.updated";
/* The goodput state rides on the workload's row; a declaration saved later keeps it (and the other way round). */
static const char sql_goodput_save[] =
	"INSERT INTO tuner_workloads (workload_id, objective, goodput, updated) "
	"SELECT workload_id, ?2, ?3, " NOW_SQL " FROM jobs WHERE id = ?1 "
	"ON CONFLICT(workload_id, objective) DO UPDATE SET goodput = excluded.goodput, updated = excluded.updated";
static const char sql_phase_save[] =
	"INSERT INTO tuner_phases (workload_id, objective, phase, settled, drift_t, updated) "
	"SELECT workload_id, ?2, ?3, ?4, ?5, " NOW_SQL " FROM jobs WHERE id = ?1 "
	"ON CONFLICT(workload_id, objective, phase) DO UPDATE SET settled = excluded.settled, "
	"drift_t = excluded.drift_t, updated = excluded.updated";
/*
 * The trials pooled per config and phase, split at the phase's drift (the
 * tuner keeps no more than that), in the order their configs were first tried.
 */
static const char sql_load_pools[] =
	"SELECT t.workload_id, w.name, w.params, t.phase, t.config, t.objective, "
	"t.t_start < coalesce(tp.drift_t, 0) AS stale, count(*), sum(t.n), sum(t.mean), sum(t.mean * t.mean), "
	"sum(max(coalesce(t.m2, 0) / (t.n - 1) / t.n, 0)) "
	"FROM trials t JOIN workloads w ON w.id = t.workload_id "
	"LEFT JOIN tuner_phases tp ON tp.workload_id = t.workload_id AND tp.objective = t.objective "
	"AND tp.phase = t.phase "
	"WHERE w.hw_class = ?1 AND t.n >= 2 AND abs(t.mean) < 1e308 AND abs(coalesce(t.m2, 0)) < 1e308 "
	"GROUP BY t.workload_id, t.objective, t.phase, t.config, stale ORDER BY min(t.id), stale";
static const char sql_load_workloads[] =
	"SELECT tw.workload_id, w.name, w.params, tw.objective, tw.declared, tw.goodput FROM tuner_workloads tw "
	"JOIN workloads w ON w.id = tw.workload_id WHERE w.hw_class = ?1";
static const char sql_load_phases[] =
	"SELECT tp.workload_id, tp.objective, tp.phase, tp.settled, tp.drift_t FROM tuner_phases tp "
	"JOIN workloads w ON w.id = tp.workload_id WHERE w.hw_class = ?1";
static const char sql_load_jobs[] =
	"SELECT j.workload_id, j.objective, count(*) FROM jobs j JOIN workloads w ON w.id = j.workload_id "
	"WHERE w.hw_class = ?1 GROUP BY j.workload_id, j.objective";
static const char sql_job_info[] =
	"SELECT j.workload_id, w.name, w.params, j.objective, j.knobs, j.config, j.state = 'running' "
	"FROM jobs j JOIN workloads w ON w.id = j.workload_id WHERE j.id = ?1";

static int step_write(struct store_conn *c, sqlite3_stmt *s, const char *what)
{
	int rc = sqlite3_step(s);

	if (rc != SQLITE_DONE)
		return store_fail(c, rc, what);
	/* INSERT ... SELECT inserts nothing for an unknown job. */
	return sqlite3_changes(c->db) > 0 ? STORE_OK : STORE_ENOTFOUND;
}

static int apply_trial_add(struct store_conn *c, void *arg)
{
	const struct store_trial *tr = arg;
	sqlite3_stmt *s = store_stmt_id(c, sql_trial_add, tr->job_id);

	if (!s)
		return STORE_EIO;
	sqlite3_bind_text(s, 2, tr->phase ? tr->phase : "", -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, tr->config_json, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 4, tr->objective, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 5, tr->n);
	sqlite3_bind_double(s, 6, tr->mean);
	sqlite3_bind_double(s, 7, tr->m2);
	sqlite3_bind_double(s, 8, tr->t_start);
	sqlite3_bind_double(s, 9, tr->t_end);
	return step_write(c, s, "add trial");
}

int store_trial_add(struct store *st, const struct store_trial *tr)
{
	return store_write(st, apply_trial_add, (void *)tr);
}

/* A JSON text saved on the row of the job's workload and objective (declared knobs, goodput state). */
struct workload_text_row {
	int64_t job_id;
	const char *objective, *text;
};

static int apply_declared_save(struct store_conn *c, void *arg)
{
	const struct workload_text_row *r = arg;
	sqlite3_stmt *s = store_stmt_id(c, sql_declared_save, r->job_id);

	if (!s)
		return STORE_EIO;
	sqlite3_bind_text(s, 2, r->objective, -1, SQLITE_STATIC);
	if (r->text)
		sqlite3_bind_text(s, 3, r->text, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(s, 3);
	return step_write(c, s, "save declared knobs");
}

int store_tuner_declared_save(struct store *st, int64_t job_id, const char *objective, const char *declared_json)
{
	struct workload_text_row r = {job_id, objective, declared_json};
	return store_write(st, apply_declared_save, &r);
}

struct phase_row {
	int64_t job_id;
	const char *objective, *phase;
	bool settled;
	double drift_t;
};

static int apply_phase_save(struct store_conn *c, void *arg)
{
	const struct phase_row *r = arg;
	sqlite3_stmt *s = store_stmt_id(c, sql_phase_save, r->job_id);

	if (!s)
		return STORE_EIO;
	sqlite3_bind_text(s, 2, r->objective, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, r->phase, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 4, r->settled ? 1 : 0);
	sqlite3_bind_double(s, 5, r->drift_t);
	return step_write(c, s, "save tuner phase");
}

static int apply_goodput_save(struct store_conn *c, void *arg)
{
	const struct workload_text_row *r = arg;
	sqlite3_stmt *s = store_stmt_id(c, sql_goodput_save, r->job_id);

	if (!s)
		return STORE_EIO;
	sqlite3_bind_text(s, 2, r->objective, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, r->text, -1, SQLITE_STATIC);
	return step_write(c, s, "save goodput state");
}

int store_tuner_goodput_save(struct store *st, int64_t job_id, const char *objective, const char *state_json)
{
	struct workload_text_row r = {job_id, objective, state_json};
	return store_write(st, apply_goodput_save, &r);
}

int store_tuner_phase_save(struct store *st, int64_t job_id, const char *objective, const char *phase,
			   bool settled, double drift_t)
{
	struct phase_row r = {job_id, objective, phase, settled, drift_t};
	return store_write(st, apply_phase_save, &r);
}

/* A column as JSON: integers, reals, text; JSON text where json is set. */
static json_t *column(sqlite3_stmt *s, int col, bool json)
{
	switch (sqlite3_column_type(s, col)) {
	case SQLITE_INTEGER:
		return json_integer(sqlite3_column_int64(s, col));
	case SQLITE_FLOAT:
		return json_real(sqlite3_column_double(s, col));
	case SQLITE_NULL:
		return json_null();
	default:
		return json ? store_col_json(s, col) : store_col_text(s, col);
	}
}

/* Runs a query bound to hw_class (or job id) into an array of objects with the given keys. */
static int query_rows(struct store_conn *c, const char *sql, const char *text, int64_t id,
		      const char *const *keys, const bool *json, int nkeys, json_t **out)
{
	sqlite3_stmt *s = store_stmt(c, sql);
	json_t *rows;
	int rc, i;

	if (!s)
		return STORE_EIO;
	if (text)
		sqlite3_bind_text(s, 1, text, -1, SQLITE_STATIC);
	else
		sqlite3_bind_int64(s, 1, id);
	rows = json_array();
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		json_t *o = json_object();
		for (i = 0; i < nkeys; i++)
			json_object_set_new(o, keys[i], column(s, i, json[i]));
		json_array_append_new(rows, o);
	}
	if (rc != SQLITE_DONE) {
		json_decref(rows);
		return store_fail(c, rc, "read tuner state");
	}
	*out = rows;
	return STORE_OK;
}

int store_tuner_load(struct store *st, const char *hw_class, json_t **out)
{
	static const char *const tk[] = {"workload_id", "name", "params", "phase", "config", "objective",
					 "stale", "trials", "steps", "sum", "sumsq", "sum_var"};
	static const bool tj[] = {0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
	static const char *const wk[] = {"workload_id", "name", "params", "objective", "declared", "goodput"};
	static const bool wj[] = {0, 0, 1, 0, 1, 1};
	static const char *const pk[] = {"workload_id", "objective", "phase", "settled", "drift_t"};
	static const bool pj[] = {0, 0, 0, 0, 0};
	static const char *const jk[] = {"workload_id", "objective", "jobs"};
	static const bool jj[] = {0, 0, 0};
	struct store_conn *c = store_reader(st);
	json_t *pools = NULL, *workloads = NULL, *phases = NULL, *jobs = NULL;
	int rc;

	rc = query_rows(c, sql_load_pools, hw_class, 0, tk, tj, 12, &pools);
	if (rc == STORE_OK)
		rc = query_rows(c, sql_load_workloads, hw_class, 0, wk, wj, 6, &workloads);
	if (rc == STORE_OK)
		rc = query_rows(c, sql_load_phases, hw_class, 0, pk, pj, 5, &phases);
	if (rc == STORE_OK)
		rc = query_rows(c, sql_load_jobs, hw_class, 0, jk, jj, 3, &jobs);
	store_reader_done(st, c);
	if (rc != STORE_OK) {
		json_decref(pools);
		json_decref(workloads);
		json_decref(phases);
		json_decref(jobs);
		return rc;
	}
	*out = json_pack("{s:o, s:o, s:o, s:o}", "pools", pools, "workloads", workloads, "phases", phases,
			 "jobs", jobs);
	return STORE_OK;
}

int store_tuner_job(struct store *st, int64_t job_id, json_t **out)
{
	static const char *const k[] = {"workload_id", "name", "params", "objective", "knobs", "config", "running"};
	static const bool j[] = {0, 0, 1, 0, 1, 1, 0};
	struct store_conn *c = store_reader(st);
	json_t *rows = NULL;
	int rc = query_rows(c, sql_job_info, NULL, job_id, k, j, 7, &rows);

	store_reader_done(st, c);
	if (rc != STORE_OK)
		return rc;
	if (json_array_size(rows) == 0) {
		json_decref(rows);
		return STORE_ENOTFOUND;
	}
	*out = json_incref(json_array_get(rows, 0));
	json_decref(rows);
	return STORE_OK;
}
