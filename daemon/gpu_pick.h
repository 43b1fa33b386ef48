/*
 * Which GPUs a job is handed: the one owner of the choice that a config's
 * "gpus: N" becomes CUDA_VISIBLE_DEVICES.  It picks N GPUs that the NVML
 * collector's last sample shows idle (no compute process on it, utilisation
 * about 0, used memory near the driver's own reservation), within the job's
 * Slurm allocation when it has one, and leases them to the asker for a short
 * while (as long as the job it was handed to runs) so that two prologues at
 * once are not handed the same GPU.  Without
 * NVML it verifies nothing and says so; the mapping (knobs_env.h) then keeps
 * the first N devices.
 *
 * gpu_pick itself reads nothing but its arguments and the lease table; the
 * caller gathers what NVML last saw (job_env.h).  The lease table is
 * thread-safe.
 */
#ifndef DLPROF_GPU_PICK_H
#define DLPROF_GPU_PICK_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "knobs_env.h"

#define GPU_PICK_MAX 64          /* GPUs on one node, as the NVML collector reads them */
#define GPU_UUID_MAX 96          /* nvmlDeviceGetUUID's buffer */

/*
 * Idle, in the last sample: utilisation (percent of the period a kernel
 * ran) at most this, and used memory at most this share of the total.
 * nvmlDeviceGetMemoryInfo's "used" includes what the driver reserves for
 * itself (about 1 % of an 80 GB GPU); a CUDA context alone adds a few
 * hundred MiB, which the process list catches first.
 */
#define GPU_PICK_IDLE_UTIL_PERCENT 2.0
#define GPU_PICK_IDLE_MEM_SHARE 0.03
/*
 * How long a GPU handed out stays taken when no process has opened it yet
 * and no running job holds it (a recommendation whose job never came).
 */
#define GPU_PICK_LEASE_S 60.0

/* What the NVML collector last saw of one GPU. */
struct gpu_seen {
	int index;                   /* NVML's index: PCI bus order */
	char uuid[GPU_UUID_MAX];     /* "GPU-..."; "" when the driver gave none */
	double util_percent;         /* < 0: not in the sample */
	double mem_used_bytes;       /* < 0: not in the sample */
	double mem_total_bytes;
	double processes;            /* compute processes on it; < 0: not in the sample */
	bool mig;                    /* MIG mode on: CUDA sees its instances (MIG-...), not the GPU */
};

struct gpu_pick_request {
	long want;                   /* the config's gpus; <= 0 picks nothing */
	const char *allowed;         /* the job's allocation: indices or UUIDs, comma-separated; NULL or "": the node */
	const char *holder;          /* who asks (a job's external id); the same holder within its lease gets the same GPUs */
	double now;                  /* seconds, monotonic */
	const char *const *running;  /* holders of running jobs: their leases last while they run */
	size_t nrunning;
};

/* The answer: what CUDA_VISIBLE_DEVICES becomes and why. */
struct gpu_pick {
	bool verified;               /* checked against NVML; false: devices is "" (the mapping's first N) */
	int n;                       /* GPUs picked */
	int index[GPU_PICK_MAX];
	char uuid[GPU_PICK_MAX][GPU_UUID_MAX];
	int idle;                    /* of the n, how many were idle */
	char devices[KNOBS_ENV_VALUE_MAX]; /* CUDA_VISIBLE_DEVICES: UUIDs, or indices when a GPU has none */
	bool by_index;               /* devices holds indices: CUDA_DEVICE_ORDER=PCI_BUS_ID goes with them */
	char reason[384];            /* what was done and why, for a person */
};

struct gpu_leases;

/* An empty table whose leases last lease_s seconds; NULL when out of memory. */
struct gpu_leases *gpu_leases_new(double lease_s);
void gpu_leases_free(struct gpu_leases *l);

/*
 * Picks req->want GPUs among gpus[0..n) (NULL or n == 0: NVML saw none or
 * is off) and leases them to req->holder.  Idle GPUs first, in index order;
 * when fewer are idle than wanted, the least busy of the others fill up
 * and reason says so; never a GPU outside req->allowed, nor one in MIG
 * mode (CUDA sees its instances, not the GPU).  Always fills out.
 */
void gpu_pick(struct gpu_leases *l, const struct gpu_seen *gpus, size_t n, const struct gpu_pick_request *req,
	      struct gpu_pick *out);

/* {"verified", "devices": [{"index","uuid","idle"}], "reason"}: the answer's "gpu_pick"; NULL when out of memory. */
json_t *gpu_pick_json(const struct gpu_pick *p);

#endif
