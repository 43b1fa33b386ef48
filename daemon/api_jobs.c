/*
 * Jobs: registration, listing, one job's view and its end.  A job registered
 * over the Unix socket belongs to the peer's uid; another non-root uid may
 * not change it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "app.h"
#include "clock.h"
#include "knobs_env.h"
#include "log.h"
#include "node.h"
#include "store.h"
#include "store_series.h"
#include "tuner.h"
#include "validate.h"

int api_job_id(const struct http_request *req, struct http_response *resp, int64_t *id)
{
	const char *text = http_param(req, "id");
	char *end;
	long long v;

	errno = 0;
	v = text ? strtoll(text, &end, 10) : 0;
	if (!text || errno || *end != '\0' || v <= 0) {
		http_reply_error(resp, 404, "not_found", "no job '%s': job ids are positive integers",
				 text ? text : "");
		return -1;
	}
	*id = v;
	return 0;
}

void api_store_error(struct http_response *resp, int err, const char *what)
{
	switch (err) {
	case STORE_ENOTFOUND:
		http_reply_error(resp, 404, "not_found", "%s: not found", what);
		return;
	case STORE_EBUSY:
		http_reply_error(resp, 503, "busy", "%s: the write queue is full; retry shortly", what);
		http_add_header(resp, "Retry-After", "1");
		return;
	case STORE_EINVAL:
		http_reply_error(resp, 400, "bad_request", "%s: %s", what, store_strerror(err));
		return;
	default:
		http_reply_error(resp, 503, "store_unavailable", "%s: %s", what, store_strerror(err));
		http_add_header(resp, "Retry-After", "5");
		return;
	}
}

bool api_may_change_job(const struct http_request *req, const struct job_brief *b, struct http_response *resp)
{
	if (!req->peer.has_uid || req->peer.uid == 0 || !b->has_uid || b->uid == req->peer.uid)
		return true;
	http_reply_error(resp, 403, "forbidden", "job %lld belongs to uid %u", (long long)b->id, (unsigned)b->uid);
	return false;
}

void api_jobs_list(const struct http_request *req, struct http_response *resp)
{
	const char *state = http_query(req, "state");
	json_t *jobs;
	int r;

	if (!state)
		state = "running";
	if (strcmp(state, "running") != 0 && strcmp(state, "ended") != 0 && strcmp(state, "all") != 0) {
		http_reply_error(resp, 400, "bad_request", "state: one of running, ended, all");
		return;
	}
	r = store_jobs_list(req->app->store, state, &jobs);
	if (r != STORE_OK) {
		api_store_error(resp, r, "jobs");
		return;
	}
	http_reply_json(resp, 200, json_pack("{s:o}", "jobs", jobs));
}

/* The config a new job starts with: the tuner's choice, or none yet. */
static json_t *initial_config(const struct http_request *req, int64_t id, const struct job_spec *spec,
			      const json_t *body)
{
	json_t *config = NULL;

	if (req->app->tuner)
		config = tuner_job_start(req->app->tuner, id, spec->workload, spec->params_json,
					 spec->objective ? spec->objective : "throughput",
					 json_object_get(body, "knobs"));
	return config ? config : json_object();
}

/*
 * A job the sampler already found (its Slurm id) is adopted rather than
 * registered twice: a prologue or the client often registers a job that
 * discovery saw first.
 */
static int register_or_adopt(struct store *st, const struct job_spec *spec, int64_t *id, bool *adopted)
{
	int r;

	if (spec->external_id && store_job_find_external(st, spec->external_id, id) == STORE_OK) {
		r = store_job_adopt(st, *id, spec);
		if (r != STORE_ENOTFOUND) {
			*adopted = r == STORE_OK;
			return r;
		}
	}
	return store_job_register(st, spec, id);
}

void api_jobs_register(const struct http_request *req, struct http_response *resp)
{
	json_t *body = http_parse_json_body(req, resp), *config = NULL;
	char *params = NULL, *knobs = NULL, *config_text = NULL, err[256];
	struct job_spec spec;
	bool adopted = false;
	int64_t id;
	int r;

	if (!body)
		return;
	if (validate_registration(body, &spec, &params, &knobs, err, sizeof(err)) < 0) {
		http_reply_error(resp, 400, "bad_request", "%s", err);
		goto done;
	}
	spec.hw_class = req->app->node->hw_class;
	spec.has_uid = req->peer.has_uid;
	spec.uid = req->peer.uid;
	spec.source = spec.external_id && strncmp(spec.external_id, "slurm:", 6) == 0 ? "slurm" : "registered";
	spec.started = clock_now_s();
	r = register_or_adopt(req->app->store, &spec, &id, &adopted);
	if (r != STORE_OK) {
		api_store_error(resp, r, "register job");
		goto done;
	}
	config = initial_config(req, id, &spec, body);
	config_text = json_dumps(config, JSON_COMPACT | JSON_SORT_KEYS);
	if (config_text && (r = store_job_set_config(req->app->store, id, config_text)) != STORE_OK) {
		api_store_error(resp, r, "register job");
		goto done;
	}
	/* env: the variables the config sets (knobs_env.h), for a prologue or the client to apply. */
	http_reply_json(resp, adopted ? 200 : 201,
			json_pack("{s:I, s:s, s:o, s:o, s:o, s:b}", "id", (json_int_t)id, "workload", spec.workload,
				  "params", json_loads(params, 0, NULL), "config", config, "env", knobs_env(config),
				  "adopted", adopted));
	config = NULL;
done:
	json_decref(config);
	free(config_text);
	free(params);
	free(knobs);
	json_decref(body);
}

void api_job_get(const struct http_request *req, struct http_response *resp)
{
	json_t *job;
	int64_t id;
	int r;

	if (api_job_id(req, resp, &id) < 0)
		return;
	r = store_job_get(req->app->store, id, &job);
	if (r != STORE_OK) {
		api_store_error(resp, r, "job");
		return;
	}
	http_reply_json(resp, 200, job);
}

void api_job_end(const struct http_request *req, struct http_response *resp)
{
	json_t *body = NULL, *exit_status;
	struct job_brief b;
	int64_t id;
	int r;

	if (api_job_id(req, resp, &id) < 0)
		return;
	if (req->body_len > 0 && !(body = http_parse_json_body(req, resp)))
		return;
	exit_status = json_object_get(body, "exit_status");
	if (exit_status && !json_is_null(exit_status) && !json_is_integer(exit_status)) {
		http_reply_error(resp, 400, "bad_request", "exit_status: an integer is required");
		goto done;
	}
	r = store_job_brief(req->app->store, id, &b);
	if (r != STORE_OK) {
		api_store_error(resp, r, "job");
		goto done;
	}
	if (!api_may_change_job(req, &b, resp))
		goto done;
	r = store_job_end(req->app->store, id, clock_now_s(), json_is_integer(exit_status),
			  (int)json_integer_value(exit_status));
	if (r != STORE_OK) {
		api_store_error(resp, r, "end job");
		goto done;
	}
	if (req->app->tuner)
		tuner_job_end(req->app->tuner, id);
	http_reply_json(resp, 200, json_pack("{s:I, s:s}", "id", (json_int_t)id, "state", "ended"));
done:
	json_decref(body);
}
