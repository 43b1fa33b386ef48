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

#endif
