/*
 * A job's energy as the API, the report and /metrics show it: the CPU and
 * GPU joules attributed to it (energy.h, collectors/nvml.c), their sum in J
 * and kWh, the samples it processed and its efficiency in samples per
 * joule; where a part is not measured, why (the collector's reason), never
 * a 0 that reads as "used no energy".  Thread-safe: handlers call it.
 */
#ifndef DLPROF_ENERGY_REPORT_H
#define DLPROF_ENERGY_REPORT_H

#include <jansson.h>
#include <stdint.h>

struct app;
struct store;

/*
 * The samples job id processed: the throughput it reported (samples_per_s)
 * integrated over time, each value standing for the time since the report
 * before it (the dlprof client reports samples over the step they took).
 * NAN when it reported fewer than two values; *r a store error otherwise.
 */
double energy_job_samples(struct store *st, int64_t id, int *r);

/*
 * {"cpu_joules","gpu_joules","joules","kwh","samples","samples_per_joule"
 * [,"unavailable":{"cpu"|"gpu"|"samples_per_joule": why}]} for job id,
 * whose latest values (its view's "latest" object) hold its energy totals.
 * A figure not known is null and says why under "unavailable".  NULL when
 * out of memory; a store error reading the samples leaves them null.
 */
json_t *energy_report_json(struct app *app, int64_t id, const json_t *latest);

#endif
