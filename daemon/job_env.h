/*
 * The environment a job is handed for a config: the GPUs it gets
 * (gpu_pick.h, from what the NVML collector last saw) put through the one
 * mapping (knobs_env.h).  Every path that hands a job its variables comes
 * here: /api/v1/recommend as JSON and as export lines (the Slurm TaskProlog
 * and the SPANK plugin's recommend mode read those), and the registration
 * answer's "env" (the SPANK plugin's tune mode and the Python client).
 * Thread-safe; called by request handlers.
 */
#ifndef DLPROF_JOB_ENV_H
#define DLPROF_JOB_ENV_H

#include <jansson.h>

struct app;

/* Who the variables are for. */
struct job_env_for {
	const char *holder;     /* the job's external id ("slurm:42"), or NULL: a lease nobody can ask for again */
	const char *allowed;    /* the GPUs of the job's allocation (indices or UUIDs, comma-separated), or NULL */
};

/*
 * The variables for config (knobs_env.h's object).  When the config asks
 * for GPUs, *gpu_pick is set to what was picked and why (gpu_pick_json;
 * the caller owns it), else to NULL.  NULL when memory ran out.
 */
json_t *job_env(const struct app *app, const json_t *config, const struct job_env_for *who, json_t **gpu_pick);

#endif
