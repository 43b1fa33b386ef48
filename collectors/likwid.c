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
 * a CPU this likwid knows.  Without it the collector still describes the
 * topology, and says why it cannot count.  Built only with HAVE_LIKWID.
 */

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <likwid.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector.h"
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

struct likwid_ctx {
	char proc_root[256];
	int counting;                      /* perfmon is set up */
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

/* Whether perfmon could reach the MSRs; why otherwise. */
static int
likwid_msr_access(char *why, size_t why_len)
{
	int fd = open("/dev/cpu/0/msr", O_RDWR | O_CLOEXEC);

	if (fd >= 0) {
		close(fd);
		HPMmode(ACCESSMODE_DIRECT);
		return 1;
	}
	if (errno != ENOENT && access("/usr/sbin/likwid-accessD", X_OK) == 0) {
		HPMmode(ACCESSMODE_DAEMON);
		return 1;
	}
	snprintf(why, why_len,
		 errno == ENOENT ? "topology only: cannot count, no /dev/cpu/0/msr (modprobe msr; VMs hide MSRs)"
				 : "topology only: cannot count, /dev/cpu/0/msr refused: run as root or install "
				   "likwid-accessD setuid");
	return 0;
}

static void
likwid_start_counting(struct likwid_ctx *c, char *why, size_t why_len)
{
	CpuTopology_t topo = get_cpuTopology();
	uint32_t i;
	size_t g;
	int rc, gid;

	for (i = 0; i < topo->numHWThreads && c->ncpus < LIKWID_MAX_CPUS; i++)
		if (topo->threadPool[i].inCpuSet)
			c->cpus[c->ncpus++] = (int)topo->threadPool[i].apicId;
	if (!likwid_msr_access(why, why_len))
		return;
	rc = perfmon_init(c->ncpus, c->cpus);
	if (rc < 0) {
		snprintf(why, why_len, "topology only: perfmon_init failed: %s (CPU unknown to this likwid?)",
			 strerror(-rc));
		return;
	}
	for (g = 0; g < LIKWID_NGROUPS; g++)
		if ((gid = perfmon_addEventSet(likwid_groups[g])) >= 0)
			c->gids[c->ngroups++] = gid;
	if (c->ngroups == 0 || perfmon_setupCounters(c->gids[0]) < 0 || perfmon_startCounters() < 0) {
		snprintf(why, why_len, "topology only: no performance group of FLOPS_DP, MEM, L3 can be set up");
		perfmon_finalize();
		return;
	}
	c->counting = 1;
}

static void *
likwid_init(const struct collector_env *env, char *why, size_t why_len)
{
	struct likwid_ctx *c;
	int rc;

	likwid_leaks_ignore(1);
	rc = topology_init();
	if (rc == 0)
		numa_init();
	likwid_leaks_ignore(0);
	if (rc != 0) {
		snprintf(why, why_len, "likwid topology_init failed");
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		numa_finalize();
		topology_finalize();
		snprintf(why, why_len, "out of memory");
		return NULL;
	}
	snprintf(c->proc_root, sizeof(c->proc_root), "%s", env->proc_root);
	why[0] = '\0';
	likwid_leaks_ignore(1);
	likwid_start_counting(c, why, why_len);
	likwid_leaks_ignore(0);
	return c;
}

static void
likwid_fini(void *ctx)
{
	struct likwid_ctx *c = ctx;

	if (c->counting) {
		perfmon_stopCounters();
		perfmon_finalize();
	}
	free(c->last);
	numa_finalize();
	topology_finalize();
	free(c);
}

/* Keeps the running group's metrics, then lets the next group count. */
static int
likwid_sample_node(void *ctx, struct collector_out *out, char *why, size_t why_len)
{
	struct likwid_ctx *c = ctx;
	int gid, m, t, n;
	double *nl;

	(void)out;  /* its values are per job: sample_job reads them */
	if (!c->counting)
		return COLLECTOR_OK;
	gid = c->gids[c->cur];
	if (perfmon_stopCounters() < 0) {
		snprintf(why, why_len, "perfmon_stopCounters failed");
		return COLLECTOR_TRANSIENT;
	}
	n = perfmon_getNumberOfMetrics(gid);
	nl = realloc(c->last, (size_t)(n > 0 ? n : 1) * (size_t)c->ncpus * sizeof(*nl));
	if (nl == NULL) {
		snprintf(why, why_len, "out of memory");
		return COLLECTOR_TRANSIENT;
	}
	c->last = nl;
	for (m = 0; m < n; m++)
		for (t = 0; t < c->ncpus; t++)
			c->last[m * c->ncpus + t] = perfmon_getLastMetric(gid, m, t);
	c->nmetrics = n;
	c->last_group = c->cur;
	c->have_last = 1;
	c->cur = (c->cur + 1) % c->ngroups;
	if (perfmon_setupCounters(c->gids[c->cur]) < 0 || perfmon_startCounters() < 0) {
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
	if (!c->have_last || job->npids == 0)
		return COLLECTOR_OK;
	if (procfs_readf(buf, sizeof(buf), "%s/%d/status", c->proc_root, (int)job->pids[0]) < 0 ||
	    procfs_status_str(buf, "Cpus_allowed_list", list, sizeof(list)) < 0 ||
	    procfs_cpulist_mask(list, c->mask, LIKWID_MAX_CPUS) < 0)
		return COLLECTOR_OK;
	for (m = 0; m < c->nmetrics; m++) {
		rate = likwid_metric_name(perfmon_getMetricName(c->gids[c->last_group], m), name, sizeof(name));
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
	CpuTopology_t topo = get_cpuTopology();
	NumaTopology_t numa = get_numaTopology();
	json_t *caches = json_array(), *o;
	uint32_t i;

	(void)ctx;  /* likwid keeps its topology itself */
	for (i = 0; caches != NULL && i < topo->numCacheLevels; i++)
		json_array_append_new(caches, json_pack("{s:i,s:I,s:i}", "level", (int)topo->cacheLevels[i].level,
							"size_bytes", (json_int_t)topo->cacheLevels[i].size,
							"shared_by_threads", (int)topo->cacheLevels[i].threads));
	o = json_pack("{s:i,s:i,s:i,s:i,s:i,s:o*}", "sockets", (int)topo->numSockets, "cores_per_socket",
		      (int)topo->numCoresPerSocket, "threads_per_core", (int)topo->numThreadsPerCore, "hw_threads",
		      (int)topo->numHWThreads, "numa_domains", numa != NULL ? (int)numa->numberOfNodes : 0, "caches",
		      caches);
	return o;
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
