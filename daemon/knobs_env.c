/*
 * Implementation of knobs_env.h: a table of the built-in knobs and the
 * variables each sets, and the DLPROF_KNOB_ names of declared ones.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "knobs.h"
#include "knobs_env.h"

/*
 * A knob's value as the text of its variables: -1 sets nothing, 0 sets the
 * row's names, 1 sets its extra variable too.
 */
typedef int (*env_value_fn)(const json_t *v, char *buf, size_t len);

struct env_row {
	enum knob_id knob;
	const char *names[2];        /* the variables set to the text; NULL: fewer */
	env_value_fn value;
	const char *extra, *extra_value; /* one more variable, when value() returns 1 */
};

/* A value as text (integers and strings), or NULL. */
static const char *value_text(const json_t *v, char *buf, size_t len)
{
	if (json_is_integer(v))
		snprintf(buf, len, "%lld", (long long)json_integer_value(v));
	else if (json_is_string(v))
		snprintf(buf, len, "%s", json_string_value(v));
	else
		return NULL;
	return buf;
}

static int as_is(const json_t *v, char *buf, size_t len)
{
	return value_text(v, buf, len) ? 0 : -1;
}

/* The first N device ids: what a config's gpus means when no GPUs were picked (gpu_pick.h). */
static int devices(const json_t *v, char *buf, size_t len)
{
	size_t off = 0;

	if (!json_is_integer(v))
		return -1;
	buf[0] = '\0';
	for (json_int_t i = 0; i < json_integer_value(v) && off + 24 < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%lld", i ? "," : "", (long long)i);
	return 0;
}

/* OpenMP binds to cores for close and spread; anything else (none) turns binding off. */
static int binding(const json_t *v, char *buf, size_t len)
{
	if (!value_text(v, buf, len))
		return -1;
	if (strcmp(buf, "close") == 0 || strcmp(buf, "spread") == 0)
		return 1;
	snprintf(buf, len, "false");
	return 0;
}

/* Only jemalloc is preloaded; the default allocator sets nothing. */
static int preload(const json_t *v, char *buf, size_t len)
{
	if (!value_text(v, buf, len) || strcmp(buf, "jemalloc") != 0)
		return -1;
	snprintf(buf, len, "libjemalloc.so.2");
	return 0;
}

static const struct env_row builtin[] = {
	{KNOB_INTRA_THREADS, {"OMP_NUM_THREADS", "MKL_NUM_THREADS"}, as_is, NULL, NULL},
	{KNOB_INTEROP_THREADS, {"DLPROF_INTEROP_THREADS", NULL}, as_is, NULL, NULL},
	{KNOB_DATALOADER_WORKERS, {"DLPROF_DATALOADER_WORKERS", NULL}, as_is, NULL, NULL},
	{KNOB_GPUS, {"CUDA_VISIBLE_DEVICES", NULL}, devices, NULL, NULL},
	{KNOB_AFFINITY, {"OMP_PROC_BIND", NULL}, binding, "OMP_PLACES", "cores"},
	{KNOB_ALLOCATOR, {"LD_PRELOAD", NULL}, preload, NULL, NULL},
};

/* Keys of a config that are not knobs. */
static bool not_a_knob(const char *key)
{
	return strcmp(key, "phases") == 0;
}

static int put(json_t *env, const char *name, const char *value)
{
	return json_object_set_new(env, name, json_string(value));
}

/* Whether a picked device list names GPUs by index (digits and commas), not by UUID. */
static bool by_index(const char *devices)
{
	return strspn(devices, "0123456789,") == strlen(devices);
}

static int put_builtin(json_t *env, const struct env_row *row, const json_t *v, const char *picked)
{
	char text[KNOBS_ENV_VALUE_MAX];
	int r = row->value(v, text, sizeof(text));

	if (r < 0)
		return 0;
	if (row->value == devices && picked && *picked && json_integer_value(v) > 0) {
		/* NVML's indices follow the PCI bus; CUDA's default order puts the fastest first. */
		snprintf(text, sizeof(text), "%s", picked);
		if (by_index(picked) && put(env, "CUDA_DEVICE_ORDER", "PCI_BUS_ID") < 0)
			return -1;
	}
	for (int i = 0; i < 2 && row->names[i]; i++)
		if (put(env, row->names[i], text) < 0)
			return -1;
	if (r == 1 && put(env, row->extra, row->extra_value) < 0)
		return -1;
	return 0;
}

/* DLPROF_KNOB_ and the name in upper case, anything but [A-Z0-9] as '_'. */
static void declared_name(const char *knob, char *name, size_t len)
{
	size_t i = (size_t)snprintf(name, len, "DLPROF_KNOB_");

	for (; *knob && i + 1 < len; knob++, i++) {
		char c = *knob;
		if (c >= 'a' && c <= 'z')
			name[i] = (char)(c - 'a' + 'A');
		else if ((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
			name[i] = c;
		else
			name[i] = '_';
	}
	name[i] = '\0';
}

static const struct env_row *builtin_row(enum knob_id knob)
{
	for (size_t i = 0; knob != KNOB_OTHER && i < sizeof(builtin) / sizeof(builtin[0]); i++)
		if (builtin[i].knob == knob)
			return &builtin[i];
	return NULL;
}

json_t *knobs_env(const json_t *config, const char *gpus_picked)
{
	json_t *env = json_object(), *v;
	const char *key;
	char name[96], text[KNOBS_ENV_VALUE_MAX];

	if (!env)
		return NULL;
	for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
		if ((v = json_object_get(config, knob_name(builtin[i].knob))) && put_builtin(env, &builtin[i], v, gpus_picked) < 0)
			goto fail;
	json_object_foreach((json_t *)config, key, v) {
		if (builtin_row(knob_id_of(key)) || not_a_knob(key) || !value_text(v, text, sizeof(text)))
			continue;
		declared_name(key, name, sizeof(name));
		if (put(env, name, text) < 0)
			goto fail;
	}
	return env;
fail:
	json_decref(env);
	return NULL;
}
