/*
 * The block codec (series_codec.c): every point comes back bit for bit
 * (NaN payloads, infinities, -0, negative and huge values, irregular and
 * unordered times, times that are not whole milliseconds), a regular tick
 * with a steady value costs about two bits a point, integers that are noise
 * around a level go packed in the bits of their spread or Rice-coded near
 * their entropy, a series that rarely changes costs a fraction of a bit a
 * point, blocks of the first version are still read, and a damaged block
 * is refused rather than misread.  Version 3: floats and a clock's readings
 * as ordered bits, blocks of several columns, times counted over a shared
 * table, and times and values predicted from a reference column, all bit
 * for bit and each smaller than without.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "series_codec.h"

static uint64_t
bits_of(double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	return u;
}

static double
of_bits(uint64_t u)
{
	double d;

	memcpy(&d, &u, sizeof(d));
	return d;
}

/* Encodes, decodes, checks every bit; returns the block's size. */
static size_t
round_trip(const struct series_point *p, size_t n)
{
	unsigned char *buf = NULL;
	struct series_point *q = NULL;
	size_t len = 0, m = 0;

	assert_int_equal(series_encode(p, n, &buf, &len), 0);
	assert_int_equal(series_decode(buf, len, &q, &m), 0);
	assert_int_equal(m, n);
	for (size_t i = 0; i < n; i++) {
		assert_true(bits_of(q[i].t) == bits_of(p[i].t));
		assert_true(bits_of(q[i].v) == bits_of(p[i].v));
	}
	free(buf);
	free(q);
	return len;
}

static void
special_values(void **state)
{
	const double v[] = {NAN, -NAN, of_bits(0x7ff8dead00000001ull), INFINITY, -INFINITY, 0.0, -0.0, -1.5,
			    1e308, -1e-308, 4.9e-324, 3.0, -3.0, 9007199254740993.0, -9007199254740992.0, 42.0};
	struct series_point p[sizeof(v) / sizeof(v[0])];

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		p[i] = (struct series_point){1764000000.0 + (double)i, v[i]};
	round_trip(p, sizeof(v) / sizeof(v[0]));
}

static void
integer_values(void **state)
{
	struct series_point p[300];

	(void)state;
	/* A counter, a count with a jump, negative integers: the integer variant. */
	for (int i = 0; i < 300; i++)
		p[i] = (struct series_point){1764000000.0 + i, i < 150 ? 1e12 + 4096.0 * i : -7.0 - (i % 5)};
	round_trip(p, 300);
	p[299].v = 9007199254740992.0;   /* 2^53 and its negation are exact */
	p[298].v = -9007199254740992.0;
	round_trip(p, 300);
}

/* Values to two decimals (a load average, jiffies as seconds): integers over 100, a few bits each. */
static void
decimal_values(void **state)
{
	struct series_point p[60];
	size_t len;

	(void)state;
	for (int i = 0; i < 60; i++)
		p[i] = (struct series_point){1764000000.0 + i, (double)(300 + (i * 7) % 23) / 100.0};
	len = round_trip(p, 60);
	assert_true(len < 60 * 2);   /* XOR of these costs ~6 bytes each */
	p[7].v = -0.0;               /* -0 has no integer form: back to XOR, still exact */
	round_trip(p, 60);
	p[7].v = 0.1 + 0.2;          /* not a decimal of 6 places */
	round_trip(p, 60);
	p[7].v = 1e-6;
	round_trip(p, 60);
}

static void
irregular_times(void **state)
{
	const double t[] = {-0.0, 0.0, 1e-9, 1764000000.123456789, 1764000000.001, 1763999999.5, 1764000100.0,
			    1764000100.25, 1764000100.25, NAN, INFINITY, 1e300, -5.0, 1764000100.25};
	struct series_point p[sizeof(t) / sizeof(t[0])];

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		p[i] = (struct series_point){t[i], 0.1 * (double)i};
	round_trip(p, sizeof(t) / sizeof(t[0]));
	/* Whole milliseconds with jitter, going back once: the integer time variant. */
	for (size_t i = 0; i < 12; i++)
		p[i].t = 1764000000.0 + (double)i * 0.25 + (i % 3 == 0 ? 0.003 : -0.001) - (i == 7 ? 10.0 : 0.0);
	round_trip(p, 12);
}

static void
one_point_and_most(void **state)
{
	struct series_point one = {1764000000.5, -2.25};
	struct series_point *p = malloc(SERIES_CODEC_MAX_POINTS * sizeof(*p));
	unsigned char *buf;
	size_t len;

	(void)state;
	round_trip(&one, 1);
	assert_non_null(p);
	for (size_t i = 0; i < SERIES_CODEC_MAX_POINTS; i++)
		p[i] = (struct series_point){1764000000.0 + (double)i, sin((double)i)};
	round_trip(p, SERIES_CODEC_MAX_POINTS);
	assert_int_equal(series_encode(p, SERIES_CODEC_MAX_POINTS + 1, &buf, &len), -1);
	assert_int_equal(series_encode(p, 0, &buf, &len), -1);
	free(p);
}

/* A second-tick minute of a steady gauge: far below a byte a point; a noisy one stays under 9 bytes. */
static void
compresses(void **state)
{
	struct series_point p[60];
	size_t len;

	(void)state;
	for (int i = 0; i < 60; i++)
		p[i] = (struct series_point){1764000000.0 + i, 8.0};
	len = round_trip(p, 60);
	assert_true(len <= 2 + 16 + 2 + 60 / 4);   /* header, the first point, its deltas, 2 bits each after */
	for (int i = 0; i < 60; i++)
		p[i].v = 3.0 + sin(i * 0.7) / 3.0;
	len = round_trip(p, 60);
	assert_true(len < 60 * 9);
}

#define HEAD_PACKED 0x4        /* version 1's FLAG_VALUE_PACKED */
#define HEAD_TIME_PACKED 0x8   /* version 1's FLAG_TIME_PACKED */

/* Each truncation of the block p[0..n-1] codes to is refused. */
static void
refuses_truncations(const struct series_point *p, size_t n)
{
	struct series_point *q;
	unsigned char *buf, *cut;
	size_t len, m;

	assert_int_equal(series_encode(p, n, &buf, &len), 0);
	for (size_t l = 0; l < len; l++) {
		cut = malloc(l + 1);
		memcpy(cut, buf, l);
		assert_int_equal(series_decode(cut, l, &q, &m), -1);
		free(cut);
	}
	free(buf);
}

/*
 * Rates at their resolution (thousandths of a core jumping around a level),
 * a counter with a jittered step, a constant: packed, near their entropy.
 */
static void
packs_noise(void **state)
{
	struct series_point p[600];
	unsigned seed = 3;
	size_t len;

	(void)state;
	for (int i = 0; i < 600; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (struct series_point){1764000000.0 + i, (double)(3800 + (seed >> 8) % 400) / 1000.0};
	}
	len = round_trip(p, 600);
	assert_true(len <= 30 + 600 * 9 / 8);   /* 400 levels: 9 bits each, none for the times, the header */
	refuses_truncations(p, 600);
	for (int i = 0; i < 600; i++)
		p[i].v = -1e6 + 390.0 * i + (i % 3);     /* deltas of 389 to 392: two bits each */
	len = round_trip(p, 600);
	assert_true(len <= 40 + 600 * 2 / 8);
	refuses_truncations(p, 600);
	for (int i = 0; i < 600; i++)
		p[i].v = 32;                              /* a constant on a regular tick: no bits a point */
	len = round_trip(p, 600);
	assert_true(len <= 1 + 2 + 2 * (1 + 8 + 8 + 1) + 1);   /* head, count; per section: order, first, least, width */
	refuses_truncations(p, 600);
	p[300].t += 0.004;                            /* one late tick: runs of zero residuals, a few bytes */
	len = round_trip(p, 600);
	assert_true(len <= 40);
	p[300].t -= 0.004;
	p[0].v = -9007199254740992.0;                 /* the widest spread: 64 bits */
	p[1].v = 9007199254740992.0;
	round_trip(p, 600);
	round_trip(p, 1);
}

/* A bit writer for hand-made blocks. */
static void
put(unsigned char *buf, size_t *bit, uint64_t v, unsigned n)
{
	while (n-- > 0) {
		if ((v >> n) & 1)
			buf[*bit / 8] |= (unsigned char)(0x80u >> (*bit % 8));
		(*bit)++;
	}
}

/* A one-point packed block of the value 5, its width given; its length in bytes. */
static size_t
packed_block(unsigned char *buf, size_t cap, unsigned head, unsigned width)
{
	size_t bit = 0;

	memset(buf, 0, cap);
	put(buf, &bit, head, 8);
	put(buf, &bit, 1, 8);                   /* one point */
	put(buf, &bit, 1764000000000ull, 64);   /* its time in ms */
	put(buf, &bit, 0, 3);                   /* whole numbers */
	put(buf, &bit, 0, 1);                   /* the values themselves, not deltas */
	put(buf, &bit, 5, 64);                  /* the least */
	put(buf, &bit, width, 7);
	put(buf, &bit, 0, width > 64 ? 64 : width);
	return (bit + 7) / 8;
}

/* Packed values without the integer flag, and a width beyond 64 bits, are not blocks. */
static void
refuses_bad_packing(void **state)
{
	const unsigned packed = 0x10 | 0x1 | 0x2 | HEAD_PACKED;   /* version 1, ms times, integers, packed */
	unsigned char buf[40];
	struct series_point *q;
	size_t len, m;

	(void)state;
	len = packed_block(buf, sizeof(buf), packed, 3);
	assert_int_equal(series_decode(buf, len, &q, &m), 0);
	assert_int_equal(m, 1);
	assert_true(q[0].v == 5.0);
	free(q);
	len = packed_block(buf, sizeof(buf), packed & ~0x2u, 3);
	assert_int_equal(series_decode(buf, len, &q, &m), -1);
	len = packed_block(buf, sizeof(buf), packed, 65);
	assert_int_equal(series_decode(buf, len, &q, &m), -1);
	len = packed_block(buf, sizeof(buf), packed | HEAD_TIME_PACKED, 3);   /* times read as packed: too short */
	assert_int_equal(series_decode(buf, len, &q, &m), -1);
	len = packed_block(buf, sizeof(buf), (packed | HEAD_TIME_PACKED) & ~0x1u, 3);   /* packed, but not ms */
	assert_int_equal(series_decode(buf, len, &q, &m), -1);
}

static void
refuses_damage(void **state)
{
	struct series_point p[40], *q;
	unsigned char *buf, *cut;
	size_t len, m;

	(void)state;
	for (int i = 0; i < 40; i++)
		p[i] = (struct series_point){1764000000.0 + i * 0.5, i * 1.25};
	assert_int_equal(series_encode(p, 40, &buf, &len), 0);
	for (size_t l = 0; l < len; l++) {   /* every truncation */
		cut = malloc(l + 1);
		memcpy(cut, buf, l);
		assert_int_equal(series_decode(cut, l, &q, &m), -1);
		free(cut);
	}
	cut = malloc(len + 1);
	memcpy(cut, buf, len);
	cut[len] = 0;                        /* a trailing byte */
	assert_int_equal(series_decode(cut, len + 1, &q, &m), -1);
	memcpy(cut, buf, len);
	cut[0] = (unsigned char)(cut[0] + 0x10);   /* another version */
	assert_int_equal(series_decode(cut, len, &q, &m), -1);
	memcpy(cut, buf, len);
	cut[1] = 0xff;                       /* a count far beyond the bits */
	assert_int_equal(series_decode(cut, len, &q, &m), -1);
	free(cut);
	free(buf);
}


static uint64_t
lcg(unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return *seed >> 8;
}

/* A two-sided geometric draw (a Laplacian's integer form) with mean magnitude about scale. */
static int64_t
laplace(unsigned *seed, double scale)
{
	double u = ((double)lcg(seed) + 0.5) / (double)(1u << 24);
	int64_t m = (int64_t)floor(-scale * log(u));

	return (lcg(seed) & 1) ? m : -m;
}

/*
 * Noise that clusters around a level with a rare outlier, as a measured
 * rate does: Rice-coded near its entropy, where packing would pay the
 * outlier's width on every point; and jittered times the same way.
 */
static void
codes_near_entropy(void **state)
{
	struct series_point p[600];
	unsigned seed = 11;
	size_t len;

	(void)state;
	for (int i = 0; i < 600; i++)
		p[i] = (struct series_point){1764000000.0 + i, (double)(4000 + laplace(&seed, 3.0)) / 1000.0};
	p[250].v = 12.5;                                /* one outlier: 14 bits to pack every point */
	len = round_trip(p, 600);
	/* The draw's entropy is 3.75 bits: Rice's code is within a bit of it (packing would take 14). */
	assert_true(len <= 30 + 600 * 4.75 / 8);
	refuses_truncations(p, 600);
	for (int i = 0; i < 600; i++)                   /* a millisecond jitter on each tick */
		p[i].t = 1764000000.0 + i + (double)laplace(&seed, 1.5) / 1000.0;
	len = round_trip(p, 600);
	assert_true(len <= 30 + 600 * (4.75 + 3.5) / 8);   /* the times' jitter: 2.9 bits of entropy */
	refuses_truncations(p, 600);
	/* The same noise in pages of 4096 bytes: the step's twelve zero bits cost nothing. */
	for (int i = 0; i < 600; i++)
		p[i] = (struct series_point){1764000000.0 + i, 4096.0 * (double)(250000 + laplace(&seed, 3.0))};
	len = round_trip(p, 600);
	assert_true(len <= 50 + 600 * 4.75 / 8);
	refuses_truncations(p, 600);
	p[17].v = -4096.0 * 3 + 1;                          /* off the step: still exact */
	round_trip(p, 600);
}

/* A count that steps a few times a block: runs of unchanged values, a fraction of a bit a point. */
static void
codes_runs(void **state)
{
	struct series_point p[600];
	unsigned seed = 5;
	size_t len;
	double busy = 6;

	(void)state;
	for (int i = 0; i < 600; i++) {
		if (i % 97 == 40)
			busy = (double)(4 + lcg(&seed) % 5);
		p[i] = (struct series_point){1764000000.0 + i, busy};
	}
	len = round_trip(p, 600);
	assert_true(len <= 40);                         /* 600 bits as delta-of-delta */
	refuses_truncations(p, 600);
	for (int i = 0; i < 600; i++)                   /* RSS in pages that grows now and then */
		p[i].v = 4096.0 * (500000 + (i / 50) * (double)(lcg(&seed) % 256));
	round_trip(p, 600);
}

/* Every shape at every length to 130, and random bits: each comes back exact. */
static void
round_trips_shapes(void **state)
{
	static struct series_point p[130];
	unsigned seed = 9;

	(void)state;
	for (size_t n = 1; n <= 130; n++)
		for (int shape = 0; shape < 6; shape++) {
			for (size_t i = 0; i < n; i++) {
				double t = 1764000000.0 + (double)i * 0.5 + (shape % 2 ? (double)(lcg(&seed) % 7) / 1000.0 : 0);
				double v = shape == 0   ? (double)laplace(&seed, 40.0)
					   : shape == 1 ? (double)(lcg(&seed) % 3 == 0 ? 0 : laplace(&seed, 1e6))
					   : shape == 2 ? (double)i * 7.0 + (double)(lcg(&seed) % 2)
					   : shape == 3 ? (i % 17 ? 5.0 : -9.0e15)
					   : shape == 4 ? (double)laplace(&seed, 2.0) / 100.0
							: of_bits((uint64_t)lcg(&seed) << 40 ^ (uint64_t)lcg(&seed));
				p[i] = (struct series_point){t, v};
			}
			round_trip(p, n);
		}
}

/* Blocks the first version wrote (by dlprofd before the Rice sections): read back exactly. */
static const unsigned char v1_packed[] = {
	0x13, 0x28, 0x00, 0x00, 0x01, 0x9a, 0xb6, 0x97, 0xe8, 0x00, 0xe7, 0xd0,
	0x00, 0x00, 0x00, 0x00, 0x01, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07,
	0x6c, 0x52, 0xaa, 0x20, 0x15, 0x2a, 0x88, 0x05, 0x4a, 0xa2, 0x01, 0x52,
	0xa8, 0x80};
static const unsigned char v1_dod[] = {
	0x19, 0x28, 0x80, 0x00, 0x00, 0xcd, 0x5b, 0x4b, 0xf4, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x7c, 0x82, 0x92, 0x49, 0x24, 0x92, 0x49,
	0x24, 0x92, 0x49, 0x24, 0x91, 0x07, 0x37, 0x35, 0x94, 0x00, 0x00, 0x00,
	0x03, 0x70, 0x0e, 0xc0, 0x9d, 0x8b, 0x27, 0x58, 0x6f, 0x31, 0x58, 0x6c,
	0xc6, 0x23, 0xa6, 0x4f, 0xdb, 0x06, 0xb0, 0x33, 0x0d, 0x30, 0x4b, 0x1f,
	0xb0, 0x43, 0x0c, 0x30, 0x7b, 0x3c, 0xb0, 0x53, 0x0b, 0x31, 0xeb, 0x05,
	0xb0, 0xa3, 0xa4, 0x57, 0xf1, 0x82, 0x6c, 0x35, 0x60, 0x73, 0x04, 0x98,
	0xe2, 0xc1, 0x76, 0x18, 0x30, 0x41, 0x9e, 0xec, 0x11, 0x61, 0x93, 0x1b,
	0x98, 0x2a, 0xc3, 0x34};
static const unsigned char v1_xor[] = {
	0x10, 0x28, 0x41, 0xda, 0x49, 0x20, 0x40, 0x00, 0x00, 0x00, 0xeb, 0x52,
	0xaa, 0xaa, 0xbd, 0x4a, 0x7f, 0xff, 0xff, 0xa5, 0x6d, 0x55, 0x55, 0x71,
	0x55, 0x55, 0x59, 0xff, 0xff, 0xf7, 0x42, 0xfd, 0x55, 0x55, 0x70, 0xaa,
	0xaa, 0xac, 0x7f, 0xff, 0xfd, 0x35, 0x55, 0x55, 0xc2, 0xaa, 0xaa, 0xb1,
	0xff, 0xff, 0xf7, 0x3b, 0x1e, 0xaa, 0xaa, 0xb8, 0x2a, 0xaa, 0xab, 0x0f,
	0xff, 0xff, 0xa3, 0x55, 0x55, 0x5c, 0x15, 0x55, 0x55, 0x87, 0xff, 0xff,
	0xd3, 0xaa, 0xaa, 0xae, 0x0a, 0xaa, 0xaa, 0xc3, 0xff, 0xff, 0xe8, 0xd5,
	0x55, 0x57, 0x05, 0x55, 0x55, 0x61, 0xff, 0xff, 0xf7, 0x33, 0x3f, 0x55,
	0x55, 0x5c, 0x0a, 0xaa, 0xaa, 0xc1, 0xff, 0xff, 0xf4, 0x35, 0x55, 0x55,
	0xc0, 0xaa, 0xaa, 0xac, 0x1f, 0xff, 0xff, 0x47, 0x55, 0x55, 0x5c, 0x0a,
	0xaa, 0xaa, 0xc1, 0xff, 0xff, 0xf4, 0x35, 0x55, 0x55, 0xc0, 0xaa, 0xaa,
	0xac, 0x1f, 0xff, 0xff, 0x4f, 0x55, 0x55, 0x5c, 0x0a, 0xaa, 0xaa, 0xc1,
	0xff, 0xff, 0xf4, 0x35, 0x55, 0x55, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x61, 0x79, 0xff, 0x57, 0x6a, 0xa4, 0x78, 0x48, 0x67, 0x78,
	0x00, 0x7f, 0x5a, 0x26, 0x5d, 0x8b, 0x8a, 0x99, 0x5a, 0xde, 0x11, 0x9d,
	0x0e, 0xce, 0xc2, 0x3b, 0x81, 0xfc, 0x01, 0x51, 0x3c, 0x0d, 0x83, 0x56,
	0x5f, 0xac, 0x00, 0x0d, 0x30, 0x70, 0x50, 0x79, 0x0f, 0x3b, 0x00, 0x1f,
	0xa7, 0x38, 0x3f, 0xa8, 0x1d, 0xf9, 0xd0, 0x06, 0x9c, 0xff, 0x29, 0x1b,
	0xb5, 0x19, 0x10, 0x00, 0x55, 0x76, 0xd3, 0x12, 0x2e, 0x2b, 0x9c, 0x00,
	0x6b, 0x91, 0xe9, 0x2c, 0x49, 0xc1, 0xd5, 0x40, 0x1d, 0x84, 0x5c, 0x61,
	0xff, 0xb0, 0x61, 0xc0, 0x01, 0xd2, 0xee, 0xb0, 0x7b, 0xbb, 0x97, 0x30,
	0x00, 0x76, 0xa3, 0x8c, 0x0f, 0xcf, 0xb2, 0x75, 0x00, 0x77, 0x9f, 0x3d,
	0x7e, 0xad, 0x41, 0x47, 0x00, 0x1a, 0xab, 0x85, 0x3d, 0x7e, 0xcd, 0xa1,
	0xc0, 0x01, 0x6f, 0x84, 0xc8, 0x76, 0x53, 0x95, 0xb4, 0x01, 0xb5, 0x11,
	0x53, 0xcc, 0x8f, 0x10, 0x84, 0x00, 0x79, 0x5d, 0x8d, 0x48, 0x3b, 0x51,
	0xa7, 0x00, 0x03, 0x65, 0xe9, 0x62, 0x28, 0xcb, 0x06, 0xd0, 0x05, 0x64,
	0xe7, 0x68, 0x1c, 0xd3, 0x5d, 0x30, 0x01, 0x70, 0xcf, 0xae, 0xed, 0x45,
	0xc1, 0x7c, 0x00, 0x0f, 0xe6, 0x75, 0xfd, 0xdb, 0xd6, 0x1b, 0x40, 0x34,
	0x72, 0xa0, 0x4a, 0x6f, 0x37, 0x0c, 0xc0, 0x0d, 0x26, 0x93, 0xc9, 0xe9,
	0x58, 0x9e, 0xd0, 0x00, 0x3f, 0x72, 0x1d, 0x49, 0xeb, 0x48, 0x6c, 0x00,
	0x58, 0x15, 0x33, 0x14, 0x0f, 0x29, 0x25, 0x40, 0x14, 0x4b, 0x03, 0x04,
	0xee, 0xd2, 0x8f, 0x40, 0x00, 0xdf, 0x88, 0x29, 0x44, 0xd3, 0xf6, 0x70,
	0x01, 0xfe, 0x61, 0x24, 0x5d, 0x05, 0x77, 0x35, 0x00, 0x68, 0xd5, 0xf0,
	0x37, 0xc7, 0xba, 0x63, 0x00, 0x05, 0x50, 0xc4, 0xaf, 0xdd, 0x2c, 0xed,
	0x40, 0x06, 0xc8, 0xc6, 0x99, 0x2b, 0x8d, 0x97, 0x94, 0x01, 0xc3, 0xf4,
	0x49, 0x38, 0x14, 0xcf, 0x3c, 0x00, 0x1c, 0xb4, 0x1d, 0x72, 0x06, 0x0e,
	0xbd, 0x00, 0x07, 0x88, 0xbc, 0xfc, 0x3c, 0x8f, 0xcc, 0xd0, 0x07, 0x71,
	0x2c, 0xd3, 0x16, 0x96, 0xc9, 0x30, 0x01, 0xa6, 0xdf, 0xfa, 0x48, 0x01,
	0x51, 0x64, 0x00, 0x16, 0x56, 0xf4, 0x92, 0x06, 0x11, 0x97, 0x40, 0x1b,
	0x30, 0x37, 0x51, 0x64, 0x39, 0xc9, 0x40, 0x07, 0x84, 0x1b, 0x50, 0xc8,
	0x73, 0x8e, 0xe0};

static void
reads_version_1(void **state)
{
	struct series_point *q;
	size_t m;

	(void)state;
	assert_int_equal(series_decode(v1_packed, sizeof(v1_packed), &q, &m), 0);
	assert_int_equal(m, 40);
	for (int i = 0; i < 40; i++) {
		assert_true(q[i].t == 1764000000.0 + i);
		assert_true(q[i].v == (double)(3800 + (i * 37) % 41) / 1000.0);
	}
	free(q);
	assert_int_equal(series_decode(v1_dod, sizeof(v1_dod), &q, &m), 0);
	assert_int_equal(m, 40);
	for (int i = 0; i < 40; i++) {
		assert_true(q[i].t == 1764000000.0 + i * 0.25 + (i % 3 ? 0.001 : 0));
		assert_true(q[i].v == 1e9 + 4096.0 * i * i);
	}
	free(q);
	assert_int_equal(series_decode(v1_xor, sizeof(v1_xor), &q, &m), 0);
	assert_int_equal(m, 40);
	for (int i = 0; i < 40; i++) {
		assert_true(q[i].t == 1764000000.0 + i / 3.0);
		assert_true(bits_of(q[i].v) == bits_of(sin(i)));
	}
	free(q);
}

/* A version 2 block of one point at 1764000000 s with hand-made values; its length in bytes. */
static size_t
v2_block(unsigned char *buf, size_t cap, unsigned count, unsigned method, unsigned order, uint64_t run)
{
	size_t bit = 0;

	memset(buf, 0, cap);
	put(buf, &bit, 0x23, 8);                /* version 2, ms times, integer values */
	put(buf, &bit, count, 8);
	put(buf, &bit, 0, 1);                   /* times on no common step */
	put(buf, &bit, 1, 2);                   /* times packed */
	put(buf, &bit, 0, 1);                   /* as themselves */
	put(buf, &bit, 1764000000000ull, 64);   /* the least */
	put(buf, &bit, 0, 7);                   /* width 0: all alike */
	put(buf, &bit, 0, 3);                   /* whole numbers */
	put(buf, &bit, 0, 1);                   /* on no common step */
	put(buf, &bit, method, 2);
	put(buf, &bit, order, 2);               /* Rice: the order */
	put(buf, &bit, 1, 1);                   /* zeros as runs */
	put(buf, &bit, 7, 64);                  /* the level */
	put(buf, &bit, 0, 6);                   /* values' k */
	put(buf, &bit, 0, 6);                   /* runs' k */
	for (uint64_t i = 0; i < run; i++)      /* the run in unary (k = 0) */
		put(buf, &bit, 1, 1);
	put(buf, &bit, 0, 1);
	return (bit + 7) / 8;
}

/* Hand-made version 2 blocks: a good one reads; an unknown method, a run past the count, or a version 1 flag do not. */
static void
refuses_bad_rice(void **state)
{
	unsigned char buf[64];
	struct series_point *q;
	size_t len, m;

	(void)state;
	len = v2_block(buf, sizeof(buf), 3, 2, 0, 3);   /* three residuals of zero: the level thrice */
	assert_int_equal(series_decode(buf, len, &q, &m), 0);
	assert_int_equal(m, 3);
	assert_true(q[0].v == 7.0 && q[2].v == 7.0 && q[2].t == 1764000000.0);
	free(q);
	len = v2_block(buf, sizeof(buf), 3, 3, 0, 3);   /* method 3 */
	assert_int_equal(series_decode(buf, len, &q, &m), -1);
	len = v2_block(buf, sizeof(buf), 3, 2, 0, 4);   /* a run of four in three */
	assert_int_equal(series_decode(buf, len, &q, &m), -1);
	buf[0] = 0x2b;                                  /* version 1's packed-times flag in a version 2 block */
	assert_int_equal(series_decode(buf, len, &q, &m), -1);
}

/* A training job's steps: clock times 50 ms apart with jitter, float losses, microsecond step times, a rate. */
static void
steps(double *t, double *loss, double *step, double *rate, size_t n)
{
	unsigned u = 17;

	for (size_t i = 0; i < n; i++) {
		u = u * 1103515245u + 12345u;
		step[i] = (double)(45000 + (u >> 8) % 10000) / 1e6;
		t[i] = i == 0 ? 1795767928.6551702 : t[i - 1] + step[i] + (double)((u >> 4) % 5) * 2.384185791015625e-7;
		loss[i] = (double)(float)(2.3 - 1e-5 * (double)i + (double)((u >> 12) % 1000) * 1e-4);
		/* 64 samples over the step, to what a microsecond of it allows (the client's resolved()). */
		rate[i] = round(64 / step[i] * 1e3) / 1e3;
	}
}

/* Every column back bit for bit; the block's size. */
static size_t
round_trip_block(const double *t, size_t n, const double *const *cols, int ncols, const double *table, size_t ntable,
		 const double *ref)
{
	struct series_cols c;
	unsigned char *buf;
	size_t len;

	assert_int_equal(series_encode_block(t, n, cols, ncols, table, ntable, ref, &buf, &len), 0);
	assert_int_equal(series_block_shared(buf, len), table != NULL);
	assert_int_equal(series_decode_block(buf, len, table, ntable, ref, ref ? (table ? ntable : n) : 0, &c), 0);
	assert_int_equal(c.n, n);
	assert_int_equal(c.ncols, ncols);
	for (size_t i = 0; i < n; i++) {
		assert_true(bits_of(c.t[i]) == bits_of(t[i]));
		for (int k = 0; k < ncols; k++)
			assert_true(bits_of(c.v[k][i]) == bits_of(cols[k][i]));
	}
	series_cols_free(&c);
	free(buf);
	return len;
}

/* Floats cost their mantissa's noise, not a double's; a clock's readings their spacing's. */
static void
ordered_bits(void **state)
{
	static double t[600], loss[600], step[600], rate[600];
	const double *col = loss;
	size_t len;

	(void)state;
	steps(t, loss, step, rate, 600);
	len = round_trip_block(t, 600, &col, 1, NULL, 0, NULL);
	/* Times: ~16 bits of spacing (a few ms of jitter in 0.24 us ulps); losses: ~20 bits; not 2 x 8 bytes. */
	assert_true(len < 600 * (16 + 22) / 8 + 64);
}

/* A job's columns over a table of its times: one table, blocks that count over it, predictions from its step times. */
static void
shared_times_and_predictions(void **state)
{
	static double t[3000], loss[3000], step[3000], rate[3000], sub_t[1500], sub_v[1500];
	const double *col;
	size_t plain, shared, predicted, table_len, table_pred;
	struct series_cols c;
	unsigned char *buf;
	size_t len;

	(void)state;
	steps(t, loss, step, rate, 3000);
	col = rate;
	plain = round_trip_block(t, 3000, &col, 1, NULL, 0, NULL);
	shared = round_trip_block(t, 3000, &col, 1, t, 3000, NULL);
	/* Counts of one point at every table time cost next to nothing: the times are the table's. */
	assert_true(shared < plain - 3000 * 12 / 8);
	/* A rate from its step's duration: residuals of its last digit. */
	predicted = round_trip_block(t, 3000, &col, 1, t, 3000, step);
	assert_true(predicted < shared / 4);
	/* The table itself, its times from the step times: a few bits a time against ~16. */
	table_len = round_trip_block(t, 3000, NULL, 0, NULL, 0, NULL);
	table_pred = round_trip_block(t, 3000, NULL, 0, NULL, 0, step);
	assert_true(table_pred < table_len / 2);
	/* A series at every other table time; its prediction from the reference where it has one. */
	for (size_t i = 0; i < 1500; i++) {
		sub_t[i] = t[2 * i];
		sub_v[i] = rate[2 * i];
	}
	col = sub_v;
	round_trip_block(sub_t, 1500, &col, 1, t, 3000, step);
	/* Without the table a shared block's times are its table indices; without its reference it does not decode. */
	assert_int_equal(series_encode_block(sub_t, 1500, &col, 1, t, 3000, step, &buf, &len), 0);
	assert_int_equal(series_decode_block(buf, len, NULL, 0, step, 3000, &c), 0);
	assert_true(c.t[1] == 2 && c.v[0][1] == sub_v[1]);
	series_cols_free(&c);
	assert_int_equal(series_decode_block(buf, len, t, 3000, NULL, 0, &c), -1);
	assert_int_equal(series_decode_block(buf, len, t, 2999, step, 2999, &c), -1);
	free(buf);
	/* A time not in the table is refused. */
	sub_t[7] += 1e-6;
	assert_int_equal(series_encode_block(sub_t, 1500, &col, 1, t, 3000, NULL, &buf, &len), -1);
}

/* Summaries: five columns at whole seconds. */
static void
columns(void **state)
{
	static double t[600], n[600], sum[600], min[600], max[600], last[600];
	const double *cols[5] = {n, sum, min, max, last};
	size_t len, one;
	const double *col = sum;

	(void)state;
	for (int i = 0; i < 600; i++) {
		t[i] = 1764000000.0 + i;
		n[i] = 20;
		sum[i] = (double)(1000000 + (i * 7919) % 20000) / 1e6;
		min[i] = (double)(40000 + (i * 31) % 100) / 1e6;
		max[i] = (double)(60000 + (i * 17) % 100) / 1e6;
		last[i] = (double)(50000 + (i * 13) % 100) / 1e6;
	}
	len = round_trip_block(t, 600, cols, 5, NULL, 0, NULL);
	one = round_trip_block(t, 600, &col, 1, NULL, 0, NULL);
	/* The times and the count cost next to nothing; min, max and last (7 bits of noise) less than the sum (15). */
	assert_true(len < 3 * one);
	round_trip_block(t, 600, NULL, 0, NULL, 0, NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(special_values),
		cmocka_unit_test(integer_values),
		cmocka_unit_test(decimal_values),
		cmocka_unit_test(irregular_times),
		cmocka_unit_test(one_point_and_most),
		cmocka_unit_test(compresses),
		cmocka_unit_test(refuses_damage),
		cmocka_unit_test(packs_noise),
		cmocka_unit_test(refuses_bad_packing),
		cmocka_unit_test(codes_near_entropy),
		cmocka_unit_test(codes_runs),
		cmocka_unit_test(round_trips_shapes),
		cmocka_unit_test(reads_version_1),
		cmocka_unit_test(refuses_bad_rice),
		cmocka_unit_test(ordered_bits),
		cmocka_unit_test(shared_times_and_predictions),
		cmocka_unit_test(columns),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
