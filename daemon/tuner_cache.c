/*
 * Rendered recommend answers, so a repeated GET /api/v1/recommend costs a
 * lookup and a copy instead of a model walk and a json_dumps.  A stale
 * recommendation is a bug, so the cache is keyed by the tuner's generation:
 * every entry point that changes what the tuner knows (a job's start, its
 * samples, its end: trials, settled state, drift, the GPUs given) bumps it
 * under the tuner's lock, and an answer computed before a bump is never
 * stored or served.  The cache holds at most TUNER_CACHE_SLOTS entries of
 * bounded size (least recently used goes first), so hostile query strings
 * cannot grow memory.  Guarded by tuner->lock like the rest of the tuner.
 */
#include <stdlib.h>
#include <string.h>

#include "invariant.h"
#include "log.h"
#include "tuner_internal.h"

/* FNV-1a: cheap, and only used to skip most memcmp calls. */
static uint64_t key_hash(const char *key, size_t klen)
{
	uint64_t h = 14695981039346656037ull;

	for (size_t i = 0; i < klen; i++)
		h = (h ^ (unsigned char)key[i]) * 1099511628211ull;
	return h;
}

static void entry_free(struct tuner_cached *e)
{
	free(e->key);
	free(e->body);
	memset(e, 0, sizeof(*e));
}

/* Drops the entries rendered before the latest change (lock held). */
static void cache_expire(struct tuner_cache *c)
{
	if (c->filled_gen == c->gen)
		return;
	for (int i = 0; i < TUNER_CACHE_SLOTS; i++)
		entry_free(&c->e[i]);
	c->filled_gen = c->gen;
}

void tuner_cache_changed(struct tuner *t)
{
	assert(lock_held(&t->lock));
	t->cache.gen++;
}

void tuner_cache_free(struct tuner *t)
{
	for (int i = 0; i < TUNER_CACHE_SLOTS; i++)
		entry_free(&t->cache.e[i]);
}

size_t tuner_cache_count(struct tuner *t)
{
	size_t n = 0;

	pthread_mutex_lock(&t->lock);
	cache_expire(&t->cache);
	for (int i = 0; i < TUNER_CACHE_SLOTS; i++)
		n += t->cache.e[i].key != NULL;
	pthread_mutex_unlock(&t->lock);
	return n;
}

char *tuner_answer_get(struct tuner *t, const char *key, size_t klen, size_t *len, uint64_t *gen)
{
	struct tuner_cache *c = &t->cache;
	uint64_t h = key_hash(key, klen);
	char *copy = NULL;

	pthread_mutex_lock(&t->lock);
	cache_expire(c);
	*gen = c->gen;
	for (int i = 0; i < TUNER_CACHE_SLOTS; i++) {
		struct tuner_cached *e = &c->e[i];
		if (!e->key || e->hash != h || e->klen != klen || memcmp(e->key, key, klen) != 0)
			continue;
		e->used = ++c->tick;
		/* One byte more: callers may append to a NUL-terminated copy. */
		if ((copy = malloc(e->blen + 1))) {
			memcpy(copy, e->body, e->blen);
			copy[e->blen] = '\0';
			*len = e->blen;
		}
		break;
	}
	pthread_mutex_unlock(&t->lock);
	return copy;
}

void tuner_answer_put(struct tuner *t, const char *key, size_t klen, const char *body, size_t len, uint64_t gen)
{
	struct tuner_cache *c = &t->cache;
	struct tuner_cached *slot = NULL;
	char *k, *b;

	if (klen > TUNER_CACHE_KEY_MAX || len > TUNER_CACHE_BODY_MAX)
		return;
	k = malloc(klen ? klen : 1);
	b = malloc(len ? len : 1);
	if (!k || !b) {
		log_warn("%s", __func__);
		free(k);
		free(b);
		return;
	}
	memcpy(k, key, klen);
	memcpy(b, body, len);
	pthread_mutex_lock(&t->lock);
	cache_expire(c);
	if (gen != c->gen) { /* the tuner learned something while this answer was computed */
		pthread_mutex_unlock(&t->lock);
		free(k);
		free(b);
		return;
	}
	for (int i = 0; i < TUNER_CACHE_SLOTS && !slot; i++) /* stored by a concurrent request */
		if (c->e[i].key && c->e[i].klen == klen && memcmp(c->e[i].key, key, klen) == 0)
			slot = &c->e[i];
	for (int i = 0; i < TUNER_CACHE_SLOTS && !slot; i++)
		if (!c->e[i].key)
			slot = &c->e[i];
	if (!slot) { /* full: the least recently used goes */
		slot = &c->e[0];
		for (int i = 1; i < TUNER_CACHE_SLOTS; i++)
			if (c->e[i].used < slot->used)
				slot = &c->e[i];
	}
	entry_free(slot);
	*slot = (struct tuner_cached){k, klen, b, len, key_hash(key, klen), ++c->tick};
	pthread_mutex_unlock(&t->lock);
}
