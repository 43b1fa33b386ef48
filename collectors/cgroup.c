/*
 * Slurm job membership and cgroup CPU limits.  Slurm's cgroup plugins name
 * job directories job_N and step directories step_N (or step_batch,
 * step_extern, step_interactive): v1 places them under
 * /slurm/uid_U/job_N/step_S in each controller, v2 under
 * .../slurmstepd.scope/job_N/step_S/user/task_T.  The parser looks for the
 * segments, not for the prefixes, since sites relocate the hierarchy.
 */

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "procfs.h"

/* Fills out from one cgroup path; 1 when it names a job. */
static int
slurm_from_path(const char *path, struct cgroup_slurm *out)
{
	const char *seg = path, *next, *job_end = NULL;
	char *end;
	long long job = 0;
	size_t len;

	out->step[0] = '\0';
	while (*seg != '\0') {
		while (*seg == '/')
			seg++;
		next = strchr(seg, '/');
		len = next != NULL ? (size_t)(next - seg) : strlen(seg);
		if (job == 0 && len > 4 && strncmp(seg, "job_", 4) == 0 && isdigit((unsigned char)seg[4])) {
			job = strtoll(seg + 4, &end, 10);
			if (end != seg + len || job <= 0)
				job = 0;
			else
				job_end = seg + len;
		} else if (job > 0 && out->step[0] == '\0' && len > 5 && strncmp(seg, "step_", 5) == 0) {
			len -= 5;
			if (len >= sizeof(out->step))
				len = sizeof(out->step) - 1;
			memcpy(out->step, seg + 5, len);
			out->step[len] = '\0';
		}
		if (next == NULL)
			break;
		seg = next;
	}
	if (job == 0)
		return 0;
	out->job = job;
	len = (size_t)(job_end - path);
	if (len >= sizeof(out->path))
		return 0;
	memcpy(out->path, path, len);
	out->path[len] = '\0';
	return 1;
}

int
cgroup_parse_slurm(const char *text, struct cgroup_slurm *out)
{
	static const char *const v1_order[] = {"cpuset", "cpu", "memory", "freezer", NULL};
	const char *line = text, *c1, *c2;
	char ctrl[128], path[600];
	int found_v1 = -1, i, rank;
	struct cgroup_slurm v1;

	memset(out, 0, sizeof(*out));
	memset(&v1, 0, sizeof(v1));
	while (line != NULL && *line != '\0') {
		/* hierarchy-ID:controller-list:path */
		c1 = strchr(line, ':');
		c2 = c1 != NULL ? strchr(c1 + 1, ':') : NULL;
		if (c1 == NULL || c2 == NULL)
			return -1;
		snprintf(ctrl, sizeof(ctrl), "%.*s", (int)(c2 - c1 - 1), c1 + 1);
		snprintf(path, sizeof(path), "%.*s", (int)strcspn(c2 + 1, "\n"), c2 + 1);
		if (ctrl[0] == '\0' && strncmp(line, "0:", 2) == 0) {
			if (slurm_from_path(path, out)) {
				out->version = 2;
				return 1;
			}
		} else {
			/* "cpu,cpuacct" counts as cpu. */
			for (i = 0; v1_order[i] != NULL; i++) {
				rank = i;
				if ((strcmp(ctrl, v1_order[i]) == 0 ||
				     (strncmp(ctrl, v1_order[i], strlen(v1_order[i])) == 0 &&
				      ctrl[strlen(v1_order[i])] == ',')) &&
				    (found_v1 < 0 || rank < found_v1) && slurm_from_path(path, &v1)) {
					found_v1 = rank;
					v1.version = 1;
					snprintf(v1.controller, sizeof(v1.controller), "%s", v1_order[i]);
				}
			}
		}
		line = strchr(line, '\n');
		if (line != NULL)
			line++;
	}
	if (found_v1 < 0)
		return 0;
	*out = v1;
	return 1;
}

int
cgroup_parse_cpu_max(const char *text, double *cores)
{
	char quota[32];
	long long period;

	if (sscanf(text, "%31s %lld", quota, &period) != 2 || period <= 0)
		return -1;
	if (strcmp(quota, "max") == 0) {
		*cores = 0;
		return 0;
	}
	if (!isdigit((unsigned char)quota[0]))
		return -1;
	*cores = (double)strtoll(quota, NULL, 10) / (double)period;
	return 0;
}

int
cgroup_cpu_limits(const char *sys_root, const struct cgroup_slurm *cg, double *quota_cores, int *cpuset_cpus)
{
	char buf[256];
	long long quota, period;
	int found = 0;

	*quota_cores = 0;
	*cpuset_cpus = 0;
	if (cg->version == 2) {
		if (procfs_readf(buf, sizeof(buf), "%s/fs/cgroup/%s/cpu.max", sys_root, cg->path) >= 0) {
			found = 1;
			if (cgroup_parse_cpu_max(buf, quota_cores) < 0)
				*quota_cores = 0;
		}
		if (procfs_readf(buf, sizeof(buf), "%s/fs/cgroup/%s/cpuset.cpus.effective", sys_root, cg->path) >= 0) {
			found = 1;
			*cpuset_cpus = procfs_cpulist_count(buf);
		}
	} else {
		if (procfs_readf(buf, sizeof(buf), "%s/fs/cgroup/cpu/%s/cpu.cfs_quota_us", sys_root, cg->path) >= 0) {
			found = 1;
			quota = strtoll(buf, NULL, 10);
			if (quota > 0 &&
			    procfs_readf(buf, sizeof(buf), "%s/fs/cgroup/cpu/%s/cpu.cfs_period_us", sys_root, cg->path) >= 0 &&
			    (period = strtoll(buf, NULL, 10)) > 0)
				*quota_cores = (double)quota / (double)period;
		}
		if (procfs_readf(buf, sizeof(buf), "%s/fs/cgroup/cpuset/%s/cpuset.cpus", sys_root, cg->path) >= 0) {
			found = 1;
			*cpuset_cpus = procfs_cpulist_count(buf);
		}
	}
	if (*cpuset_cpus < 0)
		*cpuset_cpus = 0;
	return found ? 0 : -1;
}

int
cgroup_parse_memory_path(const char *text, char *path, size_t len)
{
	const char *line = text, *c1, *c2;
	int version = 0;

	while (line != NULL && *line != '\0') {
		c1 = strchr(line, ':');
		c2 = c1 != NULL ? strchr(c1 + 1, ':') : NULL;
		if (c1 == NULL || c2 == NULL)
			return 0;
		if ((c2 - c1 - 1 == 6 && strncmp(c1 + 1, "memory", 6) == 0) ||
		    (c2 == c1 + 1 && strncmp(line, "0:", 2) == 0 && version == 0)) {
			snprintf(path, len, "%.*s", (int)strcspn(c2 + 1, "\n"), c2 + 1);
			version = c2 == c1 + 1 ? 2 : 1;
			if (version == 1)
				return 1;
		}
		line = strchr(line, '\n');
		if (line != NULL)
			line++;
	}
	return version;
}

/* One cgroup's own memory limit in bytes (0: none); -1 when it has no such file. */
static int
memory_limit_at(const char *sys_root, const char *path, int version, double *bytes)
{
	char buf[64];
	double v;

	*bytes = 0;
	if (version == 2) {
		if (procfs_readf(buf, sizeof(buf), "%s/fs/cgroup/%s/memory.max", sys_root, path) < 0)
			return -1;
		if (strncmp(buf, "max", 3) == 0)
			return 0;
	} else if (procfs_readf(buf, sizeof(buf), "%s/fs/cgroup/memory/%s/memory.limit_in_bytes", sys_root, path) < 0) {
		return -1;
	}
	v = strtod(buf, NULL);
	/* v1 says "no limit" with the page counter's maximum, about 2^63. */
	*bytes = v > 0 && v < 0x1p60 ? v : 0;
	return 0;
}

int
cgroup_memory_limit(const char *sys_root, const char *path, int version, double *bytes)
{
	char dir[512], *slash;
	double v;
	int found = -1;

	/* Limits nest: Slurm sets the job's, and its tasks' cgroups below say "max". */
	*bytes = 0;
	snprintf(dir, sizeof(dir), "%s", path);
	for (;;) {
		if (memory_limit_at(sys_root, dir, version, &v) == 0) {
			found = 0;
			if (v > 0 && (*bytes == 0 || v < *bytes))
				*bytes = v;
		}
		if ((slash = strrchr(dir, '/')) == NULL || slash == dir)
			break;
		*slash = '\0';
	}
	return found;
}
