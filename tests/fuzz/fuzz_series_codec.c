/*
 * libFuzzer target for the series block codec (daemon/series_codec.c),
 * which decodes blobs read back from the database.  Three uses of the
 * input: as a block, which must decode or be refused without a fault, and
 * whose decoded points must encode and decode again to the same bits; as
 * a block of columns over a table with a reference column (a job's dense
 * span), likewise; and as points (16 bytes each: t and v as raw doubles),
 * which must round-trip bit for bit, with and without a reference.
 */
#undef NDEBUG   /* the checks below are the point */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "series_codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void round_trip(const struct series_point *p, size_t n)
{
	unsigned char *buf;
	struct series_point *q;
	size_t len, m;

	assert(series_encode(p, n, &buf, &len) == 0);
	assert(series_decode(buf, len, &q, &m) == 0);
	assert(m == n);
	assert(memcmp(p, q, n * sizeof(*p)) == 0);
	free(buf);
	free(q);
}

#define TABLE 64

/* A block's columns encode and decode again to the same bits (over the table and reference given). */
static void round_trip_cols(const struct series_cols *c, const double *table, const double *ref)
{
	unsigned char *buf;
	struct series_cols d;
	size_t len;

	assert(series_encode_block(c->t, c->n, (const double *const *)c->v, c->ncols, table, table ? TABLE : 0, ref,
				   &buf, &len) == 0);
	assert(series_decode_block(buf, len, table, table ? TABLE : 0, ref, ref ? (table ? TABLE : c->n) : 0, &d) == 0);
	assert(d.n == c->n && d.ncols == c->ncols);
	assert(memcmp(d.t, c->t, c->n * sizeof(double)) == 0);
	for (int k = 0; k < c->ncols; k++)
		assert(memcmp(d.v[k], c->v[k], c->n * sizeof(double)) == 0);
	series_cols_free(&d);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static double table[TABLE], ref[TABLE];
	struct series_point *p;
	struct series_cols c;
	size_t n;

	for (int i = 0; i < TABLE; i++) {
		table[i] = 1795767928.6551702 + 0.05 * i;
		ref[i] = i % 5 ? 0.05 : NAN;
	}
	if (series_decode_block(data, size, NULL, 0, NULL, 0, &c) == 0) {
		if (!series_block_shared(data, size))
			round_trip_cols(&c, NULL, NULL);
		series_cols_free(&c);
	}
	if (series_decode_block(data, size, table, TABLE, ref, TABLE, &c) == 0) {
		if (series_block_shared(data, size))
			round_trip_cols(&c, table, ref);
		series_cols_free(&c);
	}
	if (series_decode(data, size, &p, &n) == 0) {
		assert(n >= 1 && n <= SERIES_CODEC_MAX_POINTS);
		round_trip(p, n);
		free(p);
	}
	n = size / sizeof(*p);
	if (n >= 1 && n <= SERIES_CODEC_MAX_POINTS) {
		if ((p = malloc(n * sizeof(*p))) == NULL)
			return 0;
		memcpy(p, data, n * sizeof(*p));
		round_trip(p, n);
		if (n <= TABLE) {
			/* The points' values predicted from a reference column, their times from it too. */
			double t[TABLE], v[TABLE];

			for (size_t i = 0; i < n; i++) {
				t[i] = p[i].t;
				v[i] = p[i].v;
			}
			c = (struct series_cols){.n = n, .ncols = 1, .t = t, .v = {v}};
			round_trip_cols(&c, NULL, ref);
		}
		free(p);
	}
	return 0;
}
