/*
 * Implementation of job_env.h: what the NVML collector last saw of each
 * GPU (the sampler's typed view, sampler_gpus), handed to gpu_pick, whose
 * device list goes to knobs_env.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "clock.h"
#include "job_env.h"
#include "gpu_pick.h"
#include "knobs.h"
#include "sampler.h"
#include "store.h"

/*
 * The lease holders of the running jobs, as registration names them (their
 * external id, else "job:ID"), into names (each GPU_HOLDER_TEXT long);
 * how many.  None when the store cannot say: leases then last their time.
 */
#define GPU_HOLDER_TEXT 160
#define GPU_RUNNING_MAX 1024

static size_t running_holders(struct store *st, char (*names)[GPU_HOLDER_TEXT], const char **ptrs)
{
	json_t *jobs = NULL, *j;
	size_t i, n = 0;

	if (!st || store_jobs_list(st, JOB_FILTER_RUNNING, &jobs) != STORE_OK)
		return 0;
	json_array_foreach(jobs, i, j) {
		const json_t *ext = json_object_get(j, "external_id");
		if (n == GPU_RUNNING_MAX)
			break;
		if (json_is_string(ext))
			snprintf(names[n], GPU_HOLDER_TEXT, "%s", json_string_value(ext));
		else
			snprintf(names[n], GPU_HOLDER_TEXT, "job:%lld", (long long)json_integer_value(json_object_get(j, "id")));
		ptrs[n] = names[n];
		n++;
	}
	json_decref(jobs);
	return n;
}

json_t *job_env(const struct app *app, const json_t *config, const struct job_env_for *who, json_t **gpu_pick_out)
{
	const json_t *want = json_object_get(config, knob_name(KNOB_GPUS));
	struct gpu_seen gpus[GPU_PICK_MAX];
	struct gpu_pick pick;
	struct gpu_pick_request req = {json_is_integer(want) ? (long)json_integer_value(want) : 0,
				       who ? who->allowed : NULL, who ? who->holder : NULL, clock_mono_s(), NULL, 0};
	char (*names)[GPU_HOLDER_TEXT] = NULL;
	const char **ptrs = NULL;
	size_t n;

	*gpu_pick_out = NULL;
	if (req.want <= 0)
		return knobs_env(config, NULL);
	n = app->gpu_leases && app->sampler ? sampler_gpus(app->sampler, gpus, GPU_PICK_MAX) : 0;
	/* Running jobs keep the GPUs they were handed past the lease (a job loading data shows none yet). */
	if (n && (names = malloc(GPU_RUNNING_MAX * sizeof(*names))) && (ptrs = malloc(GPU_RUNNING_MAX * sizeof(*ptrs)))) {
		req.nrunning = running_holders(app->store, names, ptrs);
		req.running = ptrs;
	}
	gpu_pick(app->gpu_leases, n ? gpus : NULL, n, &req, &pick);
	free(ptrs);
	free(names);
	if (!(*gpu_pick_out = gpu_pick_json(&pick)))
		return NULL;
	return knobs_env(config, pick.verified ? pick.devices : NULL);
}
