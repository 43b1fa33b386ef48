/*
 * dlprof SPANK plugin for Slurm: gives each job step the settings dlprofd
 * recommends for its workload and registers the job with the daemon under
 * its Slurm id, from inside slurmstepd (spank_setenv), and ends the job from
 * the job epilog in slurmd.  Option: --dlprof=off|recommend|tune.
 *
 *   plugstack.conf:
 *     optional /usr/lib/.../dlprofd/dlprof_spank.so default=recommend \
 *         socket=/run/dlprofd/dlprofd.sock timeout=1
 *
 * Arguments: default= the mode when the job gives no --dlprof; socket= the
 * daemon's Unix socket, or url= its HTTP address; timeout= seconds per
 * request.  A job is never held up or failed by the plugin: every request
 * has the timeout, every failure is logged at verbose level only, and every
 * callback returns 0.
 *
 * Modes: recommend exports the workload's best known settings
 * (/api/v1/recommend?format=env) and registers the job; tune instead
 * starts the job with the variables of the config the tuner assigns it at
 * registration (the answer's "env", mapped by the daemon as recommend's
 * lines are), which may try other start-time knobs (inter-op threads,
 * affinity, data-loader workers) to learn them across jobs; off does
 * nothing.
 */
#include <slurm/spank.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl_http.h"
#include "spank_json.h"

SPANK_PLUGIN(dlprof, 1);

enum dlprof_mode { MODE_OFF, MODE_RECOMMEND, MODE_TUNE };

/*
 * The plugin's settings from plugstack.conf and the job's --dlprof.  SPANK
 * gives a plugin no handle of its own, so this one static struct owns them;
 * each slurmstepd/slurmd process that loads the plugin has its own copy.
 */
static struct {
	enum dlprof_mode default_mode; /* for jobs without --dlprof */
	char socket[256];             /* "" : use url */
	char url[256];
	long timeout_ms;
} plugin = {MODE_RECOMMEND, "/run/dlprofd/dlprofd.sock", "", 1000};

/* Slurm's step ids for the batch script and the extern (container) step. */
#define DLPROF_BATCH_STEP 0xfffffffbu
#define DLPROF_EXTERN_STEP 0xfffffffcu

static int mode_parse(const char *s, enum dlprof_mode *out)
{
	if (strcmp(s, "off") == 0)
		*out = MODE_OFF;
	else if (strcmp(s, "recommend") == 0)
		*out = MODE_RECOMMEND;
	else if (strcmp(s, "tune") == 0)
		*out = MODE_TUNE;
	else
		return -1;
	return 0;
}

/* Checks the value where the user types it (sbatch, srun); job_mode() reads it. */
static int option_cb(int val, const char *optarg, int remote)
{
	enum dlprof_mode m;

	(void)val;
	(void)remote;
	if (!optarg || mode_parse(optarg, &m) < 0) {
		slurm_error("dlprof: --dlprof=%s: use off, recommend or tune", optarg ? optarg : "");
		return -1;
	}
	return 0;
}

static struct spank_option dlprof_option = {
	"dlprof", "off|recommend|tune",
	"dlprofd: start with the recommended settings (recommend), let the tuner "
	"choose them (tune), or leave the job alone (off)",
	1, 0, option_cb,
};

/*
 * Reads plugstack.conf arguments, which every callback receives: the job
 * epilog runs in a process of its own where slurm_spank_init() was not
 * called.  A bad argument is logged and ignored.
 */
static void parse_args(int ac, char **av)
{
	for (int i = 0; i < ac; i++) {
		const char *a = av[i];
		if (strncmp(a, "default=", 8) == 0 && mode_parse(a + 8, &plugin.default_mode) == 0)
			continue;
		if (strncmp(a, "socket=", 7) == 0) {
			snprintf(plugin.socket, sizeof(plugin.socket), "%s", a + 7);
		} else if (strncmp(a, "url=", 4) == 0) {
			snprintf(plugin.url, sizeof(plugin.url), "%s", a + 4);
			plugin.socket[0] = '\0';
		} else if (strncmp(a, "timeout=", 8) == 0 && atof(a + 8) > 0) {
			plugin.timeout_ms = (long)(atof(a + 8) * 1000.0);
		} else {
			slurm_error("dlprof: plugstack.conf: unknown argument '%s' ignored", a);
		}
	}
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	(void)ac;   /* the arguments are read where they are used, not in srun/sbatch */
	(void)av;
	/* slurmd itself takes no options; everywhere else the option must exist. */
	if (spank_context() != S_CTX_SLURMD && spank_context() != S_CTX_JOB_SCRIPT)
		spank_option_register(sp, &dlprof_option);
	return 0;
}

/* The mode for this job: its --dlprof, or the default. */
static enum dlprof_mode job_mode(spank_t sp)
{
	char *arg = NULL;
	enum dlprof_mode m = plugin.default_mode;

	if (spank_option_getopt(sp, &dlprof_option, &arg) == ESPANK_SUCCESS && arg)
		mode_parse(arg, &m);
	return m;
}

/*
 * One request; the body (NUL-terminated) in *body on a 2xx answer.
 * Returns 0, -1 when the daemon refused, -2 when it could not be reached.
 */
static int dlprof_call(const char *method, const char *path, const char *json, char **body)
{
	struct ctl_target t = {
		.url = plugin.url, .socket = plugin.socket[0] ? plugin.socket : NULL,
		.timeout_ms = plugin.timeout_ms,
	};
	struct ctl_reply r;
	char err[256];

	*body = NULL;
	if (t.socket && access(t.socket, F_OK) != 0)
		return -2;   /* no daemon on this node: the common case, said nowhere */
	if (ctl_request(&t, method, path, json, &r, err, sizeof(err)) != CTL_ANSWERED) {
		slurm_verbose("dlprof: %s %s: %s", method, path, err);
		return -2;
	}
	if (r.status < 200 || r.status > 299) {
		slurm_verbose("dlprof: %s %s: HTTP %ld %.200s", method, path, r.status, r.body);
		ctl_reply_free(&r);
		return -1;
	}
	*body = r.body;
	r.body = NULL;
	ctl_reply_free(&r);
	return 0;
}

/* Keeps [A-Za-z0-9_.+-] and makes everything else '_' (names go into JSON and URLs). */
static void sanitize(char *s)
{
	for (; *s; s++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.+-", *s))
			*s = '_';
}

/* Sets "export NAME=value" lines of the daemon's env answer in the job. */
static int apply_env_lines(spank_t sp, char *text)
{
	char *save = NULL;
	int n = 0;

	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *eq, *v;
		size_t len;
		if (strncmp(line, "export ", 7) != 0 || !(eq = strchr(line + 7, '=')))
			continue;
		*eq = '\0';
		v = eq + 1;
		len = strlen(v);
		/* The shell form may quote the value; the job gets it bare. */
		if (len >= 2 && (v[0] == '\'' || v[0] == '"') && v[len - 1] == v[0]) {
			v[len - 1] = '\0';
			v++;
		}
		if (spank_setenv(sp, line + 7, v, 1) == ESPANK_SUCCESS)
			n++;
	}
	return n;
}

/*
 * tune: the variables of the config the tuner assigned at registration, as
 * the daemon maps them (the answer's "env" object, the same mapping as
 * /api/v1/recommend's export lines), set in the job as they are.
 */
static void apply_env_object(spank_t sp, const struct sj_value *env)
{
	const char *cursor = NULL;
	char name[128], value[512];
	struct sj_value v;

	while (sj_next(env, &cursor, name, sizeof(name), &v) == 1)
		if (sj_text(&v, value, sizeof(value)) == 0 && name[0])
			spank_setenv(sp, name, value, 1);
}

/*
 * Registers the job; returns the daemon's id or 0.  tune applies the
 * variables of the config assigned and sets *tuned.
 */
static long long register_job(spank_t sp, const char *workload, uint32_t job_id, const char *gpus,
			      enum dlprof_mode m, int *tuned)
{
	char json[800], *body;
	struct sj_value root, v;
	long long id = 0;

	snprintf(json, sizeof(json), "{\"workload\":\"%s\",\"external_id\":\"slurm:%u\"%s%s%s}", workload, job_id,
		 gpus[0] ? ",\"gpus_allowed\":\"" : "", gpus, gpus[0] ? "\"" : "");
	if (dlprof_call("POST", "/api/v1/jobs", json, &body) < 0)
		return 0;
	if (sj_parse(body, &root) == 0 && sj_get(&root, "id", &v) == 0 && sj_int(&v, &id) == 0) {
		if (m == MODE_TUNE && sj_get(&root, "env", &v) == 0) {
			apply_env_object(sp, &v);
			*tuned = 1;
		}
	} else {
		slurm_verbose("dlprof: registration answer without an id: %.200s", body);
		id = 0;
	}
	free(body);
	return id;
}

/* The workload: DLPROF_WORKLOAD in the job's environment, else the job name. */
static void job_workload(spank_t sp, char *buf, int len)
{
	if (spank_getenv(sp, "DLPROF_WORKLOAD", buf, len) != ESPANK_SUCCESS || !buf[0])
		if (spank_getenv(sp, "SLURM_JOB_NAME", buf, len) != ESPANK_SUCCESS || !buf[0])
			snprintf(buf, (size_t)len, "slurm-job");
	sanitize(buf);
}

/*
 * The GPUs Slurm gave the step (its numbers), which the daemon picks idle
 * ones among; "" when it gave none.  Only [A-Za-z0-9,-] pass into the URL.
 */
static void job_gpus(spank_t sp, char *buf, int len)
{
	if (spank_getenv(sp, "SLURM_STEP_GPUS", buf, len) != ESPANK_SUCCESS || !buf[0])
		if (spank_getenv(sp, "SLURM_JOB_GPUS", buf, len) != ESPANK_SUCCESS)
			buf[0] = '\0';
	for (char *s = buf; *s; s++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789,-", *s))
			*s = '_';
}

/* Runs once per step on each node, as the job's user, before tasks start. */
int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
	enum dlprof_mode m;
	uint32_t job_id = 0, step_id = 0;
	char workload[129], marker[160], seen[160], gpus[256], path[600], *body;
	char host[64] = "";
	long long id;
	int tuned = 0;

	parse_args(ac, av);
	m = job_mode(sp);
	if (m == MODE_OFF || !spank_remote(sp))
		return 0;
	if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_STEPID, &step_id) != ESPANK_SUCCESS || step_id == DLPROF_EXTERN_STEP)
		return 0;
	/* Later steps of a job on this node inherit what the first one set. */
	gethostname(host, sizeof(host) - 1);
	snprintf(marker, sizeof(marker), "%u:%s", job_id, host);
	if (spank_getenv(sp, "DLPROF_SLURM", seen, sizeof(seen)) == ESPANK_SUCCESS && strcmp(seen, marker) == 0)
		return 0;
	job_workload(sp, workload, sizeof(workload));
	job_gpus(sp, gpus, sizeof(gpus));
	/* The Slurm id holds the GPUs picked, so the registration's answer names the same ones. */
	snprintf(path, sizeof(path), "/api/v1/recommend?workload=%s&format=env&external_id=slurm:%u%s%s", workload,
		 job_id, gpus[0] ? "&gpus_allowed=" : "", gpus);
	switch (dlprof_call("GET", path, NULL, &body)) {
	case 0:
		break;
	case -1:
		body = NULL;   /* no recommendation: still record the job */
		break;
	default:
		return 0;      /* daemon down or hung: the job runs untouched */
	}
	/*
	 * tune: the assigned config's variables replace the recommendation
	 * whole; laid over it, a variable only the recommendation sets (its
	 * OMP_PROC_BIND, its LD_PRELOAD) would outlive the config.
	 */
	id = register_job(sp, workload, job_id, gpus, m, &tuned);
	if (!tuned && body)
		apply_env_lines(sp, body);
	free(body);
	spank_setenv(sp, "DLPROF_WORKLOAD", workload, 1);
	if (id > 0) {
		char ids[32];
		snprintf(ids, sizeof(ids), "%lld", id);
		spank_setenv(sp, "DLPROF_JOB", ids, 1);
	}
	spank_setenv(sp, "DLPROF_SLURM", marker, 1);
	return 0;
}

/*
 * A job this Epilog ends: running, or, with an exit status to give, ended
 * in the last ten minutes without one (discovery ends a job once its last
 * process is gone, which may be before the Epilog runs).
 */
static int epilog_takes(const struct sj_value *job, const char *exit_status)
{
	struct sj_value v;
	char state[16], ended[32];

	if (sj_get(job, "state", &v) < 0 || sj_text(&v, state, sizeof(state)) < 0)
		return 0;
	if (strcmp(state, "running") == 0)
		return 1;
	if (!exit_status || strcmp(state, "ended") != 0 || sj_get(job, "exit_status", &v) < 0 || *v.p != 'n' ||
	    sj_get(job, "ended", &v) < 0 || sj_text(&v, ended, sizeof(ended)) < 0)
		return 0;
	return strtod(ended, NULL) >= (double)time(NULL) - 600;
}

/* Ends the jobs the daemon has under this Slurm id that epilog_takes. */
static void end_jobs(uint32_t job_id, const char *exit_status)
{
	char ext[48], *body, key[32];
	struct sj_value root, list, job, v;
	const char *cursor = NULL;

	snprintf(ext, sizeof(ext), "slurm:%u", job_id);
	if (dlprof_call("GET", exit_status ? "/api/v1/jobs?state=all" : "/api/v1/jobs?state=running", NULL,
			&body) < 0)
		return;
	if (sj_parse(body, &root) < 0 || (*root.p == '{' && sj_get(&root, "jobs", &list) < 0)) {
		free(body);
		return;
	}
	if (*root.p == '[')
		list = root;
	while (sj_next(&list, &cursor, key, sizeof(key), &job) == 1) {
		char found[48], path[64], json[64], *answer;
		long long id;
		if (sj_get(&job, "external_id", &v) < 0 || sj_text(&v, found, sizeof(found)) < 0 ||
		    strcmp(found, ext) != 0 || sj_get(&job, "id", &v) < 0 || sj_int(&v, &id) < 0 ||
		    !epilog_takes(&job, exit_status))
			continue;
		snprintf(path, sizeof(path), "/api/v1/jobs/%lld/end", id);
		if (exit_status)
			snprintf(json, sizeof(json), "{\"exit_status\":%s}", exit_status);
		else
			snprintf(json, sizeof(json), "{}");
		if (dlprof_call("POST", path, json, &answer) == 0)
			free(answer);
	}
	free(body);
}

/* Runs in slurmd (as root) when the job ends on this node. */
int slurm_spank_job_epilog(spank_t sp, int ac, char **av)
{
	uint32_t job_id = 0;
	const char *ec = getenv("SLURM_JOB_EXIT_CODE2");   /* "exit:signal" */
	char status[16] = "";

	parse_args(ac, av);
	if (job_mode(sp) == MODE_OFF || spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS)
		return 0;
	if (ec && ec[0] >= '0' && ec[0] <= '9')
		snprintf(status, sizeof(status), "%ld", strtol(ec, NULL, 10));
	end_jobs(job_id, status[0] ? status : NULL);
	return 0;
}
