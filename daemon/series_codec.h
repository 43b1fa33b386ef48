/*
 * The compressed form of a run of one series' points, as the store keeps
 * it (one block per series and ten minutes, store_blocks.c), and of runs
 * of summaries (several columns at shared times: a second's or a minute's
 * count, sum, min, max and last).  Times and each column are sections,
 * each coded the smallest of several exact ways: times and values that
 * are all integers over one power of ten up to 10^6 (milliseconds, whole
 * seconds, counts, counters, loads to two decimals, rates kept at their
 * resolution by the collectors) as those integers, other doubles as their
 * bits in order (a clock's readings as counts of their ulp, floats'
 * values with 29 low zero bits as a common step); those integers
 * optionally on their common step (bytes in pages), by delta-of-delta
 * (the Gorilla paper's, Pelkonen et al., VLDB 2015: steps, trends),
 * packed in the width of their spread (a regular tick and a constant cost
 * no bits a point), or by adaptive Rice codes of the residuals from a
 * level, a grid, the previous value or delta (noise that clusters, with
 * outliers), zeros optionally as runs; or any doubles as Gorilla's XOR
 * with the previous value, when that is smaller.  The times of a block may instead be counts over a
 * table of times kept elsewhere (one job's series of one span share their
 * steps' times: the store keeps the table once).  Decoding gives back every
 * double bit for bit (NaN payloads, -0, inf); blocks of versions 1 and 2
 * are still read.  Pure functions: no state, no logging, any thread.
 */
#ifndef DLPROF_SERIES_CODEC_H
#define DLPROF_SERIES_CODEC_H

#include <stdbool.h>
#include <stddef.h>

/* The most points one block holds (a decoder refuses more). */
#define SERIES_CODEC_MAX_POINTS 65536
/* The most columns of values one block holds. */
#define SERIES_CODEC_MAX_COLS 8

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

/* A decoded block: n times and ncols columns of n values, in one allocation. */
struct series_cols {
	size_t n;
	int ncols;
	double *t;                 /* n times; owns the columns' memory too */
	double *v[SERIES_CODEC_MAX_COLS];
};

/*
 * Encodes n times (1 <= n <= SERIES_CODEC_MAX_POINTS) with ncols (0 to
 * SERIES_CODEC_MAX_COLS) columns of n values each.  With table (ntable
 * distinct times, ascending) the times are stored as how many points fall
 * on each table time, so they must ascend and each be a table time; the
 * reader needs the same table.  ref, when given, is a reference column:
 * with a table, one number per table time (NAN where there is none), from
 * which each column's values may be predicted as a constant over it (a
 * rate from its step's duration); without one, one number per point, from
 * which the times may be predicted as the previous time plus it (a step's
 * time from its duration) and the values as above.  The encoder uses a
 * prediction only where it is smaller; the reader then needs the same
 * reference.  -1 when out of memory or out of bounds, or a time is not in
 * the table.
 */
int series_encode_block(const double *t, size_t n, const double *const *cols, int ncols, const double *table,
			size_t ntable, const double *ref, unsigned char **out, size_t *len);
/*
 * Decodes any block (version 1 and 2 blocks have one column) into *out,
 * to be freed with series_cols_free.  A block whose times are over a table
 * needs that table (table, ntable) for its times: without it (NULL, 0)
 * they come back as the indices of their table times.  A block that was
 * predicted needs its reference (ref of nref numbers, as encoded).  -1 when
 * one is missing or does not fit, for a malformed block, or no memory.
 */
int series_decode_block(const unsigned char *buf, size_t len, const double *table, size_t ntable, const double *ref,
			size_t nref, struct series_cols *out);
void series_cols_free(struct series_cols *c);
/* The points a block holds, from its header; -1 when it is not a block. */
int series_block_points(const unsigned char *buf, size_t len, size_t *n);
/* Whether the block's times are over a table (series_decode_block needs it). */
bool series_block_shared(const unsigned char *buf, size_t len);

#endif
