/*
 * The route handlers.  Each answers one route of the table in routes.c; they
 * share the signature of router.h and reach the daemon's parts through the
 * request's struct app (app.h): the store, the tuner, the jobs' lifecycle,
 * the sampler's published snapshot, the live hub, the diagnosis, the
 * cluster store's view and the GPU leases, never a collector.  What each
 * route reaches is in docs/ARCHITECTURE.md, "Routes".
 */
#ifndef DLPROF_API_H
#define DLPROF_API_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "router.h"

/* api_node.c */
void api_healthz(const struct http_request *req, struct http_response *resp);
void api_node(const struct http_request *req, struct http_response *resp);
/* api_jobs.c */
void api_jobs_list(const struct http_request *req, struct http_response *resp);
void api_jobs_register(const struct http_request *req, struct http_response *resp);
void api_job_get(const struct http_request *req, struct http_response *resp);
void api_job_end(const struct http_request *req, struct http_response *resp);
/* api_report.c */
void api_job_report(const struct http_request *req, struct http_response *resp);
/* api_ingest.c */
void api_job_metrics(const struct http_request *req, struct http_response *resp);
/* api_series.c */
void api_job_series(const struct http_request *req, struct http_response *resp);
void api_job_live(const struct http_request *req, struct http_response *resp);
/* api_threads.c */
void api_job_threads(const struct http_request *req, struct http_response *resp);
/* api_timeline.c */
void api_job_timeline(const struct http_request *req, struct http_response *resp);
/* api_record.c */
void api_job_record(const struct http_request *req, struct http_response *resp);
/* api_prometheus.c */
void api_metrics(const struct http_request *req, struct http_response *resp);
/* api_workloads.c */
void api_recommend(const struct http_request *req, struct http_response *resp);
void api_workloads_list(const struct http_request *req, struct http_response *resp);
void api_workload_get(const struct http_request *req, struct http_response *resp);
/* api_cluster.c */
void api_cluster_workloads(const struct http_request *req, struct http_response *resp);
void api_cluster_workload(const struct http_request *req, struct http_response *resp);
/* api_static.c */
void api_static(const struct http_request *req, struct http_response *resp);

/*
 * Shared by handlers: parses the {id} capture; replies 404 and returns -1
 * when it is not a job id.
 */
int api_job_id(const struct http_request *req, struct http_response *resp, int64_t *id);
struct jobs_caller;
/* The request's peer as the caller jobs.c judges. */
void api_caller(const struct http_request *req, struct jobs_caller *who);
/* Maps a jobs_* error (why: its reason) or a store error to a reply. */
void api_jobs_error(struct http_response *resp, int err, const char *why, const char *what);
/* Maps a store error to a reply (503 with Retry-After for busy/unavailable). */
void api_store_error(struct http_response *resp, int err, const char *what);
/*
 * api_series.c: an optional finite number argument key (*has: given), and
 * the from/to/step arguments of a range read (to not before from, step
 * above 0).  Reply 400 and return -1 when malformed.
 */
int api_query_number(const struct http_request *req, struct http_response *resp, const char *key, bool *has, double *v);
int api_query_range(const struct http_request *req, struct http_response *resp, bool *has_from, double *from,
		    bool *has_to, double *to, bool *has_step, double *step);
/*
 * api_series.c: the from/to/step arguments of a read over job id's life:
 * from defaults to its start, to to its end (now while it runs), and the
 * step is at least the range over max_points.  Replies (400, or the store's
 * error) and returns -1 when it cannot.
 */
int api_job_range(const struct http_request *req, struct http_response *resp, int64_t id, double max_points,
		  double *from, double *to, double *step);
/*
 * api_jobs.c: job id as GET /api/v1/jobs/{id} shows it to this request's
 * caller (other nodes' ranks merged, the command hidden from readers who
 * may not see it, its energy), a new object in *out; a store error.
 */
int api_job_view(const struct http_request *req, int64_t id, json_t **out);
/*
 * api_timeline.c: the events of job (api_job_view's) as
 * GET /api/v1/jobs/{id}/timeline lists them, a new array in *out; a store error.
 */
int api_timeline_events(const struct http_request *req, int64_t id, const json_t *job, json_t **out);

#endif
