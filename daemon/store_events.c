/*
 * A job's timeline events (store_events.h).  The config events are written
 * by store_job_set_config (store_jobs.c) in the config's own transaction;
 * the others here, one row each.  Reads are in time order, ties in the
 * order written.
 */
#include <stdlib.h>

#include "log.h"
#include "store_events.h"
#include "store_internal.h"

static const char sql_event_insert[] = "INSERT INTO job_events (job_id, t, kind, detail) VALUES (?1, ?2, ?3, ?4)";
static const char sql_events_of_job[] = "SELECT t, kind, detail FROM job_events WHERE job_id = ?1 ORDER BY t, id";

struct event_row {
	int64_t id;
	double t;
	const char *kind;
	char *detail; /* JSON text */
};

static int apply_event(struct store_conn *c, void *arg)
{
	struct event_row *e = arg;
	sqlite3_stmt *s = store_stmt_id(c, sql_event_insert, e->id);
	int rc;

	if (!s)
		return STORE_EIO;
	sqlite3_bind_double(s, 2, e->t);
	sqlite3_bind_text(s, 3, e->kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 4, e->detail, -1, SQLITE_STATIC);
	rc = sqlite3_step(s);
	return rc == SQLITE_DONE ? STORE_OK : store_fail(c, rc, "job event");
}

int store_job_event(struct store *st, int64_t id, double t, const char *kind, const json_t *detail)
{
	struct event_row e = {id, t, kind, json_dumps(detail, JSON_COMPACT | JSON_SORT_KEYS)};
	int r;

	if (!e.detail) {
		log_warnx("%s: job %lld: no memory for its %s event", __func__, (long long)id, kind);
		return STORE_EIO;
	}
	r = store_write(st, apply_event, &e);
	free(e.detail);
	return r;
}

int store_job_events(struct store *st, int64_t id, json_t **out)
{
	struct store_conn *c = store_reader(st);
	sqlite3_stmt *s = store_stmt(c, sql_events_of_job);
	json_t *list = json_array(), *row;
	int rc = SQLITE_DONE, r = s && list ? STORE_OK : STORE_EIO;

	if (r == STORE_OK) {
		sqlite3_bind_int64(s, 1, id);
		while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
			row = json_pack("{s:f,s:o,s:o}", "t", sqlite3_column_double(s, 0), "kind", store_col_text(s, 1),
					"detail", store_col_json(s, 2));
			if (!row || json_array_append_new(list, row) < 0) {
				r = STORE_EIO;
				break;
			}
		}
		if (r == STORE_OK && rc != SQLITE_DONE)
			r = store_fail(c, rc, "job events");
		sqlite3_reset(s);
	}
	store_reader_done(st, c);
	if (r != STORE_OK) {
		json_decref(list);
		return r;
	}
	*out = list;
	return STORE_OK;
}
