/*
 * Implementation of validate.h.  Limits are the contract of the ingest API:
 * names of [a-z0-9_.] up to 64 characters, finite numbers, timestamps
 * inside a window around now, a bounded count per request.
 */
#include "validate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_watch.h"
#include "config.h"

bool validate_metric_name(const char *name)
{
	size_t n = 0;

	for (const char *p = name; *p; p++, n++) {
		char c = *p;
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.'))
			return false;
	}
	return n >= 1 && n <= VALIDATE_NAME_MAX;
}

bool validate_label(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n == 0 || n > max)
		return false;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return false;
	return true;
}

static int sample_from_json(const json_t *js, size_t i, int64_t job_id, const struct ingest_limits *lim,
			    struct sample *out, char *err, size_t errlen)
{
	const json_t *t = json_object_get(js, "t"), *name = json_object_get(js, "name");
	const json_t *value = json_object_get(js, "value"), *phase = json_object_get(js, "phase");

	if (!json_is_object(js))
		return snprintf(err, errlen, "samples[%zu]: not an object", i), -1;
	if (!json_is_number(t) || !isfinite(json_number_value(t)))
		return snprintf(err, errlen, "samples[%zu].t: a finite number of unix seconds is required", i), -1;
	if (json_number_value(t) < lim->oldest || json_number_value(t) > lim->newest)
		return snprintf(err, errlen, "samples[%zu].t: %.3f is outside the accepted window %.0f..%.0f",
				i, json_number_value(t), lim->oldest, lim->newest), -1;
	if (!json_is_string(name) || !validate_metric_name(json_string_value(name)))
		return snprintf(err, errlen, "samples[%zu].name: must match [a-z0-9_.]{1,64}", i), -1;
	if (!json_is_number(value) || !isfinite(json_number_value(value)))
		return snprintf(err, errlen, "samples[%zu].value: a finite number is required", i), -1;
	if (phase && !json_is_null(phase) &&
	    (!json_is_string(phase) || !validate_label(json_string_value(phase), VALIDATE_NAME_MAX)))
		return snprintf(err, errlen, "samples[%zu].phase: text of 1..64 printable characters", i), -1;
	out->job_id = job_id;
	out->t = json_number_value(t);
	out->name = json_string_value(name);
	out->value = json_number_value(value);
	out->phase = json_is_string(phase) ? json_string_value(phase) : NULL;
	return 0;
}

/*
 * The batch's optional number: seq a positive integer (JSON numbers are
 * exact to 2^53), stream a label naming the sender, only beside a seq.
 */
static int sequence_from_json(const json_t *body, struct ingest_batch *out, char *err, size_t errlen)
{
	const json_t *seq = json_object_get(body, "seq"), *stream = json_object_get(body, "stream");

	out->stream = "";
	out->seq = 0;
	if (seq && !json_is_null(seq)) {
		if (!json_is_integer(seq) || json_integer_value(seq) <= 0 ||
		    json_integer_value(seq) > 9007199254740992LL)
			return snprintf(err, errlen, "seq: a positive integer (the batch's number) is required"), -1;
		out->seq = json_integer_value(seq);
	}
	if (stream && !json_is_null(stream)) {
		if (!json_is_string(stream) || !validate_label(json_string_value(stream), VALIDATE_NAME_MAX))
			return snprintf(err, errlen, "stream: 1 to %d printable bytes are required", VALIDATE_NAME_MAX),
			       -1;
		if (out->seq == 0)
			return snprintf(err, errlen, "stream: given without seq"), -1;
		out->stream = json_string_value(stream);
	}
	return 0;
}

int validate_ingest(const json_t *body, int64_t job_id, const struct ingest_limits *lim,
		    struct ingest_batch *out, char *err, size_t errlen)
{
	const json_t *samples = json_object_get(body, "samples");
	const json_t *config = json_object_get(body, "config");
	const char *key;
	json_t *v;
	size_t n;

	json_object_foreach((json_t *)body, key, v) {
		if (strcmp(key, "samples") != 0 && strcmp(key, "config") != 0 && strcmp(key, "seq") != 0 &&
		    strcmp(key, "stream") != 0 && strcmp(key, "rank") != 0)
			return snprintf(err, errlen, "%s: unknown field (expected samples, config, seq, stream, rank)",
					key), -1;
	}
	if (sequence_from_json(body, out, err, errlen) < 0)
		return -1;
	out->rank = -1;
	if ((v = json_object_get(body, "rank")) != NULL && !json_is_null(v)) {
		if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) >= VALIDATE_RANKS_MAX)
			return snprintf(err, errlen, "rank: an integer 0..%d (the sender's rank) is required",
					VALIDATE_RANKS_MAX - 1), -1;
		out->rank = (int)json_integer_value(v);
	}
	if (!json_is_array(samples))
		return snprintf(err, errlen, "samples: an array is required"), -1;
	n = json_array_size(samples);
	if (n > lim->max_samples)
		return snprintf(err, errlen, "samples: %zu samples, more than the limit of %zu per request",
				n, lim->max_samples), -1;
	if (config && !json_is_null(config) && !json_is_object(config))
		return snprintf(err, errlen, "config: an object is required"), -1;

	out->samples = n ? calloc(n, sizeof(*out->samples)) : NULL;
	if (n && !out->samples) {
		alloc_watch_note();   /* the request's answer is 503, not this 400 (router_handle) */
		return snprintf(err, errlen, "samples: out of memory"), -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (sample_from_json(json_array_get(samples, i), i, job_id, lim, &out->samples[i], err, errlen) < 0) {
			free(out->samples);
			out->samples = NULL;
			return -1;
		}
	}
	out->n = n;
	out->config = json_is_object(config) ? config : NULL;
	return 0;
}

void ingest_batch_free(struct ingest_batch *b)
{
	free(b->samples);
	b->samples = NULL;
	b->n = 0;
}

static int check_params(const json_t *params, char *err, size_t errlen)
{
	const char *key;
	json_t *v;

	if (!json_is_object(params))
		return snprintf(err, errlen, "params: an object is required"), -1;
	json_object_foreach((json_t *)params, key, v) {
		if (!validate_label(key, VALIDATE_NAME_MAX))
			return snprintf(err, errlen, "params: key of 1..64 printable characters required"), -1;
		if (!json_is_string(v) && !json_is_number(v) && !json_is_boolean(v))
			return snprintf(err, errlen, "params.%s: a string, number or boolean is required", key), -1;
		if (json_is_string(v) && strlen(json_string_value(v)) > VALIDATE_WORKLOAD_MAX)
			return snprintf(err, errlen, "params.%s: longer than %d characters", key,
					VALIDATE_WORKLOAD_MAX), -1;
	}
	return 0;
}

static int check_knobs(const json_t *knobs, char *err, size_t errlen)
{
	const char *key;
	json_t *v;

	if (!json_is_object(knobs))
		return snprintf(err, errlen, "knobs: an object of knob name to range is required"), -1;
	json_object_foreach((json_t *)knobs, key, v) {
		const json_t *min = json_object_get(v, "min"), *max = json_object_get(v, "max");
		const json_t *values = json_object_get(v, "values");
		if (!validate_metric_name(key))
			return snprintf(err, errlen, "knobs: name '%.64s' must match [a-z0-9_.]{1,64}", key), -1;
		if (!json_is_object(v))
			return snprintf(err, errlen, "knobs.%s: an object with min/max or values is required", key), -1;
		if (values && (!json_is_array(values) || json_array_size(values) == 0 ||
			       json_array_size(values) > 256))
			return snprintf(err, errlen, "knobs.%s.values: an array of 1..256 values is required", key), -1;
		if (!values && (!json_is_integer(min) || !json_is_integer(max) ||
				json_integer_value(min) > json_integer_value(max)))
			return snprintf(err, errlen, "knobs.%s: integer min <= max, or values, is required", key), -1;
	}
	return 0;
}

/* An optional integer member key of o in [min, max]: 0 (absent: *out untouched) or -1 with err set. */
static int opt_int(const json_t *o, const char *key, json_int_t min, json_int_t max, int *out, char *err,
		   size_t errlen)
{
	const json_t *v = json_object_get(o, key);

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max)
		return snprintf(err, errlen, "rank.%s: an integer %lld..%lld is required", key, (long long)min,
				(long long)max), -1;
	*out = (int)json_integer_value(v);
	return 0;
}

int validate_rank(const json_t *body, struct job_rank_spec *out, char *err, size_t errlen)
{
	const json_t *rank = json_object_get(body, "rank"), *node;
	const char *key;
	json_t *v;

	if (!rank || json_is_null(rank))
		return 0;
	if (!json_is_object(rank))
		return snprintf(err, errlen, "rank: an object {rank, world_size, local_rank, node, nodes} is required"),
		       -1;
	json_object_foreach((json_t *)rank, key, v) {
		if (strcmp(key, "rank") != 0 && strcmp(key, "world_size") != 0 && strcmp(key, "local_rank") != 0 &&
		    strcmp(key, "node") != 0 && strcmp(key, "nodes") != 0)
			return snprintf(err, errlen, "rank.%.64s: unknown field", key), -1;
	}
	*out = (struct job_rank_spec){.rank = -1, .local_rank = -1, .world_size = 0};
	if (opt_int(rank, "world_size", 1, VALIDATE_RANKS_MAX, &out->world_size, err, errlen) < 0 ||
	    opt_int(rank, "rank", 0, VALIDATE_RANKS_MAX - 1, &out->rank, err, errlen) < 0 ||
	    opt_int(rank, "local_rank", 0, VALIDATE_RANKS_MAX - 1, &out->local_rank, err, errlen) < 0 ||
	    opt_int(rank, "nodes", 1, VALIDATE_RANKS_MAX, &out->nodes, err, errlen) < 0)
		return -1;
	if (out->world_size == 0 || out->rank < 0)
		return snprintf(err, errlen, "rank: rank and world_size are required"), -1;
	if (out->rank >= out->world_size)
		return snprintf(err, errlen, "rank.rank: %d is not below world_size %d", out->rank, out->world_size), -1;
	node = json_object_get(rank, "node");
	if (node && !json_is_null(node) &&
	    (!json_is_string(node) || !validate_label(json_string_value(node), VALIDATE_NODE_MAX)))
		return snprintf(err, errlen, "rank.node: a host name of 1..%d printable bytes is required",
				VALIDATE_NODE_MAX), -1;
	out->node = json_is_string(node) ? json_string_value(node) : NULL;
	if (!json_is_string(json_object_get(body, "external_id")))
		return snprintf(err, errlen, "rank: external_id, the id all ranks of the job share, is required"), -1;
	return 1;
}

static const char *opt_string(const json_t *body, const char *key, size_t max, char *err, size_t errlen, int *bad)
{
	const json_t *v = json_object_get(body, key);

	if (!v || json_is_null(v))
		return NULL;
	if (!json_is_string(v) || !validate_label(json_string_value(v), max)) {
		snprintf(err, errlen, "%s: text of 1..%zu printable characters is required", key, max);
		*bad = 1;
		return NULL;
	}
	return json_string_value(v);
}

int validate_registration(const json_t *body, struct job_spec *spec, char **params_canon,
			  char **knobs_json, char *err, size_t errlen)
{
	static const char *const known[] = {"workload", "params", "pid", "external_id", "knobs",
					    "objective", "command", "rank", "gpus_allowed", NULL};
	const json_t *params = json_object_get(body, "params"), *pid = json_object_get(body, "pid");
	const json_t *knobs = json_object_get(body, "knobs");
	const char *key;
	json_t *v;
	const char *objective = NULL;
	int bad = 0, o = 0;

	json_object_foreach((json_t *)body, key, v) {
		size_t i;
		for (i = 0; known[i] && strcmp(known[i], key) != 0; i++)
			;
		if (!known[i])
			return snprintf(err, errlen, "%.64s: unknown field", key), -1;
	}
	memset(spec, 0, sizeof(*spec));
	spec->workload = opt_string(body, "workload", VALIDATE_WORKLOAD_MAX, err, errlen, &bad);
	if (bad || !spec->workload)
		return bad ? -1 : (snprintf(err, errlen, "workload: a name is required"), -1);
	spec->external_id = opt_string(body, "external_id", VALIDATE_WORKLOAD_MAX, err, errlen, &bad);
	if (!bad)
		spec->command = opt_string(body, "command", 4096, err, errlen, &bad);
	if (!bad)
		objective = opt_string(body, "objective", 16, err, errlen, &bad);
	/* The GPUs of the job's allocation, which job_env.h picks among. */
	if (!bad)
		opt_string(body, "gpus_allowed", 4096, err, errlen, &bad);
	if (bad)
		return -1;
	if (objective && (o = config_enum_value(config_objective_names, objective)) < 0)
		return snprintf(err, errlen, "objective: one of throughput, goodput, efficiency"), -1;
	spec->objective = objective ? (enum objective)o : OBJECTIVE_THROUGHPUT;
	if (pid && !json_is_null(pid)) {
		if (!json_is_integer(pid) || json_integer_value(pid) <= 0 || json_integer_value(pid) > 4194304)
			return snprintf(err, errlen, "pid: a positive process id is required"), -1;
		spec->pid = json_integer_value(pid);
	}
	if (params && !json_is_null(params) && check_params(params, err, errlen) < 0)
		return -1;
	if (knobs && !json_is_null(knobs) && check_knobs(knobs, err, errlen) < 0)
		return -1;
	*params_canon = json_is_object(params)
		? json_dumps(params, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII)
		: strdup("{}");
	*knobs_json = json_is_object(knobs) ? json_dumps(knobs, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	spec->params_json = *params_canon;
	spec->knobs_json = *knobs_json;
	return 0;
}
