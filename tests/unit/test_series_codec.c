/*
 * The block codec (series_codec.c): every point comes back bit for bit
 * (NaN payloads, infinities, -0, negative and huge values, irregular and
 * unordered times, times that are not whole milliseconds), a regular tick
 * with a steady value costs about two bits a point, integers that are noise
 * around a level go packed in the bits of their spread, and a damaged block
 * is refused rather than misread.
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

#define HEAD_PACKED 0x4        /* series_codec.c's FLAG_VALUE_PACKED, in the header byte */
#define HEAD_TIME_PACKED 0x8   /* its FLAG_TIME_PACKED */

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

/* The header byte of the block p[0..n-1] codes to. */
static unsigned
head_of(const struct series_point *p, size_t n)
{
	unsigned char *buf;
	size_t len;
	unsigned h;

	assert_int_equal(series_encode(p, n, &buf, &len), 0);
	h = buf[0];
	free(buf);
	return h;
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
	assert_true(head_of(p, 600) & HEAD_PACKED);
	assert_true(len <= 30 + 600 * (9 + 1) / 8);  /* 400 levels: 9 bits each, a bit of time, the header */
	refuses_truncations(p, 600);
	for (int i = 0; i < 600; i++)
		p[i].v = -1e6 + 390.0 * i + (i % 3);     /* deltas of 389 to 392: two bits each */
	len = round_trip(p, 600);
	assert_true(head_of(p, 600) & HEAD_PACKED);
	assert_true(len <= 40 + 600 * (2 + 1) / 8);
	refuses_truncations(p, 600);
	for (int i = 0; i < 600; i++)
		p[i].v = 32;                              /* a constant on a regular tick: no bits a point */
	len = round_trip(p, 600);
	assert_true(head_of(p, 600) & HEAD_TIME_PACKED);
	assert_true(len <= 1 + 2 + 1 + 8 + 8 + 1 + 1 + 8 + 1);   /* head, count, order, first, least, width; values */
	refuses_truncations(p, 600);
	p[300].t += 0.004;                            /* one late tick: packed, 4 bits each; delta-of-delta, 1 */
	len = round_trip(p, 600);
	assert_false(head_of(p, 600) & HEAD_TIME_PACKED);
	assert_true(len <= 40 + 600 / 8);
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
