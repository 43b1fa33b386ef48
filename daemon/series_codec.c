/*
 * The block codec (see series_codec.h).  A block is one header byte (the
 * format's version in the high nibble, the variant flags in the low), the
 * point count as a LEB128 varint, then one bit stream: all the times, then
 * all the values, padded with zero bits to a whole byte.
 *
 * Integers (millisecond times, integer values) go as delta-of-delta, each
 * in a prefix code: '0' for 0, then '10', '110', '1110', '11110' and
 * '11111' with 7, 9, 12, 32 and 64 bits of the zigzagged number.  The
 * arithmetic wraps in uint64_t, so any int64 sequence round-trips and a
 * hostile block decodes to garbage, never to undefined behaviour.  Doubles
 * go as Gorilla's XOR: '0' same value, '10' the changed bits fit the
 * previous window, '11' a new window (6 bits of leading zeros, 6 bits of
 * length - 1) and the bits.
 *
 * Integer values and millisecond times may instead go packed (frame of
 * reference): one bit for the order (0: the numbers, 1: the first in full,
 * then the deltas), the least of them in 64 bits, a width in 7 bits, then
 * each one less the least in that width.  Noise (a rate that jumps around a
 * level) costs the bits of its range, where its delta-of-delta would pay
 * for twice its jumps in the prefix code's next larger bucket; a constant,
 * and the times of a regular tick, cost no bits a point at all.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "series_codec.h"

#define CODEC_VERSION 1
#define FLAG_TIME_MS 0x1          /* times are whole milliseconds, as integers */
#define FLAG_VALUE_INT 0x2        /* values are integers over 10^d (d in 3 bits before them), as integers */
#define FLAG_VALUE_PACKED 0x4     /* with FLAG_VALUE_INT: packed, not delta-of-delta */
#define FLAG_TIME_PACKED 0x8      /* with FLAG_TIME_MS: packed, not delta-of-delta */
#define DECIMALS_MAX 6
#define FLAGS_KNOWN (FLAG_TIME_MS | FLAG_VALUE_INT | FLAG_VALUE_PACKED | FLAG_TIME_PACKED)
#define PACK_WIDTH_BITS 7         /* 0 to 64 */
#define EXACT_INT_MAX 9007199254740992.0 /* 2^53: every integer up to it is a double */

struct bit_writer {
	unsigned char *buf;
	size_t cap, bits;         /* bits written */
	int failed;               /* out of memory: the rest is skipped */
};

struct bit_reader {
	const unsigned char *buf;
	size_t bits, pos;         /* bits in buf, bits read */
	int failed;               /* read past the end */
};

static void
put_bits(struct bit_writer *w, uint64_t v, unsigned nbits)
{
	unsigned char *nb;
	size_t need = (w->bits + nbits + 7) / 8;

	if (w->failed)
		return;
	if (need > w->cap) {
		size_t cap = w->cap * 2 > need ? w->cap * 2 : need + 16;
		if ((nb = realloc(w->buf, cap)) == NULL) {
			w->failed = 1;
			return;
		}
		memset(nb + w->cap, 0, cap - w->cap);
		w->buf = nb;
		w->cap = cap;
	}
	while (nbits > 0) {
		nbits--;
		if ((v >> nbits) & 1)
			w->buf[w->bits / 8] |= (unsigned char)(0x80u >> (w->bits % 8));
		w->bits++;
	}
}

static uint64_t
get_bits(struct bit_reader *r, unsigned nbits)
{
	uint64_t v = 0;

	if (r->failed || r->bits - r->pos < nbits) {
		r->failed = 1;
		return 0;
	}
	while (nbits-- > 0) {
		v = v << 1 | ((r->buf[r->pos / 8] >> (7 - r->pos % 8)) & 1u);
		r->pos++;
	}
	return v;
}

static const unsigned svar_bits[] = {7, 9, 12, 32, 64};

/* A signed number in the prefix code, zigzagged so small magnitudes of either sign are short. */
static void
put_svar(struct bit_writer *w, uint64_t x)
{
	uint64_t u = (x << 1) ^ (uint64_t)-(int64_t)(x >> 63);
	unsigned i;

	if (u == 0) {
		put_bits(w, 0, 1);
		return;
	}
	for (i = 0; i < 4 && u >> svar_bits[i] != 0; i++)
		;
	/* Bucket i < 4: i + 1 ones and a zero; the last: five ones (the decoder stops counting there). */
	if (i < 4)
		put_bits(w, (1u << (i + 2)) - 2, i + 2);
	else
		put_bits(w, 0x1f, 5);
	put_bits(w, u, svar_bits[i]);
}

static uint64_t
get_svar(struct bit_reader *r)
{
	unsigned i = 0;
	uint64_t u;

	while (i < 5 && get_bits(r, 1) == 1)
		i++;
	if (i == 0)
		return 0;
	u = get_bits(r, svar_bits[i - 1]);
	return (u >> 1) ^ (uint64_t)-(int64_t)(u & 1);
}

/* Integers as the first in full, then delta-of-delta. */
static void
put_ints(struct bit_writer *w, const uint64_t *k, size_t n)
{
	uint64_t delta = 0, d;

	put_bits(w, k[0], 64);
	for (size_t i = 1; i < n; i++) {
		d = k[i] - k[i - 1];
		put_svar(w, d - delta);
		delta = d;
	}
}

static void
get_ints(struct bit_reader *r, uint64_t *k, size_t n)
{
	uint64_t delta = 0;

	k[0] = get_bits(r, 64);
	for (size_t i = 1; i < n; i++) {
		delta += get_svar(r);
		k[i] = k[i - 1] + delta;
	}
}

static unsigned
clz64(uint64_t x)
{
	return x == 0 ? 64 : (unsigned)__builtin_clzll(x);
}

/* The least of n integers (as int64) and the bits their spread above it needs. */
static void
pack_plan(const uint64_t *k, size_t n, uint64_t *base, unsigned *width)
{
	int64_t lo = (int64_t)k[0], hi = lo;

	for (size_t i = 1; i < n; i++) {
		if ((int64_t)k[i] < lo)
			lo = (int64_t)k[i];
		if ((int64_t)k[i] > hi)
			hi = (int64_t)k[i];
	}
	*base = (uint64_t)lo;
	*width = 64 - clz64((uint64_t)hi - (uint64_t)lo);
}

/* Bits that packing n integers takes (pack_plan's width), with its base and width. */
static size_t
pack_cost(const uint64_t *k, size_t n)
{
	uint64_t base;
	unsigned width;

	pack_plan(k, n, &base, &width);
	return 64 + PACK_WIDTH_BITS + n * width;
}

static void
put_packed(struct bit_writer *w, const uint64_t *k, size_t n)
{
	uint64_t base;
	unsigned width;

	pack_plan(k, n, &base, &width);
	put_bits(w, base, 64);
	put_bits(w, width, PACK_WIDTH_BITS);
	for (size_t i = 0; i < n; i++)
		put_bits(w, k[i] - base, width);
}

static void
get_packed(struct bit_reader *r, uint64_t *k, size_t n)
{
	uint64_t base = get_bits(r, 64);
	unsigned width = (unsigned)get_bits(r, PACK_WIDTH_BITS);

	if (width > 64) {
		r->failed = 1;
		return;
	}
	for (size_t i = 0; i < n && !r->failed; i++)
		k[i] = base + get_bits(r, width);
}

static unsigned
ctz64(uint64_t x)
{
	return x == 0 ? 64 : (unsigned)__builtin_ctzll(x);
}

/* Doubles' bits as Gorilla's XOR with the previous. */
static void
put_xors(struct bit_writer *w, const uint64_t *b, size_t n)
{
	unsigned wlead = 65, wtrail = 0, lead, trail;
	uint64_t x;

	put_bits(w, b[0], 64);
	for (size_t i = 1; i < n; i++) {
		if ((x = b[i] ^ b[i - 1]) == 0) {
			put_bits(w, 0, 1);
			continue;
		}
		lead = clz64(x);
		trail = ctz64(x);
		if (wlead <= 64 && lead >= wlead && trail >= wtrail) {
			put_bits(w, 2, 2);
			put_bits(w, x >> wtrail, 64 - wlead - wtrail);
			continue;
		}
		put_bits(w, 3, 2);
		put_bits(w, lead, 6);
		put_bits(w, 64 - lead - trail - 1, 6);
		put_bits(w, x >> trail, 64 - lead - trail);
		wlead = lead;
		wtrail = trail;
	}
}

static void
get_xors(struct bit_reader *r, uint64_t *b, size_t n)
{
	unsigned wlead = 65, wtrail = 0, len;

	b[0] = get_bits(r, 64);
	for (size_t i = 1; i < n && !r->failed; i++) {
		b[i] = b[i - 1];
		if (get_bits(r, 1) == 0)
			continue;
		if (get_bits(r, 1) == 1) {
			wlead = (unsigned)get_bits(r, 6);
			len = (unsigned)get_bits(r, 6) + 1;
			if (wlead + len > 64) {
				r->failed = 1;
				return;
			}
			wtrail = 64 - wlead - len;
		} else if (wlead > 64) {
			r->failed = 1;        /* a window reused before one was set */
			return;
		}
		len = 64 - wlead - wtrail;
		b[i] ^= get_bits(r, len) << wtrail;
	}
}

static uint64_t
dbits(double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	return u;
}

static double
bits_d(uint64_t u)
{
	double d;

	memcpy(&d, &u, sizeof(d));
	return d;
}

/* t as whole milliseconds that give t back exactly, or -1. */
static int
time_ms(double t, uint64_t *k)
{
	double ms = t * 1000.0;
	int64_t i;

	if (!(fabs(ms) < EXACT_INT_MAX) || (t == 0 && signbit(t)))
		return -1;
	i = llround(ms);
	if ((double)i / 1000.0 != t)
		return -1;
	*k = (uint64_t)i;
	return 0;
}

static const double pow10s[DECIMALS_MAX + 1] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6};

/*
 * v as an integer over 10^d that gives v back exactly, or -1: counts and
 * counters (d = 0), and figures kept to a few decimals (loads, jiffies as
 * seconds), whose XOR would cost most of their 64 bits.
 */
static int
value_int(double v, int d, uint64_t *k)
{
	double x = v * pow10s[d];
	int64_t i;

	if (!(fabs(x) <= EXACT_INT_MAX) || (v == 0 && signbit(v)))
		return -1;
	i = llround(x);
	if ((double)i / pow10s[d] != v)
		return -1;
	*k = (uint64_t)i;
	return 0;
}

/* Fills k with the integer form of the times (d < 0) or values (over 10^d), or -1 when one is not exact. */
static int
as_ints(const struct series_point *p, size_t n, int d, uint64_t *k)
{
	for (size_t i = 0; i < n; i++)
		if ((d >= 0 ? value_int(p[i].v, d, &k[i]) : time_ms(p[i].t, &k[i])) < 0)
			return -1;
	return 0;
}

/*
 * Packed integers (k[0..n-1], overwritten): the values themselves or, when
 * it is smaller, the first in full and the deltas (a counter, a drift).
 */
static void
put_packed_values(struct bit_writer *w, uint64_t *k, size_t n)
{
	size_t as_values = pack_cost(k, n), as_deltas;

	for (size_t i = n - 1; i > 0; i--)
		k[i] -= k[i - 1];
	as_deltas = n > 1 ? 64 + pack_cost(k + 1, n - 1) : SIZE_MAX;
	if (as_values <= as_deltas) {
		for (size_t i = 1; i < n; i++)
			k[i] += k[i - 1];
		put_bits(w, 0, 1);
		put_packed(w, k, n);
		return;
	}
	put_bits(w, 1, 1);
	put_bits(w, k[0], 64);
	put_packed(w, k + 1, n - 1);
}

static void
get_packed_values(struct bit_reader *r, uint64_t *k, size_t n)
{
	if (get_bits(r, 1) == 0) {
		get_packed(r, k, n);
		return;
	}
	k[0] = get_bits(r, 64);
	if (n == 1) {
		r->failed = 1;        /* the encoder packs one value as itself */
		return;
	}
	get_packed(r, k + 1, n - 1);
	for (size_t i = 1; i < n; i++)
		k[i] += k[i - 1];
}

/* The values: integers over 10^d (delta-of-delta, or packed with FLAG_VALUE_PACKED), or XORed doubles. */
static void
put_values(struct bit_writer *w, const struct series_point *p, size_t n, unsigned flags, int d, uint64_t *k)
{
	if (flags & FLAG_VALUE_INT) {
		as_ints(p, n, d, k);
		put_bits(w, (uint64_t)d, 3);
		if (flags & FLAG_VALUE_PACKED)
			put_packed_values(w, k, n);
		else
			put_ints(w, k, n);
		return;
	}
	for (size_t i = 0; i < n; i++)
		k[i] = dbits(p[i].v);
	put_xors(w, k, n);
}

/* The header and the times; the values follow. */
static void
put_head(struct bit_writer *w, const struct series_point *p, size_t n, unsigned flags, uint64_t *k)
{
	put_bits(w, CODEC_VERSION << 4 | flags, 8);
	for (size_t m = n; ; m >>= 7) {
		put_bits(w, (m >= 0x80 ? 0x80 : 0) | (m & 0x7f), 8);
		if (m < 0x80)
			break;
	}
	if (flags & FLAG_TIME_MS) {
		as_ints(p, n, -1, k);
		if (flags & FLAG_TIME_PACKED)
			put_packed_values(w, k, n);
		else
			put_ints(w, k, n);
	} else {
		for (size_t i = 0; i < n; i++)
			k[i] = dbits(p[i].t);
		put_xors(w, k, n);
	}
}

static int
encode_as(const struct series_point *p, size_t n, unsigned flags, int d, uint64_t *k, struct bit_writer *w)
{
	memset(w, 0, sizeof(*w));
	put_head(w, p, n, flags, k);
	put_values(w, p, n, flags, d, k);
	if (w->failed) {
		free(w->buf);
		return -1;
	}
	return 0;
}

/* FLAG_TIME_PACKED when millisecond times pack smaller than their delta-of-delta (a regular tick), else 0. */
static unsigned
time_coding(const struct series_point *p, size_t n, uint64_t *k)
{
	struct bit_writer dod, packed;
	unsigned flag;

	memset(&dod, 0, sizeof(dod));
	memset(&packed, 0, sizeof(packed));
	put_head(&dod, p, n, FLAG_TIME_MS, k);
	put_head(&packed, p, n, FLAG_TIME_MS | FLAG_TIME_PACKED, k);
	flag = !packed.failed && (dod.failed || packed.bits < dod.bits) ? FLAG_TIME_PACKED : 0;
	free(dod.buf);
	free(packed.buf);
	return flag;
}

/* Keeps in *best the shorter of *best and *other, and frees the other's buffer. */
static void
keep_smaller(struct bit_writer *best, struct bit_writer *other)
{
	if (other->bits < best->bits) {
		free(best->buf);
		*best = *other;
	} else {
		free(other->buf);
	}
}

int
series_encode(const struct series_point *p, size_t n, unsigned char **out, size_t *len)
{
	struct bit_writer w, wi;
	unsigned flags = 0;
	uint64_t *k;
	int d;

	if (n == 0 || n > SERIES_CODEC_MAX_POINTS || (k = malloc(n * sizeof(*k))) == NULL)
		return -1;
	if (as_ints(p, n, -1, k) == 0)
		flags |= FLAG_TIME_MS | time_coding(p, n, k);
	if (encode_as(p, n, flags, -1, k, &w) < 0) {
		free(k);
		return -1;
	}
	/* The fewest decimals that hold every value exactly, if any. */
	for (d = 0; d <= DECIMALS_MAX && as_ints(p, n, d, k) < 0; d++)
		;
	/*
	 * Integer values usually code smaller than their XOR, not always (a
	 * jumpy count); delta-of-delta wins on steps and trends, packing on
	 * noise: keep the smallest.
	 */
	if (d <= DECIMALS_MAX && encode_as(p, n, flags | FLAG_VALUE_INT, d, k, &wi) == 0)
		keep_smaller(&w, &wi);
	if (d <= DECIMALS_MAX && encode_as(p, n, flags | FLAG_VALUE_INT | FLAG_VALUE_PACKED, d, k, &wi) == 0)
		keep_smaller(&w, &wi);
	free(k);
	*out = w.buf;
	*len = (w.bits + 7) / 8;
	return 0;
}

/* The count after the header byte; -1 when malformed or above the maximum. */
static int
get_count(struct bit_reader *r, size_t *n)
{
	size_t m = 0;
	uint64_t byte;

	for (unsigned shift = 0; shift < 21; shift += 7) {
		byte = get_bits(r, 8);
		m |= (size_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80)) {
			*n = m;
			return !r->failed && m >= 1 && m <= SERIES_CODEC_MAX_POINTS ? 0 : -1;
		}
	}
	return -1;
}

int
series_decode(const unsigned char *buf, size_t len, struct series_point **out, size_t *n)
{
	struct bit_reader r = {.buf = buf, .bits = len * 8};
	struct series_point *p;
	uint64_t *k, head = get_bits(&r, 8);
	size_t m;
	unsigned d = 0;

	if (r.failed || head >> 4 != CODEC_VERSION || (head & 0xf & ~FLAGS_KNOWN) || get_count(&r, &m) < 0)
		return -1;
	if (((head & FLAG_VALUE_PACKED) && !(head & FLAG_VALUE_INT)) || ((head & FLAG_TIME_PACKED) && !(head & FLAG_TIME_MS)))
		return -1;
	/* Unpacked, each time after the first takes a bit: a short buffer cannot claim a large count. */
	if (!(head & FLAG_TIME_PACKED) && m > 1 && m - 1 > r.bits - r.pos)
		return -1;
	k = malloc(m * sizeof(*k));
	p = malloc(m * sizeof(*p));
	if (k == NULL || p == NULL)
		goto fail;
	if (head & FLAG_TIME_PACKED)
		get_packed_values(&r, k, m);
	else
		(head & FLAG_TIME_MS ? get_ints : get_xors)(&r, k, m);
	for (size_t i = 0; i < m; i++)
		p[i].t = head & FLAG_TIME_MS ? (double)(int64_t)k[i] / 1000.0 : bits_d(k[i]);
	if ((head & FLAG_VALUE_INT) && (d = (unsigned)get_bits(&r, 3)) > DECIMALS_MAX)
		goto fail;
	if (head & FLAG_VALUE_PACKED)
		get_packed_values(&r, k, m);
	else
		(head & FLAG_VALUE_INT ? get_ints : get_xors)(&r, k, m);
	for (size_t i = 0; i < m; i++)
		p[i].v = head & FLAG_VALUE_INT ? (double)(int64_t)k[i] / pow10s[d] : bits_d(k[i]);
	/* Only the zero padding of the last byte may remain. */
	if (r.failed || r.bits - r.pos >= 8 || get_bits(&r, (unsigned)(r.bits - r.pos)) != 0)
		goto fail;
	free(k);
	*out = p;
	*n = m;
	return 0;
fail:
	free(k);
	free(p);
	return -1;
}
