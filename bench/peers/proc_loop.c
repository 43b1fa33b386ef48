/*
 * The kernel's ceiling for the sampling benchmark: a plain loop that reads
 * the files dlprofd's sampler reads for each job, with the least parsing
 * that still yields the figures (CPU ticks, context switches), and nothing
 * else: no job bookkeeping, no storage.  Per job: /proc/PID/stat,
 * /proc/PID/task/, each thread's task/TID/stat and task/TID/status, and
 * /proc/PID/status.  --scan adds what discovery does every tick (every
 * /proc/PID/stat on the machine); --perf adds reading the four software
 * perf counters per thread that the perf collector keeps open.
 *
 * Two switches measure what a leaner sampler could reach on the same jobs:
 * --keep-open opens each file once and re-reads it with pread() every pass
 * (procfs regenerates the text on each read from offset 0), listing a
 * job's threads again only when its thread count changes; --schedstat reads
 * a thread's CPU time from task/TID/schedstat (nanoseconds, three numbers)
 * instead of its stat and status; --perf-group opens a thread's four
 * counters as one group (PERF_FORMAT_GROUP) and reads them with one read().
 *
 * Three cadences give dlprofd's own schedule: --detail-every N reads the
 * threads (and the perf counters) on every Nth pass only, the process's
 * stat on every pass; --status-every N reads /proc/PID/status on every Nth
 * pass; --scan-every N scans on every Nth pass.  With them the mean pass,
 * not the median, is the figure to compare.
 *
 *   proc_loop [--passes 20] [--interval 1.0] [--scan] [--perf]
 *             [--keep-open] [--schedstat] [--perf-group]
 *             [--detail-every N] [--status-every N] [--scan-every N] PID...
 *
 * Prints one JSON object with the median CPU time of one pass, whole and
 * per part, per job and per thread, and the mean pass.
 */
#include <dirent.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS_PER_JOB 512
#define NEV 4

struct job {
	int pid;
	int tids[MAX_THREADS_PER_JOB];
	int fds[MAX_THREADS_PER_JOB][NEV];   /* perf counters, -1 when not open */
	int tfd[MAX_THREADS_PER_JOB][2];     /* --keep-open: the thread's files */
	int stat_fd, status_fd;              /* --keep-open: the process's files */
	long long nthreads;                  /* num_threads when last listed */
	int ntids;
};

static int keep_open, use_schedstat, perf_group;
static int detail_every = 1, status_every = 1, scan_every = 1;

struct pass_cost {
	double scan, jobs, perf;             /* thread CPU seconds */
};

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static ssize_t read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

/*
 * Reads path, or with --keep-open re-reads the descriptor *fd (opened on
 * first use) from offset 0.
 */
static ssize_t read_kept(int *fd, const char *path, char *buf, size_t len)
{
	ssize_t n;

	if (!keep_open)
		return read_file(path, buf, len);
	if (*fd < 0 && (*fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = pread(*fd, buf, len - 1, 0);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

/* num_threads, field 20 of a stat line. */
static long long stat_threads(const char *buf)
{
	const char *p = strrchr(buf, ')');
	long long n = -1;

	if (p)
		sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %lld", &n);
	return n;
}

/* utime + stime of a stat line: fields 14 and 15, counted after the comm. */
static unsigned long long stat_ticks(const char *buf)
{
	const char *p = strrchr(buf, ')');
	unsigned long long ut = 0, st = 0;

	if (p)
		sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st);
	return ut + st;
}

static long long status_field(const char *buf, const char *key)
{
	const char *p = strstr(buf, key);
	return p ? atoll(p + strlen(key) + 1) : -1;
}

static int list_ids(const char *dir, int *ids, int cap)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)) && n < cap)
		if (e->d_name[0] >= '1' && e->d_name[0] <= '9')
			ids[n++] = atoi(e->d_name);
	closedir(d);
	return n;
}

static unsigned long long sink;   /* keeps the parsing from being optimised away */

static void scan_all(void)
{
	static int pids[65536];
	char path[64], buf[4096];
	int n = list_ids("/proc", pids, 65536);

	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/proc/%d/stat", pids[i]);
		if (read_file(path, buf, sizeof(buf)) > 0)
			sink += stat_ticks(buf);
	}
}

static void close_thread_fds(struct job *j)
{
	for (int i = 0; i < j->ntids; i++)
		for (int k = 0; k < 2; k++)
			if (j->tfd[i][k] >= 0) {
				close(j->tfd[i][k]);
				j->tfd[i][k] = -1;
			}
}

static void read_thread(struct job *j, int i)
{
	char path[96], buf[4096];

	if (use_schedstat) {
		snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", j->pid, j->tids[i]);
		if (read_kept(&j->tfd[i][0], path, buf, sizeof(buf)) > 0)
			sink += strtoull(buf, NULL, 10);
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", j->pid, j->tids[i]);
	if (read_kept(&j->tfd[i][0], path, buf, sizeof(buf)) > 0)
		sink += stat_ticks(buf);
	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", j->pid, j->tids[i]);
	if (read_kept(&j->tfd[i][1], path, buf, sizeof(buf)) > 0)
		sink += (unsigned long long)(status_field(buf, "voluntary_ctxt_switches") +
					     status_field(buf, "nonvoluntary_ctxt_switches"));
}

static void read_job(struct job *j, int pass)
{
	char path[96], buf[4096];
	long long nthreads = -1;

	snprintf(path, sizeof(path), "/proc/%d/stat", j->pid);
	if (read_kept(&j->stat_fd, path, buf, sizeof(buf)) > 0) {
		sink += stat_ticks(buf);
		nthreads = stat_threads(buf);
	}
	if (pass % detail_every != 0)
		return;
	/* Kept open, the thread list is listed again only when the count changes. */
	if (!keep_open || nthreads != j->nthreads) {
		close_thread_fds(j);
		snprintf(path, sizeof(path), "/proc/%d/task", j->pid);
		j->ntids = list_ids(path, j->tids, MAX_THREADS_PER_JOB);
		j->nthreads = nthreads;
	}
	for (int i = 0; i < j->ntids; i++)
		read_thread(j, i);
	if (pass % status_every != 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/status", j->pid);
	if (read_kept(&j->status_fd, path, buf, sizeof(buf)) > 0)
		sink += (unsigned long long)(strstr(buf, "Cpus_allowed_list") != NULL);
}

static int perf_open(int tid, int ev, int group_fd)
{
	static const uint64_t configs[NEV] = {PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_CONTEXT_SWITCHES,
					      PERF_COUNT_SW_CPU_MIGRATIONS, PERF_COUNT_SW_PAGE_FAULTS};
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = configs[ev];
	attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	if (perf_group)
		attr.read_format |= PERF_FORMAT_GROUP;
	attr.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &attr, tid, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
}

/* Opens counters for threads seen for the first time (outside the timing), then reads them all. */
static void perf_prepare(struct job *j)
{
	for (int i = 0; i < j->ntids; i++)
		for (int e = 0; e < NEV; e++)
			if (j->fds[i][e] < 0)
				j->fds[i][e] = perf_open(j->tids[i], e, perf_group && e > 0 ? j->fds[i][0] : -1);
}

static void perf_read(const struct job *j)
{
	uint64_t v[3 + NEV];

	for (int i = 0; i < j->ntids; i++) {
		if (perf_group) {
			/* nr, time_enabled, time_running, then one value per counter. */
			if (j->fds[i][0] >= 0 && read(j->fds[i][0], v, sizeof(v)) == (ssize_t)sizeof(v))
				sink += v[3];
			continue;
		}
		for (int e = 0; e < NEV; e++)
			if (j->fds[i][e] >= 0 && read(j->fds[i][e], v, 3 * sizeof(v[0])) == (ssize_t)(3 * sizeof(v[0])))
				sink += v[0];
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n ? v[n / 2] : 0;
}

int main(int argc, char **argv)
{
	int passes = 20, scan = 0, perf = 0, njobs = 0, threads = 0;
	double interval = 1.0, *whole, *sc, *jb, *pf;
	struct job *jobs;
	struct timespec pause;

	jobs = calloc((size_t)argc, sizeof(*jobs));
	if (!jobs)
		return 1;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--passes") == 0 && i + 1 < argc)
			passes = atoi(argv[++i]);
		else if (strcmp(argv[i], "--interval") == 0 && i + 1 < argc)
			interval = atof(argv[++i]);
		else if (strcmp(argv[i], "--scan") == 0)
			scan = 1;
		else if (strcmp(argv[i], "--perf") == 0)
			perf = 1;
		else if (strcmp(argv[i], "--keep-open") == 0)
			keep_open = 1;
		else if (strcmp(argv[i], "--schedstat") == 0)
			use_schedstat = 1;
		else if (strcmp(argv[i], "--perf-group") == 0)
			perf = perf_group = 1;
		else if (strcmp(argv[i], "--detail-every") == 0 && i + 1 < argc)
			detail_every = atoi(argv[++i]);
		else if (strcmp(argv[i], "--status-every") == 0 && i + 1 < argc)
			status_every = atoi(argv[++i]);
		else if (strcmp(argv[i], "--scan-every") == 0 && i + 1 < argc)
			scan_every = atoi(argv[++i]);
		else
			jobs[njobs++].pid = atoi(argv[i]);
	}
	if (njobs == 0 || passes < 1 || detail_every < 1 || status_every < 1 || scan_every < 1) {
		fprintf(stderr, "usage: proc_loop [--passes N] [--interval S] [--scan] [--perf] [--keep-open] "
				"[--schedstat] [--perf-group] [--detail-every N] [--status-every N] [--scan-every N] "
				"PID...\n");
		return 2;
	}
	for (int i = 0; i < njobs; i++) {
		memset(jobs[i].fds, -1, sizeof(jobs[i].fds));
		memset(jobs[i].tfd, -1, sizeof(jobs[i].tfd));
		jobs[i].stat_fd = jobs[i].status_fd = -1;
		jobs[i].nthreads = -1;
	}
	whole = calloc((size_t)passes, sizeof(double));
	sc = calloc((size_t)passes, sizeof(double));
	jb = calloc((size_t)passes, sizeof(double));
	pf = calloc((size_t)passes, sizeof(double));
	if (!whole || !sc || !jb || !pf)
		return 1;
	pause.tv_sec = (time_t)interval;
	pause.tv_nsec = (long)((interval - (double)pause.tv_sec) * 1e9);
	for (int p = 0; p < passes; p++) {
		double t0 = cpu_s(), t1, t2, t3;
		if (scan && p % scan_every == 0)
			scan_all();
		t1 = cpu_s();
		for (int i = 0; i < njobs; i++)
			read_job(&jobs[i], p);
		t2 = cpu_s();
		if (perf && p % detail_every == 0) {
			for (int i = 0; i < njobs; i++)
				perf_prepare(&jobs[i]);
			t2 = cpu_s();
			for (int i = 0; i < njobs; i++)
				perf_read(&jobs[i]);
		}
		t3 = cpu_s();
		sc[p] = t1 - t0;
		jb[p] = t2 - t1;
		pf[p] = t3 - t2;
		whole[p] = sc[p] + jb[p] + pf[p];
		if (p + 1 < passes)
			nanosleep(&pause, NULL);
	}
	for (int i = 0; i < njobs; i++)
		threads += jobs[i].ntids;
	{
		double mean = 0;

		/* The first pass opens and lists everything: the daemon measured has long done so. */
		for (int p = passes > 1 ? 1 : 0; p < passes; p++)
			mean += whole[p] / (passes > 1 ? passes - 1 : 1);
		double w = median(whole, passes), s = median(sc, passes), j = median(jb, passes), f = median(pf, passes);
		printf("{\"passes\":%d,\"jobs\":%d,\"threads\":%d,\"pass_us\":%.1f,\"scan_us\":%.1f,\"jobs_us\":%.1f,"
		       "\"perf_us\":%.1f,\"per_job_us\":%.2f,\"per_thread_us\":%.3f,\"mean_pass_us\":%.1f,"
		       "\"sink\":%llu}\n",
		       passes, njobs, threads, w * 1e6, s * 1e6, j * 1e6, f * 1e6, (j + f) * 1e6 / njobs,
		       threads ? (j + f) * 1e6 / threads : 0.0, mean * 1e6, sink % 10);
	}
	free(whole);
	free(sc);
	free(jb);
	free(pf);
	free(jobs);
	return 0;
}
