/*
 * A job's events that no other table keeps, for its timeline (sql/017,
 * timeline.h): the configs it was given and why (written by
 * store_job_set_config with the config itself), and the ranks that left.
 * Same conventions as store.h.
 */
#ifndef DLPROF_STORE_EVENTS_H
#define DLPROF_STORE_EVENTS_H

#include <jansson.h>
#include <stdint.h>

struct store;

/*
 * Keeps one event of job id at t: kind ("rank_left") and its detail, a
 * JSON object.  Returns when committed.
 */
int store_job_event(struct store *st, int64_t id, double t, const char *kind, const json_t *detail);

/*
 * The job's events in time order as a new JSON array of {"t","kind",
 * "detail"} in *out (empty for a job that has none, or none kept: a job
 * of a database older than sql/017).
 */
int store_job_events(struct store *st, int64_t id, json_t **out);

#endif
