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

struct sampler;
struct store;

/* Samples stamped this long before a job's registration still count as its own (as the dashboard shows them). */
#define ENERGY_LOOKBACK_S 86400.0

/*
 * The samples job id processed: the throughput it reported (samples_per_s)
 * integrated over time, each value standing for the time since the report
 * before it (the dlprof client reports samples over the step they took),
 * from ENERGY_LOOKBACK_S before started to ended (NAN: running).  A long
 * series is read in buckets (store_series), each bucket's mean standing for
 * the time since the bucket before.  NAN when it reported fewer than two
 * values or *r is a store error.
 */
double energy_job_samples(struct store *st, int64_t id, double started, double ended, int *r);

/*
 * {"cpu_joules","gpu_joules","joules","kwh","samples","samples_per_joule"
 * [,"unavailable":{"cpu"|"gpu"|"samples_per_joule": why}]} for a job, from
 * its view (store_job_get: id, started, ended, and latest, which holds its
 * energy totals), its samples read from st, and the reasons the rapl and
 * nvml collectors give in sam (NULL: sampling is off).
 * A figure not known is null and says why under "unavailable".  NULL when
 * out of memory; a store error reading the samples leaves them null.
 */
json_t *energy_report_json(struct store *st, struct sampler *sam, const json_t *job);

#endif
