/*
 * GET /api/v1/jobs/{id}/record?from=&to=&step=&format=json|csv: a job's
 * whole record as one download (Content-Disposition: attachment), for the
 * dashboard's download link and `dlprofctl export`.  JSON: {"job" (its
 * view: config, trials, ranks, energy), "report" (its diagnosis, null when
 * off), "timeline" (api_timeline_events), "range": {"from","to","step"},
 * "series": [{"name","phase","unit","label","points":[[t, mean], ...]}]}:
 * every series the job has, the per-thread ones with their thread's name
 * as label, in buckets of step seconds (at least the range over
 * RECORD_MAX_POINTS; default: that), t the mean time of a bucket's points,
 * the mean to nine significant digits.  CSV: the series alone, one row a
 * point: name,phase,label,unit,t,value.  The range defaults to the job's
 * life.
 *
 * The series are written as text while the store reads them: a job with a
 * thousand threads has a million points, which as JSON values would take a
 * hundred megabytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "app.h"
#include "diag_report.h"
#include "log.h"
#include "metrics.h"
#include "store.h"
#include "store_labels.h"
#include "store_series.h"

#define RECORD_MAX_POINTS 1000

struct record_out {
	FILE *f;
	bool csv;
	const json_t *labels;       /* thread.PID.TID -> name */
	char name[128], phase[128]; /* the series being written */
	bool open;                  /* a series is open (JSON: its points array) */
	size_t npoints;             /* in the open series */
	bool failed;                /* jansson ran out of memory: the text is not whole */
};

/* s as a JSON string (escaped, ASCII), or null. */
static void put_json_string(struct record_out *o, const char *s)
{
	json_t *v = s ? json_string(s) : json_null();

	if (!v || json_dumpf(v, o->f, JSON_ENCODE_ANY | JSON_ENSURE_ASCII) < 0)
		o->failed = true;
	json_decref(v);
}

/*
 * s as a CSV field: quoted, quotes doubled; a field a spreadsheet would
 * run as a formula (= + - @ first) gets a ' before it (OWASP's advice).
 */
static void put_csv_field(FILE *f, const char *s)
{
	fputc('"', f);
	if (s && s[0] && strchr("=+-@", s[0]))
		fputc('\'', f);
	for (; s && *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* The label of a series: its thread's name for thread.PID.TID.*; NULL for others. */
static const char *series_label(const json_t *labels, const char *name)
{
	const char *dot = strrchr(name, '.');
	char key[128];

	if (strncmp(name, STORE_THREAD_PREFIX, strlen(STORE_THREAD_PREFIX)) != 0 || !dot ||
	    (size_t)(dot - name) >= sizeof(key))
		return NULL;
	snprintf(key, sizeof(key), "%.*s", (int)(dot - name), name);
	return json_string_value(json_object_get(labels, key));
}

static void series_begin(struct record_out *o, const char *name, const char *phase)
{
	const char *label = series_label(o->labels, name);

	snprintf(o->name, sizeof(o->name), "%s", name);
	snprintf(o->phase, sizeof(o->phase), "%s", phase);
	o->npoints = 0;
	if (o->csv) {
		o->open = true;
		return;
	}
	fputs(o->open ? "]},{\"name\":" : "{\"name\":", o->f);
	put_json_string(o, name);
	fputs(",\"phase\":", o->f);
	put_json_string(o, phase);
	fputs(",\"unit\":", o->f);
	put_json_string(o, metric_unit(name));
	fputs(",\"label\":", o->f);
	put_json_string(o, label);
	fputs(",\"points\":[", o->f);
	o->open = true;
}

static void on_bucket(const struct store_bucket *b, void *arg)
{
	struct record_out *o = arg;

	if (!o->open || strcmp(o->name, b->name) != 0 || strcmp(o->phase, b->phase) != 0)
		series_begin(o, b->name, b->phase);
	if (o->csv) {
		fputs(b->name, o->f); /* [a-z0-9_.]: nothing to quote */
		fputc(',', o->f);
		put_csv_field(o->f, b->phase);
		fputc(',', o->f);
		put_csv_field(o->f, series_label(o->labels, b->name));
		fprintf(o->f, ",%s,%.3f,%.9g\n", metric_unit(b->name), b->t, b->mean);
	} else {
		fprintf(o->f, "%s[%.3f,%.9g]", o->npoints ? "," : "", b->t, b->mean);
	}
	o->npoints++;
}

/* The job, its report and its timeline, up to where the series begin. */
static int record_head(const struct http_request *req, int64_t id, struct record_out *o, double from, double to,
		       double step)
{
	FILE *f = o->f;
	const size_t flags = JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(16) | JSON_ENCODE_ANY;
	json_t *job, *report = NULL, *timeline = NULL;
	int r;

	if ((r = api_job_view(req, id, &job)) != STORE_OK)
		return r;
	if (req->app->diag && (r = diag_report(req->app->diag, id, &report)) != STORE_OK)
		goto done;
	if ((r = api_timeline_events(req, id, job, &timeline)) != STORE_OK)
		goto done;
	fputs("{\"job\":", f);
	o->failed |= json_dumpf(job, f, flags) < 0;
	fputs(",\"report\":", f);
	o->failed |= json_dumpf(report ? report : json_null(), f, flags) < 0;
	fputs(",\"timeline\":", f);
	o->failed |= json_dumpf(timeline, f, flags) < 0;
	fprintf(f, ",\"range\":{\"from\":%.3f,\"to\":%.3f,\"step\":%.6g},\"series\":[", from, to, step);
done:
	json_decref(job);
	json_decref(report);
	json_decref(timeline);
	return r;
}


void api_job_record(const struct http_request *req, struct http_response *resp)
{
	const char *format = http_query(req, "format");
	struct record_out o = {0};
	double from, to, step;
	char *text = NULL, disposition[96];
	size_t len = 0;
	json_t *labels = NULL;
	int64_t id;
	int r;

	if (format && strcmp(format, "json") != 0 && strcmp(format, "csv") != 0) {
		http_reply_error(resp, 400, "bad_request", "format: json (default) or csv");
		return;
	}
	if (api_job_id(req, resp, &id) < 0 || api_job_range(req, resp, id, RECORD_MAX_POINTS, &from, &to, &step) < 0)
		return;
	o.csv = format && strcmp(format, "csv") == 0;
	if ((r = store_labels(req->app->store, id, STORE_THREAD_PREFIX, &labels)) != STORE_OK) {
		api_store_error(resp, r, "job record");
		return;
	}
	o.labels = labels;
	if (!(o.f = open_memstream(&text, &len))) {
		json_decref(labels);
		http_reply_oom(resp);
		return;
	}
	if (o.csv)
		fputs("name,phase,label,unit,t,value\n", o.f);
	else
		r = record_head(req, id, &o, from, to, step);
	if (r == STORE_OK)
		r = store_series_buckets(req->app->store, id, "", from, to, step, on_bucket, &o);
	if (!o.csv)
		fputs(o.open ? "]}]}\n" : "]}\n", o.f);
	json_decref(labels);
	o.failed |= ferror(o.f) != 0;
	if (fclose(o.f) != 0 || o.failed || !text) {
		free(text);
		http_reply_oom(resp);
		return;
	}
	if (r != STORE_OK) {
		free(text);
		api_store_error(resp, r, "job record");
		return;
	}
	http_reply_text(resp, 200, o.csv ? "text/csv; charset=utf-8" : "application/json", text, len);
	snprintf(disposition, sizeof(disposition), "attachment; filename=\"dlprofd-job-%lld.%s\"", (long long)id,
		 o.csv ? "csv" : "json");
	http_add_header(resp, "Content-Disposition", disposition);
}
