/*
 * The block codec (see series_codec.h).  A block is one header byte (the
 * format's version in the high nibble, the variant flags in the low), the
 * point count as a LEB128 varint, then one bit stream: all the times, then
 * all the values, padded with zero bits to a whole byte.  In version 2 an
 * integer section is a bit for a common step (then the step and the
 * remainder in 64 bits each), its method in 2 bits and the method's
 * payload (below); version 1 said the method in the header's flags and
 * had no step or Rice method.
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
#include <assert.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "series_codec.h"

#define CODEC_VERSION 2           /* the one written; version 1 blocks are still read */
#define FLAG_TIME_MS 0x1          /* times are whole milliseconds, as integers */
#define FLAG_VALUE_INT 0x2        /* values are integers over 10^d (d in 3 bits before them), as integers */
#define FLAG_VALUE_PACKED 0x4     /* version 1, with FLAG_VALUE_INT: packed, not delta-of-delta */
#define FLAG_TIME_PACKED 0x8      /* version 1, with FLAG_TIME_MS: packed, not delta-of-delta */
#define DECIMALS_MAX 6
#define FLAGS_KNOWN_V1 (FLAG_TIME_MS | FLAG_VALUE_INT | FLAG_VALUE_PACKED | FLAG_TIME_PACKED)
#define FLAGS_KNOWN (FLAG_TIME_MS | FLAG_VALUE_INT)
/* Version 2's integer sections start with their method in 2 bits. */
enum int_method { INT_DOD, INT_PACKED, INT_RICE };
/*
 * A Rice-coded section's residuals: from a level, from a regular grid (a
 * tick that jitters but does not drift, a steady counter), from the
 * previous value, or from the previous delta.
 */
enum rice_order { RICE_LEVEL, RICE_GRID, RICE_DELTA, RICE_DOD };
#define RICE_ESCAPE 32            /* a quotient this large is written as the number in 64 bits instead */
#define RICE_OUTLIER 4            /* one number adds at most 2^(k + this) to the running sum */
#define RICE_CAP_BITS 48          /* and never more than 2^this: the sum of 64 stays far from overflow */
#define RICE_RESET 64             /* the running sum and count halve at this count: the code follows change */
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

	assert(nbits <= 64);
	if (w->failed || nbits == 0)
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
	if (nbits < 64)
		v &= ((uint64_t)1 << nbits) - 1;
	/* A byte's worth at a time: the encoder writes each block several ways. */
	while (nbits > 0) {
		unsigned room = 8 - (unsigned)(w->bits % 8), take = nbits < room ? nbits : room;
		unsigned chunk = (unsigned)(v >> (nbits - take)) & ((1u << take) - 1);

		w->buf[w->bits / 8] |= (unsigned char)(chunk << (room - take));
		w->bits += take;
		nbits -= take;
	}
	assert(w->bits <= w->cap * 8);
}

static uint64_t
get_bits(struct bit_reader *r, unsigned nbits)
{
	uint64_t v = 0;

	/* Every width is a constant or checked first, whatever the block says: v holds it. */
	assert(nbits <= 64 && r->pos <= r->bits);
	if (r->failed || r->bits - r->pos < nbits) {
		r->failed = 1;
		return 0;
	}
	while (nbits > 0) {
		unsigned room = 8 - (unsigned)(r->pos % 8), take = nbits < room ? nbits : room;
		unsigned byte = r->buf[r->pos / 8];

		v = v << take | ((byte >> (room - take)) & ((1u << take) - 1));
		r->pos += take;
		nbits -= take;
	}
	return v;
}

static const unsigned svar_bits[] = {7, 9, 12, 32, 64};

/* A signed number as an unsigned one, small magnitudes of either sign small. */
static uint64_t
zigzag(uint64_t x)
{
	return (x << 1) ^ (uint64_t)-(int64_t)(x >> 63);
}

static uint64_t
unzigzag(uint64_t u)
{
	return (u >> 1) ^ (uint64_t)-(int64_t)(u & 1);
}

/* A signed number in the prefix code, zigzagged so small magnitudes of either sign are short. */
static void
put_svar(struct bit_writer *w, uint64_t x)
{
	uint64_t u = zigzag(x);
	unsigned i;

	if (u == 0) {
		put_bits(w, 0, 1);
		return;
	}
	for (i = 0; i < 4 && u >> svar_bits[i] != 0; i++)
		;
	assert(i == 4 || u >> svar_bits[i] == 0);     /* the bucket holds the number */
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
	return unzigzag(u);
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
	assert(*width <= 64 && (*width == 64 || ((uint64_t)hi - (uint64_t)lo) >> *width == 0));
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
	for (size_t i = 0; i < n; i++) {
		/* Each one's excess over the least fits the width, or the decoder gets other numbers. */
		assert(width == 64 || (k[i] - base) >> width == 0);
		put_bits(w, k[i] - base, width);
	}
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
		/* x != 0: its meaningful bits, 1 to 64 of them, go in the 6 bits of "length - 1". */
		assert(lead + trail < 64);
		if (wlead <= 64 && lead >= wlead && trail >= wtrail) {
			assert(wlead + wtrail < 64);
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

/*
 * Adaptive Rice coding (as JPEG-LS codes its residuals): each number u
 * goes as u >> k in unary and its low k bits, k following the running mean
 * of the numbers before it, so the code adapts to a series whose noise
 * grows or shrinks within the block at no side cost; a quotient of
 * RICE_ESCAPE or more is written whole.  Near the entropy of residuals
 * that cluster at zero with a tail (a measured rate around its level, a
 * jittered tick), where packing pays the tail's width on every point.
 */
struct rice {
	uint64_t sum;             /* of the numbers seen, each capped (rice_seen), halved at each reset */
	uint64_t count;
};

static void
rice_start(struct rice *s, unsigned k0)
{
	s->count = 1;
	s->sum = (uint64_t)1 << k0;
}

/*
 * The smallest k with 2^k at least ln 2 times the mean (11/16 of it): the
 * best Rice parameter for geometric residuals (Gallager and Van Voorhis).
 */
static unsigned
rice_k(const struct rice *s)
{
	uint64_t scaled = s->sum / 16 * 11 + s->sum % 16 * 11 / 16;
	unsigned k = 0;

	assert(s->count >= 1);
	while (k < 63 && (scaled >> k) > s->count)
		k++;
	return k;
}

/*
 * Counts u into the mean, capped at 2^RICE_OUTLIER times the scale k
 * stands for: one outlier (a stall, a late tick) moves k up by a few steps
 * instead of inflating the code of the points after it; a lasting change
 * of scale still brings k there within a few numbers.
 */
static void
rice_seen(struct rice *s, uint64_t u, unsigned k)
{
	uint64_t cap = (uint64_t)1 << (k + RICE_OUTLIER < RICE_CAP_BITS ? k + RICE_OUTLIER : RICE_CAP_BITS);

	s->sum += u < cap ? u : cap;
	if (++s->count == RICE_RESET) {
		s->sum >>= 1;
		s->count >>= 1;
	}
	/* The state both sides keep alike: a count that never reaches the reset nor 0 (rice_k divides by it). */
	assert(s->count >= 1 && s->count < RICE_RESET);
}

static void
put_rice(struct bit_writer *w, struct rice *s, uint64_t u)
{
	unsigned k = rice_k(s);
	uint64_t q = u >> k;

	if (q < RICE_ESCAPE) {
		assert(k < 64);
		put_bits(w, ((uint64_t)1 << (q + 1)) - 2, (unsigned)q + 1);   /* q ones, a zero */
		put_bits(w, u & (((uint64_t)1 << k) - 1), k);
	} else {
		put_bits(w, ((uint64_t)1 << RICE_ESCAPE) - 1, RICE_ESCAPE);
		put_bits(w, u, 64);
	}
	rice_seen(s, u, k);
}

static uint64_t
get_rice(struct bit_reader *r, struct rice *s)
{
	unsigned k = rice_k(s);
	uint64_t q = 0, u;

	while (q < RICE_ESCAPE && !r->failed && get_bits(r, 1) == 1)
		q++;
	u = q < RICE_ESCAPE ? q << k | get_bits(r, k) : get_bits(r, 64);
	rice_seen(s, u, k);
	return u;
}

/* The starting k for numbers u[0..m-1]: from the mean of the first sixteen. */
static unsigned
rice_k0(const uint64_t *u, size_t m)
{
	struct rice s = {0, 0};

	for (size_t i = 0; i < m && i < 16; i++) {
		s.sum += u[i] < ((uint64_t)1 << RICE_CAP_BITS) ? u[i] : (uint64_t)1 << RICE_CAP_BITS;
		s.count++;
	}
	return s.count == 0 ? 0 : rice_k(&s);
}

static int
cmp_int64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/*
 * A Rice section of k[0..n-1]: the order, whether zeros go as runs, the
 * level (the median) or the first number in full (and for a grid its
 * median step), then the zigzagged residuals.  With runs, each nonzero residual less one follows the count
 * of zeros before it, each in a coder of its own, so a series that rarely
 * changes costs well under the bit a point a residual of zero takes alone.
 * u is scratch of n numbers.
 */
static void
put_rice_section(struct bit_writer *w, const uint64_t *k, size_t n, enum rice_order order, int runs, uint64_t *u)
{
	struct rice vs, rs;
	uint64_t head = k[0], step = 0, prev = 0;
	size_t m = 0, i, z;

	if (order == RICE_LEVEL || order == RICE_GRID) {
		/* The median level, or the median step from the first. */
		size_t nm = order == RICE_LEVEL ? n : n - 1;
		for (i = 0; i < nm; i++)
			u[i] = order == RICE_LEVEL ? k[i] : k[i + 1] - k[i];
		if (nm > 0) {
			qsort(u, nm, sizeof(*u), cmp_int64);
			*(order == RICE_LEVEL ? &head : &step) = u[nm / 2];
		}
	}
	if (order == RICE_LEVEL) {
		for (i = 0; i < n; i++)
			u[m++] = zigzag(k[i] - head);
	} else {
		for (i = 1; i < n; i++) {
			uint64_t d = k[i] - k[i - 1];
			u[m++] = zigzag(order == RICE_GRID ? k[i] - head - step * i : order == RICE_DELTA ? d : d - prev);
			prev = d;
		}
	}
	/* The decoder reads n residuals from a level, n - 1 otherwise (get_rice_section). */
	assert(n >= 1 && m == (order == RICE_LEVEL ? n : n - 1));
	put_bits(w, (uint64_t)order, 2);
	put_bits(w, (uint64_t)runs, 1);
	put_bits(w, head, 64);
	if (order == RICE_GRID)
		put_bits(w, step, 64);
	if (!runs) {
		unsigned k0 = rice_k0(u, m);
		assert(k0 < 64);
		put_bits(w, k0, 6);
		rice_start(&vs, k0);
		for (i = 0; i < m; i++)
			put_rice(w, &vs, u[i]);
		return;
	}
	/* Each coder starts from the mean of what it will see first: the values less one, the runs. */
	{
		uint64_t first[16], runs_seen[16];
		size_t nv = 0, nr = 0;
		for (i = 0; i < m && (nv < 16 || nr < 16);) {
			for (z = 0; i + z < m && u[i + z] == 0; z++)
				;
			if (nr < 16)
				runs_seen[nr++] = z;
			i += z;
			if (i < m) {
				if (nv < 16)
					first[nv++] = u[i] - 1;
				i++;
			}
		}
		unsigned kv = rice_k0(first, nv), kr = rice_k0(runs_seen, nr);
		assert(kv < 64 && kr < 64);
		put_bits(w, kv, 6);
		put_bits(w, kr, 6);
		rice_start(&vs, kv);
		rice_start(&rs, kr);
	}
	for (i = 0; i < m;) {
		for (z = 0; i + z < m && u[i + z] == 0; z++)
			;
		put_rice(w, &rs, z);
		i += z;
		if (i < m)
			put_rice(w, &vs, u[i++] - 1);
	}
}

static void
get_rice_section(struct bit_reader *r, uint64_t *k, size_t n)
{
	enum rice_order order = (enum rice_order)get_bits(r, 2);
	int runs = (int)get_bits(r, 1);
	uint64_t head = get_bits(r, 64), step = order == RICE_GRID ? get_bits(r, 64) : 0, d = 0, run, u;
	size_t m = order == RICE_LEVEL ? n : n - 1, i = 0;
	struct rice vs, rs;

	rice_start(&vs, (unsigned)get_bits(r, 6));
	if (runs)
		rice_start(&rs, (unsigned)get_bits(r, 6));
	/* Residuals into k[n - m ..]: then each number is its predecessor's, put right. */
	while (i < m && !r->failed) {
		if (!runs) {
			k[n - m + i++] = get_rice(r, &vs);
			continue;
		}
		run = get_rice(r, &rs);
		if (run > m - i) {
			r->failed = 1;
			return;
		}
		for (; run > 0; run--)
			k[n - m + i++] = 0;
		if (i < m) {
			u = get_rice(r, &vs);
			k[n - m + i++] = u + 1;   /* wraps only on a hostile block: garbage, never undefined */
		}
	}
	if (r->failed)
		return;
	assert(i == m);   /* runs are checked against what is left: never past the section */
	if (order == RICE_LEVEL) {
		for (i = 0; i < n; i++)
			k[i] = head + unzigzag(k[i]);
		return;
	}
	k[0] = head;
	for (i = 1; i < n; i++) {
		if (order == RICE_GRID) {
			k[i] = head + step * i + unzigzag(k[i]);
			continue;
		}
		d = order == RICE_DELTA ? unzigzag(k[i]) : d + unzigzag(k[i]);
		k[i] = k[i - 1] + d;
	}
}

/*
 * Keeps in *best the shorter of *best and *other, and frees the other's
 * buffer; true when other was kept (a failed one never is).
 */
static bool
keep_smaller(struct bit_writer *best, struct bit_writer *other)
{
	if (!other->failed && (best->failed || other->bits < best->bits)) {
		free(best->buf);
		*best = *other;
		return true;
	}
	free(other->buf);
	return false;
}

/* Appends src's bits to w. */
static void
put_writer(struct bit_writer *w, const struct bit_writer *src)
{
	size_t i = 0;

	if (src->failed) {
		w->failed = 1;
		return;
	}
	for (; i + 8 <= src->bits; i += 8)
		put_bits(w, src->buf[i / 8], 8);
	if (i < src->bits)
		put_bits(w, (uint64_t)src->buf[i / 8] >> (8 - (src->bits - i)), (unsigned)(src->bits - i));
}

/* The smallest of the methods for k[0..n-1] into *best: its method in 2 bits, then its payload. */
static void
put_int_methods(struct bit_writer *best, const uint64_t *k, size_t n, uint64_t *scratch)
{
	struct bit_writer other;
	uint64_t *copy = scratch, *u = scratch + n;

	memset(best, 0, sizeof(*best));
	put_bits(best, INT_DOD, 2);
	put_ints(best, k, n);
	memset(&other, 0, sizeof(other));
	put_bits(&other, INT_PACKED, 2);
	memcpy(copy, k, n * sizeof(*k));
	put_packed_values(&other, copy, n);
	keep_smaller(best, &other);
	for (int order = RICE_LEVEL; order <= RICE_DOD; order++)
		for (int runs = 0; runs <= 1; runs++) {
			memset(&other, 0, sizeof(other));
			put_bits(&other, INT_RICE, 2);
			put_rice_section(&other, k, n, (enum rice_order)order, runs, u);
			keep_smaller(best, &other);
		}
}

static uint64_t
gcd64(uint64_t a, uint64_t b)
{
	while (b != 0) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/*
 * The common step of k[0..n-1] (integers of at most 2^53 in magnitude, as
 * as_ints gives): the greatest common divisor of their differences from
 * the first, 0 when they are all alike.
 */
static uint64_t
common_step(const uint64_t *k, size_t n)
{
	uint64_t g = 0;

	for (size_t i = 1; i < n && g != 1; i++) {
		int64_t d = (int64_t)(k[i] - k[0]);
		g = gcd64(g, (uint64_t)(d < 0 ? -d : d));
	}
	return g;
}

/*
 * An integer section (millisecond times, integer values): a bit saying
 * whether the numbers are r + g x q on a common step g (bytes counted in
 * pages or KiB, seconds as milliseconds), then g and r in 64 bits each and
 * the methods for q, else the methods for the numbers: whichever is
 * smaller.  The step spares each residual the step's low zero bits.  k is
 * kept; scratch holds 3n numbers.
 */
static void
put_int_section(struct bit_writer *w, const uint64_t *k, size_t n, uint64_t *scratch)
{
	struct bit_writer plain, scaled;
	uint64_t g = common_step(k, n), *q = scratch + 2 * n;

	put_int_methods(&plain, k, n, scratch);
	if (g > 1) {
		int64_t first = (int64_t)k[0], rem = first % (int64_t)g;
		uint64_t r = (uint64_t)(rem < 0 ? rem + (int64_t)g : rem);

		assert(r < g);
		for (size_t i = 0; i < n; i++) {
			/* g divides every difference, so r + g x q gives each number back (get_int_section). */
			assert(((int64_t)k[i] - (int64_t)r) % (int64_t)g == 0);
			q[i] = (uint64_t)(((int64_t)k[i] - (int64_t)r) / (int64_t)g);
			assert(r + g * q[i] == k[i]);
		}
		put_int_methods(&scaled, q, n, scratch);
		if (!scaled.failed && !plain.failed && scaled.bits + 128 < plain.bits) {
			put_bits(w, 1, 1);
			put_bits(w, g, 64);
			put_bits(w, r, 64);
			put_writer(w, &scaled);
			free(scaled.buf);
			free(plain.buf);
			return;
		}
		free(scaled.buf);
	}
	put_bits(w, 0, 1);
	put_writer(w, &plain);
	free(plain.buf);
}

static void
get_int_section(struct bit_reader *r, uint64_t *k, size_t n)
{
	uint64_t g = 1, rem = 0;

	if (get_bits(r, 1) == 1) {
		g = get_bits(r, 64);
		rem = get_bits(r, 64);
	}
	switch (get_bits(r, 2)) {
	case INT_DOD:
		get_ints(r, k, n);
		break;
	case INT_PACKED:
		get_packed_values(r, k, n);
		break;
	case INT_RICE:
		get_rice_section(r, k, n);
		break;
	default:
		r->failed = 1;
		return;
	}
	/* Wrapping arithmetic: a hostile step decodes to garbage, never to undefined behaviour. */
	for (size_t i = 0; i < n && (g != 1 || rem != 0); i++)
		k[i] = rem + g * k[i];
}

/*
 * Version 2: the header byte, the count, the times (an integer section
 * when they are whole milliseconds, else XORed doubles), the values (the
 * decimals in 3 bits and an integer section when they are integers over
 * 10^d and that is smaller, else XORed doubles).
 */
int
series_encode(const struct series_point *p, size_t n, unsigned char **out, size_t *len)
{
	struct bit_writer w, times, values, as_int;
	unsigned flags = 0;
	uint64_t *k, *scratch;
	int d;

	if (n == 0 || n > SERIES_CODEC_MAX_POINTS || (k = malloc(4 * n * sizeof(*k))) == NULL)
		return -1;
	scratch = k + n;
	memset(&times, 0, sizeof(times));
	if (as_ints(p, n, -1, k) == 0) {
		flags |= FLAG_TIME_MS;
		put_int_section(&times, k, n, scratch);
	} else {
		for (size_t i = 0; i < n; i++)
			k[i] = dbits(p[i].t);
		put_xors(&times, k, n);
	}
	memset(&values, 0, sizeof(values));
	for (size_t i = 0; i < n; i++)
		k[i] = dbits(p[i].v);
	put_xors(&values, k, n);
	/* The fewest decimals that hold every value exactly, if any. */
	for (d = 0; d <= DECIMALS_MAX && as_ints(p, n, d, k) < 0; d++)
		;
	if (d <= DECIMALS_MAX) {
		memset(&as_int, 0, sizeof(as_int));
		put_bits(&as_int, (uint64_t)d, 3);
		put_int_section(&as_int, k, n, scratch);
		/* The flag says which section was kept: a flag decided apart could name the other one. */
		if (keep_smaller(&values, &as_int))
			flags |= FLAG_VALUE_INT;
	}
	assert((flags & ~FLAGS_KNOWN) == 0);
	memset(&w, 0, sizeof(w));
	put_bits(&w, CODEC_VERSION << 4 | flags, 8);
	for (size_t m = n; ; m >>= 7) {
		put_bits(&w, (m >= 0x80 ? 0x80 : 0) | (m & 0x7f), 8);
		if (m < 0x80)
			break;
	}
	put_writer(&w, &times);
	put_writer(&w, &values);
	free(times.buf);
	free(values.buf);
	free(k);
	if (w.failed || times.failed || values.failed) {
		free(w.buf);
		return -1;
	}
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

/* A version 1 block's times or values: the integer variant its flags name, else XORed doubles. */
static void
get_v1_section(struct bit_reader *r, uint64_t *k, size_t n, int is_int, int packed)
{
	if (packed)
		get_packed_values(r, k, n);
	else
		(is_int ? get_ints : get_xors)(r, k, n);
}

int
series_decode(const unsigned char *buf, size_t len, struct series_point **out, size_t *n)
{
	struct bit_reader r = {.buf = buf, .bits = len * 8};
	struct series_point *p;
	uint64_t *k, head = get_bits(&r, 8);
	size_t m;
	unsigned d = 0, version = (unsigned)(head >> 4), flags = (unsigned)(head & 0xf);

	if (r.failed || (version != 1 && version != CODEC_VERSION) ||
	    (flags & ~(version == 1 ? FLAGS_KNOWN_V1 : FLAGS_KNOWN)) || get_count(&r, &m) < 0)
		return -1;
	if (((flags & FLAG_VALUE_PACKED) && !(flags & FLAG_VALUE_INT)) ||
	    ((flags & FLAG_TIME_PACKED) && !(flags & FLAG_TIME_MS)))
		return -1;
	/*
	 * Every time after the first takes a bit unless packed (version 1's
	 * flag; version 2's sections may pack): a short buffer cannot claim a
	 * large count, unless it says the times are packed.
	 */
	if (version == 1 && !(flags & FLAG_TIME_PACKED) && m > 1 && m - 1 > r.bits - r.pos)
		return -1;
	k = malloc(m * sizeof(*k));
	p = malloc(m * sizeof(*p));
	if (k == NULL || p == NULL)
		goto fail;
	if (version == 1)
		get_v1_section(&r, k, m, flags & FLAG_TIME_MS, flags & FLAG_TIME_PACKED);
	else if (flags & FLAG_TIME_MS)
		get_int_section(&r, k, m);
	else
		get_xors(&r, k, m);
	for (size_t i = 0; i < m; i++)
		p[i].t = flags & FLAG_TIME_MS ? (double)(int64_t)k[i] / 1000.0 : bits_d(k[i]);
	if ((flags & FLAG_VALUE_INT) && (d = (unsigned)get_bits(&r, 3)) > DECIMALS_MAX)
		goto fail;
	if (version == 1)
		get_v1_section(&r, k, m, flags & FLAG_VALUE_INT, flags & FLAG_VALUE_PACKED);
	else if (flags & FLAG_VALUE_INT)
		get_int_section(&r, k, m);
	else
		get_xors(&r, k, m);
	for (size_t i = 0; i < m; i++)
		p[i].v = flags & FLAG_VALUE_INT ? (double)(int64_t)k[i] / pow10s[d] : bits_d(k[i]);
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
