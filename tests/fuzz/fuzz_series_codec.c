/*
 * libFuzzer target for the series block codec (daemon/series_codec.c),
 * which decodes blobs read back from the database.  Two uses of the input:
 * as a block, which must decode or be refused without a fault, and whose
 * decoded points must encode and decode again to the same bits; and as
 * points (16 bytes each: t and v as raw doubles), which must round-trip
 * bit for bit.
 */
#undef NDEBUG   /* the checks below are the point */
#include <assert.h>
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct series_point *p;
	size_t n;

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
		free(p);
	}
	return 0;
}
