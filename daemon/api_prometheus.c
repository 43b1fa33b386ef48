/*
 * GET /metrics: Prometheus text exposition (format 0.0.4).  Node, GPU and
 * per-job figures come from the sampler's last tick (only running jobs, so
 * ended jobs leave and cardinality stays bounded), named through the metric
 * catalogue (RAPL zones labelled zone, jobs' energy labelled source, with
 * their samples per joule); then the sampler's own cost, the collectors' state, and the
 * daemon's request, ingest, queue and allocator figures from stats.c, and
 * the cluster store's link (cluster.c) when there is one.  Each
 * family is written once, with its HELP and TYPE, as the format requires.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "app.h"
#include "cluster.h"
#include "diag_report.h"
#include "energy_report.h"
#include "metrics.h"
#include "sampler.h"
#include "stats.h"
#include "store.h"
#include "store_series.h"

static const char *const scope_prefix[] = {
	[METRIC_NODE] = "dlprofd_node_",
	[METRIC_JOB] = "dlprofd_job_",
	[METRIC_GPU] = "dlprofd_gpu_",
	[METRIC_MIG] = "dlprofd_gpu_",
	[METRIC_ZONE] = "dlprofd_node_",
};

/* Writes a label value with \, " and newline escaped. */
static void
put_label(FILE *out, const char *v)
{
	for (; *v != '\0'; v++) {
		if (*v == '\\' || *v == '"')
			fputc('\\', out);
		if (*v == '\n')
			fputs("\\n", out);
		else
			fputc(*v, out);
	}
}

static void
family_head(FILE *out, const char *prefix, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s%s %s.\n# TYPE %s%s %s\n", prefix, name, help, prefix, name, type);
}

static const struct sampler_job_cost *
job_of(const struct sampler_snapshot *snap, int64_t id)
{
	size_t i;

	for (i = 0; i < snap->njobs; i++)
		if (snap->jobs[i].id == id)
			return &snap->jobs[i];
	return NULL;
}

/*
 * "jobid", not "job": Prometheus sets job (the scrape job) on every series
 * and would rename ours to exported_job, as exporters of batch jobs avoid.
 */
static void
put_job_labels(FILE *out, const struct sampler_job_cost *j)
{
	fprintf(out, "jobid=\"%lld\",workload=\"", (long long)j->id);
	put_label(out, j->workload);
	fputc('"', out);
}

/* Whether value v belongs to catalogue row m; fills the GPU and MIG indices, or the RAPL zone's name and length. */
static int
value_matches(const struct collector_value *v, const struct metric_info *m, int *gpu, int *mig, const char **zone,
	      int *zone_len)
{
	const char *rest;

	if (m->scope == METRIC_ZONE) {
		if (v->job_id != 0 || metric_split_zone(v->name, zone, zone_len, &rest) < 0)
			return 0;
		return strcmp(rest, m->sample) == 0;
	}
	if (m->scope == METRIC_GPU || m->scope == METRIC_MIG) {
		if (v->job_id != 0 || metric_split_gpu(v->name, gpu, mig, &rest) < 0)
			return 0;
		return (m->scope == METRIC_MIG) == (*mig >= 0) && strcmp(rest, m->sample) == 0;
	}
	if ((m->scope == METRIC_NODE) != (v->job_id == 0))
		return 0;
	return strcmp(v->name, m->sample) == 0;
}

/* One catalogue row: its family head once, then every value that matches. */
static void
put_family(FILE *out, const struct sampler_snapshot *snap, const struct metric_info *m)
{
	const struct sampler_job_cost *j;
	const struct collector_value *v;
	const char *zone = NULL;
	int head = 0, gpu, mig, zone_len = 0;
	size_t i;

	for (i = 0; m->prom != NULL && i < snap->nvalues; i++) {
		v = &snap->values[i];
		if (!value_matches(v, m, &gpu, &mig, &zone, &zone_len))
			continue;
		j = m->scope == METRIC_JOB ? job_of(snap, v->job_id) : NULL;
		if (m->scope == METRIC_JOB && j == NULL)
			continue;
		if (!head++)
			family_head(out, scope_prefix[m->scope], m->prom,
				    m->type == METRIC_COUNTER ? "counter" : "gauge", m->help);
		fprintf(out, "%s%s", scope_prefix[m->scope], m->prom);
		if (m->scope == METRIC_JOB) {
			fputc('{', out);
			put_job_labels(out, j);
			fputc('}', out);
		} else if (m->scope == METRIC_GPU) {
			fprintf(out, "{gpu=\"%d\"}", gpu);
		} else if (m->scope == METRIC_MIG) {
			fprintf(out, "{gpu=\"%d\",instance=\"%d\"}", gpu, mig);
		} else if (m->scope == METRIC_ZONE) {
			fprintf(out, "{zone=\"%.*s\"}", zone_len, zone);
		}
		fprintf(out, " %.17g\n", v->value * m->scale);
	}
}

/* likwid's metrics carry their group and unit in labels: one family. */
static void
put_likwid(FILE *out, const struct sampler_snapshot *snap)
{
	const struct sampler_job_cost *j;
	const char *group, *metric;
	int head = 0;
	size_t i;

	for (i = 0; i < snap->nvalues; i++) {
		if (strncmp(snap->values[i].name, "likwid.", 7) != 0 || (j = job_of(snap, snap->values[i].job_id)) == NULL)
			continue;
		group = snap->values[i].name + 7;
		metric = strchr(group, '.');
		if (metric == NULL)
			continue;
		if (!head++)
			family_head(out, "dlprofd_job_", "likwid_metric", "gauge",
				    "A likwid performance group metric on the job's cores, unit in the metric label");
		fputs("dlprofd_job_likwid_metric{", out);
		put_job_labels(out, j);
		fprintf(out, ",group=\"%.*s\",metric=\"%s\"} %.17g\n", (int)(metric - group), group, metric + 1,
			snap->values[i].value);
	}
}

/*
 * Jobs' energy, one family labelled by source so sum() adds CPU and GPU, and
 * their samples per joule.  The samples are read from the store, per running
 * job and scrape: a node runs few jobs.
 */
static void
put_job_energy(FILE *out, struct app *app, const struct sampler_snapshot *snap)
{
	static const char *const source[] = {"cpu", "gpu"};
	static const char *const sample[] = {"energy.cpu_joules", "energy.gpu_joules"};
	struct store_running_job *running = NULL;
	double j, total, samples;
	int head = 0, eff_head = 0, r, listed = 0;
	size_t i, k, nrunning = 0;

	for (i = 0; i < snap->njobs; i++) {
		for (k = 0, total = 0; k < 2; k++) {
			if (!isfinite(j = collector_value_find(snap->values, snap->nvalues, snap->jobs[i].id, sample[k])))
				continue;
			total += j;
			if (!head++)
				family_head(out, "dlprofd_job_", "energy_joules_total", "counter",
					    "Energy attributed to the job since dlprofd began sampling it: CPU by its share of "
					    "busy CPU time, GPU by its share of SM utilisation");
			fputs("dlprofd_job_energy_joules_total{", out);
			put_job_labels(out, &snap->jobs[i]);
			fprintf(out, ",source=\"%s\"} %.17g\n", source[k], j);
		}
		if (!(total > 0))
			continue;
		/* Their start bounds the samples read: once a scrape, and only for a job with energy. */
		if (!listed++ && store_jobs_running(app->store, &running, &nrunning) != STORE_OK)
			break;
		for (k = 0; k < nrunning && running[k].id != snap->jobs[i].id; k++)
			;
		if (k == nrunning ||
		    !isfinite(samples = energy_job_samples(app->store, snap->jobs[i].id, running[k].started, NAN, &r)))
			continue;
		if (!eff_head++)
			family_head(out, "dlprofd_job_", "samples_per_joule", "gauge",
				    "Samples the job processed (its reported throughput over time) per joule attributed "
				    "to it");
		fputs("dlprofd_job_samples_per_joule{", out);
		put_job_labels(out, &snap->jobs[i]);
		fprintf(out, "} %.17g\n", samples / total);
	}
	free(running);
}

/* One series per verdict active now (diag_report.h): kinds are a fixed set, so labels stay bounded. */
static void
put_verdicts(FILE *out, struct app *app, const struct sampler_snapshot *snap)
{
	unsigned kinds;
	int head = 0, k;
	size_t i;

	for (i = 0; app->diag != NULL && i < snap->njobs; i++) {
		if (diag_active(app->diag, snap->jobs[i].id, &kinds) != STORE_OK)
			continue;
		for (k = 0; k < DIAG_NKINDS; k++) {
			if (!(kinds & (1u << k)))
				continue;
			if (!head++)
				family_head(out, "dlprofd_job_", "verdict", "gauge",
					    "1 for each diagnosis verdict that holds for the job now (GET /api/v1/jobs/ID/report)");
			fputs("dlprofd_job_verdict{", out);
			put_job_labels(out, &snap->jobs[i]);
			fprintf(out, ",kind=\"%s\"} 1\n", diag_kind_name((enum diag_kind)k));
		}
	}
}

static void
put_sampler(FILE *out, const struct sampler_snapshot *snap)
{
	size_t i;

	family_head(out, "dlprofd_", "sampler_ticks_total", "counter", "Sampling ticks run");
	fprintf(out, "dlprofd_sampler_ticks_total %llu\n", snap->ticks);
	family_head(out, "dlprofd_", "sampler_cpu_seconds_total", "counter", "CPU time the sampler thread spent");
	fprintf(out, "dlprofd_sampler_cpu_seconds_total %.9f\n", snap->cpu_seconds_total);
	family_head(out, "dlprofd_", "sampler_tick_cpu_seconds", "gauge", "CPU time of the last tick");
	fprintf(out, "dlprofd_sampler_tick_cpu_seconds %.9f\n", snap->last_tick_cpu_s);
	family_head(out, "dlprofd_", "sampler_tick_duration_seconds", "gauge", "Wall time of the last tick");
	fprintf(out, "dlprofd_sampler_tick_duration_seconds %.9f\n", snap->last_tick_wall_s);
	family_head(out, "dlprofd_", "sampler_jobs", "gauge", "Jobs sampled in the last tick");
	fprintf(out, "dlprofd_sampler_jobs %zu\n", snap->njobs);
	family_head(out, "dlprofd_", "sampler_threads", "gauge", "Threads of the jobs sampled in the last tick");
	fprintf(out, "dlprofd_sampler_threads %ld\n", snap->threads);
	family_head(out, "dlprofd_", "sampler_cpu_seconds_per_thread", "gauge",
		    "CPU time of the last tick divided by the threads sampled");
	fprintf(out, "dlprofd_sampler_cpu_seconds_per_thread %.9f\n",
		snap->threads > 0 ? snap->last_tick_cpu_s / (double)snap->threads : 0.0);
	if (snap->njobs > 0)
		family_head(out, "dlprofd_job_", "sampling_cpu_seconds", "gauge",
			    "CPU time the collectors spent on the job in the last tick that read it in detail");
	for (i = 0; i < snap->njobs; i++) {
		fputs("dlprofd_job_sampling_cpu_seconds{", out);
		put_job_labels(out, &snap->jobs[i]);
		fprintf(out, "} %.9f\n", snap->jobs[i].cpu_s);
	}
	family_head(out, "dlprofd_", "collector_up", "gauge", "1 when the collector is available and not failing");
	for (i = 0; i < snap->ncols; i++)
		fprintf(out, "dlprofd_collector_up{collector=\"%s\"} %d\n", snap->cols[i].name, snap->cols[i].available);
	family_head(out, "dlprofd_", "collector_failures_total", "counter", "Sampling failures of the collector");
	for (i = 0; i < snap->ncols; i++)
		fprintf(out, "dlprofd_collector_failures_total{collector=\"%s\"} %llu\n", snap->cols[i].name,
			snap->cols[i].failures);
	family_head(out, "dlprofd_", "collector_cpu_seconds_total", "counter", "CPU time spent in the collector");
	for (i = 0; i < snap->ncols; i++)
		fprintf(out, "dlprofd_collector_cpu_seconds_total{collector=\"%s\"} %.9f\n", snap->cols[i].name,
			snap->cols[i].cpu_s);
}

/* The store on disk against its budget, and the span each tier of the series holds. */
static void
put_store(FILE *out, struct store *st)
{
	struct store_usage u;

	if (store_usage(st, &u) != STORE_OK)
		return;
	family_head(out, "dlprofd_", "store_bytes", "gauge", "Bytes the database takes on disk (file, WAL, shared memory)");
	fprintf(out, "dlprofd_store_bytes %lld\n", (long long)u.bytes);
	family_head(out, "dlprofd_", "store_free_bytes", "gauge", "Bytes of free pages in the database file, reused first");
	fprintf(out, "dlprofd_store_free_bytes %lld\n", (long long)u.free_bytes);
	family_head(out, "dlprofd_", "store_budget_bytes", "gauge", "The storage budget (storage_budget; 0: none)");
	fprintf(out, "dlprofd_store_budget_bytes %lld\n", (long long)u.budget);
	family_head(out, "dlprofd_", "store_tier_oldest_seconds", "gauge",
		    "Unix time of the oldest history a tier holds (raw steps, seconds, minutes, hours)");
	for (int i = 0; i < STORE_TIERS; i++)
		if (u.tier[i].any)
			fprintf(out, "dlprofd_store_tier_oldest_seconds{tier=\"%s\"} %.0f\n", store_tier_names[i],
				u.tier[i].from);
	family_head(out, "dlprofd_", "store_tier_span_seconds", "gauge", "Seconds of history a tier holds now");
	for (int i = 0; i < STORE_TIERS; i++)
		fprintf(out, "dlprofd_store_tier_span_seconds{tier=\"%s\"} %.0f\n", store_tier_names[i],
			u.tier[i].any ? u.tier[i].to - u.tier[i].from : 0);
}

void
api_metrics(const struct http_request *req, struct http_response *resp)
{
	struct sampler_snapshot snap;
	char *body = NULL;
	size_t len = 0;
	unsigned i;
	FILE *out;

	out = open_memstream(&body, &len);
	if (out == NULL) {
		http_reply_oom(resp);
		return;
	}
	if (req->app->sampler != NULL && sampler_snapshot_get(req->app->sampler, &snap) == 0) {
		for (i = 0; i < metric_catalogue_len; i++)
			put_family(out, &snap, &metric_catalogue[i]);
		put_likwid(out, &snap);
		put_job_energy(out, req->app, &snap);
		put_verdicts(out, req->app, &snap);
		put_sampler(out, &snap);
		sampler_snapshot_free(&snap);
	}
	if (req->app->stats != NULL)
		stats_prometheus(req->app->stats, req->app->store, out);
	if (req->app->store != NULL)
		put_store(out, req->app->store);
	if (req->app->cluster != NULL)
		cluster_prometheus(req->app->cluster, out);
	if (fclose(out) != 0) {
		free(body);
		http_reply_oom(resp);
		return;
	}
	http_reply_text(resp, 200, "text/plain; version=0.0.4; charset=utf-8", body, len);
}
