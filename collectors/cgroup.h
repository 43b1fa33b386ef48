/*
 * Slurm and cgroup parsing for job discovery and the proc collector: which
 * Slurm job and step a process belongs to (from /proc/PID/cgroup, cgroup v1
 * and v2 layouts), and what CPU limits a job's cgroup sets (cpu.max,
 * cpu.cfs_quota_us, cpuset).  Pure parsers plus readers under a sys root.
 */
#ifndef DLPROF_CGROUP_H
#define DLPROF_CGROUP_H

#include <stddef.h>
#include <stdint.h>

struct cgroup_slurm {
	int64_t job;          /* Slurm job id; 0 when the process is in no job */
	char step[32];        /* "0", "batch", "extern", "interactive"; "" when none */
	char path[512];       /* the job's cgroup, relative to its hierarchy root */
	int version;          /* 2: unified hierarchy; 1: a v1 controller's */
	char controller[32];  /* the v1 controller the path came from ("" for v2) */
};

/*
 * Parses /proc/PID/cgroup text.  Prefers the unified (v2) line, else a v1
 * line of cpuset, cpu, memory or freezer.  Returns 1 with out filled when
 * the process is in a Slurm job (a path segment job_N), 0 when not, -1 on
 * malformed text.
 */
int cgroup_parse_slurm(const char *text, struct cgroup_slurm *out);

/*
 * Parses a cgroup v2 cpu.max line ("max 100000" or "200000 100000") into a
 * quota in cores; *cores is 0 for "max" (no limit).  -1 when malformed.
 */
int cgroup_parse_cpu_max(const char *text, double *cores);

/*
 * The CPU limit of a cgroup: quota in cores (0: none) and the number of CPUs
 * in its cpuset (0: unknown).  Reads v2 files under sys_root/fs/cgroup/PATH,
 * or v1 files under sys_root/fs/cgroup/{cpu,cpuset}/PATH.  Returns -1 when
 * the cgroup directory is not found.
 */
int cgroup_cpu_limits(const char *sys_root, const struct cgroup_slurm *cg, double *quota_cores, int *cpuset_cpus);

/*
 * The memory cgroup of a process from /proc/PID/cgroup text: a v1 line of
 * the memory controller, else the unified (v2) line.  Returns 1 or 2 (the
 * version) with path filled (relative to the hierarchy root), 0 when the
 * text names none.
 */
int cgroup_parse_memory_path(const char *text, char *path, size_t len);

/*
 * The memory limit a cgroup is under, in bytes: the smallest of its own and
 * its ancestors' (v2 memory.max under sys_root/fs/cgroup/PATH, v1
 * memory.limit_in_bytes under sys_root/fs/cgroup/memory/PATH), 0 when none
 * sets one ("max", or v1's page-counter maximum).  -1 when no such file is
 * found on the way up.
 */
int cgroup_memory_limit(const char *sys_root, const char *path, int version, double *bytes);

#endif
