/*
 * Implementation of stats.h.  Counters are indexed by the route's row in the
 * table (one extra row for unmatched paths) and by a small set of statuses,
 * so the label sets of /metrics stay bounded whatever clients send.
 */
#include "stats.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

#include "router.h"
#include "store.h"

static const int tracked_status[] = {200, 201, 204, 304, 400, 401, 403, 404, 405, 413, 415, 429, 500, 503};
#define NSTATUS (sizeof(tracked_status) / sizeof(tracked_status[0]) + 1)   /* + "other" */

struct route_counters {
	_Atomic uint64_t by_status[NSTATUS];
	_Atomic uint64_t micros;    /* total time answering */
};

struct daemon_stats {
	const struct route *table;
	size_t nroutes;                 /* rows; counters has nroutes + 1 */
	struct route_counters *counters;
	_Atomic uint64_t ingest_samples;
	_Atomic uint64_t ingest_requests;
	_Atomic uint64_t ingest_rejected;
};

struct daemon_stats *stats_new(const struct route *table)
{
	struct daemon_stats *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	st->table = table;
	while (table[st->nroutes].method)
		st->nroutes++;
	st->counters = calloc(st->nroutes + 1, sizeof(*st->counters));
	if (!st->counters) {
		free(st);
		return NULL;
	}
	return st;
}

void stats_free(struct daemon_stats *st)
{
	if (!st)
		return;
	free(st->counters);
	free(st);
}

static size_t status_index(int status)
{
	for (size_t i = 0; i < NSTATUS - 1; i++)
		if (tracked_status[i] == status)
			return i;
	return NSTATUS - 1;
}

void stats_count_request(struct daemon_stats *st, const struct route *r, int status, double seconds)
{
	size_t row = r ? (size_t)(r - st->table) : st->nroutes;

	if (row > st->nroutes)
		row = st->nroutes;
	atomic_fetch_add(&st->counters[row].by_status[status_index(status)], 1);
	atomic_fetch_add(&st->counters[row].micros, (uint64_t)(seconds * 1e6));
}

void stats_count_ingest(struct daemon_stats *st, size_t accepted, bool rejected)
{
	atomic_fetch_add(&st->ingest_requests, 1);
	atomic_fetch_add(&st->ingest_samples, accepted);
	if (rejected)
		atomic_fetch_add(&st->ingest_rejected, 1);
}

bool stats_allocator(size_t *allocated, size_t *resident)
{
#ifdef HAVE_JEMALLOC
	uint64_t epoch = 1;
	size_t len = sizeof(epoch), sz = sizeof(size_t);

	/* Stats are cached by jemalloc; bumping the epoch refreshes them. */
	mallctl("epoch", &epoch, &len, &epoch, len);
	if (mallctl("stats.allocated", allocated, &sz, NULL, 0) != 0 ||
	    mallctl("stats.resident", resident, &sz, NULL, 0) != 0)
		return false;
	return true;
#else
	(void)allocated;
	(void)resident;
	return false;
#endif
}

static void route_label(const struct daemon_stats *st, size_t row, char *buf, size_t len)
{
	if (row == st->nroutes)
		snprintf(buf, len, "method=\"other\",route=\"unmatched\"");
	else
		snprintf(buf, len, "method=\"%s\",route=\"%s\"", st->table[row].method, st->table[row].pattern);
}

void stats_prometheus(struct daemon_stats *st, struct store *store, FILE *out)
{
	size_t allocated, resident;
	char label[160];

	fputs("# HELP dlprofd_http_requests_total HTTP requests answered, by route and status.\n"
	      "# TYPE dlprofd_http_requests_total counter\n", out);
	for (size_t row = 0; row <= st->nroutes; row++) {
		route_label(st, row, label, sizeof(label));
		for (size_t i = 0; i < NSTATUS; i++) {
			uint64_t n = atomic_load(&st->counters[row].by_status[i]);
			if (n == 0)
				continue;
			if (i < NSTATUS - 1)
				fprintf(out, "dlprofd_http_requests_total{%s,status=\"%d\"} %llu\n", label,
					tracked_status[i], (unsigned long long)n);
			else
				fprintf(out, "dlprofd_http_requests_total{%s,status=\"other\"} %llu\n", label,
					(unsigned long long)n);
		}
	}
	fputs("# HELP dlprofd_http_request_seconds_total Time spent answering, by route.\n"
	      "# TYPE dlprofd_http_request_seconds_total counter\n", out);
	for (size_t row = 0; row <= st->nroutes; row++) {
		uint64_t us = atomic_load(&st->counters[row].micros);
		if (us == 0)
			continue;
		route_label(st, row, label, sizeof(label));
		fprintf(out, "dlprofd_http_request_seconds_total{%s} %.6f\n", label, (double)us / 1e6);
	}
	fprintf(out,
		"# HELP dlprofd_ingest_requests_total Ingest requests received.\n"
		"# TYPE dlprofd_ingest_requests_total counter\n"
		"dlprofd_ingest_requests_total %llu\n"
		"# HELP dlprofd_ingest_rejected_total Ingest requests rejected whole.\n"
		"# TYPE dlprofd_ingest_rejected_total counter\n"
		"dlprofd_ingest_rejected_total %llu\n"
		"# HELP dlprofd_ingest_samples_total Samples accepted and committed.\n"
		"# TYPE dlprofd_ingest_samples_total counter\n"
		"dlprofd_ingest_samples_total %llu\n"
		"# HELP dlprofd_store_queue_depth Write operations waiting for the writer.\n"
		"# TYPE dlprofd_store_queue_depth gauge\n"
		"dlprofd_store_queue_depth %zu\n",
		(unsigned long long)atomic_load(&st->ingest_requests),
		(unsigned long long)atomic_load(&st->ingest_rejected),
		(unsigned long long)atomic_load(&st->ingest_samples), store ? store_queue_depth(store) : 0);
	if (store) {
		fprintf(out,
			"# HELP dlprofd_store_writable Whether the database accepts writes (1) or not (0).\n"
			"# TYPE dlprofd_store_writable gauge\n"
			"dlprofd_store_writable %d\n", store_writable(store, NULL, 0) ? 1 : 0);
	}
	if (stats_allocator(&allocated, &resident))
		fprintf(out,
			"# HELP dlprofd_jemalloc_allocated_bytes Bytes allocated by the daemon (jemalloc).\n"
			"# TYPE dlprofd_jemalloc_allocated_bytes gauge\n"
			"dlprofd_jemalloc_allocated_bytes %zu\n"
			"# HELP dlprofd_jemalloc_resident_bytes Bytes in physically resident pages (jemalloc).\n"
			"# TYPE dlprofd_jemalloc_resident_bytes gauge\n"
			"dlprofd_jemalloc_resident_bytes %zu\n",
			allocated, resident);
}
