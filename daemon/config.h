/*
 * The daemon's configuration: one declarative table of keys (name, type,
 * bounds, default, whether SIGHUP may change it), read from an INI file and
 * then from command-line flags, which win.  A configuration is parsed into a
 * fresh struct, validated whole, and only then swapped in.
 */
#ifndef DLPROF_CONFIG_H
#define DLPROF_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#define CONFIG_MAX_LISTEN 8
/* The smallest storage_budget but 0 (none): 1 MiB. */
#define CONFIG_BUDGET_MIN 1048576LL

/*
 * The words that name an enum's values, one table per enum, each ending in
 * {NULL, 0}: the configuration's enum keys and the words of the API that
 * take one of a few values.  Text is turned into the enum where it comes in
 * (a file, a flag, a request) and compared as the enum everywhere after.
 */
struct config_enum {
	const char *name;
	int value;
};

/* read_access: who may call read endpoints. */
enum read_access {
	READ_ACCESS_ANY,     /* anyone who can connect */
	READ_ACCESS_LOCAL,   /* loopback and the Unix socket */
	READ_ACCESS_TOKEN,   /* local, or with the bearer token */
};

/* cluster_updates: how a node hears of other nodes' trials (cluster.c). */
enum cluster_updates {
	CLUSTER_UPDATES_NOTIFY,  /* LISTEN/NOTIFY, a pull within a second; to a few hundred nodes */
	CLUSTER_UPDATES_POLL,    /* a jittered pull every cluster_poll_interval; beyond */
};

/* What the tuner maximises for a workload (a job's "objective", recommend's objective=). */
enum objective {
	OBJECTIVE_THROUGHPUT,   /* samples (or steps) per second */
	OBJECTIVE_GOODPUT,      /* samples/s x statistical efficiency (Pollux; tuner_goodput.c) */
	OBJECTIVE_EFFICIENCY,   /* throughput per allocated core or GPU */
};

/* A job's state (the jobs table's state, a job's "state" in the API). */
enum job_state {
	JOB_STATE_RUNNING,
	JOB_STATE_ENDED,
};

/* Which jobs a list holds (GET /api/v1/jobs?state=): those of one state, or all. */
enum job_filter {
	JOB_FILTER_RUNNING = JOB_STATE_RUNNING,
	JOB_FILTER_ENDED = JOB_STATE_ENDED,
	JOB_FILTER_ALL,
};

extern const struct config_enum config_read_access_names[];
extern const struct config_enum config_log_level_names[];   /* values: enum log_level */
extern const struct config_enum config_objective_names[];
extern const struct config_enum config_cluster_updates_names[];
extern const struct config_enum config_job_state_names[];
extern const struct config_enum config_job_filter_names[];

/* An objective's name as the API and the store give it: throughput when NULL or unknown. */
enum objective config_objective(const char *name);
const char *config_objective_name(enum objective o);

/* The value table gives name, or -1 (name NULL or not in it). */
int config_enum_value(const struct config_enum *table, const char *name);
/* The name table gives value, or NULL. */
const char *config_enum_name(const struct config_enum *table, int value);

struct config {
	char *listen[CONFIG_MAX_LISTEN]; /* "ADDR:PORT", "[v6]:PORT" */
	int nlisten;
	char *socket_path;               /* "" disables the Unix socket */
	bool socket_given;               /* socket set by the file or a flag, not the default */
	char *db_path;
	char *web_root;
	double interval_s;
	double store_interval_s;      /* per-thread detail is read this often */
	double discovery_interval_s;  /* all processes scanned this often */
	int log_level;                   /* enum log_level */
	double retention_days;           /* per-second data (sampled points, reported seconds) */
	double raw_hours;                /* reported points as sent, where a second holds several */
	long long storage_budget;        /* bytes on disk for the database; 0: none */
	char *token;                     /* "" : no token, remote mutations refused */
	char *token_file;
	enum read_access read_access;
	long max_body_bytes;
	long max_samples;
	long http_threads;
	long max_connections;
	long connection_timeout_s;
	long max_connections_per_ip;
	double ingest_rate;
	double ingest_burst;
	long queue_limit;
	char *cluster_store;             /* libpq conninfo; "": no cluster store */
	char *cluster_node;              /* "": the hostname */
	char *hw_class;                  /* "": derived from the hardware (node.c) */
	long cluster_outbox_limit;
	enum cluster_updates cluster_updates;
	double cluster_poll_interval_s;
	double gain_threshold;
	double diag_sustain_s;           /* the diagnosis' thresholds (diag_rules.h) */
	double diag_lookback_s;
	double diag_underuse_share, diag_gpu_idle_percent, diag_oversub_ratio;
	double diag_input_share, diag_comm_share, diag_checkpoint_share, diag_mtbf_hours;
	double diag_memory_share, diag_major_faults, diag_imbalance_ratio;
	double diag_ipc_low, diag_ipc_high, diag_llc_mpki, diag_peak_flops, diag_peak_bandwidth;
	char *proc_root;
	char *sys_root;
	bool foreground;
	char *config_path;               /* the file it came from */
};

enum config_result {
	CONFIG_OK = 0,
	CONFIG_EXIT_OK = 1,   /* --help or --version printed: exit 0 */
	CONFIG_ERROR = -1,    /* a bad value or option, already reported: exit 2 */
};

/*
 * Builds a configuration from defaults, the INI file (--config or the
 * default path; a missing default file is fine, a missing named one is not)
 * and argv.  Every error is reported to stderr as "file:line: key: message"
 * or "option --key: message"; all are reported before failing.
 */
enum config_result config_load(int argc, char **argv, struct config **out);
/* Re-reads the same file with the same argv for SIGHUP; NULL on error. */
struct config *config_reload(const struct config *old, int argc, char **argv);
void config_free(struct config *cfg);
/* Names of keys whose change needs a restart, listed into buf. */
void config_restart_keys(const struct config *a, const struct config *b, char *buf, size_t len);

#endif
