/*
 * The likwid collector: likwid's topology (sockets, cores, SMT, caches, NUMA
 * domains) for the node description, and likwid performance groups
 * (FLOPS_DP, MEM, L3) counted on the cores each job may run on.  likwid
 * counts per hardware thread, not per process, so a job's figures are those
 * of its cores: exact for a job with its own cores (Slurm with cpusets),
 * shared with whatever else runs there otherwise.  One group runs at a time;
 * the groups take turns, one per tick.
 *
 * Counting needs MSR access (the msr module and root, or likwid-accessD) and
 * a CPU this likwid knows.  Without it the collector is unavailable and says
 * why; the node's topology comes from /sys (daemon/node.c) either way.
 * Built only with HAVE_LIKWID.
 *
 * liblikwid is not linked but opened with dlopen, and only once MSR access
 * is known: its data segment alone is 14 MB of relocated pointer tables,
 * private and dirty in every process that maps it (opening it just to find
 * it could not count put a 14 MB spike into the daemon's peak RSS at every
 * start).  When it then cannot count after all (a CPU this likwid does not
 * know), the library is closed again.  likwid.h still gives the types and
 * constants; every function goes through the table in the context.
 */

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <likwid.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector.h"
#include "dynlib.h"
#include "procfs.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

/*
 * likwid's topology keeps thousands of allocations it never frees (its hwloc
 * tree and strings), even after topology_finalize.  In sanitizer builds they
 * are not counted as dlprofd's leaks; nothing changes in other builds.
 */
static void
likwid_leaks_ignore(int on)
{
#if defined(__SANITIZE_ADDRESS__)
	if (on)
		__lsan_disable();
	else
		__lsan_enable();
#else
	(void)on;
#endif
}

#define LIKWID_MAX_CPUS 1024

static const char *const likwid_groups[] = {"FLOPS_DP", "MEM", "L3"};
#define LIKWID_NGROUPS (sizeof(likwid_groups) / sizeof(likwid_groups[0]))

/* The likwid functions used, resolved with dlsym. */
struct likwid_api {
	int (*topology_init)(void);
	void (*topology_finalize)(void);
	CpuTopology_t (*get_cpu_topology)(void);
	int (*numa_init)(void);
	void (*numa_finalize)(void);
	NumaTopology_t (*get_numa_topology)(void);
	void (*hpm_mode)(int mode);
	int (*perfmon_init)(int nthreads, const int *cpus);
	void (*perfmon_finalize)(void);
	int (*perfmon_add_event_set)(const char *group);
	int (*perfmon_setup_counters)(int gid);
	int (*perfmon_start_counters)(void);
	int (*perfmon_stop_counters)(void);
	int (*perfmon_number_of_metrics)(int gid);
	double (*perfmon_last_metric)(int gid, int metric, int thread);
	char *(*perfmon_metric_name)(int gid, int metric);
};

static const struct dynlib_symbol likwid_symbols[] = {
	{offsetof(struct likwid_api, topology_init), "topology_init", 1},
	{offsetof(struct likwid_api, topology_finalize), "topology_finalize", 1},
	{offsetof(struct likwid_api, get_cpu_topology), "get_cpuTopology", 1},
	{offsetof(struct likwid_api, numa_init), "numa_init", 1},
	{offsetof(struct likwid_api, numa_finalize), "numa_finalize", 1},
	{offsetof(struct likwid_api, get_numa_topology), "get_numaTopology", 1},
	{offsetof(struct likwid_api, hpm_mode), "HPMmode", 1},
	{offsetof(struct likwid_api, perfmon_init), "perfmon_init", 1},
	{offsetof(struct likwid_api, perfmon_finalize), "perfmon_finalize", 1},
	{offsetof(struct likwid_api, perfmon_add_event_set), "perfmon_addEventSet", 1},
	{offsetof(struct likwid_api, perfmon_setup_counters), "perfmon_setupCounters", 1},
	{offsetof(struct likwid_api, perfmon_start_counters), "perfmon_startCounters", 1},
	{offsetof(struct likwid_api, perfmon_stop_counters), "perfmon_stopCounters", 1},
	{offsetof(struct likwid_api, perfmon_number_of_metrics), "perfmon_getNumberOfMetrics", 1},
	{offsetof(struct likwid_api, perfmon_last_metric), "perfmon_getLastMetric", 1},
	{offsetof(struct likwid_api, perfmon_metric_name), "perfmon_getMetricName", 1},
};

/* The sonames tried, in order: the runtime package's, then the -dev symlink. */
static const char *const likwid_libraries[] = {"liblikwid.so.5", "liblikwid.so"};

#define LIKWID_MAX_CACHES 8

/* What describe reports, copied out of likwid's topology at init. */
struct likwid_summary {
	int sockets, cores_per_socket, threads_per_core, hw_threads, numa_domains;
	int ncaches;
	struct {
		int level;
		json_int_t size_bytes;
		int shared_by_threads;
	} caches[LIKWID_MAX_CACHES];
};

struct likwid_ctx {
	void *lib;                         /* dlopen handle */
	struct likwid_api api;
	struct likwid_summary topo;
	char proc_root[256];
	int ncpus;
	int cpus[LIKWID_MAX_CPUS];         /* likwid thread index -> OS CPU id */
	int gids[LIKWID_NGROUPS];
	size_t ngroups;
	size_t cur;                        /* the group counting now */
	int have_last;                     /* last[] holds a finished reading */
	size_t last_group;
	int nmetrics;
	double *last;                      /* [metric * ncpus + thread] of last_group */
	unsigned char mask[LIKWID_MAX_CPUS]; /* scratch: the CPUs a job may use */
};

/*
 * How perfmon can reach the MSRs: ACCESSMODE_DIRECT or ACCESSMODE_DAEMON;
 * -1 with why otherwise.  Asked before the library is opened.
 */
static int
likwid_msr_access(char *why, size_t why_len)
{
	int fd = open("/dev/cpu/0/msr", O_RDWR | O_CLOEXEC);

	if (fd >= 0) {
		close(fd);
		return ACCESSMODE_DIRECT;
	}
	if (errno != ENOENT && access("/usr/sbin/likwid-accessD", X_OK) == 0)
		return ACCESSMODE_DAEMON;
	snprintf(why, why_len,
		 errno == ENOENT ? "cannot count: no /dev/cpu/0/msr (modprobe msr; VMs hide MSRs)"
				 : "cannot count: /dev/cpu/0/msr refused: run as root or install likwid-accessD setuid");
	return -1;
}

/* Copies the CPU list and the summary describe reports out of likwid's topology. */
static void
likwid_read_topology(struct likwid_ctx *c)
{
	CpuTopology_t topo = c->api.get_cpu_topology();
	NumaTopology_t numa = c->api.get_numa_topology();
	struct likwid_summary *s = &c->topo;
	uint32_t i;

	for (i = 0; i < topo->numHWThreads && c->ncpus < LIKWID_MAX_CPUS; i++)
		if (topo->threadPool[i].inCpuSet)
			c->cpus[c->ncpus++] = (int)topo->threadPool[i].apicId;
	s->sockets = (int)topo->numSockets;
	s->cores_per_socket = (int)topo->numCoresPerSocket;
	s->threads_per_core = (int)topo->numThreadsPerCore;
	s->hw_threads = (int)topo->numHWThreads;
	s->numa_domains = numa != NULL ? (int)numa->numberOfNodes : 0;
	for (i = 0; i < topo->numCacheLevels && s->ncaches < LIKWID_MAX_CACHES; i++, s->ncaches++) {
		s->caches[s->ncaches].level = (int)topo->cacheLevels[i].level;
		s->caches[s->ncaches].size_bytes = (json_int_t)topo->cacheLevels[i].size;
		s->caches[s->ncaches].shared_by_threads = (int)topo->cacheLevels[i].threads;
	}
}

/* Sets perfmon up and starts the first group; -1 with why otherwise. */
static int
likwid_start_counting(struct likwid_ctx *c, int mode, char *why, size_t why_len)
{
	const struct likwid_api *a = &c->api;
	size_t g;
	int rc, gid;

	a->hpm_mode(mode);
	rc = a->perfmon_init(c->ncpus, c->cpus);
	if (rc < 0) {
		snprintf(why, why_len, "cannot count: perfmon_init failed: %s (CPU unknown to this likwid?)",
			 strerror(-rc));
		return -1;
	}
	for (g = 0; g < LIKWID_NGROUPS; g++)
		if ((gid = a->perfmon_add_event_set(likwid_groups[g])) >= 0)
			c->gids[c->ngroups++] = gid;
	if (c->ngroups == 0 || a->perfmon_setup_counters(c->gids[0]) < 0 || a->perfmon_start_counters() < 0) {
		snprintf(why, why_len, "cannot count: no performance group of FLOPS_DP, MEM, L3 can be set up");
		a->perfmon_finalize();
		return -1;
	}
	return 0;
}

/* Opens liblikwid and binds likwid_symbols into c->api; -1 with the reason otherwise. */
static int
likwid_open(struct likwid_ctx *c, char *why, size_t why_len)
{
	c->lib = dynlib_load(likwid_libraries, sizeof(likwid_libraries) / sizeof(likwid_libraries[0]), likwid_symbols,
			     sizeof(likwid_symbols) / sizeof(likwid_symbols[0]), &c->api, "install liblikwid5",
			     "install liblikwid5 (likwid 5)", why, why_len);
	return c->lib != NULL ? 0 : -1;
}

/* Drops likwid's topology and unmaps the library: nothing of it stays resident. */
static void
likwid_close(struct likwid_ctx *c)
{
	c->api.numa_finalize();
	c->api.topology_finalize();
	dlclose(c->lib);
	c->lib = NULL;
}

static void *
likwid_init(const struct collector_env *env, char *why, size_t why_len)
{
	struct likwid_ctx *c;
	int rc, mode;

	if ((mode = likwid_msr_access(why, why_len)) < 0)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		snprintf(why, why_len, "out of memory");
		return NULL;
	}
	snprintf(c->proc_root, sizeof(c->proc_root), "%s", env->proc_root);
	if (likwid_open(c, why, why_len) < 0)
		goto fail;
	likwid_leaks_ignore(1);
	rc = c->api.topology_init();
	if (rc == 0)
		c->api.numa_init();
	likwid_leaks_ignore(0);
	if (rc != 0) {
		snprintf(why, why_len, "likwid topology_init failed");
		dlclose(c->lib);
		goto fail;
	}
	likwid_read_topology(c);
	why[0] = '\0';
	likwid_leaks_ignore(1);
	rc = likwid_start_counting(c, mode, why, why_len);
	if (rc < 0)
		likwid_close(c);
	likwid_leaks_ignore(0);
	if (rc < 0)
		goto fail;
	return c;
fail:
	free(c);
	return NULL;
}

static void
likwid_fini(void *ctx)
{
	struct likwid_ctx *c = ctx;

	c->api.perfmon_stop_counters();
	c->api.perfmon_finalize();
	likwid_close(c);
	free(c->last);
	free(c);
}

/* Keeps the running group's metrics, then lets the next group count. */
static int
likwid_sample_node(void *ctx, struct collector_out *out, char *why, size_t why_len)
{
	struct likwid_ctx *c = ctx;
	int gid, m, t, n;
	double *nl;

	/* Groups rotate when the sampler stores, so each counts a whole store interval. */
	if (!out->detail)
		return COLLECTOR_OK;
	gid = c->gids[c->cur];
	if (c->api.perfmon_stop_counters() < 0) {
		snprintf(why, why_len, "perfmon_stopCounters failed");
		return COLLECTOR_TRANSIENT;
	}
	n = c->api.perfmon_number_of_metrics(gid);
	nl = realloc(c->last, (size_t)(n > 0 ? n : 1) * (size_t)c->ncpus * sizeof(*nl));
	if (nl == NULL) {
		snprintf(why, why_len, "out of memory");
		return COLLECTOR_TRANSIENT;
	}
	c->last = nl;
	for (m = 0; m < n; m++)
		for (t = 0; t < c->ncpus; t++)
			c->last[m * c->ncpus + t] = c->api.perfmon_last_metric(gid, m, t);
	c->nmetrics = n;
	c->last_group = c->cur;
	c->have_last = 1;
	c->cur = (c->cur + 1) % c->ngroups;
	if (c->api.perfmon_setup_counters(c->gids[c->cur]) < 0 || c->api.perfmon_start_counters() < 0) {
		snprintf(why, why_len, "cannot start likwid group %s", likwid_groups[c->cur]);
		return COLLECTOR_TRANSIENT;
	}
	return COLLECTOR_OK;
}

/* "DP [MFLOP/s]" -> "dp_mflop_s"; whether it is a rate (summed over cores). */
static int
likwid_metric_name(const char *metric, char *buf, size_t len)
{
	size_t o = 0;
	const char *p;

	for (p = metric; *p != '\0' && o + 1 < len; p++) {
		if (isalnum((unsigned char)*p))
			buf[o++] = (char)tolower((unsigned char)*p);
		else if (o > 0 && buf[o - 1] != '_')
			buf[o++] = '_';
	}
	while (o > 0 && buf[o - 1] == '_')
		o--;
	buf[o] = '\0';
	return strstr(metric, "/s]") != NULL || strstr(metric, "[MBytes]") != NULL;
}

static int
likwid_sample_job(void *ctx, const struct collector_job *job, struct collector_out *out, char *why, size_t why_len)
{
	struct likwid_ctx *c = ctx;
	char buf[8192], list[4096], name[48];
	double sum;
	int m, t, used, rate;

	(void)why;
	(void)why_len;
	if (!c->have_last || job->npids == 0 || !out->detail)
		return COLLECTOR_OK;
	if (procfs_readf(buf, sizeof(buf), "%s/%d/status", c->proc_root, (int)job->pids[0]) < 0 ||
	    procfs_status_str(buf, "Cpus_allowed_list", list, sizeof(list)) < 0 ||
	    procfs_cpulist_mask(list, c->mask, LIKWID_MAX_CPUS) < 0)
		return COLLECTOR_OK;
	for (m = 0; m < c->nmetrics; m++) {
		rate = likwid_metric_name(c->api.perfmon_metric_name(c->gids[c->last_group], m), name, sizeof(name));
		for (t = 0, used = 0, sum = 0; t < c->ncpus; t++)
			if (c->cpus[t] < LIKWID_MAX_CPUS && c->mask[c->cpus[t]]) {
				sum += c->last[m * c->ncpus + t];
				used++;
			}
		if (used > 0 && name[0] != '\0')
			collector_put(out, job->id, rate ? sum : sum / used, "likwid.%.10s.%s",
				      likwid_groups[c->last_group], name);
	}
	return COLLECTOR_OK;
}

static json_t *
likwid_describe(void *ctx)
{
	const struct likwid_ctx *c = ctx;
	const struct likwid_summary *s = &c->topo;
	json_t *caches = json_array();
	int i;

	for (i = 0; caches != NULL && i < s->ncaches; i++)
		json_array_append_new(caches, json_pack("{s:i,s:I,s:i}", "level", s->caches[i].level, "size_bytes",
							s->caches[i].size_bytes, "shared_by_threads",
							s->caches[i].shared_by_threads));
	return json_pack("{s:i,s:i,s:i,s:i,s:i,s:o*}", "sockets", s->sockets, "cores_per_socket",
			 s->cores_per_socket, "threads_per_core", s->threads_per_core, "hw_threads", s->hw_threads,
			 "numa_domains", s->numa_domains, "caches", caches);
}

const struct collector collector_likwid = {
	.version = COLLECTOR_VERSION,
	.name = "likwid",
	.init = likwid_init,
	.sample_node = likwid_sample_node,
	.sample_job = likwid_sample_job,
	.job_gone = NULL,
	.describe = likwid_describe,
	.fini = likwid_fini,
};
