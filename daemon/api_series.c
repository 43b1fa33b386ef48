/*
 * GET /api/v1/jobs/{id}/series?name=&from=&to=&step=[&phase=]: one time
 * series of a job (id 0: the node), downsampled by the store to at most
 * about STORE_SERIES_MAX_POINTS points with each point's min/max band and
 * the tier read, with the unit the metric catalogue gives its name.
 *
 * GET /api/v1/jobs/{id}/live: the same job's (or node's) sampled values as
 * server-sent events, one per sampler tick (live.h), for charts that
 * follow the sampler; /series stays the way to fill them and the fallback.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "app.h"
#include "clock.h"
#include "live.h"
#include "metrics.h"
#include "store.h"
#include "store_series.h"
#include "validate.h"

int
api_query_number(const struct http_request *req, struct http_response *resp, const char *key, bool *has, double *v)
{
	const char *text = http_query(req, key);
	char *end;

	*has = false;
	if (text == NULL || *text == '\0')
		return 0;
	errno = 0;
	*v = strtod(text, &end);
	if (errno != 0 || *end != '\0' || !isfinite(*v)) {
		http_reply_error(resp, 400, "bad_request", "%s must be a number (unix seconds, or seconds for step)",
				 key);
		return -1;
	}
	*has = true;
	return 0;
}

int
api_query_range(const struct http_request *req, struct http_response *resp, bool *has_from, double *from, bool *has_to,
		double *to, bool *has_step, double *step)
{
	if (api_query_number(req, resp, "from", has_from, from) < 0 ||
	    api_query_number(req, resp, "to", has_to, to) < 0 ||
	    api_query_number(req, resp, "step", has_step, step) < 0)
		return -1;
	if (*has_from && *has_to && *to < *from) {
		http_reply_error(resp, 400, "bad_request", "to (%.3f) is before from (%.3f)", *to, *from);
		return -1;
	}
	if (*has_step && !(*step > 0)) {
		http_reply_error(resp, 400, "bad_request", "step must be a positive number of seconds");
		return -1;
	}
	return 0;
}

int api_job_range(const struct http_request *req, struct http_response *resp, int64_t id, double max_points,
		  double *from, double *to, double *step)
{
	bool has_from, has_to, has_step;
	json_t *job;
	int r;

	if (api_query_range(req, resp, &has_from, from, &has_to, to, &has_step, step) < 0)
		return -1;
	if ((r = store_job_get(req->app->store, id, &job)) != STORE_OK) {
		api_store_error(resp, r, "job");
		return -1;
	}
	if (!has_from)
		*from = json_number_value(json_object_get(job, "started"));
	if (!has_to)
		*to = json_is_number(json_object_get(job, "ended"))
			      ? json_number_value(json_object_get(job, "ended")) + 1
			      : clock_now_s() + 1;
	json_decref(job);
	if (*to <= *from)
		*to = *from + 1;
	*step = fmax(has_step ? *step : 0, (*to - *from) / max_points);
	return 0;
}

static int
series_query(const struct http_request *req, struct http_response *resp, struct store_series_query *q)
{
	const char *id = http_param(req, "id");

	memset(q, 0, sizeof(*q));
	if (id == NULL || strcmp(id, "0") != 0) {
		if (api_job_id(req, resp, &q->job_id) < 0)
			return -1;
	}
	q->name = http_query(req, "name");
	if (q->name == NULL || !validate_metric_name(q->name)) {
		http_reply_error(resp, 400, "bad_request", "name is required: a metric name matching [a-z0-9_.]{1,64}");
		return -1;
	}
	q->phase = http_query(req, "phase");
	if (q->phase != NULL && !validate_label(q->phase, VALIDATE_NAME_MAX)) {
		http_reply_error(resp, 400, "bad_request", "phase must be printable text of 1 to 64 bytes");
		return -1;
	}
	return api_query_range(req, resp, &q->has_from, &q->from, &q->has_to, &q->to, &q->has_step, &q->step);
}

void
api_job_series(const struct http_request *req, struct http_response *resp)
{
	struct store_series_query q;
	struct store_series_answer a;
	int r;

	if (series_query(req, resp, &q) < 0)
		return;
	r = store_series(req->app->store, &q, &a);
	if (r != STORE_OK) {
		api_store_error(resp, r, "job");
		return;
	}
	http_reply_json(resp, 200,
			json_pack("{s:s,s:s,s:I,s:f,s:f,s:s,s:o,s:o}", "name", q.name, "unit", metric_unit(q.name), "job",
				  (json_int_t)q.job_id, "from", a.from, "to", a.to, "tier", a.tier, "points", a.points,
				  "bands", a.bands));
}

void
api_job_live(const struct http_request *req, struct http_response *resp)
{
	const char *id = http_param(req, "id");
	struct job_brief brief;
	struct live_stream *ls;
	int64_t job = 0;
	int r;

	if (id == NULL || strcmp(id, "0") != 0) {
		if (api_job_id(req, resp, &job) < 0)
			return;
		if ((r = store_job_brief(req->app->store, job, &brief)) != STORE_OK) {
			api_store_error(resp, r, "job");
			return;
		}
	}
	if (req->app->live == NULL || req->app->sampler == NULL) {
		http_reply_error(resp, 404, "not_found", "live streams are off (no sampler); poll the series instead");
		return;
	}
	if ((ls = live_open(req->app->live, req->app->sampler, job)) == NULL) {
		http_reply_error(resp, 503, "busy", "%u live streams are open, the most allowed; poll the series instead",
				 live_max_streams(req->app->live));
		http_add_header(resp, "Retry-After", "10");
		return;
	}
	http_response_clear(resp);
	resp->status = 200;
	resp->content_type = "text/event-stream";
	http_add_header(resp, "Cache-Control", "no-store");
	resp->stream = (struct http_stream){live_stream_start, live_stream_cancel, ls};
}
