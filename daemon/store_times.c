/*
 * One job's times of one span, shared by its dense series (sql/016,
 * series_times): the distinct times of its steps, kept once, which each
 * dense block of the span counts its points over (series_codec.h).  The
 * table names a reference series (its column ref): the one whose values
 * best predict the steps' spacing (a step's time is the one before plus
 * its step time), from which the table's times and the other blocks'
 * values (a rate from its step's duration) may be predicted.  A reader
 * of a dense block reads the table's header, the reference's block (its
 * values need no times), the table, then its own block.
 *
 * The blocks of a span that use its table are always written together
 * (store_blocks.c): a late point rewrites them all, so no block is left
 * counting over a table, or predicted from a reference, that changed
 * under it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "series_codec.h"
#include "store_internal.h"
#include "store_series.h"

static const char sql_times_get[] = "SELECT data, ref FROM series_times WHERE key = ?1";
static const char sql_times_put[] = "INSERT OR REPLACE INTO series_times (key, data, ref) VALUES (?1, ?2, ?3)";
static const char sql_times_delete[] = "DELETE FROM series_times WHERE key = ?1";
static const char sql_raw_get[] = "SELECT data FROM series_raw WHERE key = ?1";

void
store_times_free(struct store_times *tt)
{
	free(tt->t);
	free(tt->ref);
	memset(tt, 0, sizeof(*tt));
	tt->ref_id = -1;
}

/* v (times t, n points, ascending) on the table's times: a value where it is the only point there, NAN elsewhere. */
static int
ref_of(const struct store_times *tt, const double *t, const double *v, size_t n, double *ref, bool indices)
{
	size_t i = 0;

	for (size_t j = 0; j < tt->n; j++) {
		size_t first = i;

		ref[j] = NAN;
		while (i < n && (indices ? t[i] == (double)j : t[i] == tt->t[j]))
			i++;
		if (i == first + 1)
			ref[j] = v[first];
	}
	return i == n ? 0 : -1;
}

/* The reference column of tt (tt->n and ref_id set): its block in the span of key, over the table's indices. */
static int
times_ref(struct store_conn *c, int64_t key, struct store_times *tt)
{
	sqlite3_stmt *s = store_stmt_id(c, sql_raw_get, key / STORE_BLOCK_KEY_SPAN * STORE_BLOCK_KEY_SPAN + tt->ref_id);
	struct series_cols cols;
	int rc, r = STORE_ENOTFOUND;

	if (s == NULL)
		return STORE_EIO;
	rc = sqlite3_step(s);
	/* Without the table a shared block's times are its table indices; a reference is never predicted. */
	if (rc == SQLITE_ROW &&
	    series_decode_block(sqlite3_column_blob(s, 0), (size_t)sqlite3_column_bytes(s, 0), NULL, 0, NULL, 0, &cols) == 0) {
		if (cols.ncols == 1 && (tt->ref = malloc(tt->n * sizeof(*tt->ref))) != NULL)
			r = ref_of(tt, cols.t, cols.v[0], cols.n, tt->ref, true) == 0 ? STORE_OK : STORE_ENOTFOUND;
		series_cols_free(&cols);
	}
	sqlite3_reset(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return store_fail(c, rc, "read a time table's reference");
	return r;
}

int
store_times_read(struct store_conn *c, int64_t job_id, int64_t t0, struct store_times *tt)
{
	sqlite3_stmt *s;
	struct series_cols cols;
	unsigned char *buf = NULL;
	size_t len = 0;
	int64_t key;
	int rc, r = STORE_OK;

	memset(tt, 0, sizeof(*tt));
	tt->ref_id = -1;
	if (!store_tier_key(job_id, t0, STORE_BLOCK_S, &key))
		return STORE_ENOTFOUND;
	if ((s = store_stmt_id(c, sql_times_get, key)) == NULL)
		return STORE_EIO;
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		len = (size_t)sqlite3_column_bytes(s, 0);
		if ((buf = malloc(len ? len : 1)) != NULL)
			memcpy(buf, sqlite3_column_blob(s, 0), len);
		tt->ref_id = sqlite3_column_type(s, 1) == SQLITE_NULL ? -1 : sqlite3_column_int64(s, 1);
	}
	sqlite3_reset(s);
	if (rc != SQLITE_ROW)
		return rc == SQLITE_DONE ? STORE_ENOTFOUND : store_fail(c, rc, "read a time table");
	if (buf == NULL)
		return STORE_EIO;
	if (series_block_points(buf, len, &tt->n) < 0)
		r = STORE_ENOTFOUND;
	else if (tt->ref_id >= 0)
		r = times_ref(c, key, tt);
	if (r == STORE_OK && series_decode_block(buf, len, NULL, 0, tt->ref, tt->ref != NULL ? tt->n : 0, &cols) == 0) {
		tt->t = cols.t;         /* a table has no column: its times own the allocation */
		tt->n = cols.n;
	} else if (r == STORE_OK) {
		r = STORE_ENOTFOUND;
	}
	free(buf);
	if (r != STORE_OK) {
		if (r == STORE_ENOTFOUND)
			log_warnx("%s: job %lld: the times of the span at %lld do not decode", __func__, (long long)job_id,
				  (long long)t0);
		store_times_free(tt);
	}
	return r;
}

int
store_raw_decode(struct store_conn *c, int64_t job_id, int64_t t0, const unsigned char *buf, size_t len,
		 struct series_cols *out)
{
	struct store_times tt;
	int r;

	if (!series_block_shared(buf, len))
		return series_decode_block(buf, len, NULL, 0, NULL, 0, out) < 0 ? STORE_ENOTFOUND : STORE_OK;
	if ((r = store_times_read(c, job_id, t0, &tt)) != STORE_OK)
		return r;
	r = series_decode_block(buf, len, tt.t, tt.n, tt.ref, tt.ref != NULL ? tt.n : 0, out) < 0 ? STORE_ENOTFOUND
												 : STORE_OK;
	store_times_free(&tt);
	return r;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Bits the table's times would take a time, about, predicted from ref (NULL: from the previous alone). */
static double
spacing_bits(const struct store_times *tt, const double *ref)
{
	double bits = 0;

	for (size_t j = 1; j < tt->n; j++) {
		double p = ref != NULL && isfinite(ref[j]) ? tt->t[j - 1] + ref[j] : tt->t[j - 1];
		double d = fabs(tt->t[j] - p) / fmax(fabs(tt->t[j]) * 1e-16, 1e-300);

		bits += log2(d + 1);
	}
	return bits;
}

int
store_times_build(const struct store_times_member *m, size_t nm, struct store_times *tt)
{
	size_t total = 0, k = 0;
	double best, bits, *ref;

	memset(tt, 0, sizeof(*tt));
	tt->ref_id = -1;
	for (size_t i = 0; i < nm; i++)
		total += m[i].n;
	if (nm < 2 || total == 0 || (tt->t = malloc(total * sizeof(*tt->t))) == NULL)
		return nm < 2 ? STORE_ENOTFOUND : STORE_EIO;
	for (size_t i = 0; i < nm; i++)
		for (size_t p = 0; p < m[i].n; p++)
			tt->t[k++] = m[i].t[p];
	qsort(tt->t, total, sizeof(*tt->t), cmp_double);
	for (size_t p = 0; p < total; p++)
		if (tt->n == 0 || tt->t[p] != tt->t[tt->n - 1])
			tt->t[tt->n++] = tt->t[p];
	if (tt->n > SERIES_CODEC_MAX_POINTS) {
		store_times_free(tt);
		return STORE_ENOTFOUND;      /* each block keeps its own times */
	}
	/* The reference: the member whose values, added to each time, come nearest the next. */
	best = spacing_bits(tt, NULL);
	if ((ref = malloc(tt->n * sizeof(*ref))) == NULL) {
		store_times_free(tt);
		return STORE_EIO;
	}
	for (size_t i = 0; i < nm; i++) {
		if (ref_of(tt, m[i].t, m[i].v, m[i].n, ref, false) < 0 || (bits = spacing_bits(tt, ref)) >= best)
			continue;
		best = bits;
		tt->ref_id = m[i].series_id;
		free(tt->ref);
		tt->ref = ref;
		if ((ref = malloc(tt->n * sizeof(*ref))) == NULL) {
			store_times_free(tt);
			return STORE_EIO;
		}
	}
	free(ref);
	return STORE_OK;
}

int
store_times_write(struct store_conn *c, int64_t job_id, int64_t t0, const struct store_times *tt)
{
	sqlite3_stmt *s;
	unsigned char *buf;
	size_t len;
	int64_t key;
	int rc;

	if (!store_tier_key(job_id, t0, STORE_BLOCK_S, &key))
		return STORE_ENOTFOUND;
	if (series_encode_block(tt->t, tt->n, NULL, 0, NULL, 0, tt->ref, &buf, &len) < 0)
		return STORE_EIO;
	if ((s = store_stmt(c, sql_times_put)) == NULL) {
		free(buf);
		return STORE_EIO;
	}
	sqlite3_bind_int64(s, 1, key);
	sqlite3_bind_blob(s, 2, buf, (int)len, free);
	if (tt->ref_id >= 0)
		sqlite3_bind_int64(s, 3, tt->ref_id);
	rc = sqlite3_step(s);
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? STORE_OK : store_fail(c, rc, "write a time table");
}

int
store_times_delete(struct store_conn *c, int64_t job_id, int64_t t0)
{
	int64_t key;

	if (!store_tier_key(job_id, t0, STORE_BLOCK_S, &key))
		return STORE_OK;
	return store_run_id(c, sql_times_delete, key, "delete a time table");
}
