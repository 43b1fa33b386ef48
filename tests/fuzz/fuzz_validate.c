/*
 * libFuzzer target for what jobs send: the input is a request body, run
 * through the same steps as the ingest and registration handlers
 * (http_parse_json_body, validate_ingest, validate_registration, then the
 * error reply).  Beyond "no crash, no leak" it checks the contracts: an
 * accepted batch holds only well-formed samples inside the time window, a
 * refusal names a field, and every reply is valid, ASCII-only JSON with
 * the status the handler would send.
 */
#undef NDEBUG   /* the checks below are the point */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http.h"
#include "validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The reply must be a JSON object {"error","detail"} in plain ASCII. */
static void check_error_reply(const struct http_response *resp, int status)
{
	json_t *v;

	assert(resp->status == status);
	assert(resp->body && resp->body_len > 0);
	for (size_t i = 0; i < resp->body_len; i++)
		assert((unsigned char)resp->body[i] < 0x80);
	v = json_loadb(resp->body, resp->body_len, 0, NULL);
	assert(json_is_object(v));
	assert(json_is_string(json_object_get(v, "error")));
	assert(json_string_length(json_object_get(v, "detail")) > 0);
	json_decref(v);
}

static void check_batch(const struct ingest_batch *b, const struct ingest_limits *lim)
{
	assert(b->n <= lim->max_samples);
	for (size_t i = 0; i < b->n; i++) {
		const struct sample *s = &b->samples[i];
		assert(s->job_id == 1);
		assert(isfinite(s->t) && s->t >= lim->oldest && s->t <= lim->newest);
		assert(isfinite(s->value));
		assert(validate_metric_name(s->name));
		assert(!s->phase || validate_label(s->phase, VALIDATE_NAME_MAX));
	}
	assert(!b->config || json_is_object(b->config));
}

static void fuzz_ingest(const json_t *body)
{
	/* A fixed window keeps runs reproducible. */
	struct ingest_limits lim = {.max_samples = 64, .oldest = 1.0e9, .newest = 2.0e9};
	struct ingest_batch b = {0};
	struct http_response resp = {0};
	char err[256] = "";

	if (validate_ingest(body, 1, &lim, &b, err, sizeof(err)) == 0) {
		check_batch(&b, &lim);
		ingest_batch_free(&b);
		return;
	}
	assert(err[0] != '\0' && b.samples == NULL);
	http_reply_error(&resp, 400, "bad_request", "%s", err);
	check_error_reply(&resp, 400);
	http_response_clear(&resp);
}

static void fuzz_registration(const json_t *body)
{
	struct http_response resp = {0};
	struct job_spec spec;
	char *params = NULL, *knobs = NULL, err[256] = "";
	json_t *canon;

	if (validate_registration(body, &spec, &params, &knobs, err, sizeof(err)) == 0) {
		assert(spec.workload && validate_label(spec.workload, VALIDATE_WORKLOAD_MAX));
		assert(spec.pid >= 0);
		canon = json_loads(params, 0, NULL);
		assert(json_is_object(canon));
		json_decref(canon);
		free(params);
		free(knobs);
		return;
	}
	assert(err[0] != '\0' && params == NULL && knobs == NULL);
	http_reply_error(&resp, 400, "bad_request", "%s", err);
	check_error_reply(&resp, 400);
	http_response_clear(&resp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_request req = {0};
	struct http_response resp = {0};
	char *body = malloc(size + 1);
	json_t *v;

	if (!body)
		return 0;
	memcpy(body, data, size);
	body[size] = '\0';
	req.method = "POST";
	req.path = "/api/v1/jobs";
	req.content_type = "application/json";
	req.body = body;
	req.body_len = size;
	v = http_parse_json_body(&req, &resp);
	if (!v) {
		check_error_reply(&resp, 400);
	} else {
		fuzz_ingest(v);
		fuzz_registration(v);
		json_decref(v);
	}
	http_response_clear(&resp);
	free(body);
	return 0;
}
