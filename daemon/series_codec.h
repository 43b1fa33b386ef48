/*
 * The compressed form of a run of one series' points, as the store keeps
 * it (one block per series and ten minutes, store_blocks.c).  The scheme is the
 * Gorilla paper's (Pelkonen et al., VLDB 2015): times as delta-of-delta,
 * values as the XOR with the previous value, each in as few bits as the
 * change needs, so a regular tick costs one bit of time and a repeated
 * value one bit of value.  Variants are picked per block when they are
 * exact: times that are whole milliseconds are coded as integers (others as
 * XORed doubles; a regular tick's packed, at no bits a point), and values that are all integers over one power of ten
 * up to 10^6 (counts, counters, loads to two decimals, rates kept at their
 * resolution by the collectors) as those integers, which is smaller than
 * their XOR: as their delta-of-delta (steps, trends), or packed in the
 * width their spread needs (noise around a level), whichever is smaller.
 * Decoding gives back every double bit for bit (NaN payloads, -0, inf).
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
