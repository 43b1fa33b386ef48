/*
 * The compressed form of a run of one series' points, as the store keeps
 * it (one block per series and ten minutes, store_blocks.c).  Times and
 * values are two sections, each coded the smallest of several exact ways:
 * times that are whole milliseconds and values that are all integers over
 * one power of ten up to 10^6 (counts, counters, loads to two decimals,
 * rates kept at their resolution by the collectors) as those integers,
 * optionally on their common step (bytes in pages), by delta-of-delta
 * (the Gorilla paper's, Pelkonen et al., VLDB 2015: steps, trends),
 * packed in the width of their spread (a regular tick and a constant cost
 * no bits a point), or by adaptive Rice codes of the residuals from a
 * level, a grid, the previous value or delta (noise that clusters, with
 * outliers), zeros optionally as runs; other doubles as Gorilla's XOR with
 * the previous value.  Decoding gives back every double bit for bit (NaN
 * payloads, -0, inf); blocks of the first version are still read.
 * Pure functions: no state, no logging, any thread.
 */
#ifndef DLPROF_SERIES_CODEC_H
#define DLPROF_SERIES_CODEC_H

#include <stddef.h>

/* The most points one block holds (a decoder refuses more). */
#define SERIES_CODEC_MAX_POINTS 65536

struct series_point {
	double t;                  /* unix seconds */
	double v;
};

/*
 * Encodes n points (1 <= n <= SERIES_CODEC_MAX_POINTS, in the order given;
 * times need not be regular or even ascending) into a malloc'd buffer
 * *out of *len bytes.  -1 when out of memory or n is out of bounds.
 */
int series_encode(const struct series_point *p, size_t n, unsigned char **out, size_t *len);

/*
 * Decodes a block into a malloc'd array *out of *n points.  -1 when the
 * buffer is not a well-formed block (truncated, trailing garbage beyond the
 * last byte's padding, an unknown variant) or out of memory.
 */
int series_decode(const unsigned char *buf, size_t len, struct series_point **out, size_t *n);

#endif
