/*
 * The catalogue of sample names: units for series and Prometheus names.
 * Prometheus names follow its conventions: base units (seconds, bytes,
 * ratios rather than percent) in the name, _total only on counters.  Rates
 * the collectors already divide by the interval are gauges named
 * ..._per_second.  One table, so a new sample is one new row.
 */

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"

#define G METRIC_GAUGE
#define C METRIC_COUNTER
#define N METRIC_NODE
#define J METRIC_JOB

const struct metric_info metric_catalogue[] = {
	{"cpu.cores", N, "cores", "cpu_busy_cores", G, 1, "CPUs busy over the last interval, in cores"},
	{"cpu.steal_cores", N, "cores", "cpu_steal_cores", G, 1, "CPU time stolen by the hypervisor, in cores"},
	{"cpu.iowait_cores", N, "cores", "cpu_iowait_cores", G, 1, "CPU time idle waiting for I/O, in cores"},
	{"cpu.busy_seconds", N, "s", "cpu_busy_seconds_total", C, 1, "CPU time spent busy since boot"},
	{"cpu.count", N, "cpus", "cpus", G, 1, "Logical CPUs"},
	{"mem.total_bytes", N, "bytes", "memory_total_bytes", G, 1, "Memory installed"},
	{"mem.available_bytes", N, "bytes", "memory_available_bytes", G, 1, "Memory available to new work"},
	{"mem.used_bytes", N, "bytes", "memory_used_bytes", G, 1, "Memory in use (total minus available)"},
	{"load.1", N, "", "load1", G, 1, "Load average over 1 minute"},
	{"load.5", N, "", "load5", G, 1, "Load average over 5 minutes"},
	{"load.15", N, "", "load15", G, 1, "Load average over 15 minutes"},
	{"sched.runnable", N, "tasks", "runnable_tasks", G, 1, "Tasks runnable now"},
	{"energy.cpu_joules", N, "J", "cpu_energy_joules_total", C, 1,
	 "Energy of the CPU packages and DRAM (RAPL) since dlprofd started counting"},
	{"power.cpu_watts", N, "W", "cpu_power_watts", G, 1,
	 "Power of the CPU packages and DRAM (RAPL) over the last interval"},
	{"energy.gpu_joules", N, "J", "gpu_energy_joules_total", C, 1,
	 "Energy of the node's GPUs since dlprofd started counting"},

	{"cpu.cores", J, "cores", "cpu_cores", G, 1, "CPU used by the job's processes over the last interval, in cores"},
	{"cpu.user_cores", J, "cores", "cpu_user_cores", G, 1, "User-mode CPU of the job, in cores"},
	{"cpu.system_cores", J, "cores", "cpu_system_cores", G, 1, "Kernel-mode CPU of the job, in cores"},
	{"cpu.seconds", J, "s", "cpu_seconds_total", C, 1, "CPU time of the job since dlprofd began sampling it"},
	{"cpu.processes", J, "processes", "processes", G, 1, "Processes of the job"},
	{"cpu.threads", J, "threads", "threads", G, 1, "Threads of the job"},
	{"cpu.busy_threads", J, "threads", "busy_threads", G, 1, "Threads that used a quarter core or more"},
	{"cpu.thread_max_cores", J, "cores", "thread_max_cpu_cores", G, 1, "CPU of the job's busiest thread"},
	{"cpu.busy_thread_cores", J, "cores", "busy_thread_cpu_cores", G, 1, "CPU of the job's busy threads, summed"},
	{"cpu.allowed", J, "cpus", "allowed_cpus", G, 1, "CPUs the job's affinity allows"},
	{"cpu.quota_cores", J, "cores", "cpu_quota_cores", G, 1, "CPU quota of the job's cgroup"},
	{"cpu.cpuset_cpus", J, "cpus", "cpuset_cpus", G, 1, "CPUs in the job's cgroup cpuset"},
	{"mem.rss_bytes", J, "bytes", "memory_rss_bytes", G, 1, "Resident memory of the job's processes"},
	{"mem.limit_bytes", J, "bytes", "memory_limit_bytes", G, 1, "Memory limit of the job's cgroup"},
	{"mem.minor_faults_per_s", J, "1/s", "minor_page_faults_per_second", G, 1, "Minor page faults"},
	{"mem.major_faults_per_s", J, "1/s", "major_page_faults_per_second", G, 1, "Major page faults"},
	{"sched.switches_per_s", J, "1/s", "context_switches_per_second", G, 1,
	 "Times the job's threads were put on a CPU"},
	{"sched.wait_cores", J, "cores", "cpu_wait_cores", G, 1,
	 "Time the job's threads were runnable but waited for a CPU, in cores"},
	{"perf.task_clock_cores", J, "cores", "perf_task_clock_cores", G, 1, "perf task-clock, in cores"},
	{"perf.context_switches_per_s", J, "1/s", "perf_context_switches_per_second", G, 1,
	 "perf context switches"},
	{"perf.cpu_migrations_per_s", J, "1/s", "perf_cpu_migrations_per_second", G, 1, "perf CPU migrations"},
	{"perf.page_faults_per_s", J, "1/s", "perf_page_faults_per_second", G, 1, "perf page faults"},
	{"perf.cycles_per_s", J, "1/s", "perf_cycles_per_second", G, 1, "CPU cycles (scaled if multiplexed)"},
	{"perf.instructions_per_s", J, "1/s", "perf_instructions_per_second", G, 1,
	 "Instructions retired (scaled if multiplexed)"},
	{"perf.ipc", J, "", "perf_instructions_per_cycle", G, 1, "Instructions per cycle"},
	{"perf.llc_misses_per_s", J, "1/s", "perf_llc_misses_per_second", G, 1, "Last-level cache misses"},
	{"perf.multiplexed", J, "", "perf_multiplexed", G, 1, "1 when hardware counts were scaled for multiplexing"},
	{"perf.counted_share", J, "ratio", "perf_counted_ratio", G, 1,
	 "Lowest share of time a hardware counter was on the PMU"},
	{"papi.cycles_per_s", J, "1/s", "papi_cycles_per_second", G, 1, "PAPI_TOT_CYC"},
	{"papi.instructions_per_s", J, "1/s", "papi_instructions_per_second", G, 1, "PAPI_TOT_INS"},
	{"papi.fp_ops_per_s", J, "1/s", "papi_fp_operations_per_second", G, 1, "PAPI_FP_OPS or PAPI_DP_OPS"},
	{"papi.cache_misses_per_s", J, "1/s", "papi_cache_misses_per_second", G, 1, "PAPI_L3_TCM or PAPI_L2_TCM"},
	{"papi.ipc", J, "", "papi_instructions_per_cycle", G, 1, "PAPI instructions per cycle"},
	{"gpu.count", J, "gpus", "gpus", G, 1, "GPUs the job's processes use"},
	{"gpu.mem_bytes", J, "bytes", "gpu_memory_bytes", G, 1, "GPU memory of the job's processes"},
	{"gpu.util_percent", J, "%", "gpu_sm_utilization_ratio", G, 0.01,
	 "SM utilisation of the job's processes, summed over GPUs"},
	/* Jobs' energy is one Prometheus family with a source label (api_prometheus.c): no name here. */
	{"energy.cpu_joules", J, "J", NULL, C, 1, "CPU energy attributed to the job by its share of busy CPU time"},
	{"energy.gpu_joules", J, "J", NULL, C, 1, "GPU energy attributed to the job by its share of SM utilisation"},
	{"samples_per_s", J, "samples/s", "samples_per_second", G, 1, "Training or inference throughput the job reports"},
	{"step_time_s", J, "s", "step_seconds", G, 1, "Step time the job reports"},
	{"loss", J, "", "loss", G, 1, "Loss the job reports"},

	{"util_percent", METRIC_GPU, "%", "utilization_ratio", G, 0.01, "Share of time a kernel ran"},
	{"mem_util_percent", METRIC_GPU, "%", "memory_utilization_ratio", G, 0.01, "Share of time memory was busy"},
	{"mem_used_bytes", METRIC_GPU, "bytes", "memory_used_bytes", G, 1, "GPU memory used"},
	{"mem_total_bytes", METRIC_GPU, "bytes", "memory_total_bytes", G, 1, "GPU memory installed"},
	{"power_watts", METRIC_GPU, "W", "power_watts", G, 1, "Power draw"},
	{"temperature_celsius", METRIC_GPU, "°C", "temperature_celsius", G, 1, "GPU temperature"},
	{"sm_clock_hz", METRIC_GPU, "Hz", "sm_clock_hertz", G, 1, "SM clock"},
	{"energy_joules", METRIC_GPU, "J", "energy_joules_total", C, 1,
	 "Energy the GPU used since dlprofd started counting"},
	{"processes", METRIC_GPU, "processes", "processes", G, 1, "Compute processes the driver lists on the GPU"},
	{"mem_used_bytes", METRIC_MIG, "bytes", "mig_memory_used_bytes", G, 1, "Memory used in a MIG instance"},
	{"mem_total_bytes", METRIC_MIG, "bytes", "mig_memory_total_bytes", G, 1, "Memory of a MIG instance"},
	{"energy_joules", METRIC_ZONE, "J", "energy_joules_total", C, 1,
	 "Energy of a RAPL zone since dlprofd started counting (zones nest: psys holds the packages, "
	 "a package its core)"},
	{"power_watts", METRIC_ZONE, "W", "power_watts", G, 1, "Power of a RAPL zone over the last interval"},
};

const unsigned metric_catalogue_len = sizeof(metric_catalogue) / sizeof(metric_catalogue[0]);

static int
parse_index(const char **p, int *out)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)**p))
		return -1;
	v = strtol(*p, &end, 10);
	if (*end != '.' || v > 1000000)
		return -1;
	*out = (int)v;
	*p = end + 1;
	return 0;
}

int
metric_split_gpu(const char *name, int *gpu, int *mig, const char **rest)
{
	const char *p = name;

	*mig = -1;
	if (strncmp(p, "gpu.", 4) != 0)
		return -1;
	p += 4;
	if (parse_index(&p, gpu) < 0)
		return -1;
	if (strncmp(p, "mig.", 4) == 0) {
		p += 4;
		if (parse_index(&p, mig) < 0)
			return -1;
	}
	if (*p == '\0')
		return -1;
	*rest = p;
	return 0;
}

int
metric_split_zone(const char *name, const char **zone, int *zone_len, const char **rest)
{
	const char *last;

	if (strncmp(name, "rapl.", 5) != 0 || (last = strrchr(name, '.')) == name + 4 || last[1] == '\0')
		return -1;
	*zone = name + 5;
	*zone_len = (int)(last - *zone);
	*rest = last + 1;
	return 0;
}

const struct metric_info *
metric_find(enum metric_scope scope, const char *name)
{
	unsigned i;

	for (i = 0; i < metric_catalogue_len; i++)
		if (metric_catalogue[i].scope == scope && strcmp(metric_catalogue[i].sample, name) == 0)
			return &metric_catalogue[i];
	return NULL;
}

const struct metric_info *
metric_of(int64_t job_id, const char *name)
{
	const char *rest, *zone;
	int gpu, mig, zlen;

	if (job_id != 0)
		return metric_find(METRIC_JOB, name);
	if (metric_split_gpu(name, &gpu, &mig, &rest) == 0)
		return metric_find(mig >= 0 ? METRIC_MIG : METRIC_GPU, rest);
	if (metric_split_zone(name, &zone, &zlen, &rest) == 0)
		return metric_find(METRIC_ZONE, rest);
	return metric_find(METRIC_NODE, name);
}

const char *
metric_unit(const char *name)
{
	const struct metric_info *m = metric_of(1, name);
	size_t len = strlen(name);

	/* A thread's own CPU (proc.c: thread.PID.TID.cores), kept for the heatmap and not exported: no row. */
	if (strncmp(name, "thread.", 7) == 0 && len > 6 && strcmp(name + len - 6, ".cores") == 0)
		return "cores";

	if (m == NULL)
		m = metric_of(0, name);
	return m != NULL ? m->unit : "";
}
