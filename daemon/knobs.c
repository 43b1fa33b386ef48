/*
 * Knob spaces (see knobs.h): building a workload's space from the node and a
 * job's declarations, enumerating candidates as mixed-radix indices, turning
 * candidates into JSON configs and model features, and the filters that keep
 * proposals to what a job can run.
 */
#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "knobs.h"

/* How far apart (in doublings of a count) the oversubscribed regime lies in the model. */
#define OVERSUB_UNITS 2.0
/* How the prior's rate falls past the CPUs: their share of the threads in flight, to this power. */
#define OVERSUB_PRIOR_POWER 0.6
/* Integer ranges longer than this are sampled on a log-like ladder. */
#define KNOB_DENSE_RANGE 16

static void set_err(char *err, size_t len, const char *fmt, const char *a, const char *b)
{
	if (err && len)
		snprintf(err, len, fmt, a, b);
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

/* Sorts and removes duplicates; returns the new count. */
static int unique_longs(long *v, int n)
{
	int i, m = 0;

	qsort(v, (size_t)n, sizeof(*v), cmp_long);
	for (i = 0; i < n; i++)
		if (m == 0 || v[m - 1] != v[i])
			v[m++] = v[i];
	return m;
}

/*
 * The integers of [lo, hi]: all of them when few, else a ladder of 1, 1.5, 2,
 * 3, 4, 6, 8 ... (thread counts near powers of two are the ones that matter)
 * plus the endpoints and the extra values (core counts).
 */
static int int_range(struct knob *k, long lo, long hi, const long *extra, int nextra)
{
	long v[KNOB_MAX_VALUES * 2 + 8];
	int n = 0, i;

	if (hi - lo + 1 <= KNOB_DENSE_RANGE) {
		for (long x = lo; x <= hi; x++)
			v[n++] = x;
	} else {
		v[n++] = lo;
		v[n++] = hi;
		for (long p = 1; p <= hi && n < KNOB_MAX_VALUES + 4; p *= 2) {
			if (p >= lo)
				v[n++] = p;
			if (p * 3 / 2 >= lo && p * 3 / 2 <= hi && p >= 2)
				v[n++] = p * 3 / 2;
		}
		for (i = 0; i < nextra; i++)
			if (extra[i] >= lo && extra[i] <= hi)
				v[n++] = extra[i];
	}
	assert(n <= (int)(sizeof(v) / sizeof(v[0])));
	n = unique_longs(v, n);
	if (n > KNOB_MAX_VALUES)
		return -1;
	memcpy(k->ivalues, v, sizeof(long) * (size_t)n);
	k->nvalues = n;
	k->type = KNOB_INT;
	return 0;
}

/* The index of the largest value <= want, or 0. */
static int floor_index(const struct knob *k, long want)
{
	int i, best = 0;

	for (i = 0; i < k->nvalues; i++)
		if (k->ivalues[i] <= want)
			best = i;
	return best;
}

static const struct config_enum knob_names[] = {
	{"intra_threads", KNOB_INTRA_THREADS},
	{"interop_threads", KNOB_INTEROP_THREADS},
	{"gpus", KNOB_GPUS},
	{"ranks", KNOB_RANKS},
	{"affinity", KNOB_AFFINITY},
	{"allocator", KNOB_ALLOCATOR},
	{"dataloader_workers", KNOB_DATALOADER_WORKERS},
	{"batch_size", KNOB_BATCH_SIZE},
	{NULL, 0},
};

enum knob_id knob_id_of(const char *name)
{
	int v = config_enum_value(knob_names, name);

	return v < 0 ? KNOB_OTHER : (enum knob_id)v;
}

const char *knob_name(enum knob_id id)
{
	assert(id >= KNOB_OTHER && id < KNOB_ID_COUNT);
	return config_enum_name(knob_names, (int)id);
}

static struct knob *add_knob(struct knob_space *sp, const char *name)
{
	struct knob *k;

	if (sp->nknobs >= KNOB_MAX)
		return NULL;
	k = &sp->knobs[sp->nknobs++];
	memset(k, 0, sizeof(*k));
	snprintf(k->name, sizeof(k->name), "%s", name);
	k->id = knob_id_of(k->name);
	return k;
}

static struct knob *add_builtin(struct knob_space *sp, enum knob_id id)
{
	return add_knob(sp, knob_name(id));
}

static void cat_fixed(struct knob *k, const char *value)
{
	k->type = KNOB_CAT;
	k->nvalues = 1;
	snprintf(k->svalues[0], KNOB_STR_MAX, "%s", value);
}

/* Priors chosen by rule once every knob is declared (knob.prior until then). */
#define PRIOR_THREADS (-1)
#define PRIOR_GPUS (-2)
#define PRIOR_LOADER (-3)
#define PRIOR_BATCH (-4)

/*
 * Physical cores of the CPUs a job may use, and no more than one NUMA domain;
 * one thread when the objective is throughput per core (scaling is sublinear).
 */
static long prior_threads(const struct knob_topology *topo)
{
	if (topo->efficiency)
		return 1;
	long cpus = topo->cpus_allowed > 0 ? topo->cpus_allowed : 1;
	long cores = topo->cores_allowed > 0 ? topo->cores_allowed : cpus;
	long numa = topo->numa_cores > 0 ? topo->numa_cores : cores;

	return cores < numa ? cores : numa;
}

/* The idle GPUs; one when the objective is per GPU. */
static long prior_gpus(const struct knob_topology *topo)
{
	if (topo->efficiency && topo->gpus_free > 0)
		return 1;
	return topo->gpus_free;
}

/* The built-in knobs with ranges derived from the node. */
static int builtin_knobs(struct knob_space *sp, const struct knob_topology *topo)
{
	long cpus = topo->cpus_allowed > 0 ? topo->cpus_allowed : 1;
	long cores = topo->cores_allowed > 0 ? topo->cores_allowed : cpus;
	long numa = topo->numa_cores > 0 ? topo->numa_cores : cores;
	long extra[3] = { cores, numa, cpus };
	struct knob *k;

	k = add_builtin(sp, KNOB_INTRA_THREADS);
	if (int_range(k, 1, cpus, extra, 3) < 0)
		return -1;
	k->runtime = true;
	k->prior = PRIOR_THREADS;

	k = add_builtin(sp, KNOB_INTEROP_THREADS);
	if (int_range(k, 1, cpus < 4 ? cpus : 4, NULL, 0) < 0)
		return -1;
	k->prior = 0; /* inter-op threads each start intra-op teams: 1 avoids oversubscription */

	if (topo->gpus_total > 0) {
		k = add_builtin(sp, KNOB_GPUS);
		if (int_range(k, 0, topo->gpus_total, NULL, 0) < 0)
			return -1;
		k->prior = PRIOR_GPUS;
	}
	/* Binding and allocator are tuned only where a job declares them. */
	cat_fixed(add_builtin(sp, KNOB_AFFINITY), "none");
	cat_fixed(add_builtin(sp, KNOB_ALLOCATOR), "default");
	return 0;
}

static int declared_values(struct knob *k, const json_t *values, char *err, size_t err_len)
{
	size_t i;
	json_t *v;
	long iv[KNOB_MAX_VALUES];
	int n = 0;

	if (!json_is_array(values) || json_array_size(values) == 0 || json_array_size(values) > KNOB_MAX_VALUES) {
		set_err(err, err_len, "knob %s: \"values\" must be an array of 1 to 32 values%s", k->name, "");
		return -1;
	}
	if (json_is_string(json_array_get(values, 0))) {
		k->type = KNOB_CAT;
		json_array_foreach(values, i, v) {
			if (!json_is_string(v) || json_string_length(v) >= KNOB_STR_MAX || json_string_length(v) == 0) {
				set_err(err, err_len, "knob %s: values must all be short strings%s", k->name, "");
				return -1;
			}
			snprintf(k->svalues[i], KNOB_STR_MAX, "%s", json_string_value(v));
		}
		k->nvalues = (int)json_array_size(values);
		return 0;
	}
	json_array_foreach(values, i, v) {
		if (!json_is_integer(v)) {
			set_err(err, err_len, "knob %s: values must all be integers or all strings%s", k->name, "");
			return -1;
		}
		iv[n++] = (long)json_integer_value(v);
	}
	k->type = KNOB_INT;
	k->nvalues = unique_longs(iv, n);
	memcpy(k->ivalues, iv, sizeof(long) * (size_t)k->nvalues);
	return 0;
}

/* Applies one declaration {"min","max"} | {"values"}, "runtime", "default". */
static int declare_knob(struct knob_space *sp, const char *name, const json_t *d, char *err, size_t err_len)
{
	int i = knobs_find(sp, name);
	struct knob *k;
	json_t *v;

	if (!json_is_object(d)) {
		set_err(err, err_len, "knob %s: declaration must be an object%s", name, "");
		return -1;
	}
	if (strlen(name) == 0 || strlen(name) >= KNOB_NAME_MAX || strcmp(name, "phases") == 0) {
		set_err(err, err_len, "knob name \"%.40s\" is not allowed%s", name, "");
		return -1;
	}
	k = i >= 0 ? &sp->knobs[i] : add_knob(sp, name);
	if (!k) {
		set_err(err, err_len, "too many knobs (at most 8): %s%s", name, "");
		return -1;
	}
	if (i < 0)
		k->runtime = false;
	if ((v = json_object_get(d, "values"))) {
		if (declared_values(k, v, err, err_len) < 0)
			return -1;
	} else {
		json_t *lo = json_object_get(d, "min"), *hi = json_object_get(d, "max");
		if (!json_is_integer(lo) || !json_is_integer(hi) || json_integer_value(lo) > json_integer_value(hi)) {
			set_err(err, err_len, "knob %s: needs integer \"min\" <= \"max\" or \"values\"%s", name, "");
			return -1;
		}
		if (int_range(k, (long)json_integer_value(lo), (long)json_integer_value(hi), NULL, 0) < 0)
			return -1;
	}
	if ((v = json_object_get(d, "runtime")) && json_is_boolean(v))
		k->runtime = json_is_true(v);
	k->declared = true;
	k->prior = 0;
	if ((v = json_object_get(d, "default")) && knobs_value_index(k, v) >= 0)
		k->prior = knobs_value_index(k, v);
	else if (k->id == KNOB_INTRA_THREADS)
		k->prior = PRIOR_THREADS; /* by rule, once all is declared */
	else if (k->id == KNOB_GPUS)
		k->prior = PRIOR_GPUS;
	else if (k->id == KNOB_DATALOADER_WORKERS && k->type == KNOB_INT)
		k->prior = PRIOR_LOADER;
	else if (k->id == KNOB_BATCH_SIZE && k->type == KNOB_INT)
		k->prior = PRIOR_BATCH;
	return 0;
}

/*
 * What every function below relies on of a built space: at most KNOB_MAX
 * knobs, each with 1 to KNOB_MAX_VALUES values (a filter's mask has a bit
 * for each), integer values strictly ascending (floor_index, the features'
 * log2 offset, smallest_allowed), a prior among them, and ncand their
 * product (candidates are mixed-radix indices below it).  Only asserts
 * call it, so a build with NDEBUG has none.
 */
#ifndef NDEBUG
static bool space_holds(const struct knob_space *sp)
{
	long n = 1;

	if (sp->nknobs < 0 || sp->nknobs > KNOB_MAX)
		return false;
	for (int i = 0; i < sp->nknobs; i++) {
		const struct knob *k = &sp->knobs[i];
		if (k->nvalues < 1 || k->nvalues > KNOB_MAX_VALUES || k->prior < 0 || k->prior >= k->nvalues)
			return false;
		for (int j = 1; k->type == KNOB_INT && j < k->nvalues; j++)
			if (k->ivalues[j - 1] >= k->ivalues[j])
				return false;
		n *= k->nvalues;
	}
	return n == sp->ncand && n <= SPACE_MAX_CANDIDATES;
}
#endif

/* Counts candidates and model dimensions; -1 when over the limits. */
static int space_finish(struct knob_space *sp, char *err, size_t err_len)
{
	long n = 1;
	int dims = 0, i;

	for (i = 0; i < sp->nknobs; i++) {
		n *= sp->knobs[i].nvalues;
		if (n > SPACE_MAX_CANDIDATES) {
			set_err(err, err_len, "too many candidate configs (more than 4096)%s%s", "", "");
			return -1;
		}
		if (sp->knobs[i].nvalues > 1)
			dims += sp->knobs[i].type == KNOB_INT ? 1 : sp->knobs[i].nvalues;
	}
	if (dims + 2 > KNOB_FEATURES) { /* + 2: the threads-in-flight and oversubscription coordinates */
		set_err(err, err_len, "too many tuned values for the model%s%s", "", "");
		return -1;
	}
	sp->ncand = (int)n;
	assert(space_holds(sp));
	return 0;
}

/* The index of the smallest value >= want, or the largest value. */
static int ceil_index(const struct knob *k, long want)
{
	int i;

	for (i = 0; i < k->nvalues; i++)
		if (k->ivalues[i] >= want)
			return i;
	return k->nvalues - 1;
}

/* The value of an integer knob's prior (1 when the space lacks the knob or its prior is not chosen yet). */
static long prior_value(const struct knob_space *sp, enum knob_id id)
{
	int i = knobs_find_id(sp, id);
	const struct knob *k = i >= 0 ? &sp->knobs[i] : NULL;

	return k && k->type == KNOB_INT && k->prior >= 0 && k->ivalues[k->prior] > 0 ? k->ivalues[k->prior] : 1;
}

/*
 * The first config of a workload nothing is known of, by the rules that beat
 * most configs on CPU jobs: threads in flight (intra-op x inter-op threads x
 * ranks, each inter-op thread and rank running its own intra-op team) no more
 * than the physical cores of one NUMA domain, so one inter-op thread (a job
 * that forks says so with an inter-op "default") and the cores' worth of
 * intra-op threads shared among the teams; all idle GPUs (one for a per-GPU
 * objective); a data loader with workers, about a quarter of the cores,
 * rather than loading in the training loop; a middle batch size rather than
 * the smallest (bigger batches amortise per-batch work until they spill
 * caches or memory).  A declared "default" wins.  Only resolves what
 * now allows (the threads' rule waits for the others).
 */
static void priors_by_rule(const struct knob_space *sp, struct knob *k, const struct knob_topology *topo, bool now)
{
	long per = prior_threads(topo) / prior_value(sp, KNOB_INTEROP_THREADS) / prior_value(sp, KNOB_RANKS);
	long cores = topo->cores_allowed > 0 ? topo->cores_allowed : topo->cpus_allowed;

	if (!now || k->prior >= 0)
		return;
	if (k->prior == PRIOR_THREADS)
		k->prior = floor_index(k, per > 1 ? per : 1);
	else if (k->prior == PRIOR_GPUS)
		k->prior = floor_index(k, prior_gpus(topo));
	else if (k->prior == PRIOR_LOADER)
		k->prior = ceil_index(k, cores / 4 > 1 ? cores / 4 : 1);
	else if (k->prior == PRIOR_BATCH)
		k->prior = k->nvalues / 2;
	if (k->prior < 0)
		k->prior = 0;
}

int knobs_space_build(struct knob_space *sp, const struct knob_topology *topo, const json_t *declared,
		  char *err, size_t err_len)
{
	const char *name;
	json_t *d;
	int i;

	memset(sp, 0, sizeof(*sp));
	if (builtin_knobs(sp, topo) < 0) {
		set_err(err, err_len, "node topology gives too many values%s%s", "", "");
		return -1;
	}
	if (declared && !json_is_object(declared)) {
		set_err(err, err_len, "\"knobs\" must be an object%s%s", "", "");
		return -1;
	}
	if (declared) {
		json_object_foreach((json_t *)declared, name, d)
			if (declare_knob(sp, name, d, err, err_len) < 0)
				return -1;
	}
	sp->cpus = topo->cpus_allowed > 0 ? topo->cpus_allowed : 0;
	/* Inter-op threads and ranks first: the threads' prior shares the cores among them. */
	for (i = sp->nknobs - 1; i >= 0; i--)
		priors_by_rule(sp, &sp->knobs[i], topo, sp->knobs[i].id != KNOB_INTRA_THREADS);
	for (i = 0; i < sp->nknobs; i++)
		priors_by_rule(sp, &sp->knobs[i], topo, true);
	return space_finish(sp, err, err_len);
}

json_t *knobs_space_json(const struct knob_space *sp)
{
	json_t *o = json_object();
	int i, j;

	for (i = 0; i < sp->nknobs; i++) {
		const struct knob *k = &sp->knobs[i];
		json_t *vals = json_array(), *d;
		for (j = 0; j < k->nvalues; j++)
			json_array_append_new(vals, k->type == KNOB_INT ? json_integer(k->ivalues[j])
									: json_string(k->svalues[j]));
		d = json_pack("{s:o, s:b, s:b, s:o}", "values", vals, "runtime", k->runtime, "declared",
			      k->declared, "default",
			      k->type == KNOB_INT ? json_integer(k->ivalues[k->prior]) : json_string(k->svalues[k->prior]));
		json_object_set_new(o, k->name, d);
	}
	return o;
}

int knobs_space_from_json(struct knob_space *sp, const json_t *j)
{
	const char *name;
	json_t *d, *v;

	memset(sp, 0, sizeof(*sp));
	if (!json_is_object(j))
		return -1;
	json_object_foreach((json_t *)j, name, d) {
		struct knob *k = add_knob(sp, name);
		if (!k || declared_values(k, json_object_get(d, "values"), NULL, 0) < 0)
			return -1;
		k->runtime = json_is_true(json_object_get(d, "runtime"));
		k->declared = json_is_true(json_object_get(d, "declared"));
		v = json_object_get(d, "default");
		k->prior = v && knobs_value_index(k, v) >= 0 ? knobs_value_index(k, v) : 0;
	}
	return space_finish(sp, NULL, 0);
}

void knobs_decode(const struct knob_space *sp, int cand, struct knob_config *out)
{
	int i;

	assert(cand >= 0 && cand < sp->ncand);
	memset(out, 0, sizeof(*out));
	for (i = 0; i < sp->nknobs; i++) {
		out->idx[i] = cand % sp->knobs[i].nvalues;
		cand /= sp->knobs[i].nvalues;
	}
	assert(cand == 0);
}

int knobs_encode(const struct knob_space *sp, const struct knob_config *c)
{
	int i, cand = 0;

	for (i = sp->nknobs - 1; i >= 0; i--) {
		assert(c->idx[i] >= 0 && c->idx[i] < sp->knobs[i].nvalues);
		cand = cand * sp->knobs[i].nvalues + c->idx[i];
	}
	assert(cand < sp->ncand);
	return cand;
}

int knobs_find(const struct knob_space *sp, const char *name)
{
	int i;

	for (i = 0; i < sp->nknobs; i++)
		if (strcmp(sp->knobs[i].name, name) == 0)
			return i;
	return -1;
}

int knobs_find_id(const struct knob_space *sp, enum knob_id id)
{
	assert(id != KNOB_OTHER);
	for (int i = 0; i < sp->nknobs; i++)
		if (sp->knobs[i].id == id)
			return i;
	return -1;
}

int knobs_value_index(const struct knob *k, const json_t *value)
{
	int i;

	for (i = 0; i < k->nvalues; i++) {
		if (k->type == KNOB_INT && json_is_integer(value) && json_integer_value(value) == k->ivalues[i])
			return i;
		if (k->type == KNOB_INT && json_is_real(value) && json_real_value(value) == (double)k->ivalues[i])
			return i;
		if (k->type == KNOB_CAT && json_is_string(value) && strcmp(json_string_value(value), k->svalues[i]) == 0)
			return i;
	}
	return -1;
}

int knobs_candidate_of(const struct knob_space *sp, const json_t *config, int base)
{
	struct knob_config c;
	int i;

	knobs_decode(sp, base >= 0 ? base : knobs_prior_candidate(sp), &c);
	for (i = 0; i < sp->nknobs; i++) {
		json_t *v = config ? json_object_get(config, sp->knobs[i].name) : NULL;
		if (!v)
			continue;
		c.idx[i] = knobs_value_index(&sp->knobs[i], v);
		if (c.idx[i] < 0)
			return -1;
	}
	return knobs_encode(sp, &c);
}

/* The index in to's knob tk of value vi of from's knob fk; -1 when to lacks the value. */
static int value_in(const struct knob *fk, int vi, const struct knob *tk)
{
	for (int j = 0; j < tk->nvalues; j++)
		if (fk->type == tk->type &&
		    (fk->type == KNOB_INT ? fk->ivalues[vi] == tk->ivalues[j] : strcmp(fk->svalues[vi], tk->svalues[j]) == 0))
			return j;
	return -1;
}

/* Whether id is one of only (NULL: every knob is). */
static bool listed(const enum knob_id *only, enum knob_id id)
{
	for (; only && *only != KNOB_OTHER; only++)
		if (*only == id)
			return true;
	return !only;
}

void knobs_map(const struct knob_space *from, const struct knob_space *to, int base, const enum knob_id *only,
	       int *map)
{
	int vmap[KNOB_MAX][KNOB_MAX_VALUES], tk[KNOB_MAX], c, k, v;
	struct knob_config x, y, b;

	knobs_decode(to, base >= 0 ? base : knobs_prior_candidate(to), &b);
	for (k = 0; k < from->nknobs; k++) {
		tk[k] = listed(only, from->knobs[k].id) ? knobs_find(to, from->knobs[k].name) : -1;
		for (v = 0; v < from->knobs[k].nvalues; v++)
			vmap[k][v] = tk[k] >= 0 ? value_in(&from->knobs[k], v, &to->knobs[tk[k]]) : 0;
	}
	for (c = 0; c < from->ncand; c++) {
		knobs_decode(from, c, &x);
		y = b;
		map[c] = 0;
		for (k = 0; k < from->nknobs && map[c] >= 0; k++) {
			if (tk[k] < 0)
				continue;
			if (vmap[k][x.idx[k]] < 0)
				map[c] = -1;
			else
				y.idx[tk[k]] = vmap[k][x.idx[k]];
		}
		if (map[c] >= 0)
			map[c] = knobs_encode(to, &y);
	}
}

json_t *knobs_config_json(const struct knob_space *sp, int cand)
{
	struct knob_config c;
	json_t *o = json_object();
	int i;

	knobs_decode(sp, cand, &c);
	for (i = 0; i < sp->nknobs; i++) {
		const struct knob *k = &sp->knobs[i];
		json_object_set_new(o, k->name,
				    k->type == KNOB_INT ? json_integer(k->ivalues[c.idx[i]]) : json_string(k->svalues[c.idx[i]]));
	}
	return o;
}

void knobs_config_text(const struct knob_space *sp, int cand, char *buf, size_t len)
{
	struct knob_config c;
	size_t off = 0;
	int i, w;

	knobs_decode(sp, cand, &c);
	if (len)
		buf[0] = '\0';
	for (i = 0; i < sp->nknobs && off < len; i++) {
		const struct knob *k = &sp->knobs[i];
		if (k->nvalues <= 1)
			continue;
		if (k->type == KNOB_INT)
			w = snprintf(buf + off, len - off, "%s%s=%ld", off ? "," : "", k->name, k->ivalues[c.idx[i]]);
		else
			w = snprintf(buf + off, len - off, "%s%s=%s", off ? "," : "", k->name, k->svalues[c.idx[i]]);
		if (w < 0)
			break;
		off += (size_t)w;
	}
}

long knobs_int_value(const struct knob_space *sp, int cand, enum knob_id id, long dflt)
{
	struct knob_config c;
	int i = knobs_find_id(sp, id);

	if (i < 0 || sp->knobs[i].type != KNOB_INT)
		return dflt;
	knobs_decode(sp, cand, &c);
	return sp->knobs[i].ivalues[c.idx[i]];
}

int knobs_prior_candidate(const struct knob_space *sp)
{
	struct knob_config c;
	int i;

	memset(&c, 0, sizeof(c));
	for (i = 0; i < sp->nknobs; i++)
		c.idx[i] = sp->knobs[i].prior;
	return knobs_encode(sp, &c);
}

double knobs_value_feature(const struct knob *k, long v)
{
	/*
	 * v is one of k's values.  A fixed knob (one value) has a feature too:
	 * the learner measures distances over every knob of a candidate.
	 */
	assert(k->nvalues >= 1 && v >= k->ivalues[0] && v <= k->ivalues[k->nvalues - 1]);
	if (k->ivalues[0] >= 1)
		return log2((double)v);
	if (k->ivalues[0] >= 0)
		return log2((double)v + 1.0);
	if (k->nvalues == 1)
		return 0.0;
	return 3.0 * (double)(v - k->ivalues[0]) / (double)(k->ivalues[k->nvalues - 1] - k->ivalues[0]);
}

int knobs_features(const struct knob_space *sp, int cand, double *x)
{
	struct knob_config c;
	int i, j, d = 0, intra = -1, inter = -1;
	double inter_one = 0.0;

	knobs_decode(sp, cand, &c);
	for (i = 0; i < sp->nknobs; i++) {
		const struct knob *k = &sp->knobs[i];
		if (k->nvalues <= 1)
			continue;
		if (k->type == KNOB_INT) {
			if (k->id == KNOB_INTRA_THREADS)
				intra = d;
			else if (k->id == KNOB_INTEROP_THREADS) {
				inter = d;
				inter_one = knobs_value_feature(k, 1);
			}
			x[d++] = knobs_value_feature(k, k->ivalues[c.idx[i]]);
		} else {
			/* One-hot scaled so that two different values lie 1 apart, as a doubling does. */
			for (j = 0; j < k->nvalues; j++)
				x[d++] = j == c.idx[i] ? M_SQRT1_2 : 0.0;
		}
	}
	/*
	 * Threads in flight, log2(intra x inter-op): each inter-op thread runs
	 * its own intra-op team, so oversubscription follows the product.  As a
	 * coordinate of its own it lets configs with the same total look alike
	 * (4 x 4 like 16 x 1), which a distance over the two knobs alone misses.
	 * Idle inter-op threads (interop_idle) count as one.
	 */
	if (intra >= 0 && inter >= 0) {
		x[d] = x[intra] + (sp->interop_idle ? inter_one : x[inter]);
		d++;
	}
	/*
	 * Oversubscribed or not, as a coordinate of its own worth OVERSUB_UNITS
	 * doublings: past the CPUs the machine time-slices teams that spin, a
	 * regime of its own, so a cliff measured just past the CPUs must not
	 * pull down the model below them, and what was measured below them says
	 * little about past them (where a job waiting on I/O may still gain).
	 */
	if (intra >= 0 && sp->cpus > 0)
		x[d++] = knobs_threads_in_flight(sp, cand) > sp->cpus ? OVERSUB_UNITS : 0.0;
	assert(d <= KNOB_FEATURES);   /* space_finish refused a space of more: x holds KNOB_FEATURES */
	return d;
}

/* The knob's integer value in c (decoded), or 1 when the space has no such integer knob. */
static long int_value_or_1(const struct knob_space *sp, const struct knob_config *c, enum knob_id id)
{
	int i = knobs_find_id(sp, id);

	return i >= 0 && sp->knobs[i].type == KNOB_INT ? sp->knobs[i].ivalues[c->idx[i]] : 1;
}

/*
 * Deliberately weak (a few percent per doubling): strong enough to order the
 * first trials and to break ties, weak enough that measurements overrule it
 * after one trial.  The benchmark chose the strength: three times stronger
 * kept the search near the prior too long on surfaces whose best lies far
 * from it.
 */
long knobs_threads_in_flight(const struct knob_space *sp, int cand)
{
	struct knob_config c;

	knobs_decode(sp, cand, &c);
	return int_value_or_1(sp, &c, KNOB_INTRA_THREADS) *
	       (sp->interop_idle ? 1 : int_value_or_1(sp, &c, KNOB_INTEROP_THREADS)) * int_value_or_1(sp, &c, KNOB_RANKS);
}

double knobs_prior_shape(const struct knob_space *sp, int cand)
{
	struct knob_config c;
	double f = 1.0;
	long flight;
	int i;

	knobs_decode(sp, cand, &c);
	for (i = 0; i < sp->nknobs; i++) {
		const struct knob *k = &sp->knobs[i];
		double d;
		if (k->nvalues <= 1 || c.idx[i] == k->prior)
			continue;
		if (k->type == KNOB_CAT) {
			f *= 0.99;
			continue;
		}
		d = knobs_value_feature(k, k->ivalues[c.idx[i]]) - knobs_value_feature(k, k->ivalues[k->prior]);
		if (k->id == KNOB_INTRA_THREADS)
			f *= 1.0 - (d > 0 ? 0.045 : 0.03) * fabs(d); /* above the cores: SMT siblings, other domains */
		else if (k->id == KNOB_GPUS)
			f *= 1.0 - 0.03 * fabs(d);
		else
			f *= 1.0 - 0.01 * fabs(d);
	}
	/*
	 * Past the CPUs, threads in flight queue for them: the CPUs' share of
	 * them, to the power OVERSUB_PRIOR_POWER.  Measured, the loss ranges from
	 * 15% (this machine's PyTorch surfaces at 1.5 to 2 times the CPUs, a
	 * power of about 0.3) to 95% (bench/tuner/e2e.py's forked ensemble, its
	 * OpenMP teams spinning on each other's CPUs); a job waiting on I/O may
	 * gain.  The benchmark chose the power: 1 kept the search from ever
	 * measuring past the CPUs, 0.5 led it over cliffs.
	 */
	flight = knobs_threads_in_flight(sp, cand);
	if (sp->cpus > 0 && flight > sp->cpus)
		f *= pow((double)sp->cpus / (double)flight, OVERSUB_PRIOR_POWER);
	return f > 0.01 ? f : 0.01;
}

void knobs_filter_all(const struct knob_space *sp, struct knob_filter *f)
{
	int i;

	memset(f, 0, sizeof(*f));
	for (i = 0; i < sp->nknobs; i++)
		f->allowed[i] = sp->knobs[i].nvalues >= 32 ? 0xffffffffu : ((1u << sp->knobs[i].nvalues) - 1u);
}

bool knobs_filter_pass(const struct knob_space *sp, const struct knob_filter *f, int cand)
{
	struct knob_config c;
	int i;

	knobs_decode(sp, cand, &c);
	for (i = 0; i < sp->nknobs; i++)
		if (!(f->allowed[i] & (1u << c.idx[i])))
			return false;
	/* Each rank runs its own intra-op team: more threads than CPUs is oversubscription, not a layout. */
	return f->layout_cpus <= 0 ||
	       int_value_or_1(sp, &c, KNOB_RANKS) * int_value_or_1(sp, &c, KNOB_INTRA_THREADS) <= f->layout_cpus;
}

void knobs_filter_pin_static(const struct knob_space *sp, struct knob_filter *f, int cand)
{
	struct knob_config c;
	int i;

	knobs_decode(sp, cand, &c);
	for (i = 0; i < sp->nknobs; i++)
		if (!sp->knobs[i].runtime)
			f->allowed[i] &= 1u << c.idx[i];
}

/* The smallest value an integer knob's allowed bits leave. */
static long smallest_allowed(const struct knob *k, uint32_t allowed)
{
	long v = LONG_MAX;

	for (int j = 0; j < k->nvalues; j++)
		if ((allowed & (1u << j)) && k->ivalues[j] < v)
			v = k->ivalues[j];
	return v;
}

int knobs_filter_topology(const struct knob_space *sp, struct knob_filter *f, const struct knob_topology *topo)
{
	int i, j, r, rc = 0;

	for (i = 0; i < sp->nknobs; i++) {
		const struct knob *k = &sp->knobs[i];
		long limit;
		if (k->type != KNOB_INT)
			continue;
		if (k->id == KNOB_INTRA_THREADS && !k->declared && topo->cpus_allowed > 0)
			limit = topo->cpus_allowed;
		else if (k->id == KNOB_INTEROP_THREADS && !k->declared && topo->cpus_allowed > 0)
			limit = topo->cpus_allowed;
		else if (k->id == KNOB_GPUS)
			limit = topo->gpus_free; /* never more GPUs than are free, declared or not */
		else
			continue;
		for (j = 0; j < k->nvalues; j++)
			if (k->ivalues[j] > limit)
				f->allowed[i] &= ~(1u << j);
		if (f->allowed[i] == 0) {
			f->allowed[i] = 1u; /* nothing fits: the smallest value, and the caller says so */
			rc = -1;
		}
	}
	/*
	 * Layouts: as the thread range, only what the node chose (a declared
	 * intra_threads range is the job's own business), and only when the
	 * smallest layout fits, so the limit never empties the space.
	 */
	if (topo->cpus_allowed > 0 && (r = knobs_find_id(sp, KNOB_RANKS)) >= 0 &&
	    (i = knobs_find_id(sp, KNOB_INTRA_THREADS)) >= 0 &&
	    sp->knobs[r].type == KNOB_INT && sp->knobs[i].type == KNOB_INT && !sp->knobs[i].declared) {
		long ranks = smallest_allowed(&sp->knobs[r], f->allowed[r]);
		long intra = smallest_allowed(&sp->knobs[i], f->allowed[i]);
		if (ranks <= topo->cpus_allowed && intra <= topo->cpus_allowed && ranks * intra <= topo->cpus_allowed)
			f->layout_cpus = topo->cpus_allowed;
	}
	return rc;
}
