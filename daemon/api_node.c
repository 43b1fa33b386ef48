/*
 * /healthz and /api/v1/node: whether the daemon can do its work, and what
 * this machine is (topology, hardware class, collectors and their status)
 * and what its store takes against the storage budget.
 */
#include <stdio.h>
#include <string.h>

#include "api.h"
#include "app.h"
#include "node.h"
#include "sampler.h"
#include "stats.h"
#include "store.h"
#include "store_series.h"

void api_healthz(const struct http_request *req, struct http_response *resp)
{
	char why[256], *ok;

	if (!store_writable(req->app->store, why, sizeof(why))) {
		http_reply_error(resp, 503, "store_unavailable", "the database cannot be written: %s", why);
		http_add_header(resp, "Retry-After", "5");
		return;
	}
	if (req->app->sampler && !sampler_alive(req->app->sampler)) {
		http_reply_error(resp, 503, "sampler_stalled", "the sampler thread has not finished a pass recently");
		return;
	}
	/* A NULL body with a length would be sent as if it held "ok". */
	if (!(ok = strdup("ok\n"))) {
		http_reply_oom(resp);
		return;
	}
	http_reply_text(resp, 200, "text/plain; charset=utf-8", ok, 3);
}

/* The daemon itself: version and allocator (jemalloc in release builds). */
static json_t *daemon_json(void)
{
	size_t allocated, resident;
	json_t *d = json_pack("{s:s}", "version", PACKAGE_VERSION);

	if (stats_allocator(&allocated, &resident)) {
		json_object_set_new(d, "allocator", json_string("jemalloc"));
		json_object_set_new(d, "allocated_bytes", json_integer((json_int_t)allocated));
		json_object_set_new(d, "resident_bytes", json_integer((json_int_t)resident));
	} else {
		json_object_set_new(d, "allocator", json_string("libc"));
	}
	return d;
}

/* The store on disk against its budget, and what each tier of the series holds now; NULL when unread. */
static json_t *store_json(struct store *st)
{
	struct store_usage u;
	json_t *tiers, *o;

	if (store_usage(st, &u) != STORE_OK)
		return NULL;
	tiers = json_object();
	for (int i = 0; i < STORE_TIERS; i++) {
		o = json_pack("{s:o,s:o,s:o}", "from", u.tier[i].any ? json_real(u.tier[i].from) : json_null(), "to",
			      u.tier[i].any ? json_real(u.tier[i].to) : json_null(), "keep_s",
			      u.tier[i].keep_s > 0 ? json_real(u.tier[i].keep_s) : json_null());
		json_object_set_new(tiers, store_tier_names[i], o);
	}
	return json_pack("{s:I,s:I,s:I,s:I,s:o}", "bytes", (json_int_t)u.bytes, "budget_bytes", (json_int_t)u.budget,
			 "file_bytes", (json_int_t)u.file_bytes, "free_bytes", (json_int_t)u.free_bytes, "tiers", tiers);
}

void api_node(const struct http_request *req, struct http_response *resp)
{
	json_t *node = node_json(req->app->node), *latest = NULL;

	json_object_set_new(node, "collectors",
			    req->app->sampler ? sampler_collectors_json(req->app->sampler) : json_array());
	json_object_set_new(node, "daemon", daemon_json());
	json_object_set_new(node, "store", store_json(req->app->store));
	/* The node's own series (job 0), so the dashboard knows what to chart. */
	if (store_latest(req->app->store, 0, &latest) == STORE_OK)
		json_object_set_new(node, "latest", latest);
	http_reply_json(resp, 200, node);
}
