/*
 * A job's energy and samples per joule (see energy_report.h).  The totals
 * come from the job's latest values; the samples from its samples_per_s
 * series; the reasons from the sampler's view of the rapl and nvml
 * collectors.
 */
#include <math.h>
#include <string.h>

#include "clock.h"
#include "energy_report.h"
#include "reported.h"
#include "sampler.h"
#include "store.h"
#include "store_series.h"

/* The series' points over [from, to]; *r the store's answer.  The caller frees them. */
static json_t *
throughput_points(struct store *st, int64_t id, double from, double to, int *r)
{
	struct store_series_query q = {.job_id = id, .name = reported_name(REPORTED_SAMPLES_PER_S), .has_from = true, .has_to = true,
				       .from = from, .to = to};
	struct store_series_answer a;

	if ((*r = store_series(st, &q, &a)) != STORE_OK)
		return NULL;
	json_decref(a.bands);
	return a.points;
}

double
energy_job_samples(struct store *st, int64_t id, double started, double ended, int *r)
{
	double from = started - ENERGY_LOOKBACK_S, to = isfinite(ended) ? ended + 1 : clock_now_s() + 1;
	double samples = 0, t, prev_t = NAN, first, width = (to - from) / STORE_SERIES_MAX_POINTS;
	json_t *pts, *p;
	size_t i, n;

	if ((pts = throughput_points(st, id, from, to, r)) == NULL)
		return NAN;
	/* The look-back makes buckets wide: read again from the first one, in buckets as narrow as the job allows. */
	first = json_number_value(json_array_get(json_array_get(pts, 0), 0));
	if (json_array_size(pts) > 0 && first - width > from) {
		json_decref(pts);
		if ((pts = throughput_points(st, id, first - width, to, r)) == NULL)
			return NAN;
	}
	json_array_foreach(pts, i, p) {
		t = json_number_value(json_array_get(p, 0));
		if (i > 0 && t > prev_t)
			samples += json_number_value(json_array_get(p, 1)) * (t - prev_t);
		prev_t = t;
	}
	n = json_array_size(pts);
	json_decref(pts);
	return n >= 2 ? samples : NAN;
}

/* Why collector name gives no figure: its reason when it is not available or works in part, else fallback. */
static json_t *
collector_why(struct sampler *sam, const char *name, const char *fallback)
{
	json_t *cols = sam != NULL ? sampler_collectors_json(sam) : NULL, *c, *why = NULL;
	const char *reason;
	size_t i;

	json_array_foreach(cols, i, c) {
		const char *status = json_string_value(json_object_get(c, "status"));
		const char *cname = json_string_value(json_object_get(c, "name"));
		if (cname == NULL || strcmp(cname, name) != 0 || status == NULL)
			continue;
		reason = json_string_value(json_object_get(c, "reason"));
		if (strcmp(status, "available") != 0)
			why = json_sprintf("%s %s: %s", name, status, reason != NULL ? reason : "");
		else if (reason != NULL && reason[0] != '\0')
			/* Available in part: its note ("no package or DRAM zone readable ...") is why. */
			why = json_sprintf("%s: %s", name, reason);
		break;
	}
	json_decref(cols);
	if (why == NULL)
		why = json_string(sam != NULL ? fallback : "sampling is off");
	return why;
}

static json_t *
number_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

json_t *
energy_report_json(struct store *st, struct sampler *sam, const json_t *job)
{
	const json_t *latest = json_object_get(job, "latest"), *ended = json_object_get(job, "ended");
	json_t *cpu = json_object_get(latest, "energy.cpu_joules"), *gpu = json_object_get(latest, "energy.gpu_joules");
	json_t *out, *why = json_object();
	double joules = NAN, samples;
	int r;

	if (json_is_number(cpu) || json_is_number(gpu))
		joules = (json_is_number(cpu) ? json_number_value(cpu) : 0) +
			 (json_is_number(gpu) ? json_number_value(gpu) : 0);
	if (!json_is_number(cpu))
		json_object_set_new(why, "cpu", collector_why(sam, "rapl", "no CPU energy attributed to the job yet"));
	if (!json_is_number(gpu))
		json_object_set_new(why, "gpu", collector_why(sam, "nvml", "no process of the job ran on a GPU"));
	samples = energy_job_samples(st, json_integer_value(json_object_get(job, "id")),
				     json_number_value(json_object_get(job, "started")),
				     json_is_number(ended) ? json_number_value(ended) : NAN, &r);
	if (!isfinite(joules))
		json_object_set_new(why, "samples_per_joule", json_string("no energy measured for the job"));
	else if (!isfinite(samples))
		json_object_set_new(why, "samples_per_joule",
				    json_string(r != STORE_OK ? "its throughput could not be read"
							      : "the job reported no throughput (samples_per_s)"));
	else if (!(joules > 0))
		json_object_set_new(why, "samples_per_joule", json_string("no energy attributed to the job yet"));
	out = json_pack("{s:o,s:o,s:o,s:o,s:o,s:o}", "cpu_joules",
			json_is_number(cpu) ? json_real(json_number_value(cpu)) : json_null(), "gpu_joules",
			json_is_number(gpu) ? json_real(json_number_value(gpu)) : json_null(), "joules",
			number_or_null(joules), "kwh", number_or_null(joules / 3.6e6), "samples", number_or_null(samples),
			"samples_per_joule", number_or_null(joules > 0 ? samples / joules : NAN));
	if (out != NULL && json_object_size(why) > 0)
		json_object_set(out, "unavailable", why);
	json_decref(why);
	return out;
}
