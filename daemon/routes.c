/*
 * The route table: every path the daemon answers, with its handler and who
 * may call it.  Order matters only for the final catch-all of static files.
 */
#include "api.h"

const struct route dlprof_routes[] = {
	{"GET", "/healthz", api_healthz, ACCESS_READ},
	{"GET", "/api/v1/node", api_node, ACCESS_READ},
	{"GET", "/api/v1/jobs", api_jobs_list, ACCESS_READ},
	{"POST", "/api/v1/jobs", api_jobs_register, ACCESS_MUTATE},
	{"GET", "/api/v1/jobs/{id}", api_job_get, ACCESS_READ},
	{"POST", "/api/v1/jobs/{id}/end", api_job_end, ACCESS_MUTATE},
	{"POST", "/api/v1/jobs/{id}/metrics", api_job_metrics, ACCESS_MUTATE},
	{"GET", "/api/v1/jobs/{id}/series", api_job_series, ACCESS_READ},
	{"GET", "/api/v1/jobs/{id}/live", api_job_live, ACCESS_READ},
	{"GET", "/api/v1/jobs/{id}/report", api_job_report, ACCESS_READ},
	{"GET", "/api/v1/jobs/{id}/threads", api_job_threads, ACCESS_READ},
	{"GET", "/api/v1/jobs/{id}/timeline", api_job_timeline, ACCESS_READ},
	{"GET", "/api/v1/jobs/{id}/record", api_job_record, ACCESS_READ},
	{"GET", "/metrics", api_metrics, ACCESS_READ},
	{"GET", "/api/v1/recommend", api_recommend, ACCESS_READ},
	{"GET", "/api/v1/workloads", api_workloads_list, ACCESS_READ},
	{"GET", "/api/v1/workloads/{name}", api_workload_get, ACCESS_READ},
	{"GET", "/api/v1/cluster/workloads", api_cluster_workloads, ACCESS_READ},
	{"GET", "/api/v1/cluster/workloads/{name}", api_cluster_workload, ACCESS_READ},
	{"GET", "/*", api_static, ACCESS_READ},
	{NULL, NULL, NULL, ACCESS_READ},
};
