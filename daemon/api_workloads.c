/*
 * GET /api/v1/recommend, /api/v1/workloads and /api/v1/workloads/{name}:
 * what the tuner learned, and the config to start a new job with, as JSON
 * or as "export NAME=value" lines for a job script (format=env, quoted for
 * the shell) or a Slurm TaskProlog (format=slurm, bare values).
 */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "app.h"
#include "array.h"
#include "config.h"
#include "job_env.h"
#include "tuner.h"
#include "validate.h"

/* Query arguments that are not workload parameters. */
static bool reserved_key(const char *key)
{
	return strcmp(key, "workload") == 0 || strcmp(key, "format") == 0 || strcmp(key, "objective") == 0 ||
	       strcmp(key, "job") == 0 || strcmp(key, "external_id") == 0 || strcmp(key, "gpus_allowed") == 0;
}

/* The request's other query arguments as the workload's parameters (values as given). */
static json_t *query_params(const struct http_request *req)
{
	json_t *params = json_object();
	size_t i;

	for (i = 0; i < req->nquery; i++)
		if (!reserved_key(req->query[i].key) && req->query[i].key[0])
			json_object_set_new(params, req->query[i].key, json_string(req->query[i].value));
	return params;
}

static bool tuner_ready(const struct http_request *req, struct http_response *resp)
{
	if (req->app->tuner)
		return true;
	http_reply_error(resp, 503, "unavailable", "the tuner is not running");
	return false;
}

/* objective= into *out (throughput when absent); false after a 400. */
static bool objective_arg(const struct http_request *req, struct http_response *resp, enum objective *out)
{
	const char *o = http_query(req, "objective");
	int v = o ? config_enum_value(config_objective_names, o) : OBJECTIVE_THROUGHPUT;

	if (v >= 0) {
		*out = (enum objective)v;
		return true;
	}
	http_reply_error(resp, 400, "bad_request", "objective: one of throughput, goodput, efficiency");
	return false;
}

/* How a recommendation is written (format=). */
enum answer_format {
	ANSWER_JSON,    /* the answer as JSON, with the config's variables */
	ANSWER_ENV,     /* exports for sh, quoted, with comments */
	ANSWER_SLURM,   /* exports for a Slurm TaskProlog: unquoted, no comments */
};

static const struct config_enum answer_format_names[] = {
	{"json", ANSWER_JSON},
	{"env", ANSWER_ENV},
	{"slurm", ANSWER_SLURM},
	{NULL, 0},
};

/* Output lines, growing. */
struct lines {
	char *buf;
	size_t len, cap;
	bool shell;          /* quote values for sh */
	bool failed;         /* a line could not be added: the text must not be sent */
};

/* Room for need more bytes; false (the text failed) when there is no memory. */
static bool lines_reserve(struct lines *l, size_t need)
{
	char *b;

	if (l->len + need <= l->cap)
		return true;
	if (!(b = array_grow(l->buf, &l->cap, l->len + need, 1))) {
		l->failed = true;
		return false;
	}
	l->buf = b;
	return true;
}

/* Appends one line; a NULL value (a member the answer lost) fails the text like a failed allocation. */
static void lines_export(struct lines *l, const char *name, const char *value)
{
	size_t need;
	const char *p;

	if (!value) {
		l->failed = true;
		return;
	}
	need = strlen(name) + 4 * strlen(value) + 16;
	if (!lines_reserve(l, need))
		return;
	assert(l->len + need <= l->cap);
	l->len += (size_t)sprintf(l->buf + l->len, "export %s=%s", name, l->shell ? "'" : "");
	for (p = value; *p; p++) {
		if (*p == '\n' || *p == '\r')
			continue;
		if (l->shell && *p == '\'')
			l->len += (size_t)sprintf(l->buf + l->len, "'\\''");
		else
			l->buf[l->len++] = *p;
	}
	l->len += (size_t)sprintf(l->buf + l->len, "%s\n", l->shell ? "'" : "");
}

/* The config's variables (job_env.h: the mapping every path shares). */
static void export_config(struct lines *l, const json_t *env)
{
	json_t *v;
	const char *name;

	json_object_foreach((json_t *)env, name, v)
		lines_export(l, name, json_string_value(v));
}

/*
 * One comment line for the person reading the script's output (shell form
 * only: a TaskProlog takes only exports), newlines in the text turned to spaces.
 */
static void lines_comment(struct lines *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void lines_comment(struct lines *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!l->shell || l->failed)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !lines_reserve(l, (size_t)n + 4))
		return;
	l->buf[l->len++] = '#';
	l->buf[l->len++] = ' ';
	va_start(ap, fmt);
	vsnprintf(l->buf + l->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	for (size_t i = l->len; i < l->len + (size_t)n; i++)
		if (l->buf[i] == '\n' || l->buf[i] == '\r')
			l->buf[i] = ' ';
	l->len += (size_t)n;
	l->buf[l->len++] = '\n';
}

/* The exports for rec without the job's own line (so the text can be cached for every job). */
static struct lines render_exports(const json_t *rec, const json_t *env, const json_t *gpu_pick, bool shell)
{
	struct lines l = {NULL, 0, 0, shell, false};
	char *params = json_dumps(json_object_get(rec, "params"), JSON_COMPACT | JSON_SORT_KEYS);

	const char *source = json_string_value(json_object_get(rec, "source"));
	const char *why = json_string_value(json_object_get(rec, "explanation"));
	const char *placed = json_string_value(json_object_get(gpu_pick, "reason"));

	lines_comment(&l, "dlprofd (%s): %s", source ? source : "", why ? why : "");
	if (placed)
		lines_comment(&l, "%s", placed);
	export_config(&l, env);
	lines_export(&l, "DLPROF_WORKLOAD", json_string_value(json_object_get(rec, "workload")));
	if (params && strcmp(params, "{}") != 0)
		lines_export(&l, "DLPROF_PARAMS", params);
	free(params);
	return l;
}

/*
 * The rendered answer, as http_reply_json would send it (JSON and a
 * newline) or as exports: rec with env (the config's variables) and
 * gpu_pick (the GPUs it was handed, or NULL), both stolen.
 */
static char *render_answer(json_t *rec, json_t *env, json_t *gpu_pick, enum answer_format format, size_t *len)
{
	struct lines l;
	char *text;

	if (format != ANSWER_JSON) {
		l = render_exports(rec, env, gpu_pick, format == ANSWER_ENV);
		json_decref(env);
		json_decref(gpu_pick);
		if (l.failed) {
			free(l.buf);
			return NULL;
		}
		*len = l.len;
		return l.buf;
	}
	/* The variables of the config, as format=env gives them (job_env.h), and the GPUs placed. */
	if (json_object_set_new(rec, "env", env) < 0) {
		json_decref(gpu_pick);
		return NULL;
	}
	if (gpu_pick && json_object_set_new(rec, "gpu_pick", gpu_pick) < 0)
		return NULL;
	/* The flags and the newline of http_reply_json, so a cached answer reads the same. */
	if (!(text = json_dumps(rec, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(16))))
		return NULL;
	*len = strlen(text);
	char *nl = realloc(text, *len + 2);
	if (!nl) {
		free(text);
		return NULL;
	}
	nl[(*len)++] = '\n';
	nl[*len] = '\0';
	return nl;
}

/* Sends body (a rendered answer, stolen), adding the job's line to exports. */
static void reply_answer(const struct http_request *req, struct http_response *resp, enum answer_format format,
			 char *body, size_t len)
{
	const char *job = http_query(req, "job");
	struct lines l = {body, len, len + 1, format == ANSWER_ENV, false};

	if (format == ANSWER_JSON) {
		http_reply_text(resp, 200, "application/json", body, len);
		return;
	}
	if (job && *job)
		lines_export(&l, "DLPROF_JOB", job);
	if (l.failed) {
		free(l.buf);
		http_reply_oom(resp);
		return;
	}
	http_reply_text(resp, 200, "text/plain; charset=utf-8", l.buf, l.len);
}

static bool key_add(char *key, size_t *len, const char *s)
{
	size_t n = strlen(s) + 1;

	if (*len + n > TUNER_ANSWER_KEY_MAX)
		return false;
	memcpy(key + *len, s, n);
	*len += n;
	return true;
}

/*
 * The cache key of a query: format, objective, name, then every parameter
 * pair in the order given, each NUL-terminated (query values hold no NUL,
 * so distinct queries give distinct keys).  The job is not in it: it only
 * adds a line after the cached text.  0 when the query is too long to cache.
 */
static size_t recommend_key(const struct http_request *req, const char *name, enum objective objective,
			    enum answer_format format, char *key)
{
	size_t len = 1;

	key[0] = (char)('0' + format);
	if (!key_add(key, &len, config_objective_name(objective)) || !key_add(key, &len, name))
		return 0;
	for (size_t i = 0; i < req->nquery; i++)
		if (!reserved_key(req->query[i].key) && req->query[i].key[0] &&
		    (!key_add(key, &len, req->query[i].key) || !key_add(key, &len, req->query[i].value)))
			return 0;
	return len;
}

void api_recommend(const struct http_request *req, struct http_response *resp)
{
	const char *name = http_query(req, "workload"), *format = http_query(req, "format");
	char key[TUNER_ANSWER_KEY_MAX], *body;
	enum objective objective;
	int fmt = format ? config_enum_value(answer_format_names, format) : ANSWER_JSON;
	size_t klen, len;
	uint64_t gen = 0;
	json_t *params, *rec, *env, *gpu_pick = NULL;
	struct job_env_for who = {http_query(req, "external_id"), http_query(req, "gpus_allowed")};
	bool placed;

	/* The rule registration applies: a name it refuses cannot have been learned. */
	if (!name || !validate_label(name, VALIDATE_WORKLOAD_MAX)) {
		http_reply_error(resp, 400, "bad_request",
				 "workload: a name of 1..128 printable characters is required");
		return;
	}
	if (fmt < 0) {
		http_reply_error(resp, 400, "bad_request", "format: one of json, env, slurm");
		return;
	}
	if (!objective_arg(req, resp, &objective) || !tuner_ready(req, resp))
		return;
	klen = recommend_key(req, name, objective, fmt, key);
	if (klen && (body = tuner_answer_get(req->app->tuner, key, klen, &len, &gen))) {
		reply_answer(req, resp, fmt, body, len);
		return;
	}
	params = query_params(req);
	rec = tuner_recommend(req->app->tuner, name, params, objective);
	json_decref(params);
	if (!rec) {
		http_reply_error(resp, 500, "internal", "no config could be derived for workload %s", name);
		return;
	}
	env = job_env(req->app, json_object_get(rec, "config"), &who, &gpu_pick);
	placed = gpu_pick != NULL;
	if (!env)
		json_decref(gpu_pick);
	body = env ? render_answer(rec, env, gpu_pick, fmt, &len) : NULL;
	json_decref(rec);
	if (!body) {
		http_reply_oom(resp);
		return;
	}
	/* An answer that hands out GPUs is the asker's own: each request picks (and leases) its own. */
	if (klen && !placed)
		tuner_answer_put(req->app->tuner, key, klen, body, len, gen);
	reply_answer(req, resp, fmt, body, len);
}

void api_workloads_list(const struct http_request *req, struct http_response *resp)
{
	if (tuner_ready(req, resp))
		http_reply_json(resp, 200, tuner_workloads(req->app->tuner));
}

void api_workload_get(const struct http_request *req, struct http_response *resp)
{
	const char *name = http_param(req, "name");
	bool any = http_query(req, "objective") == NULL;
	enum objective objective;
	json_t *params, *w;

	if (!tuner_ready(req, resp) || !name || !objective_arg(req, resp, &objective))
		return;
	params = query_params(req);
	w = tuner_workload(req->app->tuner, name, json_object_size(params) ? params : NULL, any ? NULL : &objective);
	json_decref(params);
	if (!w) {
		http_reply_error(resp, 404, "not_found", "no workload named %s has been seen", name);
		return;
	}
	http_reply_json(resp, 200, w);
}
