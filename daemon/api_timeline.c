/*
 * GET /api/v1/jobs/{id}/timeline: the story of a job (timeline.h), from
 * its start to its end: each config it ran and why, each phase override,
 * each verdict raised and cleared, ranks joined and left.  Verdicts are
 * the diagnosis' over the job's whole life (diag_history), computed when
 * asked; the rest is read from the store.
 */
#include "api.h"
#include "app.h"
#include "diag_report.h"
#include "store.h"
#include "store_events.h"
#include "timeline.h"

int api_timeline_events(const struct http_request *req, int64_t id, const json_t *job, json_t **out)
{
	json_t *events = NULL, *verdicts = NULL;
	int r;

	if ((r = store_job_events(req->app->store, id, &events)) != STORE_OK)
		return r;
	/* Without the diagnosis there are no verdicts to tell. */
	if (req->app->diag && (r = diag_history(req->app->diag, id, &verdicts)) != STORE_OK) {
		json_decref(events);
		return r;
	}
	*out = timeline_events(job, events, verdicts);
	json_decref(events);
	json_decref(verdicts);
	return *out ? STORE_OK : STORE_EIO;
}

void api_job_timeline(const struct http_request *req, struct http_response *resp)
{
	json_t *job, *events;
	int64_t id;
	int r;

	if (api_job_id(req, resp, &id) < 0)
		return;
	if ((r = api_job_view(req, id, &job)) != STORE_OK) {
		api_store_error(resp, r, "job");
		return;
	}
	if ((r = api_timeline_events(req, id, job, &events)) != STORE_OK) {
		json_decref(job);
		api_store_error(resp, r, "job timeline");
		return;
	}
	http_reply_json(resp, 200,
			json_pack("{s:I,s:O,s:O,s:O,s:O,s:o}", "job", (json_int_t)id, "workload",
				  json_object_get(job, "workload"), "state", json_object_get(job, "state"), "started",
				  json_object_get(job, "started"), "ended", json_object_get(job, "ended"), "events",
				  events));
	json_decref(job);
}
