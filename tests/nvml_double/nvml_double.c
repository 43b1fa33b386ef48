/*
 * A test double of libnvidia-ml: the NVML calls the nvml collector uses,
 * answering fixed, documented values for two GPUs (GPU 1 with MIG on and two
 * instances), so the collector's code path runs on machines without a GPU.
 * It measures nothing.  Environment knobs read at nvmlInit:
 *   NVML_DOUBLE_PID    a pid shown as a compute process on GPU 0
 *                      (1 GiB, 30 % SM)
 *   NVML_DOUBLE_PID2   a second one there (1 GiB, 10 % SM)
 *   NVML_DOUBLE_PID_SM the first process's SM utilisation instead of 30 %
 *   NVML_DOUBLE_FAIL   "init": nvmlInit fails as with no driver loaded;
 *                      "count": no GPU found; "energy": no energy counter
 *                      (as before Volta)
 *   NVML_DOUBLE_IDLE_GPUS  N (0..6) more GPUs after the two, idle: no
 *                      process, 0 % utilisation, 256 MiB of 16 GiB used
 *                      (the driver's own), MIG off
 * and read at each call:
 *   NVML_DOUBLE_ENERGY_MJ  GPU 0's energy counter in mJ (GPU 1's is half,
 *                      an idle one's a tenth); unset: 5,000,000 mJ plus
 *                      100,000 mJ (GPU 1: 50,000; idle: 10,000) a call, so
 *                      a daemon sees it advance
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NVML_SUCCESS 0
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_NOT_FOUND 6
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_DRIVER_NOT_LOADED 9
#define NVML_ERROR_UNINITIALIZED 1

struct dev {
	int index;
	int mig;               /* -1: a full GPU; otherwise the MIG instance */
	const struct dev *parent;
};

typedef struct {
	unsigned int gpu, memory;
} util_t;
typedef struct {
	unsigned long long total, free, used;
} mem_t;
typedef struct {
	unsigned int pid;
	unsigned long long used;
	unsigned int gi, ci;
} proc_t;
typedef struct {
	unsigned int pid;
	unsigned long long ts;
	unsigned int sm, mem, enc, dec;
} psample_t;

#define MAX_IDLE 6

static const struct dev gpus[2 + MAX_IDLE] = {{0, -1, NULL}, {1, -1, NULL}, {2, -1, NULL}, {3, -1, NULL},
					      {4, -1, NULL}, {5, -1, NULL}, {6, -1, NULL}, {7, -1, NULL}};
static const struct dev migs[2] = {{1, 0, &gpus[1]}, {1, 1, &gpus[1]}};
static int initialised;
static unsigned int proc_pid, proc_pid2;
static unsigned int ngpus = 2;
static unsigned int proc_sm = 30;
static unsigned long long energy_calls[2 + MAX_IDLE];

/* Exported API: prototypes here keep -Wmissing-prototypes quiet for a plain .so. */
int nvmlInit_v2(void);
int nvmlShutdown(void);
const char *nvmlErrorString(int rc);
int nvmlDeviceGetCount_v2(unsigned int *n);
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, const struct dev **d);
int nvmlDeviceGetUtilizationRates(const struct dev *d, util_t *u);
int nvmlDeviceGetMemoryInfo(const struct dev *d, mem_t *m);
int nvmlDeviceGetName(const struct dev *d, char *buf, unsigned int len);
int nvmlDeviceGetUUID(const struct dev *d, char *buf, unsigned int len);
int nvmlDeviceGetPowerUsage(const struct dev *d, unsigned int *mw);
int nvmlDeviceGetTemperature(const struct dev *d, int sensor, unsigned int *c);
int nvmlDeviceGetClockInfo(const struct dev *d, int type, unsigned int *mhz);
int nvmlDeviceGetComputeRunningProcesses_v3(const struct dev *d, unsigned int *n, proc_t *p);
int nvmlDeviceGetProcessUtilization(const struct dev *d, psample_t *s, unsigned int *n, unsigned long long last);
int nvmlDeviceGetMigMode(const struct dev *d, unsigned int *cur, unsigned int *pending);
int nvmlDeviceGetMaxMigDeviceCount(const struct dev *d, unsigned int *n);
int nvmlDeviceGetMigDeviceHandleByIndex(const struct dev *d, unsigned int i, const struct dev **mig);
int nvmlDeviceGetTotalEnergyConsumption(const struct dev *d, unsigned long long *mj);

static int
fail_mode(const char *what)
{
	const char *f = getenv("NVML_DOUBLE_FAIL");

	return f != NULL && strcmp(f, what) == 0;
}

int
nvmlInit_v2(void)
{
	const char *pid = getenv("NVML_DOUBLE_PID"), *idle = getenv("NVML_DOUBLE_IDLE_GPUS");
	const char *sm = getenv("NVML_DOUBLE_PID_SM");

	if (fail_mode("init"))
		return NVML_ERROR_DRIVER_NOT_LOADED;
	proc_pid = pid != NULL ? (unsigned int)strtoul(pid, NULL, 10) : 0;
	pid = getenv("NVML_DOUBLE_PID2");
	proc_pid2 = pid != NULL && proc_pid != 0 ? (unsigned int)strtoul(pid, NULL, 10) : 0;
	proc_sm = sm != NULL ? (unsigned int)strtoul(sm, NULL, 10) : 30;
	ngpus = 2 + (idle != NULL && strtoul(idle, NULL, 10) <= MAX_IDLE ? (unsigned int)strtoul(idle, NULL, 10) : 0);
	initialised = 1;
	return NVML_SUCCESS;
}

int
nvmlShutdown(void)
{
	initialised = 0;
	return NVML_SUCCESS;
}

const char *
nvmlErrorString(int rc)
{
	switch (rc) {
	case NVML_SUCCESS:
		return "Success";
	case NVML_ERROR_DRIVER_NOT_LOADED:
		return "Driver Not Loaded";
	case NVML_ERROR_NOT_FOUND:
		return "Not Found";
	case NVML_ERROR_UNINITIALIZED:
		return "Uninitialized";
	case NVML_ERROR_NOT_SUPPORTED:
		return "Not Supported";
	default:
		return "Unknown Error";
	}
}

int
nvmlDeviceGetCount_v2(unsigned int *n)
{
	if (!initialised)
		return NVML_ERROR_UNINITIALIZED;
	*n = fail_mode("count") ? 0 : ngpus;
	return NVML_SUCCESS;
}

int
nvmlDeviceGetHandleByIndex_v2(unsigned int i, const struct dev **d)
{
	if (i >= ngpus)
		return NVML_ERROR_INVALID_ARGUMENT;
	*d = &gpus[i];
	return NVML_SUCCESS;
}

int
nvmlDeviceGetUtilizationRates(const struct dev *d, util_t *u)
{
	u->gpu = d->index == 0 ? 42 : d->index == 1 ? 7 : 0;
	u->memory = d->index == 0 ? 17 : d->index == 1 ? 3 : 0;
	return NVML_SUCCESS;
}

int
nvmlDeviceGetMemoryInfo(const struct dev *d, mem_t *m)
{
	if (d->mig >= 0) {
		m->total = 10ULL << 30;
		m->used = (unsigned long long)(d->mig + 1) << 30;
	} else {
		m->total = 16ULL << 30;
		m->used = d->index == 0 ? 4ULL << 30 : d->index == 1 ? 2ULL << 30 : 256ULL << 20;
	}
	m->free = m->total - m->used;
	return NVML_SUCCESS;
}

int
nvmlDeviceGetName(const struct dev *d, char *buf, unsigned int len)
{
	(void)d;
	strncpy(buf, "NVML Double GPU", len);
	buf[len - 1] = '\0';
	return NVML_SUCCESS;
}

int
nvmlDeviceGetUUID(const struct dev *d, char *buf, unsigned int len)
{
	snprintf(buf, len, "GPU-double-%d", d->index);
	return NVML_SUCCESS;
}

int
nvmlDeviceGetPowerUsage(const struct dev *d, unsigned int *mw)
{
	*mw = d->index == 0 ? 123456 : 60000;
	return NVML_SUCCESS;
}

int
nvmlDeviceGetTemperature(const struct dev *d, int sensor, unsigned int *c)
{
	(void)sensor;
	*c = d->index == 0 ? 55 : 40;
	return NVML_SUCCESS;
}

int
nvmlDeviceGetClockInfo(const struct dev *d, int type, unsigned int *mhz)
{
	(void)d;
	(void)type;
	*mhz = 1410;
	return NVML_SUCCESS;
}

int
nvmlDeviceGetComputeRunningProcesses_v3(const struct dev *d, unsigned int *n, proc_t *p)
{
	unsigned int want = d->index == 0 && proc_pid != 0 ? (proc_pid2 != 0 ? 2 : 1) : 0, i;

	if (*n < want) {
		*n = want;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	*n = want;
	for (i = 0; i < want; i++) {
		memset(&p[i], 0, sizeof(p[i]));
		p[i].pid = i == 0 ? proc_pid : proc_pid2;
		p[i].used = 1ULL << 30;
	}
	return NVML_SUCCESS;
}

int
nvmlDeviceGetProcessUtilization(const struct dev *d, psample_t *s, unsigned int *n, unsigned long long last)
{
	unsigned int want = proc_pid2 != 0 ? 2 : 1, i;

	if (d->index != 0 || proc_pid == 0)
		return NVML_ERROR_NOT_FOUND;
	if (*n < want) {
		*n = want;
		return NVML_ERROR_INSUFFICIENT_SIZE;
	}
	*n = want;
	for (i = 0; i < want; i++) {
		memset(&s[i], 0, sizeof(s[i]));
		s[i].pid = i == 0 ? proc_pid : proc_pid2;
		s[i].ts = last + 1000000;
		s[i].sm = i == 0 ? proc_sm : 10;
		s[i].mem = 10;
	}
	return NVML_SUCCESS;
}

int
nvmlDeviceGetMigMode(const struct dev *d, unsigned int *cur, unsigned int *pending)
{
	*cur = *pending = d->index == 1 ? 1 : 0;
	return NVML_SUCCESS;
}

int
nvmlDeviceGetMaxMigDeviceCount(const struct dev *d, unsigned int *n)
{
	*n = d->index == 1 ? 7 : 0;
	return NVML_SUCCESS;
}

int
nvmlDeviceGetMigDeviceHandleByIndex(const struct dev *d, unsigned int i, const struct dev **mig)
{
	if (d->index != 1 || i >= 2)
		return NVML_ERROR_NOT_FOUND;
	*mig = &migs[i];
	return NVML_SUCCESS;
}

int
nvmlDeviceGetTotalEnergyConsumption(const struct dev *d, unsigned long long *mj)
{
	const char *set = getenv("NVML_DOUBLE_ENERGY_MJ");
	unsigned long long v;

	if (fail_mode("energy") || d->mig >= 0)
		return NVML_ERROR_NOT_SUPPORTED;
	if (set != NULL) {
		v = strtoull(set, NULL, 10);
		*mj = d->index == 0 ? v : d->index == 1 ? v / 2 : v / 10;
	} else {
		energy_calls[d->index]++;
		*mj = 5000000ULL + energy_calls[d->index] * (d->index == 0 ? 100000ULL : d->index == 1 ? 50000ULL : 10000ULL);
	}
	return NVML_SUCCESS;
}
