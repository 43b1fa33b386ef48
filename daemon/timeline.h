/*
 * A job's story for GET /api/v1/jobs/{id}/timeline: what happened to it,
 * in time order, each event with a line a person reads.  Assembled from
 * what the store keeps of the job (its row, its ranks, its trials and its
 * events: store_events.h) and from the verdicts of its whole life
 * (diag_history).  Pure: JSON in, a new JSON value out, no store, no lock.
 */
#ifndef DLPROF_TIMELINE_H
#define DLPROF_TIMELINE_H

#include <jansson.h>

/*
 * The events of job (store_job_get's object: started, ended, exit_status,
 * source, pid, external_id, config, trials, ranks with joined), of its
 * stored events (store_job_events' array: config with why, rank_left)
 * and of verdicts (diag_history's array, or NULL when the diagnosis is
 * off), as a new array of objects {"t", "kind", "text", ...} sorted by t
 * (ties: start first, end last, else as listed).  Kinds and their fields:
 *   started         source, pid, external_id
 *   config          config, why ("exploring", "drift", "best", "settled",
 *                   or null where not known), changed ({knob: [from, to]}
 *                   of the whole-job knobs; absent for the first)
 *   phase_override  phase, config (the phase's own knobs; null: cleared)
 *   verdict_raised  verdict, hint (and rank for a straggler)
 *   verdict_cleared verdict
 *   rank_joined     rank, node
 *   rank_left       rank, exit_status
 *   ended           exit_status
 * A job with no config events (a database older than sql/017) gets its
 * configs from its whole-job trials, why null.  NULL when out of memory.
 */
json_t *timeline_events(const json_t *job, const json_t *events, const json_t *verdicts);

#endif
