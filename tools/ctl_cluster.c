/*
 * `dlprofctl cluster` (see ctl_cluster.h): what every node sharing this
 * node's cluster store learned, as a table, after a line on the link.
 */
#include <string.h>
#include <time.h>

#include "ctl_cluster.h"
#include "ctl_format.h"
#include "ctl_table.h"

static void print_link(FILE *out, const json_t *c, const json_t *as_of)
{
	const json_t *outbox = json_object_get(c, "outbox");

	if (!json_is_true(json_object_get(c, "configured"))) {
		fprintf(out, "this node has no cluster_store: it learns alone\n");
		return;
	}
	fprintf(out, "shared store: %s as node %s (class %s); %lld trials waiting to be sent; ",
		json_is_true(json_object_get(c, "connected")) ? "connected" : "NOT connected",
		json_string_value(json_object_get(c, "node")), json_string_value(json_object_get(c, "hw_class")),
		(long long)json_integer_value(json_object_get(outbox, "waiting")));
	if (json_is_number(as_of))
		fprintf(out, "view read %.0f s ago\n", (double)time(NULL) - json_number_value(as_of));
	else
		fprintf(out, "view not read yet\n");
	if (json_is_string(json_object_get(c, "error")) && !json_is_true(json_object_get(c, "connected")))
		fprintf(out, "last error: %s\n", json_string_value(json_object_get(c, "error")));
}

static void add_variant(struct ctl_table *t, const json_t *w, const json_t *v, int first)
{
	char params[256], nodes[32], jobs[32], trials[32], best[512], value[32];
	const json_t *b = json_object_get(v, "best");
	const char *row[8] = {
		first ? json_string_value(json_object_get(w, "name")) : "",
		ctl_fmt_object(json_object_get(v, "params"), params, sizeof(params)),
		json_string_value(json_object_get(v, "hw_class")),
		ctl_fmt_scalar(json_object_get(v, "nodes"), nodes, sizeof(nodes)),
		ctl_fmt_scalar(json_object_get(v, "jobs"), jobs, sizeof(jobs)),
		ctl_fmt_scalar(json_object_get(v, "trials"), trials, sizeof(trials)),
		json_is_object(b) ? ctl_fmt_object(json_object_get(b, "config"), best, sizeof(best)) : "-",
		json_is_object(b) ? ctl_fmt_scalar(json_object_get(b, "value"), value, sizeof(value)) : "-"};

	ctl_table_add(t, row);
}

int ctl_print_cluster(FILE *out, const json_t *answer)
{
	static const char *const hdr[] = {"WORKLOAD", "PARAMS", "CLASS", "NODES", "JOBS", "TRIALS", "BEST",
					  "VALUE"};
	const json_t *list = json_object_get(answer, "workloads"), *one = json_object_get(answer, "workload");
	json_t *single = NULL, *w, *v;
	struct ctl_table t;
	size_t i, j;

	if (!json_is_object(json_object_get(answer, "cluster")))
		return -1;
	print_link(out, json_object_get(answer, "cluster"), json_object_get(answer, "as_of"));
	if (json_is_object(one))
		list = single = json_pack("[O]", one);
	if (!json_is_array(list) || ctl_table_init(&t, 8, hdr) < 0) {
		json_decref(single);
		return -1;
	}
	json_array_foreach(list, i, w)
		json_array_foreach(json_object_get(w, "variants"), j, v)
			add_variant(&t, w, v, j == 0);
	if (t.nrows == 1)
		fprintf(out, "no workloads shared yet\n");
	else
		ctl_table_print(&t, out);
	ctl_table_free(&t);
	json_decref(single);
	return 0;
}
