/*
 * The NVML collector: NVIDIA GPUs through libnvidia-ml, opened with dlopen
 * at run time so that dlprofd neither builds nor links against the driver.
 * Per GPU: utilisation, memory, power, temperature, SM clock, energy, and
 * memory of each MIG instance where MIG is on.  Per job: the GPU memory and
 * SM utilisation of its processes, from NVML's per-process lists, and the
 * GPU energy attributed to it.
 *
 * Energy: nvmlDeviceGetTotalEnergyConsumption (mJ since the driver loaded,
 * Volta and later) where the driver has it; otherwise the power reading
 * times the tick's length, which is as good as the power reading (a short
 * average).  Each tick's joules of a GPU go to the jobs whose processes ran
 * on it, in proportion to their SM utilisation there (by their number of
 * processes when NVML reports no utilisation for any); a GPU without a
 * process of a job keeps its energy for the node alone.
 *
 * The few NVML types used are declared here with the layouts of NVML's
 * documented ABI (nvml.h); the library's path may be overridden (tests point
 * it at a double under tests/nvml_double/).
 */

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"
#include "dynlib.h"

#define NVML_DEFAULT_LIBRARY "libnvidia-ml.so.1"
#define NVML_MAX_GPUS 64
#define NVML_MAX_PROCS 256
#define NVML_MAX_MIG 8
#define NVML_MAX_JOBS 256

/* From nvml.h: return codes and enums dlprofd uses. */
#define NVML_SUCCESS 0
#define NVML_TEMPERATURE_GPU 0
#define NVML_CLOCK_SM 1
#define NVML_DEVICE_MIG_ENABLE 1

typedef void *nvml_device;
typedef struct {
	unsigned int gpu;      /* percent of time a kernel ran */
	unsigned int memory;   /* percent of time memory was read or written */
} nvml_utilization;
typedef struct {
	unsigned long long total, free, used;
} nvml_memory;
typedef struct {               /* nvmlProcessInfo_v2_t, used by _v3 */
	unsigned int pid;
	unsigned long long used_gpu_memory;
	unsigned int gpu_instance_id;
	unsigned int compute_instance_id;
} nvml_process_info;
typedef struct {               /* nvmlProcessInfo_v1_t */
	unsigned int pid;
	unsigned long long used_gpu_memory;
} nvml_process_info_v1;
typedef struct {
	unsigned int pid;
	unsigned long long timestamp;
	unsigned int sm_util, mem_util, enc_util, dec_util;
} nvml_process_sample;

struct nvml_api {
	int (*init)(void);
	int (*shutdown)(void);
	const char *(*error_string)(int);
	int (*count)(unsigned int *);
	int (*handle)(unsigned int, nvml_device *);
	int (*utilization)(nvml_device, nvml_utilization *);
	int (*memory)(nvml_device, nvml_memory *);
	/* Optional: NULL when the driver lacks them. */
	int (*name)(nvml_device, char *, unsigned int);
	int (*uuid)(nvml_device, char *, unsigned int);
	int (*power)(nvml_device, unsigned int *);
	int (*temperature)(nvml_device, int, unsigned int *);
	int (*clock)(nvml_device, int, unsigned int *);
	int (*procs_v3)(nvml_device, unsigned int *, nvml_process_info *);
	int (*procs_v1)(nvml_device, unsigned int *, nvml_process_info_v1 *);
	int (*proc_util)(nvml_device, nvml_process_sample *, unsigned int *, unsigned long long);
	int (*mig_mode)(nvml_device, unsigned int *, unsigned int *);
	int (*mig_count)(nvml_device, unsigned int *);
	int (*mig_handle)(nvml_device, unsigned int, nvml_device *);
	int (*energy)(nvml_device, unsigned long long *);
};

/* One process seen on a GPU in the last node sample. */
struct nvml_proc {
	unsigned int pid;
	int gpu;
	double mem_bytes;
	double sm_util;
};

/* A GPU's energy, counted since the collector started. */
struct nvml_energy {
	unsigned long long prev_mj;    /* the driver's counter at the last tick; 0: not read yet */
	double joules;                 /* since the collector started counting */
	double tick_j;                 /* joules of the last tick, shared among its processes' jobs */
	double sm_total;               /* SM utilisation of all its processes in the last tick */
	unsigned int procs;            /* its processes in the last tick */
};

/* The GPU energy attributed to a job so far. */
struct nvml_job {
	int64_t id;
	double joules;
};

struct nvml_ctx {
	void *lib;
	struct nvml_api api;
	unsigned int ngpus;
	nvml_device dev[NVML_MAX_GPUS];
	unsigned long long last_ts[NVML_MAX_GPUS];  /* newest per-process sample seen */
	struct nvml_proc procs[NVML_MAX_PROCS];
	size_t nprocs;
	nvml_process_info pbuf[NVML_MAX_PROCS];      /* scratch */
	nvml_process_sample sbuf[NVML_MAX_PROCS];    /* scratch */
	struct nvml_energy energy[NVML_MAX_GPUS];
	double prev_mono;                            /* the last node sample's tick; 0: none */
	struct nvml_job jobs[NVML_MAX_JOBS];
	size_t njobs;
};

/* The symbols dlprofd binds, where each goes, and whether it must exist. */
static const struct dynlib_symbol nvml_symbols[] = {
	{offsetof(struct nvml_api, init), "nvmlInit_v2", 1},
	{offsetof(struct nvml_api, shutdown), "nvmlShutdown", 1},
	{offsetof(struct nvml_api, error_string), "nvmlErrorString", 1},
	{offsetof(struct nvml_api, count), "nvmlDeviceGetCount_v2", 1},
	{offsetof(struct nvml_api, handle), "nvmlDeviceGetHandleByIndex_v2", 1},
	{offsetof(struct nvml_api, utilization), "nvmlDeviceGetUtilizationRates", 1},
	{offsetof(struct nvml_api, memory), "nvmlDeviceGetMemoryInfo", 1},
	{offsetof(struct nvml_api, name), "nvmlDeviceGetName", 0},
	{offsetof(struct nvml_api, uuid), "nvmlDeviceGetUUID", 0},
	{offsetof(struct nvml_api, power), "nvmlDeviceGetPowerUsage", 0},
	{offsetof(struct nvml_api, temperature), "nvmlDeviceGetTemperature", 0},
	{offsetof(struct nvml_api, clock), "nvmlDeviceGetClockInfo", 0},
	{offsetof(struct nvml_api, procs_v3), "nvmlDeviceGetComputeRunningProcesses_v3", 0},
	{offsetof(struct nvml_api, procs_v1), "nvmlDeviceGetComputeRunningProcesses", 0},
	{offsetof(struct nvml_api, proc_util), "nvmlDeviceGetProcessUtilization", 0},
	{offsetof(struct nvml_api, mig_mode), "nvmlDeviceGetMigMode", 0},
	{offsetof(struct nvml_api, mig_count), "nvmlDeviceGetMaxMigDeviceCount", 0},
	{offsetof(struct nvml_api, mig_handle), "nvmlDeviceGetMigDeviceHandleByIndex", 0},
	{offsetof(struct nvml_api, energy), "nvmlDeviceGetTotalEnergyConsumption", 0},
};

static void *
nvml_init(const struct collector_env *env, char *why, size_t why_len)
{
	const char *path = env->nvml_library != NULL ? env->nvml_library : NVML_DEFAULT_LIBRARY;
	struct nvml_ctx *c;
	unsigned int i;
	int rc;

	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		snprintf(why, why_len, "out of memory");
		return NULL;
	}
	c->lib = dynlib_load(&path, 1, nvml_symbols, sizeof(nvml_symbols) / sizeof(nvml_symbols[0]), &c->api,
			     "no NVIDIA driver on this node", "the NVIDIA driver is too old", why, why_len);
	if (c->lib == NULL) {
		free(c);
		return NULL;
	}
	if ((rc = c->api.init()) != NVML_SUCCESS) {
		snprintf(why, why_len, "nvmlInit failed: %s", c->api.error_string(rc));
		goto fail_lib;
	}
	if ((rc = c->api.count(&c->ngpus)) != NVML_SUCCESS || c->ngpus == 0) {
		snprintf(why, why_len, rc != NVML_SUCCESS ? "nvmlDeviceGetCount failed: %s" : "NVML found no GPU%s",
			 rc != NVML_SUCCESS ? c->api.error_string(rc) : "");
		goto fail_init;
	}
	if (c->ngpus > NVML_MAX_GPUS)
		c->ngpus = NVML_MAX_GPUS;
	for (i = 0; i < c->ngpus; i++)
		if ((rc = c->api.handle(i, &c->dev[i])) != NVML_SUCCESS) {
			snprintf(why, why_len, "cannot open GPU %u: %s", i, c->api.error_string(rc));
			goto fail_init;
		}
	why[0] = '\0';
	return c;
fail_init:
	c->api.shutdown();
fail_lib:
	dlclose(c->lib);
	free(c);
	return NULL;
}

static void
nvml_fini(void *ctx)
{
	struct nvml_ctx *c = ctx;

	c->api.shutdown();
	dlclose(c->lib);
	free(c);
}

static void
nvml_proc_add(struct nvml_ctx *c, int gpu, unsigned int pid, double mem, double sm)
{
	size_t i;

	for (i = 0; i < c->nprocs; i++)
		if (c->procs[i].pid == pid && c->procs[i].gpu == gpu) {
			if (mem >= 0)
				c->procs[i].mem_bytes = mem;
			if (sm >= 0)
				c->procs[i].sm_util = sm;
			return;
		}
	if (c->nprocs == NVML_MAX_PROCS)
		return;
	c->procs[c->nprocs++] = (struct nvml_proc){pid, gpu, mem > 0 ? mem : 0, sm > 0 ? sm : 0};
}

/*
 * The GPU's processes with their memory and SM utilisation, kept for
 * sample_job.  Returns how many compute processes the driver listed, or -1
 * when it gave no list.
 */
static int
nvml_processes(struct nvml_ctx *c, int gpu)
{
	nvml_process_info_v1 v1[NVML_MAX_PROCS];
	unsigned int n = NVML_MAX_PROCS, i;
	int listed = -1;

	if (c->api.procs_v3 != NULL && c->api.procs_v3(c->dev[gpu], &n, c->pbuf) == NVML_SUCCESS) {
		for (i = 0; i < n && i < NVML_MAX_PROCS; i++)
			nvml_proc_add(c, gpu, c->pbuf[i].pid, (double)c->pbuf[i].used_gpu_memory, -1);
		listed = (int)n;
	} else if (c->api.procs_v1 != NULL && (n = NVML_MAX_PROCS, c->api.procs_v1(c->dev[gpu], &n, v1) == NVML_SUCCESS)) {
		for (i = 0; i < n && i < NVML_MAX_PROCS; i++)
			nvml_proc_add(c, gpu, v1[i].pid, (double)v1[i].used_gpu_memory, -1);
		listed = (int)n;
	}
	n = NVML_MAX_PROCS;
	if (c->api.proc_util != NULL && c->api.proc_util(c->dev[gpu], c->sbuf, &n, c->last_ts[gpu]) == NVML_SUCCESS)
		for (i = 0; i < n && i < NVML_MAX_PROCS; i++) {
			nvml_proc_add(c, gpu, c->sbuf[i].pid, -1, c->sbuf[i].sm_util);
			if (c->sbuf[i].timestamp > c->last_ts[gpu])
				c->last_ts[gpu] = c->sbuf[i].timestamp;
		}
	return listed;
}

static void
nvml_mig(struct nvml_ctx *c, unsigned int gpu, struct collector_out *out)
{
	unsigned int cur, pending, max, i;
	nvml_device mig;
	nvml_memory mem;

	if (c->api.mig_mode == NULL || c->api.mig_count == NULL || c->api.mig_handle == NULL ||
	    c->api.mig_mode(c->dev[gpu], &cur, &pending) != NVML_SUCCESS || cur != NVML_DEVICE_MIG_ENABLE ||
	    c->api.mig_count(c->dev[gpu], &max) != NVML_SUCCESS)
		return;
	for (i = 0; i < max && i < NVML_MAX_MIG; i++) {
		if (c->api.mig_handle(c->dev[gpu], i, &mig) != NVML_SUCCESS)
			continue;
		if (c->api.memory(mig, &mem) == NVML_SUCCESS) {
			collector_put(out, 0, (double)mem.used, "gpu.%u.mig.%u.mem_used_bytes", gpu, i);
			collector_put(out, 0, (double)mem.total, "gpu.%u.mig.%u.mem_total_bytes", gpu, i);
		}
	}
}

/*
 * GPU gpu's joules over this tick: from the driver's counter, or power (W,
 * < 0 when unknown) times the tick's length dt where it has none.  The first
 * tick counts nothing: the counter is only the baseline.
 */
static double
nvml_tick_joules(struct nvml_ctx *c, unsigned int gpu, double watts, double dt)
{
	struct nvml_energy *e = &c->energy[gpu];
	unsigned long long mj;
	double j = 0;

	if (c->api.energy != NULL && c->api.energy(c->dev[gpu], &mj) == NVML_SUCCESS) {
		/* A counter that went back is a driver reload: it starts again from there. */
		if (e->prev_mj != 0 && mj >= e->prev_mj)
			j = (double)(mj - e->prev_mj) / 1000.0;
		e->prev_mj = mj;
	} else if (watts >= 0 && dt > 0) {
		j = watts * dt;
	}
	return j;
}

/* Adds the tick's joules of each GPU and the processes' SM utilisation that shares them among jobs. */
static void
nvml_energy(struct nvml_ctx *c, unsigned int gpu, double watts, struct collector_out *out, double *node_j)
{
	struct nvml_energy *e = &c->energy[gpu];
	size_t k;

	e->tick_j = nvml_tick_joules(c, gpu, watts, c->prev_mono > 0 ? out->mono - c->prev_mono : 0);
	e->joules += e->tick_j;
	*node_j += e->joules;
	e->sm_total = 0;
	e->procs = 0;
	for (k = 0; k < c->nprocs; k++)
		if (c->procs[k].gpu == (int)gpu) {
			e->sm_total += c->procs[k].sm_util;
			e->procs++;
		}
	collector_put(out, 0, e->joules, "gpu.%u.energy_joules", gpu);
}

static int
nvml_sample_node(void *ctx, struct collector_out *out, char *why, size_t why_len)
{
	struct nvml_ctx *c = ctx;
	nvml_utilization u;
	nvml_memory m;
	unsigned int i, v;
	double watts, node_j = 0;
	int rc;

	c->nprocs = 0;
	for (i = 0; i < c->ngpus; i++) {
		if ((rc = c->api.utilization(c->dev[i], &u)) != NVML_SUCCESS ||
		    (rc = c->api.memory(c->dev[i], &m)) != NVML_SUCCESS) {
			snprintf(why, why_len, "GPU %u: %s", i, c->api.error_string(rc));
			/* The GPUs before it counted up to now: the next tick must not count the same span again. */
			c->prev_mono = out->mono;
			return COLLECTOR_TRANSIENT;
		}
		collector_put(out, 0, u.gpu, "gpu.%u.util_percent", i);
		collector_put(out, 0, u.memory, "gpu.%u.mem_util_percent", i);
		collector_put(out, 0, (double)m.used, "gpu.%u.mem_used_bytes", i);
		collector_put(out, 0, (double)m.total, "gpu.%u.mem_total_bytes", i);
		watts = -1;
		if (c->api.power != NULL && c->api.power(c->dev[i], &v) == NVML_SUCCESS) {
			watts = v / 1000.0;
			collector_put(out, 0, watts, "gpu.%u.power_watts", i);
		}
		if (c->api.temperature != NULL && c->api.temperature(c->dev[i], NVML_TEMPERATURE_GPU, &v) == NVML_SUCCESS)
			collector_put(out, 0, v, "gpu.%u.temperature_celsius", i);
		if (c->api.clock != NULL && c->api.clock(c->dev[i], NVML_CLOCK_SM, &v) == NVML_SUCCESS)
			collector_put(out, 0, v * 1e6, "gpu.%u.sm_clock_hz", i);
		nvml_mig(c, i, out);
		/* Whether a GPU is free to hand out (daemon/gpu_pick.h) starts with its process list. */
		if ((rc = nvml_processes(c, (int)i)) >= 0)
			collector_put(out, 0, rc, "gpu.%u.processes", i);
		nvml_energy(c, i, watts, out, &node_j);
	}
	collector_put(out, 0, node_j, "energy.gpu_joules");
	c->prev_mono = out->mono;
	return COLLECTOR_OK;
}

/* The job's entry for its attributed energy (a new one at 0 J), or NULL when the table is full. */
static struct nvml_job *
nvml_job(struct nvml_ctx *c, int64_t id)
{
	size_t i;

	for (i = 0; i < c->njobs; i++)
		if (c->jobs[i].id == id)
			return &c->jobs[i];
	if (c->njobs == NVML_MAX_JOBS)
		return NULL;
	c->jobs[c->njobs] = (struct nvml_job){id, 0};
	return &c->jobs[c->njobs++];
}

static void
nvml_job_gone(void *ctx, int64_t id)
{
	struct nvml_ctx *c = ctx;
	size_t i;

	for (i = 0; i < c->njobs; i++)
		if (c->jobs[i].id == id) {
			c->jobs[i] = c->jobs[--c->njobs];
			return;
		}
}

/* The share of GPU gpu's tick that a job's processes there take: by SM utilisation, else by count. */
static double
nvml_share(const struct nvml_ctx *c, int gpu, double sm, unsigned int procs)
{
	const struct nvml_energy *e = &c->energy[gpu];

	if (e->sm_total > 0)
		return sm / e->sm_total;
	return e->procs > 0 ? (double)procs / e->procs : 0;
}

static int
nvml_sample_job(void *ctx, const struct collector_job *job, struct collector_out *out, char *why, size_t why_len)
{
	struct nvml_ctx *c = ctx;
	unsigned int used[NVML_MAX_GPUS] = {0};
	double mem = 0, sm = 0, gpu_sm[NVML_MAX_GPUS] = {0}, joules = 0;
	size_t i, k;
	int gpus = 0;
	struct nvml_job *j;

	(void)why;
	(void)why_len;
	for (i = 0; i < c->nprocs; i++)
		for (k = 0; k < job->npids; k++)
			if ((pid_t)c->procs[i].pid == job->pids[k]) {
				mem += c->procs[i].mem_bytes;
				sm += c->procs[i].sm_util;
				gpu_sm[c->procs[i].gpu] += c->procs[i].sm_util;
				if (!used[c->procs[i].gpu]++)
					gpus++;
				break;
			}
	for (i = 0; i < c->ngpus; i++)
		if (used[i])
			joules += c->energy[i].tick_j * nvml_share(c, (int)i, gpu_sm[i], used[i]);
	/* A job that has used a GPU keeps its total shown after it stops. */
	for (k = 0; k < c->njobs && c->jobs[k].id != job->id; k++)
		;
	if (gpus > 0 || k < c->njobs) {
		if ((j = nvml_job(c, job->id)) != NULL) {
			j->joules += joules;
			collector_put(out, job->id, j->joules, "energy.gpu_joules");
		}
	}
	if (gpus == 0)
		return COLLECTOR_OK;
	collector_put(out, job->id, gpus, "gpu.count");
	collector_put(out, job->id, mem, "gpu.mem_bytes");
	collector_put(out, job->id, sm, "gpu.util_percent");
	return COLLECTOR_OK;
}

static json_t *
nvml_describe(void *ctx)
{
	struct nvml_ctx *c = ctx;
	json_t *gpus = json_array();
	char name[96], uuid[96];
	nvml_memory m;
	unsigned int i;

	for (i = 0; gpus != NULL && i < c->ngpus; i++) {
		if (c->api.name == NULL || c->api.name(c->dev[i], name, sizeof(name)) != NVML_SUCCESS)
			name[0] = '\0';
		if (c->api.uuid == NULL || c->api.uuid(c->dev[i], uuid, sizeof(uuid)) != NVML_SUCCESS)
			uuid[0] = '\0';
		if (c->api.memory(c->dev[i], &m) != NVML_SUCCESS)
			m.total = 0;
		json_array_append_new(gpus, json_pack("{s:i,s:s,s:s,s:I}", "index", (int)i, "name", name, "uuid", uuid,
						      "memory_total_bytes", (json_int_t)m.total));
	}
	return json_pack("{s:o*}", "gpus", gpus);
}

const struct collector collector_nvml = {
	.version = COLLECTOR_VERSION,
	.name = "nvml",
	.init = nvml_init,
	.sample_node = nvml_sample_node,
	.sample_job = nvml_sample_job,
	.job_gone = nvml_job_gone,
	.describe = nvml_describe,
	.fini = nvml_fini,
};
