/*
 * The block codec (see series_codec.h).  A block is one header byte (the
 * format's version in the high nibble, the variant flags in the low), the
 * point count as a LEB128 varint (in version 3 then the column count and
 * a shared table's size, when the flags say so), then one bit stream: all
 * the times, then each column's values, padded with zero bits to a whole
 * byte.  In version 3 a section of doubles says in 2 bits how it is coded
 * (XOR, integers over 10^d, or ordered bits as integers); in version 2 the
 * header's flags said it.  An integer section (versions 2 and 3) is a bit
 * for a common step (then the step and the remainder in 64 bits each), its
 * method in 2 bits and the method's payload (below); version 1 said the
 * method in the header's flags and had no step or Rice method.
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

#define CODEC_VERSION 3           /* the one written; versions 1 and 2 are still read */
#define FLAG_TIME_MS 0x1          /* versions 1-2: times are whole milliseconds, as integers */
#define FLAG_VALUE_INT 0x2        /* versions 1-2: values are integers over 10^d (d in 3 bits before them) */
#define FLAG_VALUE_PACKED 0x4     /* version 1, with FLAG_VALUE_INT: packed, not delta-of-delta */
#define FLAG_TIME_PACKED 0x8      /* version 1, with FLAG_TIME_MS: packed, not delta-of-delta */
#define FLAG3_SHARED 0x1          /* version 3: the times are counts over a table the reader has */
#define FLAG3_COLS 0x2            /* version 3: a column count follows the point count (else one) */
#define FLAGS_KNOWN_V3 (FLAG3_SHARED | FLAG3_COLS)
#define DECIMALS_MAX 6
#define FLAGS_KNOWN_V1 (FLAG_TIME_MS | FLAG_VALUE_INT | FLAG_VALUE_PACKED | FLAG_TIME_PACKED)
#define FLAGS_KNOWN_V2 (FLAG_TIME_MS | FLAG_VALUE_INT)
/* Version 2's integer sections start with their method in 2 bits. */
enum int_method { INT_DOD, INT_PACKED, INT_RICE };
/*
 * Version 3's sections of doubles (times or a column) start with how in 2
 * bits: Gorilla's XOR, integers over 10^d (d in 3 bits), or the doubles'
 * bits as ordered integers (ordered_bits), both as an integer section.
 */
enum double_section { SECTION_XOR, SECTION_DECIMAL, SECTION_ORDERED, SECTION_PREDICTED };
/*
 * A predicted section's model, in 1 bit: times from the previous time and
 * a reference column (a step's time from the one before and its step
 * time), or values from a constant over the reference (a rate from a
 * duration: samples a second from the step's time).
 */
enum prediction { PREDICT_STEP, PREDICT_RATIO };
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

static const double pow10s[DECIMALS_MAX + 1] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6};

/*
 * v as an integer over 10^d that gives v back exactly, or -1: counts and
 * counters (d = 0), figures kept to a few decimals (loads, jiffies as
 * seconds), whose XOR would cost most of their 64 bits, and times in
 * whole seconds or milliseconds.
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

/*
 * The median of u[0..n-1] (n >= 1) as signed numbers, found by selection
 * (u is reordered): O(n), where a sort cost the encoder a tenth of its time.
 */
static uint64_t
median_int64(uint64_t *u, size_t n)
{
	size_t lo = 0, hi = n - 1, want = n / 2;

	while (lo < hi) {
		int64_t pivot = (int64_t)u[lo + (hi - lo) / 2];
		size_t i = lo, j = hi;

		while (i <= j) {
			while ((int64_t)u[i] < pivot)
				i++;
			while ((int64_t)u[j] > pivot)
				j--;
			if (i <= j) {
				uint64_t x = u[i];
				u[i] = u[j];
				u[j] = x;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (want <= j)
			hi = j;
		else if (want >= i)
			lo = i;
		else
			break;
	}
	return u[want];
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
put_rice_section(struct bit_writer *w, const uint64_t *k, size_t n, enum rice_order order, int runs, uint64_t *u,
		 uint64_t level, uint64_t grid_step)
{
	struct rice vs, rs;
	uint64_t head = order == RICE_LEVEL ? level : k[0], step = order == RICE_GRID ? grid_step : 0, prev = 0;
	size_t m = 0, i, z;

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

	uint64_t level, step = 0;

	memset(best, 0, sizeof(*best));
	put_bits(best, INT_DOD, 2);
	put_ints(best, k, n);
	memset(&other, 0, sizeof(other));
	put_bits(&other, INT_PACKED, 2);
	memcpy(copy, k, n * sizeof(*k));
	put_packed_values(&other, copy, n);
	keep_smaller(best, &other);
	/* The median level, and the median step from the first, for the level and grid orders. */
	memcpy(u, k, n * sizeof(*k));
	level = median_int64(u, n);
	for (size_t i = 0; i + 1 < n; i++)
		u[i] = k[i + 1] - k[i];
	if (n > 1)
		step = median_int64(u, n - 1);
	for (int order = RICE_LEVEL; order <= RICE_DOD; order++)
		for (int runs = 0; runs <= 1; runs++) {
			memset(&other, 0, sizeof(other));
			put_bits(&other, INT_RICE, 2);
			put_rice_section(&other, k, n, (enum rice_order)order, runs, u, level, step);
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
 * The common step of k[0..n-1]: the greatest common divisor of their
 * differences from the first, 0 when they are all alike, or when they
 * spread over 2^62 or more (ordered bits of doubles far apart), where a
 * difference might not fit an int64.
 */
static uint64_t
common_step(const uint64_t *k, size_t n)
{
	int64_t lo = (int64_t)k[0], hi = lo;
	uint64_t g = 0;

	for (size_t i = 1; i < n; i++) {
		lo = (int64_t)k[i] < lo ? (int64_t)k[i] : lo;
		hi = (int64_t)k[i] > hi ? (int64_t)k[i] : hi;
	}
	if ((uint64_t)hi - (uint64_t)lo >= (uint64_t)1 << 62)
		return 0;
	for (size_t i = 1; i < n && g != 1; i++) {
		int64_t d = (int64_t)(k[i] - k[0]);
		g = gcd64(g, d < 0 ? (uint64_t)-d : (uint64_t)d);
	}
	return g;
}

/*
 * An integer section (integer times, integer values, ordered bits): a bit
 * saying whether the numbers are r + g x q on a common step g (bytes
 * counted in pages or KiB, seconds as milliseconds, floats as doubles),
 * then g and r in 64 bits each and the methods for q, else the methods for
 * the numbers: whichever is smaller.  The step spares each residual the
 * step's low zero bits.  k is kept; scratch holds 3n numbers.
 */
static void
put_int_section(struct bit_writer *w, const uint64_t *k, size_t n, uint64_t *scratch)
{
	struct bit_writer plain, scaled;
	uint64_t g = common_step(k, n), *q = scratch + 2 * n;

	put_int_methods(&plain, k, n, scratch);
	if (g > 1) {
		/* r is the first number, so each q is its distance from it in steps: it fits (common_step). */
		for (size_t i = 0; i < n; i++) {
			q[i] = (uint64_t)((int64_t)(k[i] - k[0]) / (int64_t)g);
			assert((int64_t)(k[i] - k[0]) % (int64_t)g == 0 && k[0] + g * q[i] == k[i]);
		}
		put_int_methods(&scaled, q, n, scratch);
		if (!scaled.failed && !plain.failed && scaled.bits + 128 < plain.bits) {
			put_bits(w, 1, 1);
			put_bits(w, g, 64);
			put_bits(w, k[0], 64);
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
 * A double's bits as an integer in the doubles' order (negatives flipped
 * below the positives), and back: the same function.  Times of one
 * binade (2^30 to 2^31 s: 2004 to 2038) are then their count of the
 * binade's ulp (2^-22 s), so a clock's readings code as integers; values
 * that came from floats have 29 low zero bits, a common step.
 */
static uint64_t
ordered_bits(uint64_t b)
{
	return b >> 63 ? b ^ INT64_MAX : b;
}

/* The fewest decimals d <= DECIMALS_MAX with every x an integer over 10^d (into k), or -1. */
static int
decimals_of(const double *x, size_t n, uint64_t *k)
{
	for (int d = 0; d <= DECIMALS_MAX; d++) {
		size_t i;

		for (i = 0; i < n && value_int(x[i], d, &k[i]) == 0; i++)
			;
		if (i == n)
			return d;
	}
	return -1;
}

/* The one prediction a ratio gives: c / r as an integer over 10^d, or 0 where it cannot (the same on both sides). */
static uint64_t
ratio_int(double c, double r, int d)
{
	double y = c / r * pow10s[d];

	return isfinite(y) && fabs(y) < EXACT_INT_MAX ? (uint64_t)llround(y) : 0;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * Times x predicted by the previous plus ref (NAN: by the previous alone):
 * the first in full, then the residuals of their ordered bits.  scratch
 * holds 4n numbers.
 */
static void
put_step_section(struct bit_writer *w, const double *x, size_t n, const double *ref, uint64_t *scratch)
{
	put_bits(w, PREDICT_STEP, 1);
	put_bits(w, dbits(x[0]), 64);
	for (size_t i = 1; i < n; i++) {
		double p = isfinite(ref[i]) ? x[i - 1] + ref[i] : x[i - 1];
		scratch[i - 1] = ordered_bits(dbits(x[i])) - ordered_bits(dbits(p));
	}
	if (n > 1)
		put_int_section(w, scratch, n - 1, scratch + n);
}

static void
get_step_section(struct bit_reader *r, double *x, size_t n, const double *ref, uint64_t *k)
{
	x[0] = bits_d(get_bits(r, 64));
	if (n > 1)
		get_int_section(r, k, n - 1);
	for (size_t i = 1; i < n && !r->failed; i++) {
		double p = isfinite(ref[i]) ? x[i - 1] + ref[i] : x[i - 1];
		x[i] = bits_d(ordered_bits(ordered_bits(dbits(p)) + k[i - 1]));
	}
}

/*
 * Values x as integers over 10^d_x (each its own fewest decimals, as a
 * rate kept to what its duration allows has) less the integers c / ref
 * gives at the same decimals, c the median of x times ref: the decimals
 * and the residuals as integer sections.  -1 when a value is no decimal or
 * no product is finite (then not used).
 */
static int
put_ratio_section(struct bit_writer *w, const double *x, size_t n, const double *ref)
{
	uint64_t *dk = malloc(5 * n * sizeof(*dk)), *res = dk + n;
	double *prod = malloc(n * sizeof(*prod)), c;
	size_t np = 0;
	int r = -1;

	if (dk == NULL || prod == NULL)
		goto out;
	for (size_t i = 0; i < n; i++)
		if (isfinite(x[i] * ref[i]) && x[i] * ref[i] != 0)
			prod[np++] = x[i] * ref[i];
	if (np == 0)
		goto out;
	qsort(prod, np, sizeof(*prod), cmp_double);
	c = prod[np / 2];
	for (size_t i = 0; i < n; i++) {
		int d = decimals_of(&x[i], 1, &res[i]);

		if (d < 0)
			goto out;
		dk[i] = (uint64_t)d;
		res[i] -= isfinite(ref[i]) && ref[i] != 0 ? ratio_int(c, ref[i], d) : 0;
	}
	put_bits(w, PREDICT_RATIO, 1);
	put_bits(w, dbits(c), 64);
	put_int_section(w, dk, n, res + n);
	put_int_section(w, res, n, res + n);
	r = 0;
out:
	free(dk);
	free(prod);
	return r;
}

static void
get_ratio_section(struct bit_reader *r, double *x, size_t n, const double *ref, uint64_t *k)
{
	double c = bits_d(get_bits(r, 64));
	uint64_t *dk = malloc(n * sizeof(*dk));

	if (dk == NULL) {
		r->failed = 1;
		return;
	}
	get_int_section(r, dk, n);
	get_int_section(r, k, n);
	for (size_t i = 0; i < n && !r->failed; i++) {
		if (dk[i] > DECIMALS_MAX) {
			r->failed = 1;
			break;
		}
		k[i] += isfinite(ref[i]) && ref[i] != 0 ? ratio_int(c, ref[i], (int)dk[i]) : 0;
		x[i] = (double)(int64_t)k[i] / pow10s[dk[i]];
	}
	free(dk);
}

/*
 * A section of n doubles (times or a column), the smallest of XOR and, as
 * an integer section, the integers over 10^d they are (when they all are)
 * or else their ordered bits; with a reference column (ref: a number a
 * point, NAN where there is none) also predicted from it, the times by
 * step, the values by ratio.  scratch holds 4n numbers.
 */
static void
put_double_section(struct bit_writer *w, const double *x, size_t n, uint64_t *scratch, const double *ref, bool times)
{
	struct bit_writer best, other;
	uint64_t *k = scratch;
	int d;

	memset(&best, 0, sizeof(best));
	for (size_t i = 0; i < n; i++)
		k[i] = dbits(x[i]);
	put_bits(&best, SECTION_XOR, 2);
	put_xors(&best, k, n);
	memset(&other, 0, sizeof(other));
	if ((d = decimals_of(x, n, k)) >= 0) {
		put_bits(&other, SECTION_DECIMAL, 2);
		put_bits(&other, (uint64_t)d, 3);
	} else {
		for (size_t i = 0; i < n; i++)
			k[i] = ordered_bits(dbits(x[i]));
		put_bits(&other, SECTION_ORDERED, 2);
	}
	put_int_section(&other, k, n, scratch + n);
	keep_smaller(&best, &other);
	if (ref != NULL) {
		memset(&other, 0, sizeof(other));
		put_bits(&other, SECTION_PREDICTED, 2);
		if (times)
			put_step_section(&other, x, n, ref, scratch);
		else if (put_ratio_section(&other, x, n, ref) < 0)
			other.failed = 1;
		keep_smaller(&best, &other);
	}
	put_writer(w, &best);
	free(best.buf);
}

static void
get_double_section(struct bit_reader *r, double *x, size_t n, uint64_t *k, const double *ref)
{
	unsigned tag = (unsigned)get_bits(r, 2), d = 0;

	if (tag == SECTION_DECIMAL && (d = (unsigned)get_bits(r, 3)) > DECIMALS_MAX)
		r->failed = 1;
	if (r->failed)
		return;
	switch (tag) {
	case SECTION_XOR:
		get_xors(r, k, n);
		for (size_t i = 0; i < n; i++)
			x[i] = bits_d(k[i]);
		return;
	case SECTION_DECIMAL:
		get_int_section(r, k, n);
		for (size_t i = 0; i < n; i++)
			x[i] = (double)(int64_t)k[i] / pow10s[d];
		return;
	case SECTION_ORDERED:
		get_int_section(r, k, n);
		for (size_t i = 0; i < n; i++)
			x[i] = bits_d(ordered_bits(k[i]));
		return;
	case SECTION_PREDICTED:
		if (ref == NULL) {
			r->failed = 1;      /* the block needs its reference column */
			return;
		}
		if (get_bits(r, 1) == PREDICT_STEP)
			get_step_section(r, x, n, ref, k);
		else
			get_ratio_section(r, x, n, ref, k);
		return;
	default:
		r->failed = 1;
	}
}

static void
put_varint(struct bit_writer *w, size_t m)
{
	for (;; m >>= 7) {
		put_bits(w, (m >= 0x80 ? 0x80 : 0) | (m & 0x7f), 8);
		if (m < 0x80)
			break;
	}
}

/* A varint of at most 21 bits; -1 when malformed. */
static int
get_varint(struct bit_reader *r, size_t *n)
{
	size_t m = 0;
	uint64_t byte;

	for (unsigned shift = 0; shift < 21; shift += 7) {
		byte = get_bits(r, 8);
		m |= (size_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80)) {
			*n = m;
			return r->failed ? -1 : 0;
		}
	}
	return -1;
}

/*
 * How many of the n times t (ascending) fall on each of the ntable times
 * of table (ascending), into counts; -1 when a time is not in the table or
 * the times are not in order.
 */
static int
table_counts(const double *t, size_t n, const double *table, size_t ntable, uint64_t *counts)
{
	size_t i = 0;

	for (size_t j = 0; j < ntable; j++) {
		counts[j] = 0;
		if (j > 0 && !(table[j] > table[j - 1]))
			return -1;
		while (i < n && dbits(t[i]) == dbits(table[j])) {
			counts[j]++;
			i++;
		}
		if (i < n && t[i] < table[j])
			return -1;
	}
	return i == n ? 0 : -1;
}

/*
 * The reference of each of the n points whose times fall on the table's
 * times as counts says (counts[j] at table time j), into pref: a table
 * time's reference where the point is the only one there, NAN otherwise.
 */
static void
point_refs(const uint64_t *counts, size_t ntable, const double *ref, double *pref)
{
	size_t i = 0;

	for (size_t j = 0; j < ntable; j++)
		for (uint64_t c = 0; c < counts[j]; c++)
			pref[i++] = counts[j] == 1 ? ref[j] : NAN;
}

/*
 * Version 3: the header byte (its flags say whether the times are counts
 * over a shared table and whether a column count follows), the point
 * count, the column count, with a shared table its size; then the times
 * (a double section, or the counts per table time as an integer section)
 * and each column as a double section.
 */
int
series_encode_block(const double *t, size_t n, const double *const *cols, int ncols, const double *table,
		    size_t ntable, const double *ref, unsigned char **out, size_t *len)
{
	size_t most = table != NULL && ntable > n ? ntable : n;
	unsigned flags = (table != NULL ? FLAG3_SHARED : 0) | (ncols != 1 ? FLAG3_COLS : 0);
	struct bit_writer w;
	uint64_t *scratch;
	double *pref = NULL;

	if (n == 0 || n > SERIES_CODEC_MAX_POINTS || ncols < 0 || ncols > SERIES_CODEC_MAX_COLS ||
	    (table != NULL && (ntable == 0 || ntable > SERIES_CODEC_MAX_POINTS)) ||
	    (scratch = malloc(4 * most * sizeof(*scratch))) == NULL)
		return -1;
	memset(&w, 0, sizeof(w));
	put_bits(&w, CODEC_VERSION << 4 | flags, 8);
	put_varint(&w, n);
	if (flags & FLAG3_COLS)
		put_varint(&w, (size_t)ncols);
	if (table != NULL) {
		put_varint(&w, ntable);
		if (table_counts(t, n, table, ntable, scratch) < 0 || (ref != NULL && (pref = malloc(n * sizeof(*pref))) == NULL)) {
			free(scratch);
			free(w.buf);
			return -1;
		}
		if (pref != NULL)
			point_refs(scratch, ntable, ref, pref);
		/* The section's scratch follows the counts: 4 x most holds both (ntable + 3 x ntable). */
		put_int_section(&w, scratch, ntable, scratch + ntable);
	} else {
		put_double_section(&w, t, n, scratch, ref, true);
	}
	for (int c = 0; c < ncols; c++)
		put_double_section(&w, cols[c], n, scratch, table != NULL ? pref : ref, false);
	free(scratch);
	free(pref);
	if (w.failed) {
		free(w.buf);
		return -1;
	}
	*out = w.buf;
	*len = (w.bits + 7) / 8;
	return 0;
}

int
series_encode(const struct series_point *p, size_t n, unsigned char **out, size_t *len)
{
	double *tv = n > 0 && n <= SERIES_CODEC_MAX_POINTS ? malloc(2 * n * sizeof(*tv)) : NULL;
	const double *col;
	int r;

	if (tv == NULL)
		return -1;
	for (size_t i = 0; i < n; i++) {
		tv[i] = p[i].t;
		tv[n + i] = p[i].v;
	}
	col = tv + n;
	r = series_encode_block(tv, n, &col, 1, NULL, 0, NULL, out, len);
	free(tv);
	return r;
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

/* The times and values of a version 1 or 2 block (flags its header's) after the count. */
static void
get_v12_sections(struct bit_reader *r, unsigned version, unsigned flags, struct series_cols *c, uint64_t *k)
{
	size_t m = c->n;
	unsigned d = 0;

	if (version == 1)
		get_v1_section(r, k, m, flags & FLAG_TIME_MS, flags & FLAG_TIME_PACKED);
	else if (flags & FLAG_TIME_MS)
		get_int_section(r, k, m);
	else
		get_xors(r, k, m);
	for (size_t i = 0; i < m; i++)
		c->t[i] = flags & FLAG_TIME_MS ? (double)(int64_t)k[i] / 1000.0 : bits_d(k[i]);
	if ((flags & FLAG_VALUE_INT) && (d = (unsigned)get_bits(r, 3)) > DECIMALS_MAX) {
		r->failed = 1;
		return;
	}
	if (version == 1)
		get_v1_section(r, k, m, flags & FLAG_VALUE_INT, flags & FLAG_VALUE_PACKED);
	else if (flags & FLAG_VALUE_INT)
		get_int_section(r, k, m);
	else
		get_xors(r, k, m);
	for (size_t i = 0; i < m; i++)
		c->v[0][i] = flags & FLAG_VALUE_INT ? (double)(int64_t)k[i] / pow10s[d] : bits_d(k[i]);
}

/*
 * The times of a version 3 block: its own section, or the table's times
 * repeated by their counts (without the table, the indices of those
 * times); with a table's reference, each point's into pref.
 */
static void
get_v3_times(struct bit_reader *r, unsigned flags, size_t nt, const double *table, const double *ref,
	     struct series_cols *c, uint64_t *k, double *pref)
{
	size_t i = 0;

	if (!(flags & FLAG3_SHARED)) {
		get_double_section(r, c->t, c->n, k, ref);
		return;
	}
	get_int_section(r, k, nt);
	for (size_t j = 0; j < nt && !r->failed; j++) {
		if (k[j] > c->n - i) {
			r->failed = 1;
			return;
		}
		for (uint64_t x = 0; x < k[j]; x++)
			c->t[i++] = table != NULL ? table[j] : (double)j;
	}
	if (i != c->n)
		r->failed = 1;
	else if (pref != NULL)
		point_refs(k, nt, ref, pref);
}

/* The header's fields after the first byte; -1 when malformed or beyond the limits. */
static int
get_v3_head(struct bit_reader *r, unsigned flags, size_t *n, size_t *ncols, size_t *ntable)
{
	*ncols = 1;
	*ntable = 0;
	if (get_varint(r, n) < 0 || *n < 1 || *n > SERIES_CODEC_MAX_POINTS)
		return -1;
	if ((flags & FLAG3_COLS) && (get_varint(r, ncols) < 0 || *ncols > SERIES_CODEC_MAX_COLS))
		return -1;
	if ((flags & FLAG3_SHARED) && (get_varint(r, ntable) < 0 || *ntable < 1 || *ntable > SERIES_CODEC_MAX_POINTS))
		return -1;
	return 0;
}

bool
series_block_shared(const unsigned char *buf, size_t len)
{
	return len > 0 && buf[0] >> 4 == CODEC_VERSION && (buf[0] & FLAG3_SHARED);
}

int
series_block_points(const unsigned char *buf, size_t len, size_t *n)
{
	struct bit_reader r = {.buf = buf, .bits = len * 8};
	uint64_t head = get_bits(&r, 8);
	size_t ncols, nt;

	if (r.failed || head >> 4 < 1 || head >> 4 > CODEC_VERSION)
		return -1;
	if (head >> 4 < CODEC_VERSION)
		return get_varint(&r, n) < 0 || *n < 1 || *n > SERIES_CODEC_MAX_POINTS ? -1 : 0;
	return (head & ~(uint64_t)(CODEC_VERSION << 4 | FLAGS_KNOWN_V3)) ? -1 : get_v3_head(&r, (unsigned)(head & 0xf), n, &ncols, &nt);
}

/* Allocates out's arrays for n points of ncols columns. */
static int
cols_alloc(struct series_cols *out, size_t n, size_t ncols)
{
	double *mem = malloc((1 + ncols) * n * sizeof(*mem));

	if (mem == NULL)
		return -1;
	out->n = n;
	out->ncols = (int)ncols;
	out->t = mem;
	for (size_t c = 0; c < ncols; c++)
		out->v[c] = mem + (1 + c) * n;
	return 0;
}

int
series_decode_block(const unsigned char *buf, size_t len, const double *table, size_t ntable, const double *ref,
		    size_t nref, struct series_cols *out)
{
	struct bit_reader r = {.buf = buf, .bits = len * 8};
	uint64_t *k = NULL, head = get_bits(&r, 8);
	unsigned version = (unsigned)(head >> 4), flags = (unsigned)(head & 0xf);
	size_t n, ncols = 1, nt = 0;
	double *pref = NULL;

	memset(out, 0, sizeof(*out));
	if (r.failed || version < 1 || version > CODEC_VERSION)
		return -1;
	if (version < 3) {
		if ((flags & ~(version == 1 ? FLAGS_KNOWN_V1 : FLAGS_KNOWN_V2)) || get_varint(&r, &n) < 0 || n < 1 ||
		    n > SERIES_CODEC_MAX_POINTS || ((flags & FLAG_VALUE_PACKED) && !(flags & FLAG_VALUE_INT)) ||
		    ((flags & FLAG_TIME_PACKED) && !(flags & FLAG_TIME_MS)))
			return -1;
		/*
		 * Every time after the first takes a bit unless packed (version
		 * 1's flag; version 2's sections may pack): a short buffer cannot
		 * claim a large count, unless it says the times are packed.
		 */
		if (version == 1 && !(flags & FLAG_TIME_PACKED) && n > 1 && n - 1 > r.bits - r.pos)
			return -1;
	} else if ((flags & ~FLAGS_KNOWN_V3) || get_v3_head(&r, flags, &n, &ncols, &nt) < 0 ||
		   ((flags & FLAG3_SHARED) && table != NULL && ntable != nt) ||
		   (ref != NULL && nref != ((flags & FLAG3_SHARED) ? nt : n))) {
		return -1;
	}
	k = malloc((n > nt ? n : nt) * sizeof(*k));
	if ((flags & FLAG3_SHARED) && ref != NULL && version == 3)
		pref = malloc(n * sizeof(*pref));
	if (k == NULL || cols_alloc(out, n, ncols) < 0 || ((flags & FLAG3_SHARED) && ref != NULL && version == 3 && pref == NULL))
		goto fail;
	if (version < 3) {
		get_v12_sections(&r, version, flags, out, k);
	} else {
		get_v3_times(&r, flags, nt, table, ref, out, k, pref);
		for (size_t c = 0; c < ncols && !r.failed; c++)
			get_double_section(&r, out->v[c], n, k, (flags & FLAG3_SHARED) ? pref : ref);
	}
	/* Only the zero padding of the last byte may remain. */
	if (r.failed || r.bits - r.pos >= 8 || get_bits(&r, (unsigned)(r.bits - r.pos)) != 0)
		goto fail;
	free(k);
	free(pref);
	return 0;
fail:
	free(k);
	free(pref);
	free(out->t);
	memset(out, 0, sizeof(*out));
	return -1;
}

void
series_cols_free(struct series_cols *c)
{
	free(c->t);
	memset(c, 0, sizeof(*c));
}

int
series_decode(const unsigned char *buf, size_t len, struct series_point **out, size_t *n)
{
	struct series_cols c;
	struct series_point *p;

	if (series_decode_block(buf, len, NULL, 0, NULL, 0, &c) < 0)
		return -1;
	if (c.ncols != 1 || (p = malloc(c.n * sizeof(*p))) == NULL) {
		series_cols_free(&c);
		return -1;
	}
	for (size_t i = 0; i < c.n; i++)
		p[i] = (struct series_point){c.t[i], c.v[0][i]};
	*out = p;
	*n = c.n;
	series_cols_free(&c);
	return 0;
}
