/*
 * GET /api/v1/cluster/workloads and /api/v1/cluster/workloads/{name}: what
 * every node of the cluster learned, from the shared store, as the cluster
 * thread last read it (cluster.h), with the state of this node's link.
 * Never waits on the database: an old or missing view says so in "as_of"
 * and "cluster".
 */
#include "api.h"
#include "app.h"
#include "cluster.h"
#include "http.h"

void api_cluster_workloads(const struct http_request *req, struct http_response *resp)
{
	struct cluster *c = req->app->cluster;
	json_t *body;

	if (!c) {
		http_reply_json(resp, 200,
				json_pack("{s:o, s:n, s:[]}", "cluster", cluster_status(NULL), "as_of", "workloads"));
		return;
	}
	body = cluster_workloads(c, NULL);
	json_object_set_new(body, "cluster", cluster_status(c));
	http_reply_json(resp, 200, body);
}

void api_cluster_workload(const struct http_request *req, struct http_response *resp)
{
	struct cluster *c = req->app->cluster;
	const char *name = http_param(req, "name");
	json_t *body;

	if (!c) {
		http_reply_error(resp, 404, "not_found", "this node has no cluster_store");
		return;
	}
	if (!name || !(body = cluster_workloads(c, name))) {
		http_reply_error(resp, 404, "not_found", "no node of the cluster has learned a workload named %s",
				 name ? name : "");
		return;
	}
	json_object_set_new(body, "cluster", cluster_status(c));
	http_reply_json(resp, 200, body);
}
