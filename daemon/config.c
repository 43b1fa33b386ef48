/*
 * Configuration: the table of keys, the INI reader (through inih) and the
 * command-line parser.  Both sources go through config_set(), so a key has
 * one parser and one validator whichever way it arrives.  Errors name the
 * place (file:line or the option) and the key; parsing goes on to report
 * every error, then fails once.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <ini.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

#ifndef DLPROF_SYSCONFDIR
#define DLPROF_SYSCONFDIR "/etc"
#endif
#ifndef DLPROF_DATADIR
#define DLPROF_DATADIR "/usr/share/dlprofd"
#endif

#define CONFIG_DEFAULT_PATH DLPROF_SYSCONFDIR "/dlprofd/dlprofd.conf"

enum key_type { KEY_STRING, KEY_ENUM, KEY_DOUBLE, KEY_LONG, KEY_LISTEN, KEY_SIZE };

struct key {
	const char *name;
	enum key_type type;
	size_t offset;          /* into struct config */
	const char *def;        /* default, as text */
	double min, max;        /* numbers: inclusive bounds */
	const struct config_enum *names; /* KEY_ENUM: its values (stored as an int) */
	bool reloadable;        /* SIGHUP may change it */
	const char *help;
};

#define OFF(f) offsetof(struct config, f)

const struct config_enum config_read_access_names[] = {
	{"any", READ_ACCESS_ANY},
	{"local", READ_ACCESS_LOCAL},
	{"token", READ_ACCESS_TOKEN},
	{NULL, 0},
};

const struct config_enum config_cluster_updates_names[] = {
	{"notify", CLUSTER_UPDATES_NOTIFY},
	{"poll", CLUSTER_UPDATES_POLL},
	{NULL, 0},
};

const struct config_enum config_log_level_names[] = {
	{"error", LOG_LEVEL_ERR},
	{"warning", LOG_LEVEL_WARNING},
	{"info", LOG_LEVEL_INFO},
	{"debug", LOG_LEVEL_DEBUG},
	{NULL, 0},
};

const struct config_enum config_objective_names[] = {
	{"throughput", OBJECTIVE_THROUGHPUT},
	{"goodput", OBJECTIVE_GOODPUT},
	{"efficiency", OBJECTIVE_EFFICIENCY},
	{NULL, 0},
};

const struct config_enum config_job_state_names[] = {
	{"running", JOB_STATE_RUNNING},
	{"ended", JOB_STATE_ENDED},
	{NULL, 0},
};

const struct config_enum config_job_filter_names[] = {
	{"running", JOB_FILTER_RUNNING},
	{"ended", JOB_FILTER_ENDED},
	{"all", JOB_FILTER_ALL},
	{NULL, 0},
};

int config_enum_value(const struct config_enum *table, const char *name)
{
	for (; name && table->name; table++)
		if (strcmp(table->name, name) == 0)
			return table->value;
	return -1;
}

const char *config_enum_name(const struct config_enum *table, int value)
{
	for (; table->name; table++)
		if (table->value == value)
			return table->name;
	return NULL;
}

enum objective config_objective(const char *name)
{
	int v = config_enum_value(config_objective_names, name);

	return v < 0 ? OBJECTIVE_THROUGHPUT : (enum objective)v;
}

const char *config_objective_name(enum objective o)
{
	return config_enum_name(config_objective_names, (int)o);
}

static const struct key keys[] = {
	{"listen", KEY_LISTEN, OFF(listen), "0.0.0.0:8080", 0, 0, NULL, false,
	 "ADDR:PORT to serve HTTP on; repeatable; IPv6 as [::1]:8080"},
	{"socket", KEY_STRING, OFF(socket_path), "/run/dlprofd/dlprofd.sock", 0, 0, NULL, false,
	 "Unix socket serving the same API (\"\" disables)"},
	{"db", KEY_STRING, OFF(db_path), "/var/lib/dlprofd/dlprofd.db", 0, 0, NULL, false,
	 "SQLite database file"},
	{"web_root", KEY_STRING, OFF(web_root), DLPROF_DATADIR "/web", 0, 0, NULL, false,
	 "directory of the dashboard's static files"},
	{"interval", KEY_DOUBLE, OFF(interval_s), "1.0", 0.01, 3600, NULL, true,
	 "sampling period in seconds (fractions allowed)"},
	{"store_interval", KEY_DOUBLE, OFF(store_interval_s), "10", 0.01, 3600, NULL, true,
	 "seconds between reads of per-thread figures and counters (never below interval)"},
	{"discovery_interval", KEY_DOUBLE, OFF(discovery_interval_s), "30", 0.01, 3600, NULL, true,
	 "seconds between scans of all processes for new job members (new jobs and exits: at once)"},
	{"log_level", KEY_ENUM, OFF(log_level), "info", 0, 0, config_log_level_names, true,
	 "lines above this level are dropped"},
	{"retention_days", KEY_DOUBLE, OFF(retention_days), "14", 0.001, 36500, NULL, true,
	 "days every sampled value and each second of reported ones is kept before per-minute summaries"},
	{"raw_hours", KEY_DOUBLE, OFF(raw_hours), "24", 0.01, 876000, NULL, true,
	 "hours a job's points reported more than once a second are kept as sent before per-second summaries"},
	{"storage_budget", KEY_SIZE, OFF(storage_budget), "1G", 0, 1125899906842624.0, NULL, true,
	 "bytes the database may take on disk (K, M, G, T: powers of 1024; 0: no budget); oldest, finest history goes first"},
	{"token", KEY_STRING, OFF(token), "", 0, 0, NULL, true,
	 "bearer token that allows mutations from non-local addresses"},
	{"token_file", KEY_STRING, OFF(token_file), "", 0, 0, NULL, true,
	 "file whose first line is the token (keeps it out of the config)"},
	{"read_access", KEY_ENUM, OFF(read_access), "any", 0, 0, config_read_access_names, true,
	 "who may call read endpoints"},
	{"max_body_bytes", KEY_LONG, OFF(max_body_bytes), "8388608", 1024, 1073741824, NULL, false,
	 "largest request body accepted (413 beyond)"},
	{"max_samples", KEY_LONG, OFF(max_samples), "10000", 1, 1000000, NULL, true,
	 "samples accepted in one ingest request"},
	{"http_threads", KEY_LONG, OFF(http_threads), "4", 1, 256, NULL, false,
	 "HTTP worker threads per listener"},
	{"max_connections", KEY_LONG, OFF(max_connections), "1024", 1, 65536, NULL, false,
	 "concurrent connections per listener"},
	{"connection_timeout", KEY_LONG, OFF(connection_timeout_s), "30", 1, 3600, NULL, false,
	 "seconds an idle connection is kept"},
	{"max_connections_per_ip", KEY_LONG, OFF(max_connections_per_ip), "64", 0, 65536, NULL, false,
	 "connections one non-local address may hold (0: no limit)"},
	{"ingest_rate", KEY_DOUBLE, OFF(ingest_rate), "1000", 0, 1000000, NULL, false,
	 "changes (ingest, registration, end) per second per client before 429 (0: no limit)"},
	{"ingest_burst", KEY_DOUBLE, OFF(ingest_burst), "2000", 1, 10000000, NULL, false,
	 "changes a client may send at once above ingest_rate"},
	{"queue_limit", KEY_LONG, OFF(queue_limit), "4096", 1, 1048576, NULL, false,
	 "write operations queued before ingest answers 503"},
	{"cluster_store", KEY_STRING, OFF(cluster_store), "", 0, 0, NULL, false,
	 "libpq conninfo or postgresql:// URI of the shared store (\"\": this node learns alone)"},
	{"cluster_node", KEY_STRING, OFF(cluster_node), "", 0, 0, NULL, false,
	 "this node's name in the shared store (\"\": its hostname)"},
	{"hw_class", KEY_STRING, OFF(hw_class), "", 0, 0, NULL, false,
	 "this node's hardware class: whose trials it learns from (\"\": derived, e.g. x86_64-epyc-2c-1numa-0gpu)"},
	{"cluster_outbox_limit", KEY_LONG, OFF(cluster_outbox_limit), "100000", 1, 100000000, NULL, false,
	 "trials kept for the shared store while it is away; older ones are dropped beyond"},
	{"cluster_updates", KEY_ENUM, OFF(cluster_updates), "notify", 0, 0, config_cluster_updates_names, false,
	 "notify: LISTEN and pull within a second (to a few hundred nodes); poll: pull every cluster_poll_interval"},
	{"cluster_poll_interval", KEY_DOUBLE, OFF(cluster_poll_interval_s), "5", 0.5, 3600, NULL, false,
	 "seconds between pulls when nothing is notified (poll: between all pulls, each drawn from 0.8x to 1.2x)"},
	{"gain_threshold", KEY_DOUBLE, OFF(gain_threshold), "0.01", 0, 1, NULL, false,
	 "exploration stops when the expected gain is below this"},
	{"diag_sustain", KEY_DOUBLE, OFF(diag_sustain_s), "60", 0.01, 86400, NULL, true,
	 "seconds a verdict's condition must hold before it is reported, and be gone before it is cleared"},
	{"diag_lookback", KEY_DOUBLE, OFF(diag_lookback_s), "3600", 1, 2592000, NULL, true,
	 "seconds of a running job's past its diagnosis looks at"},
	{"diag_underuse_share", KEY_DOUBLE, OFF(diag_underuse_share), "0.6", 0, 1, NULL, true,
	 "a job wanting less than this share of its allowed CPUs (2 or more) underuses them"},
	{"diag_gpu_idle_percent", KEY_DOUBLE, OFF(diag_gpu_idle_percent), "20", 0, 100, NULL, true,
	 "a job's GPUs busy less than this percent of the time are idle"},
	{"diag_oversub_ratio", KEY_DOUBLE, OFF(diag_oversub_ratio), "1.5", 1, 1000, NULL, true,
	 "more runnable threads than this many times the allowed CPUs is oversubscribed"},
	{"diag_input_share", KEY_DOUBLE, OFF(diag_input_share), "0.3", 0, 1, NULL, true,
	 "data-loading phases taking this share of the step make a job input-bound"},
	{"diag_comm_share", KEY_DOUBLE, OFF(diag_comm_share), "0.3", 0, 1, NULL, true,
	 "communication phases taking this share of the step make a job communication-bound"},
	{"diag_checkpoint_share", KEY_DOUBLE, OFF(diag_checkpoint_share), "0.1", 0, 1, NULL, true,
	 "checkpoint phases taking this share of the run are reported"},
	{"diag_mtbf_hours", KEY_DOUBLE, OFF(diag_mtbf_hours), "0", 0, 1000000, NULL, true,
	 "mean time between failures for the Young/Daly checkpoint interval (0: not given)"},
	{"diag_memory_share", KEY_DOUBLE, OFF(diag_memory_share), "0.9", 0, 1, NULL, true,
	 "resident memory at this share of the job's memory limit is memory pressure"},
	{"diag_major_faults", KEY_DOUBLE, OFF(diag_major_faults), "100", 0, 1e9, NULL, true,
	 "major page faults per second that are memory pressure (0: not used)"},
	{"diag_imbalance_ratio", KEY_DOUBLE, OFF(diag_imbalance_ratio), "1.5", 1, 1000, NULL, true,
	 "busiest thread over the mean busy thread at which threads are imbalanced"},
	{"diag_ipc_low", KEY_DOUBLE, OFF(diag_ipc_low), "0.7", 0, 100, NULL, true,
	 "IPC below this with many LLC misses is memory-bound"},
	{"diag_ipc_high", KEY_DOUBLE, OFF(diag_ipc_high), "1.5", 0, 100, NULL, true,
	 "IPC at or above this with few LLC misses is compute-bound"},
	{"diag_llc_mpki", KEY_DOUBLE, OFF(diag_llc_mpki), "5", 0, 1000, NULL, true,
	 "LLC misses per 1000 instructions that count as many"},
	{"diag_peak_flops", KEY_DOUBLE, OFF(diag_peak_flops), "0", 0, 1e18, NULL, true,
	 "the node's measured peak FLOP/s (0: not measured)"},
	{"diag_peak_bandwidth", KEY_DOUBLE, OFF(diag_peak_bandwidth), "0", 0, 1e15, NULL, true,
	 "the node's measured peak memory bandwidth in bytes/s (0: not measured)"},
	{"proc_root", KEY_STRING, OFF(proc_root), "/proc", 0, 0, NULL, false,
	 "where procfs is mounted (tests use fixture trees)"},
	{"sys_root", KEY_STRING, OFF(sys_root), "/sys", 0, 0, NULL, false,
	 "where sysfs is mounted"},
};

#define NKEYS (sizeof(keys) / sizeof(keys[0]))

/* Where a value came from, for messages. */
struct origin {
	const char *file;  /* NULL: command line */
	int line;
};

static void report(const struct origin *o, const char *key, const char *fmt, const char *arg)
{
	char what[512];

	snprintf(what, sizeof(what), fmt, arg);
	if (o->file)
		log_err("%s:%d: %s: %s", o->file, o->line, key, what);
	else
		log_err("option --%s: %s", key, what);
}

/*
 * Keys a release read and this one no longer does: a file that still sets
 * one loads (an upgrade must not stop a node's daemon), with a warning.
 * explore_share: exploration follows the expected improvement (tuner_plan.c).
 */
static const char *const retired_keys[] = {"explore_share"};

static bool key_retired(const char *name)
{
	for (size_t i = 0; i < sizeof(retired_keys) / sizeof(retired_keys[0]); i++)
		if (strcmp(retired_keys[i], name) == 0)
			return true;
	return false;
}

static const struct key *key_find(const char *name)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (strcmp(keys[i].name, name) == 0)
			return &keys[i];
	return NULL;
}

/* The names of an enum key's values, as "a|b|c", for messages. */
static void enum_choices(const struct config_enum *names, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (; names->name && off < len; names++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? "|" : "", names->name);
}

/* Checks "host:port" or "[v6]:port" without resolving anything. */
static bool listen_valid(const char *v)
{
	const char *colon;
	char *end;
	long port;

	if (v[0] == '[') {
		const char *close = strchr(v, ']');
		if (!close || close == v + 1 || close[1] != ':')
			return false;
		colon = close + 1;
	} else {
		colon = strrchr(v, ':');
		if (!colon || colon == v || strchr(v, ':') != colon)
			return false;
	}
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	return errno == 0 && *end == '\0' && end != colon + 1 && port >= 0 && port <= 65535;
}

static int set_string(char **slot, const char *value)
{
	char *copy = strdup(value);
	if (!copy)
		return -1;
	free(*slot);
	*slot = copy;
	return 0;
}

static int set_listen(struct config *cfg, const char *value, bool append, const struct origin *o)
{
	if (!append) {
		for (int i = 0; i < cfg->nlisten; i++)
			free(cfg->listen[i]);
		cfg->nlisten = 0;
	}
	if (!listen_valid(value)) {
		report(o, "listen", "'%s' is not ADDR:PORT (IPv6 as [ADDR]:PORT)", value);
		return -1;
	}
	if (cfg->nlisten == CONFIG_MAX_LISTEN) {
		report(o, "listen", "more than %s addresses", "8");
		return -1;
	}
	cfg->listen[cfg->nlisten] = strdup(value);
	if (!cfg->listen[cfg->nlisten])
		return -1;
	cfg->nlisten++;
	return 0;
}

static int parse_number(const struct key *k, const char *value, double *out, const struct origin *o)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(value, &end);
	if (errno != 0 || end == value || *end != '\0' || !isfinite(v)) {
		report(o, k->name, "'%s' is not a number", value);
		return -1;
	}
	if (k->type == KEY_LONG && v != floor(v)) {
		report(o, k->name, "'%s' is not a whole number", value);
		return -1;
	}
	if (v < k->min || v > k->max) {
		char range[96];
		snprintf(range, sizeof(range), "'%s' is outside %g..%g", value, k->min, k->max);
		report(o, k->name, "%s", range);
		return -1;
	}
	*out = v;
	return 0;
}

/*
 * A size: a whole number of bytes, or a number with K, M, G or T (powers
 * of 1024, "KiB" and "KB" alike) after it.
 */
static int parse_size(const struct key *k, const char *value, double *out, const struct origin *o)
{
	static const char units[] = "KMGT";
	char *end;
	const char *u;
	double v;

	errno = 0;
	v = strtod(value, &end);
	if (errno != 0 || end == value || !isfinite(v) || v < 0) {
		report(o, k->name, "'%s' is not a size (bytes, or a number and K, M, G or T)", value);
		return -1;
	}
	if (*end != '\0' && (u = strchr(units, *end >= 'a' ? *end - 'a' + 'A' : *end)) != NULL && *u != '\0') {
		v *= pow(1024, (double)(u - units + 1));
		end++;
		if (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0)
			end += strlen(end);
	}
	if (*end != '\0' || v != floor(v)) {
		report(o, k->name, "'%s' is not a size (bytes, or a number and K, M, G or T)", value);
		return -1;
	}
	if (v < k->min || v > k->max) {
		report(o, k->name, "'%s' is above 1P", value);
		return -1;
	}
	*out = v;
	return 0;
}

/*
 * Sets one key from text.  append: a repeated listen adds to the list
 * instead of replacing it.  Returns 0 or -1 after reporting.
 */
static int config_set(struct config *cfg, const struct key *k, const char *value, bool append,
		      const struct origin *o)
{
	char *base = (char *)cfg;
	double num;
	int ev;

	if (k->offset == OFF(socket_path))
		cfg->socket_given = true;   /* config_defaults() takes it back */
	switch (k->type) {
	case KEY_LISTEN:
		return set_listen(cfg, value, append, o);
	case KEY_ENUM:
		if ((ev = config_enum_value(k->names, value)) < 0) {
			char choices[128];
			enum_choices(k->names, choices, sizeof(choices));
			report(o, k->name, "'%s' is not one of ", value);
			log_err("  allowed: %s", choices);
			return -1;
		}
		*(int *)(base + k->offset) = ev;
		return 0;
	case KEY_STRING:
		return set_string((char **)(base + k->offset), value);
	case KEY_DOUBLE:
		if (parse_number(k, value, &num, o) < 0)
			return -1;
		*(double *)(base + k->offset) = num;
		return 0;
	case KEY_LONG:
		if (parse_number(k, value, &num, o) < 0)
			return -1;
		*(long *)(base + k->offset) = (long)num;
		return 0;
	case KEY_SIZE:
		if (parse_size(k, value, &num, o) < 0)
			return -1;
		*(long long *)(base + k->offset) = (long long)num;
		return 0;
	}
	return -1;
}

static struct config *config_defaults(void)
{
	struct config *cfg = calloc(1, sizeof(*cfg));
	struct origin o = {"(built-in default)", 0};

	if (!cfg)
		return NULL;
	for (size_t i = 0; i < NKEYS; i++) {
		if (config_set(cfg, &keys[i], keys[i].def, false, &o) < 0) {
			config_free(cfg);
			return NULL;
		}
	}
	cfg->socket_given = false;
	return cfg;
}

void config_free(struct config *cfg)
{
	if (!cfg)
		return;
	for (int i = 0; i < cfg->nlisten; i++)
		free(cfg->listen[i]);
	for (size_t i = 0; i < NKEYS; i++) {
		if (keys[i].type == KEY_STRING)
			free(*(char **)((char *)cfg + keys[i].offset));
	}
	free(cfg->config_path);
	free(cfg);
}

/* inih hands us lines through this reader so that errors can say which line. */
struct ini_state {
	FILE *f;
	struct config *cfg;
	struct origin origin;
	bool listen_seen;   /* the file's first listen replaces the default */
	int errors;
};

static char *ini_read_line(char *str, int num, void *stream)
{
	struct ini_state *st = stream;
	char *line = fgets(str, num, st->f);
	if (line)
		st->origin.line++;
	return line;
}

static int ini_on_value(void *user, const char *section, const char *name, const char *value)
{
	struct ini_state *st = user;
	const struct key *k;

	if (section[0] != '\0' && strcmp(section, "dlprofd") != 0) {
		report(&st->origin, name, "unknown section [%s]", section);
		st->errors++;
		return 1;
	}
	k = key_find(name);
	if (!k && key_retired(name)) {
		log_warnx("%s:%d: %s: no longer used by this release; ignored", st->origin.file, st->origin.line, name);
		return 1;
	}
	if (!k) {
		report(&st->origin, name, "unknown key%s", "");
		st->errors++;
		return 1;
	}
	if (config_set(st->cfg, k, value, k->type == KEY_LISTEN && st->listen_seen, &st->origin) < 0)
		st->errors++;
	if (k->type == KEY_LISTEN)
		st->listen_seen = true;
	return 1;   /* keep going: report every error */
}

static int config_read_file(struct config *cfg, const char *path, bool must_exist)
{
	struct ini_state st = {.cfg = cfg, .origin = {path, 0}};
	int rc;

	st.f = fopen(path, "r");
	if (!st.f) {
		if (!must_exist && errno == ENOENT)
			return 0;
		log_err("%s: cannot open configuration: %s", path, strerror(errno));
		return -1;
	}
	rc = ini_parse_stream(ini_read_line, &st, ini_on_value, &st);
	fclose(st.f);
	if (rc > 0) {
		log_err("%s:%d: syntax error", path, rc);
		return -1;
	}
	return st.errors ? -1 : 0;
}

static int config_read_token_file(struct config *cfg)
{
	char line[512];
	FILE *f;

	if (cfg->token_file[0] == '\0')
		return 0;
	f = fopen(cfg->token_file, "r");
	if (!f) {
		log_err("token_file: %s: %s", cfg->token_file, strerror(errno));
		return -1;
	}
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	line[strcspn(line, "\r\n")] = '\0';
	if (line[0] == '\0') {
		log_err("token_file: %s: empty", cfg->token_file);
		return -1;
	}
	return set_string(&cfg->token, line);
}

static void config_usage(FILE *out, const char *prog)
{
	fprintf(out,
		"usage: %s [--foreground] [--config FILE] [--check-config] [--KEY VALUE ...]\n"
		"dlprofd samples deep-learning jobs, learns their best thread/GPU settings\n"
		"and serves them over HTTP.\n\n"
		"  -f, --foreground     stay in the foreground (the only mode; for clarity)\n"
		"  -c, --config FILE    configuration file (default " CONFIG_DEFAULT_PATH ")\n"
		"  -n, --check-config   check the configuration and exit\n"
		"  -h, --help           this text\n"
		"  -V, --version        print the version\n\n"
		"Every configuration key is also an option (underscores as dashes):\n",
		prog);
	for (size_t i = 0; i < NKEYS; i++) {
		char opt[64];
		snprintf(opt, sizeof(opt), "--%s", keys[i].name);
		for (char *p = opt; *p; p++)
			if (*p == '_')
				*p = '-';
		fprintf(out, "  %-22s %s (default \"%s\")\n", opt, keys[i].help, keys[i].def);
	}
}

enum { OPT_KEY_BASE = 1000 };

/* First pass: only --config, --help, --version; the file must load before flags apply. */
static enum config_result config_scan_meta(int argc, char **argv, const char **config_path, bool *check)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			config_usage(stdout, argv[0]);
			return CONFIG_EXIT_OK;
		}
		if (strcmp(a, "--version") == 0 || strcmp(a, "-V") == 0) {
			printf("dlprofd " PACKAGE_VERSION "\n");
			return CONFIG_EXIT_OK;
		}
		if (strcmp(a, "--check-config") == 0 || strcmp(a, "-n") == 0)
			*check = true;
		if ((strcmp(a, "--config") == 0 || strcmp(a, "-c") == 0) && i + 1 < argc)
			*config_path = argv[++i];
		else if (strncmp(a, "--config=", 9) == 0)
			*config_path = a + 9;
	}
	return CONFIG_OK;
}

static int config_apply_flags(struct config *cfg, int argc, char **argv)
{
	struct option opts[NKEYS + 6];
	char names[NKEYS][64];
	bool listen_seen = false;
	int errors = 0, c, n = 0;

	for (size_t i = 0; i < NKEYS; i++) {
		snprintf(names[i], sizeof(names[i]), "%s", keys[i].name);
		for (char *p = names[i]; *p; p++)
			if (*p == '_')
				*p = '-';
		opts[n++] = (struct option){names[i], required_argument, NULL, OPT_KEY_BASE + (int)i};
	}
	opts[n++] = (struct option){"foreground", no_argument, NULL, 'f'};
	opts[n++] = (struct option){"config", required_argument, NULL, 'c'};
	opts[n++] = (struct option){"check-config", no_argument, NULL, 'n'};
	opts[n++] = (struct option){"help", no_argument, NULL, 'h'};
	opts[n++] = (struct option){"version", no_argument, NULL, 'V'};
	opts[n] = (struct option){NULL, 0, NULL, 0};

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":fc:nhV", opts, NULL)) != -1) {
		if (c >= OPT_KEY_BASE) {
			const struct key *k = &keys[c - OPT_KEY_BASE];
			struct origin o = {NULL, 0};
			if (config_set(cfg, k, optarg, k->type == KEY_LISTEN && listen_seen, &o) < 0)
				errors++;
			if (k->type == KEY_LISTEN)
				listen_seen = true;
		} else if (c == 'f') {
			cfg->foreground = true;
		} else if (c == ':') {
			log_err("option %s: needs a value", argv[optind - 1]);
			errors++;
		} else if (c == '?') {
			log_err("option %s: unknown (see --help)", argv[optind - 1]);
			errors++;
		}
	}
	if (optind < argc) {
		log_err("unexpected argument '%s' (see --help)", argv[optind]);
		errors++;
	}
	return errors ? -1 : 0;
}

/* The rules between keys, once each key is valid alone; every broken one reported. */
static int config_validate(const struct config *cfg)
{
	int errors = 0;

	if (cfg->storage_budget > 0 && cfg->storage_budget < CONFIG_BUDGET_MIN) {
		log_err("storage_budget: %lld bytes is below the least a database needs, 1M (0: no budget)",
			cfg->storage_budget);
		errors++;
	}
	return errors ? -1 : 0;
}

static struct config *config_build(int argc, char **argv, const char *path, bool must_exist)
{
	struct config *cfg = config_defaults();
	int errors = 0;

	if (!cfg)
		return NULL;
	cfg->config_path = strdup(path);
	if (!cfg->config_path || config_read_file(cfg, path, must_exist) < 0)
		errors++;
	/* Flags after the file: they win.  Reported even when the file failed. */
	if (config_apply_flags(cfg, argc, argv) < 0)
		errors++;
	if (!errors && config_read_token_file(cfg) < 0)
		errors++;
	if (!errors && config_validate(cfg) < 0)
		errors++;
	if (errors) {
		config_free(cfg);
		return NULL;
	}
	return cfg;
}

enum config_result config_load(int argc, char **argv, struct config **out)
{
	const char *path = NULL;
	bool check = false;
	enum config_result r = config_scan_meta(argc, argv, &path, &check);
	struct config *cfg;

	if (r != CONFIG_OK)
		return r;
	cfg = config_build(argc, argv, path ? path : CONFIG_DEFAULT_PATH, path != NULL);
	if (!cfg)
		return CONFIG_ERROR;
	if (check) {
		printf("configuration ok\n");
		config_free(cfg);
		return CONFIG_EXIT_OK;
	}
	*out = cfg;
	return CONFIG_OK;
}

struct config *config_reload(const struct config *old, int argc, char **argv)
{
	return config_build(argc, argv, old->config_path, strcmp(old->config_path, CONFIG_DEFAULT_PATH) != 0);
}

void config_restart_keys(const struct config *a, const struct config *b, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < NKEYS && off < len; i++) {
		const struct key *k = &keys[i];
		const char *pa = (const char *)a + k->offset, *pb = (const char *)b + k->offset;
		bool differs = false;

		if (k->reloadable)
			continue;
		switch (k->type) {
		case KEY_LISTEN:
			differs = a->nlisten != b->nlisten;
			for (int j = 0; !differs && j < a->nlisten; j++)
				differs = strcmp(a->listen[j], b->listen[j]) != 0;
			break;
		case KEY_STRING:
			differs = strcmp(*(char *const *)pa, *(char *const *)pb) != 0;
			break;
		case KEY_ENUM:
			differs = *(const int *)pa != *(const int *)pb;
			break;
		case KEY_DOUBLE:
			differs = *(const double *)pa != *(const double *)pb;
			break;
		case KEY_LONG:
			differs = *(const long *)pa != *(const long *)pb;
			break;
		case KEY_SIZE:
			differs = *(const long long *)pa != *(const long long *)pb;
			break;
		}
		if (differs)
			off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? ", " : "", k->name);
	}
}
