/*
 * The window of sampled values between two stores.  The sampler stores
 * every tick (the store keeps points in compressed blocks, store_blocks.c),
 * so a window is one tick; a window of several ticks would be stored as
 * the mean of its values for a gauge, the last value for a counter
 * (collectors/metrics.c says which), stamped with the time of the tick
 * that closes the window.  A series whose stored value
 * would repeat the last one exactly (thread and process counts, CPU
 * limits, rates that stay zero) is stored again only after a minute, so a
 * steady job costs the writer few points to keep and encode (storing every
 * tick measured twice the store's CPU, bench/RESULTS.md), and charts still
 * get a point a minute.  The window also keeps each
 * series' newest value and its time, which /metrics shows at the sampling
 * rate.  Used by the sampler's thread only.
 */
#ifndef DLPROF_SAMPLE_WINDOW_H
#define DLPROF_SAMPLE_WINDOW_H

#include <stddef.h>
#include <stdint.h>

#include "collector.h"
#include "store.h"

struct sample_series {
	struct collector_value newest; /* job, name, newest value and its time */
	double sum;                    /* of this window's values */
	unsigned n;                    /* values in this window; 0: not seen since the last close */
	int counter;                   /* stored as its last value, not the mean */
};

struct sample_window {
	struct sample_series *v;       /* in order of first sight */
	size_t n, cap;
	uint32_t *slot;                /* open addressing over v: index + 1, 0 empty */
	size_t nslot;                  /* a power of two, at least twice n */
};

void sample_window_init(struct sample_window *w);
void sample_window_free(struct sample_window *w);
/* Adds one tick's values.  -1 when out of memory: the values not added are lost. */
int sample_window_add(struct sample_window *w, const struct collector_value *v, size_t n);
/*
 * The window's rows to store, stamped with unix time t: one per series seen
 * in it, into rows (room for w->n).  Returns how many.  Row names point
 * into the window: valid until the next add or next.
 */
size_t sample_window_rows(struct sample_window *w, double t, struct sample *rows);
/*
 * Starts the next window: forgets the series not seen since forget_before
 * (their job ended; INFINITY: not seen in this window).  Series sampled
 * only on detail ticks stay between them, so /metrics keeps showing them.
 */
void sample_window_next(struct sample_window *w, double forget_before);

#endif
