/*
 * POST /api/v1/jobs/{id}/metrics: a job reports a batch of samples and the
 * config it ran with; the batch is validated whole (nothing of a rejected
 * batch is stored), committed, shown to the tuner, and the answer carries
 * the config the job should run from now on.
 */
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "app.h"
#include "clock.h"
#include "stats.h"
#include "store.h"
#include "tuner.h"
#include "validate.h"

/* The config to answer with: the tuner's, or what the job already runs. */
static json_t *next_config(const struct http_request *req, int64_t id, const struct ingest_batch *b)
{
	json_t *config = NULL;

	if (req->app->tuner)
		config = tuner_job_observe(req->app->tuner, id, b->samples, b->n, b->config);
	if (!config)
		config = b->config ? json_deep_copy(b->config) : json_object();
	return config;
}

void api_job_metrics(const struct http_request *req, struct http_response *resp)
{
	struct app *app = req->app;
	struct ingest_batch batch = {0};
	struct ingest_limits lim;
	struct job_brief brief;
	json_t *body = NULL, *config;
	char err[256];
	double now = clock_now_s();
	int64_t id;
	int r;

	if (api_job_id(req, resp, &id) < 0)
		return;
	r = store_job_brief(app->store, id, &brief);
	if (r != STORE_OK) {
		api_store_error(resp, r, "job");
		return;
	}
	if (!api_may_change_job(req, &brief, resp))
		return;
	if (!brief.running) {
		http_reply_error(resp, 409, "job_ended", "job %lld has ended; register a new job", (long long)id);
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
	r = store_samples_write(app->store, batch.samples, batch.n);
	if (r != STORE_OK) {
		stats_count_ingest(app->stats, 0, true);
		api_store_error(resp, r, "metrics");
		goto done;
	}
	stats_count_ingest(app->stats, batch.n, false);
	config = next_config(req, id, &batch);
	if (!batch.config || !json_equal(config, batch.config)) {
		char *text = json_dumps(config, JSON_COMPACT | JSON_SORT_KEYS);
		/* The samples are committed; a failure here only delays the job view. */
		if (text)
			store_job_set_config(app->store, id, text);
		free(text);
	}
	http_reply_json(resp, 200, json_pack("{s:I, s:o}", "accepted", (json_int_t)batch.n, "config", config));
done:
	ingest_batch_free(&batch);
	json_decref(body);
}
