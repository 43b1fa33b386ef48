/*
 * The table of collectors built into this binary, and the out-buffer they
 * append to.  Optional collectors appear in the table only when configure
 * found their library; the others are listed as known so that
 * /api/v1/node can say why they are missing.
 */

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "collector.h"

const struct collector *const collector_registry[] = {
	&collector_proc,
	&collector_perf,
#ifdef HAVE_PAPI
	&collector_papi,
#endif
#ifdef HAVE_LIKWID
	&collector_likwid,
#endif
	&collector_rapl,
	&collector_nvml,
	NULL,
};

const char *const collector_known[] = {"proc", "perf", "papi", "likwid", "rapl", "nvml", NULL};

const char *
collector_missing_reason(const char *name)
{
	if (strcmp(name, "papi") == 0)
		return "dlprofd was built without PAPI: install libpapi-dev and configure --with-papi";
	if (strcmp(name, "likwid") == 0)
		return "dlprofd was built without likwid: install likwid and configure --with-likwid";
	return "not built into this binary";
}

void
collector_out_reset(struct collector_out *out, double t, double mono)
{
	out->n = 0;
	out->nlabels = 0;
	out->t = t;
	out->mono = mono;
	out->failed = 0;
	out->detail = 1;
}

void
collector_out_free(struct collector_out *out)
{
	free(out->v);
	out->v = NULL;
	out->n = out->cap = 0;
	free(out->labels);
	out->labels = NULL;
	out->nlabels = out->labels_cap = 0;
}

double
collector_value_find(const struct collector_value *v, size_t n, int64_t job_id, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].job_id == job_id && strcmp(v[i].name, name) == 0)
			return v[i].value;
	return NAN;
}

void
collector_put(struct collector_out *out, int64_t job_id, double value, const char *name_fmt, ...)
{
	struct collector_value *nv, *v;
	va_list ap;
	int len;

	if (out->n == out->cap) {
		nv = array_grow(out->v, &out->cap, out->n + 1, sizeof(*nv));
		if (nv == NULL) {
			out->failed = 1;
			return;
		}
		out->v = nv;
	}
	assert(out->n < out->cap);
	v = &out->v[out->n];
	if (strchr(name_fmt, '%') == NULL) {
		/* Most names are literals: vsnprintf for each of ~1,000 values a tick showed in profiles. */
		len = (int)strnlen(name_fmt, sizeof(v->name));
		memcpy(v->name, name_fmt, (size_t)len < sizeof(v->name) ? (size_t)len + 1 : sizeof(v->name));
	} else {
		va_start(ap, name_fmt);
		len = vsnprintf(v->name, sizeof(v->name), name_fmt, ap);
		va_end(ap);
	}
	/* A name that does not fit is a programming error; drop it rather than truncate. */
	if (len <= 0 || (size_t)len >= sizeof(v->name))
		return;
	v->job_id = job_id;
	v->t = out->t;
	v->value = value;
	out->n++;
}

void
collector_put_label(struct collector_out *out, int64_t job_id, const char *key, const char *text)
{
	struct collector_label *nl, *l;
	size_t i;

	if (strlen(key) >= sizeof(l->key))
		return;  /* as collector_put: a key that does not fit is a programming error */
	if (out->nlabels == out->labels_cap) {
		nl = array_grow(out->labels, &out->labels_cap, out->nlabels + 1, sizeof(*nl));
		if (nl == NULL) {
			out->failed = 1;
			return;
		}
		out->labels = nl;
	}
	l = &out->labels[out->nlabels++];
	l->job_id = job_id;
	memcpy(l->key, key, strlen(key) + 1);
	/* Names come from processes (a thread's comm): JSON and the page want printable text. */
	for (i = 0; i + 1 < sizeof(l->text) && text[i] != '\0'; i++)
		l->text[i] = text[i] >= 0x20 && text[i] < 0x7f ? text[i] : '?';
	l->text[i] = '\0';
}
