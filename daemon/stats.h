/*
 * The daemon's counters about itself: requests by route and status, time
 * spent answering, ingest accepted and rejected, and allocator figures, all
 * rendered for /metrics.  Counting is lock-free (atomics), from any thread.
 */
#ifndef DLPROF_STATS_H
#define DLPROF_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct route;
struct store;
struct daemon_stats;

struct daemon_stats *stats_new(const struct route *table);
void stats_free(struct daemon_stats *st);
/* r: the matched route, or NULL for an unmatched path. */
void stats_count_request(struct daemon_stats *st, const struct route *r, int status, double seconds);
void stats_count_ingest(struct daemon_stats *st, size_t accepted, bool rejected);
/* Writes the dlprofd_* self metrics in Prometheus text format. */
void stats_prometheus(struct daemon_stats *st, struct store *store, FILE *out);
/* Allocator figures in bytes; false when the allocator is not jemalloc. */
bool stats_allocator(size_t *allocated, size_t *resident);

#endif
