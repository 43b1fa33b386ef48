/*
 * GET /api/v1/jobs/{id}/report: the job's diagnosis (diag_report.h), what
 * holds it back with the evidence and a priced fix; for a running job what
 * holds now, for an ended one what held during its life.
 */
#include "api.h"
#include "app.h"
#include "diag_report.h"
#include "store.h"

void
api_job_report(const struct http_request *req, struct http_response *resp)
{
	json_t *report;
	int64_t id;
	int r;

	if (api_job_id(req, resp, &id) < 0)
		return;
	if (req->app->diag == NULL) {
		http_reply_error(resp, 404, "not_found", "the diagnosis is off");
		return;
	}
	r = diag_report(req->app->diag, id, &report);
	if (r != STORE_OK) {
		api_store_error(resp, r, "job");
		return;
	}
	http_reply_json(resp, 200, report);
}
