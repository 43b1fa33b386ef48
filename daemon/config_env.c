/*
 * Implementation of config_env.h: what the NVML collector last saw of each
 * GPU, read from the sampler's last tick (values gpu.N.util_percent,
 * mem_used_bytes, mem_total_bytes, processes; gpu.N.mig.* where MIG is
 * on) and its description (the UUIDs), handed to gpu_pick, whose device
 * list goes to knobs_env.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "clock.h"
#include "config_env.h"
#include "gpu_pick.h"
#include "knobs.h"
#include "sampler.h"
#include "store.h"

static const char *text(const json_t *v)
{
	return json_is_string(v) ? json_string_value(v) : "";
}

/* The nvml collector's {"gpus": [{"index","uuid"}]} when it is available, else NULL (a new reference). */
static json_t *nvml_detail(struct sampler *s)
{
	json_t *cols = sampler_collectors_json(s), *c, *gpus = NULL;
	size_t i;

	json_array_foreach(cols, i, c)
		if (strcmp(text(json_object_get(c, "name")), "nvml") == 0 &&
		    strcmp(text(json_object_get(c, "status")), "available") == 0)
			gpus = json_incref(json_object_get(json_object_get(c, "detail"), "gpus"));
	json_decref(cols);
	return gpus;
}

/* One node value of the last tick into its GPU's slot. */
static void seen_value(struct gpu_seen *gpus, size_t n, const struct collector_value *v)
{
	unsigned idx;
	char what[40];
	double *to = NULL;

	if (v->job_id != 0 || sscanf(v->name, "gpu.%u.%39s", &idx, what) != 2)
		return;
	for (size_t i = 0; i < n; i++) {
		if (gpus[i].index != (int)idx)
			continue;
		if (strcmp(what, "util_percent") == 0)
			to = &gpus[i].util_percent;
		else if (strcmp(what, "mem_used_bytes") == 0)
			to = &gpus[i].mem_used_bytes;
		else if (strcmp(what, "mem_total_bytes") == 0)
			to = &gpus[i].mem_total_bytes;
		else if (strcmp(what, "processes") == 0)
			to = &gpus[i].processes;
		else if (strncmp(what, "mig.", 4) == 0)
			gpus[i].mig = true;
		if (to)
			*to = v->value;
		return;
	}
}

/* What NVML last saw of each GPU; 0 when NVML is not sampling (or memory ran out: nothing is verified then). */
static size_t gpus_seen(struct sampler *s, struct gpu_seen *gpus, size_t max)
{
	struct sampler_snapshot snap;
	json_t *detail, *g;
	size_t i, n = 0;

	if (!s || !(detail = nvml_detail(s)))
		return 0;
	json_array_foreach(detail, i, g) {
		if (n == max || !json_is_integer(json_object_get(g, "index")))
			continue;
		gpus[n] = (struct gpu_seen){.index = (int)json_integer_value(json_object_get(g, "index")),
					    .util_percent = -1, .mem_used_bytes = -1, .processes = -1};
		snprintf(gpus[n].uuid, sizeof(gpus[n].uuid), "%s", text(json_object_get(g, "uuid")));
		n++;
	}
	json_decref(detail);
	if (n && sampler_snapshot_get(s, &snap) < 0)
		return 0;
	if (n) {
		for (i = 0; i < snap.nvalues; i++)
			seen_value(gpus, n, &snap.values[i]);
		sampler_snapshot_free(&snap);
	}
	return n;
}

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

json_t *config_env(const struct app *app, const json_t *config, const struct config_env_for *who, json_t **gpu_pick_out)
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
	n = app->gpu_leases ? gpus_seen(app->sampler, gpus, GPU_PICK_MAX) : 0;
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
