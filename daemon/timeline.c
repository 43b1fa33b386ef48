/*
 * A job's story (timeline.h).  Every event carries its figures and a line
 * of text made here, so the dashboard, dlprofctl and a curl reader say the
 * same words.  Configs are compared knob by knob: a config event names the
 * whole-job knobs that changed, and each phase whose own settings appeared,
 * changed or went is a phase override of its own.
 */
#include "timeline.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where an event sorts among events of the same time. */
enum tl_rank { TL_FIRST, TL_MIDDLE, TL_LAST };

struct tl_event {
	double t;
	enum tl_rank rank;
	size_t seq; /* order of making, for ties */
	json_t *o;
};

struct tl {
	struct tl_event *v;
	size_t n, cap;
	int failed;
};

/* Adds an event: kind, its fields (a new object, taken), and its line of text. */
static void tl_add(struct tl *tl, double t, enum tl_rank rank, const char *kind, json_t *fields, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

static void tl_add(struct tl *tl, double t, enum tl_rank rank, const char *kind, json_t *fields, const char *fmt, ...)
{
	struct tl_event *nv;
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (!fields || tl->failed) {
		tl->failed = 1;
		json_decref(fields);
		return;
	}
	if (tl->n == tl->cap) {
		size_t cap = tl->cap ? 2 * tl->cap : 16;
		if (!(nv = realloc(tl->v, cap * sizeof(*nv)))) {
			tl->failed = 1;
			json_decref(fields);
			return;
		}
		tl->v = nv;
		tl->cap = cap;
	}
	if (json_object_set_new(fields, "t", json_real(t)) < 0 ||
	    json_object_set_new(fields, "kind", json_string(kind)) < 0 ||
	    json_object_set_new(fields, "text", json_string(text)) < 0) {
		tl->failed = 1;
		json_decref(fields);
		return;
	}
	tl->v[tl->n] = (struct tl_event){t, rank, tl->n, fields};
	tl->n++;
}

/* A knob's value as text: strings bare, anything else as compact JSON. */
static void value_text(const json_t *v, char *buf, size_t len)
{
	char *s;

	if (json_is_string(v)) {
		snprintf(buf, len, "%s", json_string_value(v));
		return;
	}
	s = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
	snprintf(buf, len, "%s", s ? s : "none");
	free(s);
}

static int by_key(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The knobs of cfg (its "phases" left out) in key order, into keys (room for max); how many. */
static size_t knob_keys(const json_t *cfg, const char **keys, size_t max)
{
	const char *key;
	json_t *v;
	size_t n = 0;

	json_object_foreach((json_t *)cfg, key, v)
		if (strcmp(key, "phases") != 0 && n < max)
			keys[n++] = key;
	qsort(keys, n, sizeof(*keys), by_key);
	return n;
}

#define TL_MAX_KNOBS 64

/* "interop_threads=1 intra_threads=4": the knobs of cfg, phases left out, in key order. */
static void config_text(const json_t *cfg, char *buf, size_t len)
{
	const char *keys[TL_MAX_KNOBS];
	size_t i, n = knob_keys(cfg, keys, TL_MAX_KNOBS), o = 0;
	char val[128];

	buf[0] = '\0';
	for (i = 0; i < n && o < len; i++) {
		value_text(json_object_get(cfg, keys[i]), val, sizeof(val));
		o += (size_t)snprintf(buf + o, len - o, "%s%s=%s", o ? " " : "", keys[i], val);
	}
	if (!buf[0])
		snprintf(buf, len, "(no knobs)");
}

/* Why the tuner gave a config, as a reader takes it. */
static const char *why_text(const char *why)
{
	if (!why)
		return "";
	if (strcmp(why, "exploring") == 0)
		return " (exploring: the tuner measures it)";
	if (strcmp(why, "drift") == 0)
		return " (exploring again: the best stopped giving what it did)";
	if (strcmp(why, "best") == 0)
		return " (the best measured so far)";
	if (strcmp(why, "settled") == 0)
		return " (settled: the best, the search over)";
	return "";
}

/*
 * The whole-job knobs that differ between prev and cur, as {knob: [from,
 * to]} (a knob one of them lacks: null on that side), and as text.
 */
static json_t *changed_knobs(const json_t *prev, const json_t *cur, char *buf, size_t len)
{
	const char *keys[2 * TL_MAX_KNOBS];
	json_t *changed = json_object(), *a, *b;
	size_t i, n, o = 0;
	char va[96], vb[96];

	buf[0] = '\0';
	if (!changed)
		return NULL;
	/* The knobs of both, each once, in key order. */
	n = knob_keys(cur, keys, TL_MAX_KNOBS);
	n += knob_keys(prev, keys + n, TL_MAX_KNOBS);
	qsort(keys, n, sizeof(*keys), by_key);
	for (i = 0; i < n; i++) {
		if (i > 0 && strcmp(keys[i], keys[i - 1]) == 0)
			continue;
		a = json_object_get(prev, keys[i]);
		b = json_object_get(cur, keys[i]);
		if (a && b && json_equal(a, b))
			continue;
		json_object_set_new(changed, keys[i], json_pack("[O?O?]", a, b));
		value_text(a, va, sizeof(va));
		value_text(b, vb, sizeof(vb));
		if (o < len)
			o += (size_t)snprintf(buf + o, len - o, "%s%s %s -> %s", o ? ", " : "", keys[i], va, vb);
	}
	return changed;
}

/* Each phase whose own settings appeared, changed or went between prev and cur: one override event each. */
static void phase_overrides(struct tl *tl, double t, const json_t *prev, const json_t *cur, const char *why)
{
	const json_t *pp = json_object_get(prev, "phases"), *cp = json_object_get(cur, "phases");
	const char *phase;
	json_t *v;
	char text[256];

	json_object_foreach((json_t *)cp, phase, v) {
		if (json_equal(v, json_object_get(pp, phase)))
			continue;
		config_text(v, text, sizeof(text));
		tl_add(tl, t, TL_MIDDLE, "phase_override",
		       json_pack("{s:s,s:O,s:s?}", "phase", phase, "config", v, "why", why), "phase %s runs %s%s",
		       phase, text, why_text(why));
	}
	json_object_foreach((json_t *)pp, phase, v) {
		if (json_object_get(cp, phase))
			continue;
		tl_add(tl, t, TL_MIDDLE, "phase_override",
		       json_pack("{s:s,s:n,s:s?}", "phase", phase, "config", "why", why),
		       "phase %s runs the whole job's config again%s", phase, why_text(why));
	}
}

/* One config the job was given after prev (NULL: its first). */
static void config_event(struct tl *tl, double t, const json_t *prev, const json_t *cfg, const char *why)
{
	char text[400];
	json_t *changed;

	if (!json_is_object(cfg))
		return;
	if (!prev) {
		config_text(cfg, text, sizeof(text));
		tl_add(tl, t, TL_MIDDLE, "config", json_pack("{s:O,s:s?}", "config", cfg, "why", why), "config %s%s",
		       text, why_text(why));
	} else if ((changed = changed_knobs(prev, cfg, text, sizeof(text))) && json_object_size(changed) > 0) {
		tl_add(tl, t, TL_MIDDLE, "config",
		       json_pack("{s:O,s:s?,s:o}", "config", cfg, "why", why, "changed", changed), "config %s%s", text,
		       why_text(why));
	} else {
		json_decref(changed);
	}
	phase_overrides(tl, t, prev, cfg, why);
}

/* The configs of the stored events; false when there are none (a database older than sql/017). */
static int stored_configs(struct tl *tl, const json_t *events)
{
	const json_t *prev = NULL, *e, *d;
	size_t i;
	int any = 0;

	json_array_foreach((json_t *)events, i, e) {
		const char *kind = json_string_value(json_object_get(e, "kind"));
		if (!kind || strcmp(kind, "config") != 0)
			continue;
		d = json_object_get(e, "detail");
		config_event(tl, json_number_value(json_object_get(e, "t")), prev, json_object_get(d, "config"),
			     json_string_value(json_object_get(d, "why")));
		prev = json_object_get(d, "config");
		any = 1;
	}
	return any;
}

/* Configs from the whole-job trials, for a job whose configs were not kept as events; why is not known. */
static void trial_configs(struct tl *tl, const json_t *trials)
{
	const json_t *prev = NULL, *tr, *cfg;
	size_t i;

	json_array_foreach((json_t *)trials, i, tr) {
		const char *phase = json_string_value(json_object_get(tr, "phase"));
		cfg = json_object_get(tr, "config");
		if ((phase && phase[0]) || !json_is_object(cfg) || (prev && json_equal(prev, cfg)))
			continue;
		config_event(tl, json_number_value(json_object_get(tr, "t_start")), prev, cfg, NULL);
		prev = cfg;
	}
}

static void verdict_events(struct tl *tl, const json_t *verdicts)
{
	const json_t *v, *rank;
	const char *kind, *hint;
	size_t i;

	json_array_foreach((json_t *)verdicts, i, v) {
		kind = json_string_value(json_object_get(v, "kind"));
		hint = json_string_value(json_object_get(v, "hint"));
		rank = json_object_get(v, "rank");
		if (!kind || !json_is_number(json_object_get(v, "since")))
			continue;
		tl_add(tl, json_number_value(json_object_get(v, "since")), TL_MIDDLE, "verdict_raised",
		       json_pack("{s:s,s:s?,s:O?}", "verdict", kind, "hint", hint, "rank", rank), "%s: %s", kind,
		       hint ? hint : "");
		if (json_is_number(json_object_get(v, "until")))
			tl_add(tl, json_number_value(json_object_get(v, "until")), TL_MIDDLE, "verdict_cleared",
			       json_pack("{s:s}", "verdict", kind), "%s cleared", kind);
	}
}

static void rank_events(struct tl *tl, const json_t *ranks, const json_t *events)
{
	const json_t *k, *e, *d, *status;
	const char *kind;
	size_t i;

	json_array_foreach((json_t *)ranks, i, k) {
		if (!json_is_number(json_object_get(k, "joined")))
			continue;
		tl_add(tl, json_number_value(json_object_get(k, "joined")), TL_MIDDLE, "rank_joined",
		       json_pack("{s:O,s:O}", "rank", json_object_get(k, "rank"), "node", json_object_get(k, "node")),
		       "rank %lld joined on %s", (long long)json_integer_value(json_object_get(k, "rank")),
		       json_string_value(json_object_get(k, "node")) ? json_string_value(json_object_get(k, "node"))
								     : "?");
	}
	json_array_foreach((json_t *)events, i, e) {
		kind = json_string_value(json_object_get(e, "kind"));
		if (!kind || strcmp(kind, "rank_left") != 0)
			continue;
		d = json_object_get(e, "detail");
		status = json_object_get(d, "exit_status");
		if (json_is_integer(status))
			tl_add(tl, json_number_value(json_object_get(e, "t")), TL_MIDDLE, "rank_left",
			       json_deep_copy(d), "rank %lld left, exit status %lld",
			       (long long)json_integer_value(json_object_get(d, "rank")),
			       (long long)json_integer_value(status));
		else
			tl_add(tl, json_number_value(json_object_get(e, "t")), TL_MIDDLE, "rank_left",
			       json_deep_copy(d), "rank %lld left",
			       (long long)json_integer_value(json_object_get(d, "rank")));
	}
}

static void life_events(struct tl *tl, const json_t *job)
{
	const char *source = json_string_value(json_object_get(job, "source"));
	const char *ext = json_string_value(json_object_get(job, "external_id"));
	const json_t *pid = json_object_get(job, "pid"), *status = json_object_get(job, "exit_status");
	char who[160];

	snprintf(who, sizeof(who), "%s", source ? source : "registered");
	if (json_is_integer(pid))
		snprintf(who + strlen(who), sizeof(who) - strlen(who), ", pid %lld",
			 (long long)json_integer_value(pid));
	if (ext)
		snprintf(who + strlen(who), sizeof(who) - strlen(who), ", %s", ext);
	tl_add(tl, json_number_value(json_object_get(job, "started")), TL_FIRST, "started",
	       json_pack("{s:s?,s:O?,s:s?}", "source", source, "pid", pid, "external_id", ext), "started (%s)", who);
	if (!json_is_number(json_object_get(job, "ended")))
		return;
	if (json_is_integer(status))
		tl_add(tl, json_number_value(json_object_get(job, "ended")), TL_LAST, "ended",
		       json_pack("{s:O}", "exit_status", status), "ended, exit status %lld",
		       (long long)json_integer_value(status));
	else
		tl_add(tl, json_number_value(json_object_get(job, "ended")), TL_LAST, "ended",
		       json_pack("{s:n}", "exit_status"), "ended (exit status not reported)");
}

static int tl_cmp(const void *a, const void *b)
{
	const struct tl_event *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

json_t *timeline_events(const json_t *job, const json_t *events, const json_t *verdicts)
{
	struct tl tl = {0};
	json_t *out = NULL;
	size_t i;

	life_events(&tl, job);
	if (!stored_configs(&tl, events))
		trial_configs(&tl, json_object_get(job, "trials"));
	rank_events(&tl, json_object_get(job, "ranks"), events);
	verdict_events(&tl, verdicts);
	if (!tl.failed && (out = json_array())) {
		qsort(tl.v, tl.n, sizeof(*tl.v), tl_cmp);
		for (i = 0; i < tl.n; i++) {
			if (json_array_append_new(out, tl.v[i].o) < 0) {
				tl.failed = 1;
				i++;
				break;
			}
		}
		for (; i < tl.n; i++)
			json_decref(tl.v[i].o);
	} else {
		for (i = 0; i < tl.n; i++)
			json_decref(tl.v[i].o);
	}
	free(tl.v);
	if (tl.failed) {
		json_decref(out);
		return NULL;
	}
	return out;
}
