/*
 * POST /api/v1/jobs/{id}/metrics: a job reports a batch of samples and the
 * config it ran with; the batch is validated whole (nothing of a rejected
 * batch is stored), committed, shown to the tuner (jobs.c), and the answer
 * carries the config the job should run from now on.  A batch numbered
 * (stream, seq) that was stored before is answered 200 with "duplicate":
 * true and neither stored nor counted again.
 */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "app.h"
#include "clock.h"
#include "live.h"
#include "jobs.h"
#include "stats.h"
#include "store.h"
#include "validate.h"

void api_job_metrics(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	struct ingest_batch batch = {0};
	struct ingest_limits lim;
	struct jobs_caller who;
	json_t *body = NULL, *config;
	char err[256];
	double now = clock_now_s();
	bool duplicate;
	int64_t id;
	long within;
	int r;

	if (api_job_id(req, resp, &id) < 0)
		return;
	api_caller(req, &who);
	r = jobs_may_ingest(app->jobs, &who, id, err, sizeof(err));
	if (r != STORE_OK) {
		api_jobs_error(resp, r, err, "job");
		return;
	}
	if (!(body = http_parse_json_body(req, resp))) {
		stats_count_ingest(app->stats, 0, true);
		return;
	}
	lim.max_samples = atomic_load(&app->limits.max_samples);
	lim.oldest = now - atomic_load(&app->limits.max_sample_age_s);
	lim.newest = now + atomic_load(&app->limits.max_sample_skew_s);
	if (validate_ingest(body, id, &lim, &batch, err, sizeof(err)) < 0) {
		stats_count_ingest(app->stats, 0, true);
		http_reply_error(resp, 400, "bad_request", "%s", err);
		goto done;
	}
	r = jobs_ingest(app->jobs,
			&(struct jobs_batch){id, batch.samples, batch.n, batch.config, batch.stream, batch.seq, batch.rank >= 0,
					     batch.rank},
			&duplicate, &config);
	if (r != STORE_OK) {
		stats_count_ingest(app->stats, 0, true);
		api_store_error(resp, r, "metrics");
		goto done;
	}
	/* A resent batch's samples were counted when it was stored. */
	stats_count_ingest(app->stats, duplicate ? 0 : batch.n, false);
	if (!duplicate && batch.n > 0 && app->live != NULL)
		live_ingested(app->live, id);
	/* Only rank 0's steps are what the tuner measures (jobs_ingest). */
	within = duplicate || batch.rank > 0 ? 0 : jobs_report_within(app->jobs, id);
	/* report_within 0: nothing is about to be decided, the job reports at its own pace. */
	http_reply_json(resp, 200,
			json_pack("{s:I, s:o, s:b, s:I}", "accepted", (json_int_t)(duplicate ? 0 : batch.n), "config",
				  config, "duplicate", duplicate, "report_within", (json_int_t)within));
done:
	ingest_batch_free(&batch);
	json_decref(body);
}
