/*
 * The one mapping from a config to the environment variables that carry it
 * into a job: /api/v1/recommend's export lines, the env object of the
 * registration answer (which the SPANK plugin's tune mode and the Python
 * client apply) all come from here, so one config gives a job the same
 * variables on every path.  Pure: no I/O, no lock.
 */
#ifndef DLPROF_KNOBS_ENV_H
#define DLPROF_KNOBS_ENV_H

#include <jansson.h>

/* The longest value a knob's variable can take (CUDA_VISIBLE_DEVICES's list). */
#define KNOBS_ENV_VALUE_MAX 512

/*
 * The variables for config (an object {knob: value}; "phases" and values
 * that are neither integers nor strings are skipped), as a new JSON object
 * {NAME: "value"} in a fixed order: the built-in knobs first
 * (intra_threads: OMP_NUM_THREADS and MKL_NUM_THREADS; interop_threads:
 * DLPROF_INTEROP_THREADS; dataloader_workers: DLPROF_DATALOADER_WORKERS;
 * gpus: CUDA_VISIBLE_DEVICES, gpus_picked when gpus > 0 and it is neither
 * NULL nor "" (the GPUs gpu_pick.h chose, by UUID, or by NVML index with
 * CUDA_DEVICE_ORDER=PCI_BUS_ID before it), else the first N devices;
 * affinity: OMP_PROC_BIND close or spread with OMP_PLACES=cores, else
 * false; allocator jemalloc: LD_PRELOAD), then each declared knob as
 * DLPROF_KNOB_<NAME> in upper case.  NULL when memory ran out.
 */
json_t *knobs_env(const json_t *config, const char *gpus_picked);

#endif
