/*
 * Series labels (store_labels.h).  The sampler posts them without waiting,
 * like its samples; a label that did not change leaves its row as it is.
 * Reads take a key range, so a prefix costs one index range of the job's.
 */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "store_internal.h"
#include "store_labels.h"

static const char sql_label_upsert[] = "INSERT INTO series_labels (job_id, key, label, t) VALUES (?1, ?2, ?3, ?4) "
				       "ON CONFLICT(job_id, key) DO UPDATE SET label = excluded.label, t = excluded.t "
				       "WHERE label IS NOT excluded.label";
/* ?3 is the prefix with its last byte raised by one: the first key past every key that starts with ?2. */
static const char sql_labels_of_job[] =
	"SELECT key, label FROM series_labels WHERE job_id = ?1 AND key >= ?2 AND (?3 IS NULL OR key < ?3)";

struct label_batch {
	struct store_label *v;
	size_t n;
	char *strings;
};

static void label_batch_free(void *arg)
{
	struct label_batch *b = arg;

	free(b->v);
	free(b->strings);
	free(b);
}

static int apply_labels(struct store_conn *c, void *arg)
{
	struct label_batch *b = arg;
	sqlite3_stmt *s = store_stmt(c, sql_label_upsert);
	int rc;

	if (!s)
		return STORE_EIO;
	for (size_t i = 0; i < b->n; i++) {
		sqlite3_reset(s);
		sqlite3_bind_int64(s, 1, b->v[i].job_id);
		sqlite3_bind_text(s, 2, b->v[i].key, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 3, b->v[i].label, -1, SQLITE_STATIC);
		sqlite3_bind_double(s, 4, b->v[i].t);
		if ((rc = sqlite3_step(s)) != SQLITE_DONE)
			return store_fail(c, rc, "series label");
	}
	return STORE_OK;
}

/* One allocation for the copies' strings, as the samples' batch_copy does. */
static struct label_batch *label_batch_copy(const struct store_label *v, size_t n)
{
	struct label_batch *b = calloc(1, sizeof(*b));
	size_t len = 0, k;
	char *p;

	for (size_t i = 0; i < n; i++)
		len += strlen(v[i].key) + strlen(v[i].label) + 2;
	if (!b || !(b->v = calloc(n, sizeof(*b->v))) || !(b->strings = malloc(len))) {
		if (b)
			label_batch_free(b);
		return NULL;
	}
	p = b->strings;
	for (size_t i = 0; i < n; i++) {
		b->v[i] = v[i];
		k = strlen(v[i].key) + 1;
		b->v[i].key = memcpy(p, v[i].key, k);
		p += k;
		k = strlen(v[i].label) + 1;
		b->v[i].label = memcpy(p, v[i].label, k);
		p += k;
	}
	b->n = n;
	return b;
}

int store_labels_post(struct store *st, const struct store_label *v, size_t n)
{
	struct label_batch *b;

	if (n == 0)
		return STORE_OK;
	if (!(b = label_batch_copy(v, n))) {
		log_warn("%s: malloc", __func__);
		return STORE_EBUSY;
	}
	return store_post(st, apply_labels, b, label_batch_free);
}

int store_labels(struct store *st, int64_t job_id, const char *prefix, json_t **out)
{
	struct store_conn *c = store_reader(st);
	sqlite3_stmt *s = store_stmt(c, sql_labels_of_job);
	json_t *map = json_object();
	size_t len = strlen(prefix);
	char *past = len ? strdup(prefix) : NULL;
	int rc = SQLITE_DONE, r = s && map && (past || !len) ? STORE_OK : STORE_EIO;

	if (r == STORE_OK) {
		sqlite3_bind_int64(s, 1, job_id);
		sqlite3_bind_text(s, 2, prefix, -1, SQLITE_STATIC);
		/* Keys are [a-z0-9_.]: the last byte is never 0x7f, so raising it cannot wrap. */
		if (past) {
			past[len - 1]++;
			sqlite3_bind_text(s, 3, past, -1, SQLITE_STATIC);
		}
		while ((rc = sqlite3_step(s)) == SQLITE_ROW)
			if (json_object_set_new(map, (const char *)sqlite3_column_text(s, 0), store_col_text(s, 1)) <
			    0) {
				r = STORE_EIO;
				break;
			}
		if (r == STORE_OK && rc != SQLITE_DONE)
			r = store_fail(c, rc, "series labels");
		sqlite3_reset(s);
	}
	store_reader_done(st, c);
	free(past);
	if (r != STORE_OK) {
		json_decref(map);
		return r;
	}
	*out = map;
	return STORE_OK;
}
