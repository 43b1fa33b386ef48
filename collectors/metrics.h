/*
 * The catalogue of sample names dlprofd knows: for each, its unit (for
 * series answers) and how it reads in Prometheus (name, type, help, scale).
 * Node and job samples share names (cpu.cores is a node's busy cores or a
 * job's CPU use); GPU samples carry the GPU index, and MIG samples the
 * instance, inside the name (gpu.0.util_percent, gpu.1.mig.0.mem_used_bytes),
 * and RAPL samples their zone (rapl.package_0.dram.energy_joules).
 */
#ifndef DLPROF_METRICS_H
#define DLPROF_METRICS_H

#include <stdint.h>

enum metric_type { METRIC_GAUGE, METRIC_COUNTER };

/* Where a sample belongs in Prometheus. */
enum metric_scope { METRIC_NODE, METRIC_JOB, METRIC_GPU, METRIC_MIG, METRIC_ZONE };

struct metric_info {
	const char *sample;        /* the sample name, without gpu.N. / mig.M. for GPU rows */
	enum metric_scope scope;
	const char *unit;          /* for series: "cores", "bytes", "1/s", "%", "s", ... */
	const char *prom;          /* name after dlprofd_<scope>_ */
	enum metric_type type;
	double scale;              /* Prometheus value = sample value * scale */
	const char *help;
};

extern const struct metric_info metric_catalogue[];
extern const unsigned metric_catalogue_len;

/*
 * Splits a GPU sample name: "gpu.3.util_percent" gives gpu 3, mig -1, rest
 * "util_percent"; "gpu.1.mig.0.mem_used_bytes" gives gpu 1, mig 0.  Returns
 * 0, or -1 when the name is not of that form.
 */
int metric_split_gpu(const char *name, int *gpu, int *mig, const char **rest);

/*
 * Splits a RAPL zone sample name: "rapl.package_0.dram.power_watts" gives
 * zone "package_0.dram" (zone_len bytes from *zone) and rest "power_watts".
 * Returns 0, or -1 when the name is not of that form.
 */
int metric_split_zone(const char *name, const char **zone, int *zone_len, const char **rest);

/* The catalogue row for a sample of a scope, or NULL. */
const struct metric_info *metric_find(enum metric_scope scope, const char *name);

/* The catalogue row of any sample, the node's (job 0: node, GPU, MIG and zone rows) or a job's; NULL when unknown. */
const struct metric_info *metric_of(int64_t job_id, const char *name);

/* The unit of any sample name (node, job or GPU); "" when unknown. */
const char *metric_unit(const char *name);

#endif
