/*
 * dlprofctl: the command-line client of dlprofd.  It parses the command
 * line, sends one or a few requests over the daemon's Unix socket or HTTP
 * (ctl_http.c), and prints the answer as a table (ctl_table.c) or, with
 * --json, as the daemon's own JSON for scripts.  Exit codes separate "the
 * daemon refused" (1), "bad usage" (2) and "the daemon is down" (3), so
 * scripts such as the Slurm epilog can tell them apart.
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdbool.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "ctl_cluster.h"
#include "ctl_export.h"
#include "ctl_format.h"
#include "ctl_goodput.h"
#include "ctl_report.h"
#include "ctl_http.h"
#include "ctl_run.h"
#include "ctl_table.h"

#define CTL_DEFAULT_SOCKET "/run/dlprofd/dlprofd.sock"
#define CTL_DEFAULT_URL "http://127.0.0.1:8080"
/* Width of the name column in "name  value" listings. */
#define CTL_FIELD_WIDTH 18

enum ctl_exit {
	CTL_EXIT_OK = 0,
	CTL_EXIT_REFUSED = 1,    /* the daemon answered with an error status */
	CTL_EXIT_USAGE = 2,      /* bad command line */
	CTL_EXIT_DOWN = 3,       /* the daemon could not be reached */
	CTL_EXIT_BAD_REPLY = 4,  /* an answer that is not what the API promises */
};

/* The command line, parsed. */
struct ctl {
	struct ctl_target target;
	char url_buf[512];       /* target.url normalised ("http://" added) */
	int json;                /* --json: print the daemon's JSON */
	const char *format;      /* recommend: env | json | NULL (table) */
	const char *phase;       /* report: the samples' phase */
	const char *state;       /* jobs: running | ended | all */
	const char *exit_status; /* end: the job's exit status */
	const char *workload;    /* run: the job's workload */
	int ranks;               /* run: ranks to start; 0: the allocation's, or 1; -1: the tuner's */
	struct ctl_export_opts export;  /* export: range, step, format, file */
	int timeout_given;       /* --timeout was given (export waits longer by default) */
};

static const char *const ctl_usage_text =
	"usage: dlprofctl [OPTIONS] COMMAND [ARGS]\n"
	"\n"
	"Commands:\n"
	"  status                          daemon health, node and running jobs\n"
	"  jobs [--all | --state STATE]    jobs (running by default)\n"
	"  job JOB                         one job: config, latest figures, trials\n"
	"  workloads                       workloads and their best known settings\n"
	"  cluster [WORKLOAD]              what every node sharing the cluster store learned\n"
	"  recommend WORKLOAD [K=V...] [--format env|json]\n"
	"                                  settings to start a job of WORKLOAD with\n"
	"  report JOB                      what holds the job back: verdicts, hints, fixes\n"
	"  report JOB NAME=VALUE... [--phase NAME]\n"
	"                                  send metric samples for a job\n"
	"  end JOB [--exit-status N]       mark a job ended\n"
	"  run [--workload W] [--ranks N|auto] -- COMMAND [ARGS...]\n"
	"                                  start COMMAND as a job (N ranks; auto: the\n"
	"                                  tuner's) with the daemon's config\n"
	"  export JOB [--from T] [--to T] [--step S] [--csv] [-o FILE]\n"
	"                                  the job's whole record (series, configs,\n"
	"                                  verdicts, story) as JSON; --csv: its series\n"
	"                                  T: unix seconds, -2h (before now), or\n"
	"                                  2026-11-27T08:00Z\n"
	"JOB is a job id, or an external id such as slurm:1234.\n"
	"\n"
	"Options:\n"
	"  -s, --socket PATH   the daemon's Unix socket (default " CTL_DEFAULT_SOCKET
	" if it exists)\n"
	"  -u, --url URL       the daemon's HTTP address (default " CTL_DEFAULT_URL ")\n"
	"      --token TOKEN   bearer token for remote changes (default $DLPROF_TOKEN)\n"
	"  -t, --timeout SEC   give up after SEC seconds (default 5)\n"
	"  -j, --json          print JSON for scripts\n"
	"  -h, --help          this text\n"
	"  -V, --version       print the version\n"
	"\n"
	"Exit status: 0 ok, 1 the daemon refused, 2 usage, 3 daemon unreachable,\n"
	"4 unexpected answer.\n";

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "dlprofctl: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n(see dlprofctl --help)\n");
	return CTL_EXIT_USAGE;
}

/* Where the request goes, for messages. */
static void target_name(const struct ctl *c, char *buf, size_t len)
{
	if (c->target.socket)
		snprintf(buf, len, "unix:%s", c->target.socket);
	else
		snprintf(buf, len, "%s", c->target.url);
}

/* Prints the daemon's {"error","detail"} answer; the reply is not JSON on 5xx from proxies. */
static void print_refusal(const char *method, const char *path, const struct ctl_reply *r)
{
	json_t *err = json_loads(r->body, 0, NULL);
	const char *code = json_string_value(json_object_get(err, "error"));
	const char *detail = json_string_value(json_object_get(err, "detail"));

	if (code)
		fprintf(stderr, "dlprofctl: %s %s: %ld %s%s%s\n", method, path, r->status, code,
			detail ? ": " : "", detail ? detail : "");
	else
		fprintf(stderr, "dlprofctl: %s %s: HTTP %ld %.200s\n", method, path, r->status, r->body);
	json_decref(err);
}

/*
 * One request.  On success (2xx) stores the parsed JSON in *out (when out
 * is not NULL) or the raw reply in *raw, and returns CTL_EXIT_OK; otherwise
 * prints why and returns the exit code.
 */
static int ctl_call(const struct ctl *c, const char *method, const char *path, json_t *body,
		    json_t **out, struct ctl_reply *raw)
{
	char err[512], where[600];
	struct ctl_reply reply;
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	enum ctl_result rc;

	if (body && !text)
		return CTL_EXIT_BAD_REPLY;
	rc = ctl_request(&c->target, method, path, text, &reply, err, sizeof(err));
	free(text);
	if (rc != CTL_ANSWERED) {
		target_name(c, where, sizeof(where));
		fprintf(stderr, "dlprofctl: cannot reach dlprofd at %s: %s\n", where, err);
		if (rc == CTL_UNREACHABLE)
			fprintf(stderr, "dlprofctl: is it running?  systemctl status dlprofd\n");
		return rc == CTL_UNREACHABLE ? CTL_EXIT_DOWN : CTL_EXIT_BAD_REPLY;
	}
	if (reply.status < 200 || reply.status > 299) {
		print_refusal(method, path, &reply);
		ctl_reply_free(&reply);
		return CTL_EXIT_REFUSED;
	}
	if (out) {
		json_error_t jerr;
		*out = json_loads(reply.body, 0, &jerr);
		if (!*out) {
			fprintf(stderr, "dlprofctl: %s %s: answer is not JSON: %s\n", method, path, jerr.text);
			ctl_reply_free(&reply);
			return CTL_EXIT_BAD_REPLY;
		}
		ctl_reply_free(&reply);
	} else if (raw) {
		*raw = reply;
	} else {
		ctl_reply_free(&reply);
	}
	return CTL_EXIT_OK;
}

static void print_json(const json_t *v)
{
	json_dumpf(v, stdout, JSON_INDENT(2));
	putchar('\n');
}

/*
 * GETs path.  With --json prints the answer for scripts and leaves *answer
 * NULL; otherwise *answer is the parsed answer, for the caller to print as
 * text and free.  Returns an exit code.
 */
static int get_answer(const struct ctl *c, const char *path, json_t **answer)
{
	int rc = ctl_call(c, "GET", path, NULL, answer, NULL);

	if (rc != CTL_EXIT_OK || !c->json)
		return rc;
	print_json(*answer);
	json_decref(*answer);
	*answer = NULL;
	return CTL_EXIT_OK;
}

/* An object as key=value pairs, anything else as a scalar; returns buf. */
static const char *fmt_value(const json_t *v, char *buf, size_t len)
{
	return json_is_object(v) ? ctl_fmt_object(v, buf, len) : ctl_fmt_scalar(v, buf, len);
}

/* What a command that shows a list answer as a table needs. */
struct ctl_listing {
	const char *key;             /* the list's member in the answer */
	size_t ncols;
	const char *const *hdr;      /* ncols headers */
	void (*add_row)(struct ctl_table *t, const json_t *item);
};

/* GETs path and prints its list as a table, or the line empty when it has none. */
static int print_listing(const struct ctl *c, const char *path, const struct ctl_listing *l,
			 const char *empty)
{
	json_t *answer, *list, *item;
	struct ctl_table t;
	size_t i;
	int rc = get_answer(c, path, &answer);

	if (rc != CTL_EXIT_OK || !answer)
		return rc;
	list = ctl_list(answer, l->key);
	if (!list || ctl_table_init(&t, l->ncols, l->hdr) < 0) {
		json_decref(answer);
		return CTL_EXIT_BAD_REPLY;
	}
	json_array_foreach(list, i, item)
		l->add_row(&t, item);
	if (t.nrows == 1)
		printf("%s\n", empty);
	else
		ctl_table_print(&t, stdout);
	ctl_table_free(&t);
	json_decref(answer);
	return CTL_EXIT_OK;
}

/* A positive decimal job id, or 0. */
static long long parse_job_id(const char *s)
{
	char *end;
	long long id;

	errno = 0;
	id = strtoll(s, &end, 10);
	if (errno || end == s || *end || id <= 0)
		return 0;
	return id;
}

/* Which of the listed jobs a command acts on; NULL takes them all. */
typedef bool (*job_filter)(const json_t *job);

/*
 * Ids of the jobs in state (running or all) whose external id is ext and
 * that want takes, at most max of them, newest first.  Returns an exit code.
 */
static int find_external(const struct ctl *c, const char *ext, const char *state, job_filter want,
			 long long *ids, size_t max, size_t *n)
{
	json_t *answer, *list, *job;
	char path[64];
	size_t i;
	int rc;

	*n = 0;
	snprintf(path, sizeof(path), "/api/v1/jobs?state=%s", state);
	rc = ctl_call(c, "GET", path, NULL, &answer, NULL);
	if (rc != CTL_EXIT_OK)
		return rc;
	list = ctl_list(answer, "jobs");
	json_array_foreach(list, i, job) {
		const char *e = json_string_value(json_object_get(job, "external_id"));
		json_int_t id = json_integer_value(json_object_get(job, "id"));
		size_t at = *n;
		if (!e || strcmp(e, ext) != 0 || id <= 0 || *n == max || (want && !want(job)))
			continue;
		/* Insertion keeps the ids in descending order: the list's order is the daemon's. */
		while (at > 0 && ids[at - 1] < id) {
			ids[at] = ids[at - 1];
			at--;
		}
		ids[at] = id;
		(*n)++;
	}
	json_decref(answer);
	return CTL_EXIT_OK;
}

/*
 * Resolves JOB: a numeric id as is, or an external id ("slurm:123"): the
 * newest running job with it, else the newest of all.  Returns an exit code.
 */
static int resolve_job(const struct ctl *c, const char *arg, long long *id)
{
	size_t n = 0;
	int rc;

	*id = parse_job_id(arg);
	if (*id)
		return CTL_EXIT_OK;
	if (!strchr(arg, ':'))
		return usage_error("'%s' is not a job id nor an external id (like slurm:123)", arg);
	rc = find_external(c, arg, "running", NULL, id, 1, &n);
	if (rc == CTL_EXIT_OK && n == 0)
		rc = find_external(c, arg, "all", NULL, id, 1, &n);
	if (rc == CTL_EXIT_OK && n == 0) {
		fprintf(stderr, "dlprofctl: no job with external id %s\n", arg);
		rc = CTL_EXIT_REFUSED;
	}
	return rc;
}

/* status: healthz, the node, and the running jobs' count. */
static int cmd_status(const struct ctl *c)
{
	struct ctl_reply health;
	json_t *node = NULL, *jobs = NULL, *list;
	char where[600], buf[512];
	const char *key;
	json_t *v;
	int rc, healthy;

	target_name(c, where, sizeof(where));
	rc = ctl_call(c, "GET", "/healthz", NULL, NULL, &health);
	if (rc == CTL_EXIT_DOWN || rc == CTL_EXIT_BAD_REPLY)
		return rc;
	healthy = rc == CTL_EXIT_OK;
	if (healthy)
		ctl_reply_free(&health);
	rc = ctl_call(c, "GET", "/api/v1/node", NULL, &node, NULL);
	if (rc == CTL_EXIT_OK)
		rc = ctl_call(c, "GET", "/api/v1/jobs?state=running", NULL, &jobs, NULL);
	if (rc != CTL_EXIT_OK)
		goto done;
	list = ctl_list(jobs, "jobs");
	if (c->json) {
		json_t *out = json_pack("{s:s, s:b, s:O, s:I}", "daemon", where, "healthy", healthy,
					"node", node, "running_jobs", (json_int_t)json_array_size(list));
		print_json(out);
		json_decref(out);
		goto done;
	}
	v = json_object_get(json_object_get(node, "daemon"), "version");
	snprintf(buf, sizeof(buf), "%s%s%s", healthy ? "up" : "up, but unhealthy",
		 json_is_string(v) ? ", version " : "", json_is_string(v) ? json_string_value(v) : "");
	ctl_print_field("daemon", buf, CTL_FIELD_WIDTH);
	ctl_print_field("address", where, CTL_FIELD_WIDTH);
	snprintf(buf, sizeof(buf), "%zu running", json_array_size(list));
	ctl_print_field("jobs", buf, CTL_FIELD_WIDTH);
	json_object_foreach(node, key, v) {
		if (strcmp(key, "collectors") == 0 || strcmp(key, "daemon") == 0)
			continue;   /* the table below, and the first line */
		ctl_print_field(key, fmt_value(v, buf, sizeof(buf)), CTL_FIELD_WIDTH);
	}
	v = json_object_get(node, "collectors");
	if (json_is_array(v)) {
		static const char *const hdr[] = {"COLLECTOR", "STATUS", "REASON"};
		struct ctl_table t;
		size_t i;
		json_t *col;
		printf("\n");
		if (ctl_table_init(&t, 3, hdr) == 0) {
			json_array_foreach(v, i, col) {
				const char *row[3] = {
					json_string_value(json_object_get(col, "name")),
					json_string_value(json_object_get(col, "status")),
					json_string_value(json_object_get(col, "reason"))};
				ctl_table_add(&t, row);
			}
			ctl_table_print(&t, stdout);
			ctl_table_free(&t);
		}
	}
done:
	json_decref(node);
	json_decref(jobs);
	if (rc == CTL_EXIT_OK && !healthy)
		rc = CTL_EXIT_REFUSED;
	return rc;
}

static void add_job_row(struct ctl_table *t, const json_t *job)
{
	char id[32], pid[32], started[32], sps[32], cfg[512];
	const json_t *latest = json_object_get(job, "latest");
	const char *row[8] = {
		ctl_fmt_scalar(json_object_get(job, "id"), id, sizeof(id)),
		json_string_value(json_object_get(job, "workload")),
		json_string_value(json_object_get(job, "state")),
		json_string_value(json_object_get(job, "external_id")),
		ctl_fmt_scalar(json_object_get(job, "pid"), pid, sizeof(pid)),
		ctl_fmt_time(json_object_get(job, "started"), started, sizeof(started)),
		ctl_fmt_scalar(json_object_get(latest, "samples_per_s"), sps, sizeof(sps)),
		ctl_fmt_object(json_object_get(job, "config"), cfg, sizeof(cfg))};

	ctl_table_add(t, row);
}

static int cmd_jobs(const struct ctl *c)
{
	static const char *const hdr[] = {"ID", "WORKLOAD", "STATE", "EXTERNAL", "PID", "STARTED",
					  "SAMPLES/S", "CONFIG"};
	static const struct ctl_listing listing = {"jobs", 8, hdr, add_job_row};
	const char *state = c->state ? c->state : "running";
	char path[128], empty[64];

	snprintf(path, sizeof(path), "/api/v1/jobs?state=%s", state);
	/* The other states are adjectives; "no all jobs" is not English. */
	if (strcmp(state, "all") == 0)
		snprintf(empty, sizeof(empty), "no jobs");
	else
		snprintf(empty, sizeof(empty), "no %s jobs", state);
	return print_listing(c, path, &listing, empty);
}

static void print_trials(const json_t *trials)
{
	static const char *const hdr[] = {"PHASE", "CONFIG", "N", "MEAN", "STD"};
	struct ctl_table t;
	json_t *tr;
	size_t i;

	if (!json_is_array(trials) || json_array_size(trials) == 0 || ctl_table_init(&t, 5, hdr) < 0)
		return;
	printf("\n");
	json_array_foreach(trials, i, tr) {
		char cfg[512], n[32], mean[32], sd[32];
		const char *row[5] = {
			json_string_value(json_object_get(tr, "phase")),
			ctl_fmt_object(json_object_get(tr, "config"), cfg, sizeof(cfg)),
			ctl_fmt_scalar(json_object_get(tr, "n"), n, sizeof(n)),
			ctl_fmt_scalar(json_object_get(tr, "mean"), mean, sizeof(mean)),
			ctl_fmt_scalar(json_object_get(tr, "std"), sd, sizeof(sd))};
		ctl_table_add(&t, row);
	}
	ctl_table_print(&t, stdout);
	ctl_table_free(&t);
}

static int cmd_job(const struct ctl *c, const char *arg)
{
	static const char *const times[] = {"started", "ended"};
	json_t *job, *v;
	const char *key;
	char path[64], buf[1024];
	long long id;
	int rc = resolve_job(c, arg, &id);

	if (rc != CTL_EXIT_OK)
		return rc;
	snprintf(path, sizeof(path), "/api/v1/jobs/%lld", id);
	rc = get_answer(c, path, &job);
	if (rc != CTL_EXIT_OK || !job)
		return rc;
	json_object_foreach(job, key, v) {
		if (json_is_array(v))
			continue;   /* trials and phases: tables below */
		if (strcmp(key, times[0]) == 0 || strcmp(key, times[1]) == 0)
			ctl_fmt_time(v, buf, sizeof(buf));
		else
			fmt_value(v, buf, sizeof(buf));
		ctl_print_field(key, buf, CTL_FIELD_WIDTH);
	}
	print_trials(json_object_get(job, "trials"));
	json_decref(job);
	return CTL_EXIT_OK;
}

/* The best config of a workload entry: {"best": {"config": {...}}} or {"best": {...}}. */
static const json_t *workload_best(const json_t *w)
{
	static const char *const names[] = {"best", "best_config", "config", NULL};
	const json_t *best = ctl_get_any(w, names);
	const json_t *cfg = json_object_get(best, "config");

	return json_is_object(cfg) ? cfg : best;
}

static void add_workload_row(struct ctl_table *t, const json_t *w)
{
	static const char *const name_keys[] = {"name", "workload", NULL};
	static const char *const trial_keys[] = {"trials", "n_trials", "trial_count", NULL};
	char name[160], params[256], best[512], conf[32], trials[32];
	const json_t *tr = ctl_get_any(w, trial_keys);
	const char *row[6] = {
		ctl_fmt_scalar(ctl_get_any(w, name_keys), name, sizeof(name)),
		ctl_fmt_object(json_object_get(w, "params"), params, sizeof(params)),
		json_string_value(json_object_get(w, "objective")),
		ctl_fmt_object(workload_best(w), best, sizeof(best)),
		ctl_fmt_scalar(json_object_get(w, "confidence"), conf, sizeof(conf)),
		/* trials may be a count or the list of them */
		json_is_array(tr) ? (snprintf(trials, sizeof(trials), "%zu", json_array_size(tr)), trials)
			: ctl_fmt_scalar(tr, trials, sizeof(trials))};

	ctl_table_add(t, row);
}

static int cmd_workloads(const struct ctl *c)
{
	static const char *const hdr[] = {"WORKLOAD", "PARAMS", "OBJECTIVE", "BEST", "CONFIDENCE",
					  "TRIALS"};
	static const struct ctl_listing listing = {"workloads", 6, hdr, add_workload_row};

	return print_listing(c, "/api/v1/workloads", &listing, "no workloads yet");
}

/* Whether a cluster answer's view is worth printing: read within 5 s, or the link is down. */
static bool cluster_view_fresh(const json_t *answer)
{
	const json_t *as_of = json_object_get(answer, "as_of");

	if (!json_is_true(json_object_get(json_object_get(answer, "cluster"), "connected")))
		return true;
	return json_is_number(as_of) && (double)time(NULL) - json_number_value(as_of) <= 5.0;
}

static int cmd_cluster(const struct ctl *c, const char *workload)
{
	static const char base[] = "/api/v1/cluster/workloads/";
	json_t *answer = NULL;
	char *path = NULL, *name = workload ? ctl_escape(workload) : NULL;
	int rc;

	if (workload && (!name || !(path = malloc(sizeof(base) + strlen(name))))) {
		free(name);
		return CTL_EXIT_BAD_REPLY;
	}
	if (path)
		snprintf(path, sizeof(base) + strlen(name), "%s%s", base, name);
	rc = ctl_call(c, "GET", path ? path : "/api/v1/cluster/workloads", NULL, &answer, NULL);
	/* The daemon reads the view when asked: ask again until it is fresh, for up to 3 s. */
	for (int tries = 0; rc == CTL_EXIT_OK && answer && !cluster_view_fresh(answer) && tries < 12; tries++) {
		struct timespec wait = {0, 250000000};
		json_decref(answer);
		answer = NULL;
		nanosleep(&wait, NULL);
		rc = ctl_call(c, "GET", path ? path : "/api/v1/cluster/workloads", NULL, &answer, NULL);
	}
	free(path);
	free(name);
	if (rc != CTL_EXIT_OK || !answer)
		return rc;
	if (c->json)
		print_json(answer);
	else if (ctl_print_cluster(stdout, answer) < 0)
		rc = CTL_EXIT_BAD_REPLY;
	json_decref(answer);
	return rc;
}

/* Builds "/api/v1/recommend?workload=W&k=v...&format=F"; NULL on a bad K=V. */
static char *recommend_path(const char *workload, char **kv, int nkv, const char *format)
{
	size_t cap = 64, off;
	char *path, *w = ctl_escape(workload);

	for (int i = 0; i < nkv; i++)
		cap += 3 * strlen(kv[i]) + 2;
	cap += w ? 3 * strlen(workload) : 0;
	path = malloc(cap);
	if (!w || !path)
		goto fail;
	off = (size_t)snprintf(path, cap, "/api/v1/recommend?workload=%s&format=%s", w,
			       format ? format : "json");
	for (int i = 0; i < nkv; i++) {
		char *eq = strchr(kv[i], '='), *k, *v;
		if (!eq || eq == kv[i]) {
			usage_error("'%s' is not NAME=VALUE", kv[i]);
			goto fail;
		}
		*eq = '\0';
		k = ctl_escape(kv[i]);
		v = ctl_escape(eq + 1);
		*eq = '=';
		if (k && v)
			off += (size_t)snprintf(path + off, cap - off, "&%s=%s", k, v);
		free(k);
		free(v);
		if (!k || !v)
			goto fail;
	}
	free(w);
	return path;
fail:
	free(w);
	free(path);
	return NULL;
}

static int cmd_recommend(const struct ctl *c, const char *workload, char **kv, int nkv)
{
	static const char *const hdr[] = {"KNOB", "VALUE"};
	const char *format = c->format ? c->format : c->json ? "json" : NULL;
	struct ctl_reply raw;
	json_t *rec, *cfg, *v;
	const char *key;
	char *path;
	int rc;

	if (format && strcmp(format, "env") != 0 && strcmp(format, "json") != 0)
		return usage_error("--format %s: use env or json", format);
	path = recommend_path(workload, kv, nkv, format && strcmp(format, "env") == 0 ? "env" : "json");
	if (!path)
		return CTL_EXIT_USAGE;
	if (format) {
		/* env and json: the daemon's text, as it sent it. */
		rc = ctl_call(c, "GET", path, NULL, NULL, &raw);
		free(path);
		if (rc == CTL_EXIT_OK) {
			fputs(raw.body, stdout);
			if (raw.len && raw.body[raw.len - 1] != '\n')
				putchar('\n');
			ctl_reply_free(&raw);
		}
		return rc;
	}
	rc = ctl_call(c, "GET", path, NULL, &rec, NULL);
	free(path);
	if (rc != CTL_EXIT_OK)
		return rc;
	json_object_foreach(rec, key, v) {
		char buf[512];
		if (strcmp(key, "config") == 0 || json_is_object(v) || json_is_array(v))
			continue;
		ctl_print_field(key, ctl_fmt_scalar(v, buf, sizeof(buf)), CTL_FIELD_WIDTH);
	}
	/* Source other_class: which class's measurements the config was read from. */
	v = json_object_get(rec, "other_class");
	if (json_is_object(v)) {
		char buf[512];
		snprintf(buf, sizeof(buf), "%s (%" JSON_INTEGER_FORMAT " whole-job trials there)",
			 json_string_value(json_object_get(v, "hw_class")) ? json_string_value(json_object_get(v, "hw_class"))
									    : "?",
			 json_integer_value(json_object_get(v, "trials")));
		ctl_print_field("from_class", buf, CTL_FIELD_WIDTH);
	}
	cfg = json_object_get(rec, "config");
	if (json_is_object(cfg)) {
		struct ctl_table t;
		if (ctl_table_init(&t, 2, hdr) == 0) {
			json_object_foreach(cfg, key, v) {
				char buf[512];
				const char *row[2] = {key, fmt_value(v, buf, sizeof(buf))};
				ctl_table_add(&t, row);
			}
			printf("\n");
			ctl_table_print(&t, stdout);
			ctl_table_free(&t);
		}
	}
	ctl_print_goodput(stdout, json_object_get(rec, "goodput"));
	json_decref(rec);
	return CTL_EXIT_OK;
}

/* Samples {"t","name","value"[,"phase"]} from NAME=VALUE arguments. */
static int report_samples(const struct ctl *c, char **kv, int nkv, json_t *samples)
{
	struct timeval tv;
	double now;

	gettimeofday(&tv, NULL);
	now = (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
	for (int i = 0; i < nkv; i++) {
		char *eq = strchr(kv[i], '='), *end;
		json_t *s;
		double value;

		if (!eq || eq == kv[i])
			return usage_error("'%s' is not NAME=VALUE", kv[i]);
		errno = 0;
		value = strtod(eq + 1, &end);
		if (errno || end == eq + 1 || *end)
			return usage_error("'%s': the value is not a number", kv[i]);
		s = json_pack("{s:f, s:s%, s:f}", "t", now, "name", kv[i], (size_t)(eq - kv[i]),
			      "value", value);
		if (s && c->phase)
			json_object_set_new(s, "phase", json_string(c->phase));
		if (!s || json_array_append_new(samples, s) < 0)
			return CTL_EXIT_BAD_REPLY;
	}
	return CTL_EXIT_OK;
}

static int cmd_report(const struct ctl *c, const char *arg, char **kv, int nkv)
{
	json_t *samples = json_array(), *body = NULL, *answer = NULL;
	char path[80], buf[512];
	long long id;
	int rc;

	if (!samples)
		return CTL_EXIT_BAD_REPLY;
	rc = report_samples(c, kv, nkv, samples);
	if (rc == CTL_EXIT_OK)
		rc = resolve_job(c, arg, &id);
	if (rc != CTL_EXIT_OK)
		goto done;
	body = json_pack("{s:o}", "samples", samples);
	samples = NULL;
	snprintf(path, sizeof(path), "/api/v1/jobs/%lld/metrics", id);
	rc = ctl_call(c, "POST", path, body, &answer, NULL);
	if (rc != CTL_EXIT_OK)
		goto done;
	if (c->json) {
		print_json(answer);
	} else {
		printf("accepted %s sample(s) for job %lld\n",
		       ctl_fmt_scalar(json_object_get(answer, "accepted"), buf, sizeof(buf)), id);
		if (json_is_object(json_object_get(answer, "config")))
			printf("config   %s\n", ctl_fmt_object(json_object_get(answer, "config"), buf, sizeof(buf)));
	}
done:
	json_decref(samples);
	json_decref(body);
	json_decref(answer);
	return rc;
}

/* report JOB: the job's diagnosis. */
static int cmd_diagnosis(const struct ctl *c, const char *arg)
{
	json_t *answer = NULL;
	char path[80];
	long long id;
	int rc = resolve_job(c, arg, &id);

	if (rc != CTL_EXIT_OK)
		return rc;
	snprintf(path, sizeof(path), "/api/v1/jobs/%lld/report", id);
	rc = ctl_call(c, "GET", path, NULL, &answer, NULL);
	if (rc == CTL_EXIT_OK && !json_is_array(json_object_get(answer, "verdicts")))
		rc = CTL_EXIT_BAD_REPLY;
	if (rc == CTL_EXIT_OK) {
		if (c->json)
			print_json(answer);
		else
			ctl_print_report(stdout, answer);
	}
	json_decref(answer);
	return rc;
}

/* Ends one job; prints what happened.  Returns an exit code. */
static int end_one(const struct ctl *c, long long id, const json_t *body)
{
	json_t *answer = NULL;
	char path[80];
	int rc;

	snprintf(path, sizeof(path), "/api/v1/jobs/%lld/end", id);
	rc = ctl_call(c, "POST", path, (json_t *)body, &answer, NULL);
	if (rc == CTL_EXIT_OK) {
		if (c->json)
			print_json(answer);
		else
			printf("job %lld ended\n", id);
	}
	json_decref(answer);
	return rc;
}

/*
 * A job an exit status is for: running, or ended in the last ten minutes
 * without one.  Discovery ends a job when its last process is gone, which
 * may be before the Slurm Epilog runs and reports how the job exited.
 */
static bool awaits_exit_status(const json_t *job)
{
	const char *state = json_string_value(json_object_get(job, "state"));
	const json_t *ended = json_object_get(job, "ended");

	if (state && strcmp(state, "running") == 0)
		return true;
	return state && strcmp(state, "ended") == 0 && json_is_null(json_object_get(job, "exit_status")) &&
	       json_is_number(ended) && json_number_value(ended) >= (double)time(NULL) - 600;
}

/* end JOB: an external id ends every running job that carries it (a Slurm
 * job may have registered once per step); with --exit-status, the jobs of
 * it that ended without one get it too. */
static int cmd_end(const struct ctl *c, const char *arg)
{
	long long ids[64], status = 0;
	size_t n = 0;
	json_t *body;
	int rc;

	if (c->exit_status) {
		char *end;
		errno = 0;
		status = strtoll(c->exit_status, &end, 10);
		if (errno || end == c->exit_status || *end)
			return usage_error("--exit-status %s: not a number", c->exit_status);
	}
	ids[0] = parse_job_id(arg);
	if (ids[0]) {
		n = 1;
	} else if (!strchr(arg, ':')) {
		return usage_error("'%s' is not a job id nor an external id (like slurm:123)", arg);
	} else {
		rc = c->exit_status ? find_external(c, arg, "all", awaits_exit_status, ids, 64, &n)
				    : find_external(c, arg, "running", NULL, ids, 64, &n);
		if (rc != CTL_EXIT_OK)
			return rc;
		if (n == 0) {
			fprintf(stderr, "dlprofctl: no running job with external id %s\n", arg);
			return CTL_EXIT_REFUSED;
		}
	}
	body = c->exit_status ? json_pack("{s:I}", "exit_status", (json_int_t)status) : json_object();
	if (!body)
		return CTL_EXIT_BAD_REPLY;
	rc = CTL_EXIT_OK;
	for (size_t i = 0; i < n; i++) {
		int r = end_one(c, ids[i], body);
		if (r != CTL_EXIT_OK)
			rc = r;
	}
	json_decref(body);
	return rc;
}

static void setenv_int_ctl(const char *name, int v)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%d", v);
	setenv(name, buf, 1);
}

/* The command line as one printable string for the registration (at most 4096 bytes). */
static void command_text(char *const *cmd, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (; *cmd && o + 1 < len; cmd++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? " " : "", *cmd);
	for (o = 0; buf[o]; o++)
		if ((unsigned char)buf[o] < 0x20 || buf[o] == 0x7f)
			buf[o] = ' ';
}

/*
 * The id the ranks share: the Slurm job inside an allocation (as discovery
 * and the hooks name it), else a fresh run id the ranks read from
 * DLPROF_RUN_ID.
 */
static void run_identity(int slurm, char *ext, size_t len)
{
	char id[40];
	struct timeval tv;

	if (slurm) {
		snprintf(ext, len, "slurm:%s", getenv("SLURM_JOB_ID"));
		return;
	}
	gettimeofday(&tv, NULL);
	snprintf(id, sizeof(id), "%lx-%lx-%x", (unsigned long)tv.tv_sec, (unsigned long)tv.tv_usec,
		 (unsigned)getpid());
	setenv("DLPROF_RUN_ID", id, 1);
	snprintf(ext, len, "run:%s", id);
}

/* Exports the config's variables (the daemon's one mapping) and where the ranks find the daemon and each other. */
static int run_environment(const struct ctl *c, const json_t *answer, int ranks, int slurm, const char *workload)
{
	const char *name;
	json_t *v;
	char host[256];
	int port = ctl_run_free_port();

	json_object_foreach((json_t *)json_object_get(answer, "env"), name, v)
		if (json_is_string(v))
			setenv(name, json_string_value(v), 1);
	setenv("DLPROF_WORKLOAD", workload, 1);
	if (c->target.socket)
		setenv("DLPROF_SOCKET", c->target.socket, 1);
	else
		setenv("DLPROF_URL", c->target.url, 1);
	if (ranks == 1 && !slurm) {
		/* One process: the client reports for this job rather than joining it as a rank. */
		snprintf(host, sizeof(host), "%lld", (long long)json_integer_value(json_object_get(answer, "id")));
		setenv("DLPROF_JOB", host, 1);
	}
	/* env:// wants a rendezvous for one rank too. */
	if (port < 0) {
		fprintf(stderr, "dlprofctl run: no free port for MASTER_PORT\n");
		return -1;
	}
	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "127.0.0.1");
	/* The rendezvous is where dlprofctl runs: the allocation's first node under sbatch. */
	setenv("MASTER_ADDR", slurm ? host : "127.0.0.1", 1);
	setenv_int_ctl("MASTER_PORT", port);
	return 0;
}

/* What it chose and why, on stderr (the command's stdout stays its own). */
static void run_explain(const json_t *answer, int ranks, int slurm, const char *why_ranks)
{
	char buf[1024];
	const char *name;
	json_t *v;

	fprintf(stderr, "dlprofctl run: job %lld, workload %s: %d rank%s %s (%s)\n",
		(long long)json_integer_value(json_object_get(answer, "id")),
		json_string_value(json_object_get(answer, "workload")), ranks, ranks == 1 ? "" : "s",
		slurm ? "under srun" : "on this node", why_ranks);
	fprintf(stderr, "dlprofctl run: config %s (the daemon's choice for this job at registration)\n",
		ctl_fmt_object(json_object_get(answer, "config"), buf, sizeof(buf)));
	json_object_foreach((json_t *)json_object_get(answer, "env"), name, v)
		fprintf(stderr, "dlprofctl run:   %s=%s\n", name, json_string_value(v));
	if ((v = json_object_get(json_object_get(answer, "gpu_pick"), "reason")))
		fprintf(stderr, "dlprofctl run: GPUs: %s\n", json_string_value(v));
}

/* Ranks per node worth trying: powers of two up to the CPUs this process may use. */
static json_t *rank_values(void)
{
	json_t *v = json_array();
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		cpus = CPU_COUNT(&set);
	for (long n = 1; n <= cpus && n <= 256; n *= 2)
		json_array_append_new(v, json_integer(n));
	return v;
}

/*
 * run: registers the job (the answer carries its config and the variables
 * that config sets), starts COMMAND as its ranks with those variables,
 * waits, ends the job with their exit status and exits with it.  The ranks'
 * dlprof sessions join the job by its shared id.
 */
static int cmd_run(const struct ctl *c, char *const *cmd)
{
	const char *nt = getenv("SLURM_NTASKS");
	int slurm = getenv("SLURM_JOB_ID") != NULL && getenv("SLURM_STEP_ID") == NULL;
	int ranks = c->ranks, rc, status;
	char workload[128], ext[96], *command = malloc(4096);
	const char *why_ranks = "--ranks", *gpus, *declared;
	json_t *answer = NULL, *body, *knobs = NULL;

	if (!command)
		return CTL_EXIT_BAD_REPLY;
	if (ranks == 0) {
		ranks = slurm && nt ? atoi(nt) : 1;
		why_ranks = slurm && nt ? "the allocation's SLURM_NTASKS" : "no --ranks given";
	}
	if (ranks == 0)
		ranks = 1;
	run_identity(slurm, ext, sizeof(ext));
	command_text(cmd, command, 4096);
	body = json_pack("{s:s, s:I, s:s, s:s}", "workload",
			 c->workload ? c->workload : ctl_run_workload(cmd, workload, sizeof(workload)), "pid",
			 (json_int_t)getpid(), "external_id", ext, "command", command);
	free(command);
	/* Inside an allocation the daemon picks idle GPUs among those Slurm gave (job_env.h). */
	if (!(gpus = getenv("SLURM_STEP_GPUS")) || !*gpus)
		gpus = getenv("SLURM_JOB_GPUS");
	if (body && gpus && *gpus)
		json_object_set_new(body, "gpus_allowed", json_string(gpus));
	/* The knobs DLPROF_KNOBS declares, as the client sends them for a job that declares none. */
	if ((declared = getenv("DLPROF_KNOBS")) && *declared)
		knobs = json_loads(declared, 0, NULL);
	if (declared && *declared && !json_is_object(knobs)) {
		fprintf(stderr, "dlprofctl run: ignoring DLPROF_KNOBS: not a JSON object\n");
		json_decref(knobs);
		knobs = NULL;
	}
	/* Ranks are the job's to choose when nothing fixes them: a static knob the tuner tunes with the threads per rank. */
	if (ranks < 0 && (knobs || (knobs = json_object())))
		json_object_set_new(knobs, "ranks", json_pack("{s:o, s:b}", "values", rank_values(), "runtime", 0));
	if (knobs && body)
		json_object_set(body, "knobs", knobs);
	json_decref(knobs);
	rc = ctl_call(c, "POST", "/api/v1/jobs", body, &answer, NULL);
	json_decref(body);
	if (rc != CTL_EXIT_OK)
		return rc;
	if (ranks < 0) {
		json_t *r = json_object_get(json_object_get(answer, "config"), "ranks");
		ranks = json_is_integer(r) && json_integer_value(r) >= 1 ? (int)json_integer_value(r) : 1;
		why_ranks = json_is_integer(r) ? "the daemon's choice of the ranks knob" : "no --ranks given";
	}
	if (run_environment(c, answer, ranks, slurm, json_string_value(json_object_get(answer, "workload"))) < 0) {
		json_decref(answer);
		return CTL_EXIT_BAD_REPLY;
	}
	run_explain(answer, ranks, slurm, why_ranks);
	/* Without the client the command still runs, with the config's variables. */
	(void)ctl_run_bootstrap(cmd);
	status = ctl_run_ranks(cmd, slurm && c->ranks == 0 ? 0 : ranks, slurm);
	body = json_pack("{s:i}", "exit_status", status < 0 ? 127 : status);
	snprintf(ext, sizeof(ext), "/api/v1/jobs/%lld/end", (long long)json_integer_value(json_object_get(answer, "id")));
	/* The ranks' own ends may have ended it already; this records the launcher's status. */
	ctl_call(c, "POST", ext, body, NULL, NULL);
	json_decref(body);
	json_decref(answer);
	return status < 0 ? 127 : status;
}

/*
 * export JOB: the record the dashboard downloads, to standard output or
 * --output.  A long job's record takes the daemon a while: two minutes
 * unless --timeout says otherwise.
 */
static int cmd_export(const struct ctl *c, const char *arg)
{
	struct ctl_reply reply;
	struct ctl slow = *c;
	char path[512], why[600];
	long long id;
	int rc = resolve_job(c, arg, &id);

	if (rc != CTL_EXIT_OK)
		return rc;
	if (ctl_export_path(id, &c->export, time(NULL), path, sizeof(path), why, sizeof(why)) < 0)
		return usage_error("%s", why);
	if (!c->timeout_given)
		slow.target.timeout_ms = 120000;
	if ((rc = ctl_call(&slow, "GET", path, NULL, NULL, &reply)) != CTL_EXIT_OK)
		return rc;
	if (ctl_export_write(&c->export, reply.body, reply.len, why, sizeof(why)) < 0) {
		fprintf(stderr, "dlprofctl: export: %s\n", why);
		rc = CTL_EXIT_BAD_REPLY;
	} else if (c->export.output && strcmp(c->export.output, "-") != 0) {
		fprintf(stderr, "dlprofctl: job %lld's record written to %s (%zu bytes)\n", id, c->export.output, reply.len);
	}
	ctl_reply_free(&reply);
	return rc;
}

/* Chooses the transport: flags, then DLPROF_SOCKET/DLPROF_URL, then the default socket if present. */
static int choose_target(struct ctl *c, const char *url, const char *sock)
{
	struct stat st;

	if (!url && !sock) {
		sock = getenv("DLPROF_SOCKET");
		if (!sock || !*sock) {
			sock = NULL;
			url = getenv("DLPROF_URL");
			if (!url || !*url)
				url = NULL;
		}
	}
	if (!url && !sock)
		sock = stat(CTL_DEFAULT_SOCKET, &st) == 0 ? CTL_DEFAULT_SOCKET : NULL;
	if (!url && !sock)
		url = CTL_DEFAULT_URL;
	c->target.socket = sock;
	if (url) {
		size_t n;
		snprintf(c->url_buf, sizeof(c->url_buf), "%s%s",
			 strstr(url, "://") ? "" : "http://", url);
		n = strlen(c->url_buf);
		while (n > 0 && c->url_buf[n - 1] == '/')
			c->url_buf[--n] = '\0';
		c->target.url = c->url_buf;
	}
	if (!c->target.token) {
		const char *tok = getenv("DLPROF_TOKEN");
		c->target.token = tok && *tok ? tok : NULL;
	}
	return CTL_EXIT_OK;
}

static int parse_timeout(struct ctl *c, const char *arg)
{
	char *end;
	double s;

	errno = 0;
	s = strtod(arg, &end);
	if (errno || end == arg || *end || !(s > 0) || s > 3600)
		return usage_error("--timeout %s: seconds between 0 and 3600", arg);
	c->target.timeout_ms = (long)(s * 1000.0 + 0.5);
	c->timeout_given = 1;
	if (c->target.timeout_ms < 1)
		c->target.timeout_ms = 1;
	return CTL_EXIT_OK;
}

enum { OPT_TOKEN = 1000, OPT_STATE, OPT_ALL, OPT_WORKLOAD, OPT_RANKS, OPT_FROM, OPT_TO, OPT_STEP, OPT_CSV };

/* Parses options (anywhere on the line); leaves optind at the command. */
static int parse_options(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{"socket", required_argument, NULL, 's'}, {"url", required_argument, NULL, 'u'},
		{"token", required_argument, NULL, OPT_TOKEN}, {"timeout", required_argument, NULL, 't'},
		{"json", no_argument, NULL, 'j'}, {"format", required_argument, NULL, 'f'},
		{"phase", required_argument, NULL, 'p'}, {"exit-status", required_argument, NULL, 'e'},
		{"state", required_argument, NULL, OPT_STATE}, {"all", no_argument, NULL, OPT_ALL},
		{"workload", required_argument, NULL, OPT_WORKLOAD}, {"ranks", required_argument, NULL, OPT_RANKS},
		{"from", required_argument, NULL, OPT_FROM}, {"to", required_argument, NULL, OPT_TO},
		{"step", required_argument, NULL, OPT_STEP}, {"csv", no_argument, NULL, OPT_CSV},
		{"output", required_argument, NULL, 'o'},
		{"help", no_argument, NULL, 'h'}, {"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	const char *url = NULL, *sock = NULL;
	int o, rc;

	opterr = 0;
	while ((o = getopt_long(argc, argv, ":s:u:t:jf:p:e:o:hV", opts, NULL)) != -1) {
		switch (o) {
		case 's': sock = optarg; break;
		case 'u': url = optarg; break;
		case OPT_TOKEN: c->target.token = optarg; break;
		case 't':
			if ((rc = parse_timeout(c, optarg)) != CTL_EXIT_OK)
				return rc;
			break;
		case 'j': c->json = 1; break;
		case 'f': c->format = optarg; break;
		case 'p': c->phase = optarg; break;
		case 'e': c->exit_status = optarg; break;
		case OPT_STATE: c->state = optarg; break;
		case OPT_ALL: c->state = "all"; break;
		case OPT_WORKLOAD: c->workload = optarg; break;
		case OPT_FROM: c->export.from = optarg; break;
		case OPT_TO: c->export.to = optarg; break;
		case OPT_STEP: c->export.step = optarg; break;
		case OPT_CSV: c->export.csv = 1; break;
		case 'o': c->export.output = optarg; break;
		case OPT_RANKS:
			c->ranks = strcmp(optarg, "auto") == 0 ? -1 : atoi(optarg);
			if (c->ranks == 0 || c->ranks > 4096)
				return usage_error("--ranks %s: a count of 1 to 4096, or auto, is needed", optarg);
			break;
		case 'h': fputs(ctl_usage_text, stdout); return -1;
		case 'V': printf("dlprofctl " PACKAGE_VERSION "\n"); return -1;
		case ':': return usage_error("option %s needs a value", argv[optind - 1]);
		default: return usage_error("unknown option %s", argv[optind - 1]);
		}
	}
	if (url && sock)
		return usage_error("%s", "give --url or --socket, not both");
	return choose_target(c, url, sock);
}

/* Runs the command at argv[0]; argc counts it and its arguments. */
static int run_command(struct ctl *c, int argc, char **argv)
{
	static const char *const commands[] = {"status", "jobs", "job", "workloads", "recommend",
					       "report", "end", "run", "cluster", "export"};
	const char *cmd = argv[0];

	if (strcmp(cmd, "status") == 0 && argc == 1)
		return cmd_status(c);
	if (strcmp(cmd, "jobs") == 0 && argc == 1)
		return cmd_jobs(c);
	if (strcmp(cmd, "job") == 0 && argc == 2)
		return cmd_job(c, argv[1]);
	if (strcmp(cmd, "workloads") == 0 && argc == 1)
		return cmd_workloads(c);
	if (strcmp(cmd, "cluster") == 0 && argc <= 2)
		return cmd_cluster(c, argc == 2 ? argv[1] : NULL);
	if (strcmp(cmd, "recommend") == 0 && argc >= 2)
		return cmd_recommend(c, argv[1], argv + 2, argc - 2);
	if (strcmp(cmd, "report") == 0 && argc == 2)
		return cmd_diagnosis(c, argv[1]);
	if (strcmp(cmd, "report") == 0 && argc >= 3)
		return cmd_report(c, argv[1], argv + 2, argc - 2);
	if (strcmp(cmd, "end") == 0 && argc == 2)
		return cmd_end(c, argv[1]);
	if (strcmp(cmd, "run") == 0 && argc >= 2)
		return cmd_run(c, argv + 1);
	if (strcmp(cmd, "export") == 0 && argc == 2)
		return cmd_export(c, argv[1]);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(cmd, commands[i]) == 0)
			return usage_error("%s: wrong number of arguments", cmd);
	return usage_error("unknown command '%s'", cmd);
}

int main(int argc, char **argv)
{
	struct ctl c = {.target = {.timeout_ms = 5000}};
	int rc = parse_options(&c, argc, argv);

	if (rc < 0)
		return CTL_EXIT_OK;   /* --help, --version */
	if (rc != CTL_EXIT_OK)
		return rc;
	if (optind >= argc)
		return usage_error("%s", "a command is needed");
	if (c.state && strcmp(c.state, "running") && strcmp(c.state, "ended") && strcmp(c.state, "all"))
		return usage_error("--state %s: use running, ended or all", c.state);
	if (ctl_http_init() < 0) {
		fprintf(stderr, "dlprofctl: cannot initialise libcurl\n");
		return CTL_EXIT_BAD_REPLY;
	}
	rc = run_command(&c, argc - optind, argv + optind);
	ctl_http_cleanup();
	return rc;
}
