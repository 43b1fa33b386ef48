/*
 * Jobs: registration, listing, one job's view and its end.  Who may
 * register, adopt and end what is decided in jobs.c; these handlers turn a
 * request into its call and its answer into a status.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "app.h"
#include "clock.h"
#include "cluster.h"
#include "cluster_ranks.h"
#include "job_env.h"
#include "job_view.h"
#include "jobs.h"
#include "node.h"
#include "store.h"
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

void api_caller(const struct http_request *req, struct jobs_caller *who)
{
	who->has_uid = req->peer.has_uid;
	who->uid = req->peer.uid;
	who->token = req->peer.token_ok;
}

void api_jobs_error(struct http_response *resp, int err, const char *why, const char *what)
{
	switch (err) {
	case JOBS_EFORBIDDEN:
		http_reply_error(resp, 403, "forbidden", "%s", why);
		return;
	case JOBS_ENOPROC:
		http_reply_error(resp, 400, "no_such_process", "%s", why);
		return;
	case JOBS_EENDED:
		http_reply_error(resp, 409, "job_ended", "%s", why);
		return;
	default:
		api_store_error(resp, err, what);
		return;
	}
}

/* Whether the caller is a reader from the network without the token, who sees jobs redacted (job_view_redact). */
static bool redacted_for(const struct http_request *req)
{
	return !req->peer.loopback && !req->peer.unix_socket && !req->peer.token_ok;
}

void api_jobs_list(const struct http_request *req, struct http_response *resp)
{
	const char *state = http_query(req, "state");
	int which = state ? config_enum_value(config_job_filter_names, state) : JOB_FILTER_RUNNING;
	json_t *jobs, *job;
	size_t i;
	int r;

	if (which < 0) {
		http_reply_error(resp, 400, "bad_request", "state: one of running, ended, all");
		return;
	}
	r = store_jobs_list(req->app->store, (enum job_filter)which, &jobs);
	if (r != STORE_OK) {
		api_store_error(resp, r, "jobs");
		return;
	}
	json_array_foreach(jobs, i, job) {
		if (req->app->cluster)
			cluster_ranks_merge(cluster_ranks_of(req->app->cluster), job);
		if (redacted_for(req))
			job_view_redact(job);
	}
	http_reply_json(resp, 200, json_pack("{s:o}", "jobs", jobs));
}

void api_jobs_register(const struct http_request *req, struct http_response *resp)
{
	json_t *body = http_parse_json_body(req, resp), *config = NULL, *env, *gpu_pick;
	char *params = NULL, *knobs = NULL, err[256], holder[32];
	struct job_env_for for_job;
	struct jobs_caller who;
	struct job_spec spec;
	struct job_rank_spec rank;
	bool adopted = false;
	int64_t id;
	int r;

	if (!body)
		return;
	if (validate_registration(body, &spec, &params, &knobs, err, sizeof(err)) < 0 ||
	    (r = validate_rank(body, &rank, err, sizeof(err))) < 0) {
		http_reply_error(resp, 400, "bad_request", "%s", err);
		goto done;
	}
	if (r > 0) {
		/* A rank that does not name its node runs on this one. */
		if (!rank.node)
			rank.node = req->app->node ? req->app->node->hostname : "localhost";
		spec.rank = &rank;
	}
	spec.started = clock_now_s();
	api_caller(req, &who);
	r = jobs_register(req->app->jobs, &who, &spec, json_object_get(body, "knobs"), &id, &adopted, &config, err,
			  sizeof(err));
	if (r != STORE_OK) {
		api_jobs_error(resp, r, err, "register job");
		goto done;
	}
	/*
	 * env: the variables the config sets (job_env.h), for a prologue or
	 * the client to apply; gpu_pick: the GPUs it was handed, leased to the
	 * job's external id (what its recommendation was leased to) or its id.
	 */
	if (!spec.external_id)
		snprintf(holder, sizeof(holder), "job:%lld", (long long)id);
	for_job = (struct job_env_for){spec.external_id ? spec.external_id : holder,
					  json_string_value(json_object_get(body, "gpus_allowed"))};
	env = job_env(req->app, config, &for_job, &gpu_pick);
	http_reply_json(resp, adopted ? 200 : 201,
			json_pack("{s:I, s:s, s:o, s:o, s:o, s:b, s:o*}", "id", (json_int_t)id, "workload", spec.workload,
				  "params", json_loads(params, 0, NULL), "config", config, "env", env,
				  "adopted", adopted, "gpu_pick", gpu_pick));
	config = NULL;
done:
	json_decref(config);
	free(params);
	free(knobs);
	json_decref(body);
}

int api_job_view(const struct http_request *req, int64_t id, json_t **out)
{
	int r;

	*out = job_view_json(req->app, id, redacted_for(req), &r);
	return r;
}

void api_job_get(const struct http_request *req, struct http_response *resp)
{
	bool redacted = redacted_for(req);
	int64_t id;
	size_t len;
	char *text;
	int r;

	if (api_job_id(req, resp, &id) < 0)
		return;
	/* Rendered once per state of the store (job_view.c): what every job page and dlprofctl polls. */
	if ((text = job_view_text(req->app, id, redacted, &len, &r)) == NULL) {
		api_store_error(resp, r, "job");
		return;
	}
	http_reply_text(resp, 200, "application/json", text, len);
}

void api_job_end(const struct http_request *req, struct http_response *resp)
{
	json_t *body = NULL, *exit_status, *rank;
	struct jobs_caller who;
	char why[256];
	int64_t id;
	int r;

	if (api_job_id(req, resp, &id) < 0)
		return;
	if (req->body_len > 0 && !(body = http_parse_json_body(req, resp)))
		return;
	exit_status = json_object_get(body, "exit_status");
	rank = json_object_get(body, "rank");
	if (exit_status && !json_is_null(exit_status) && !json_is_integer(exit_status)) {
		http_reply_error(resp, 400, "bad_request", "exit_status: an integer is required");
		goto done;
	}
	if (rank && !json_is_null(rank) &&
	    (!json_is_integer(rank) || json_integer_value(rank) < 0 || json_integer_value(rank) >= VALIDATE_RANKS_MAX)) {
		http_reply_error(resp, 400, "bad_request", "rank: the ending rank, an integer 0..%d, is required",
				 VALIDATE_RANKS_MAX - 1);
		goto done;
	}
	api_caller(req, &who);
	/* A rank's end ends the job when it was the last rank running here. */
	r = jobs_end(req->app->jobs, &who, id, json_is_integer(rank) ? (int)json_integer_value(rank) : -1,
		     clock_now_s(), json_is_integer(exit_status), (int)json_integer_value(exit_status), why, sizeof(why));
	if (r != STORE_OK) {
		api_jobs_error(resp, r, why, "end job");
		goto done;
	}
	http_reply_json(resp, 200, json_pack("{s:I, s:s}", "id", (json_int_t)id, "state",
				   config_enum_name(config_job_state_names, JOB_STATE_ENDED)));
done:
	json_decref(body);
}
