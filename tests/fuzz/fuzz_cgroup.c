/*
 * libFuzzer target for the cgroup parsers of collectors/cgroup.c: the input
 * is parsed as /proc/PID/cgroup text (for the Slurm job and the memory
 * cgroup) and as a cpu.max line, and written into a fake sys root as every
 * CPU- and memory-limit file the readers read (v2 and v1 layouts), so they
 * see hostile file contents too.
 */
#undef NDEBUG   /* the checks below are the point */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char fuzz_root[256];

static const char *const limit_files[] = {
	"fs/cgroup/job_1/cpu.max",
	"fs/cgroup/job_1/cpuset.cpus.effective",
	"fs/cgroup/cpu/job_1/cpu.cfs_quota_us",
	"fs/cgroup/cpu/job_1/cpu.cfs_period_us",
	"fs/cgroup/cpuset/job_1/cpuset.cpus",
	"fs/cgroup/job_1/memory.max",
	"fs/cgroup/memory/job_1/memory.limit_in_bytes",
	NULL,
};

static void cleanup(void)
{
	char cmd[320];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fuzz_root);
	if (system(cmd) != 0)
		fprintf(stderr, "fuzz_cgroup: could not remove %s\n", fuzz_root);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const dirs[] = {"fs", "fs/cgroup", "fs/cgroup/job_1", "fs/cgroup/cpu",
					   "fs/cgroup/cpu/job_1", "fs/cgroup/cpuset", "fs/cgroup/cpuset/job_1",
					   "fs/cgroup/memory", "fs/cgroup/memory/job_1", NULL};
	char path[400];

	(void)argc;
	(void)argv;
	/* $TMPDIR (run.sh's own directory, removed even after a crash), else tmpfs: files are rewritten per input. */
	snprintf(fuzz_root, sizeof(fuzz_root), "%s/dlprof-fuzz-cgroup-XXXXXX",
		 getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/dev/shm");
	if (!mkdtemp(fuzz_root)) {
		snprintf(fuzz_root, sizeof(fuzz_root), "/tmp/dlprof-fuzz-cgroup-XXXXXX");
		assert(mkdtemp(fuzz_root));
	}
	atexit(cleanup);
	for (int i = 0; dirs[i]; i++) {
		snprintf(path, sizeof(path), "%s/%s", fuzz_root, dirs[i]);
		assert(mkdir(path, 0755) == 0);
	}
	return 0;
}

static void fuzz_limits(const uint8_t *data, size_t size)
{
	struct cgroup_slurm cg = {.job = 1, .path = "job_1"};
	double quota, bytes;
	int cpus;

	for (int i = 0; limit_files[i]; i++) {
		char path[400];
		FILE *f;
		snprintf(path, sizeof(path), "%s/%s", fuzz_root, limit_files[i]);
		f = fopen(path, "w");
		assert(f);
		if (size)
			fwrite(data, 1, size, f);
		fclose(f);
	}
	for (cg.version = 1; cg.version <= 2; cg.version++) {
		assert(cgroup_cpu_limits(fuzz_root, &cg, &quota, &cpus) == 0);
		assert(quota >= 0 && cpus >= 0);
		assert(cgroup_memory_limit(fuzz_root, "/job_1", cg.version, &bytes) == 0);
		assert(bytes >= 0 && bytes < 0x1p60);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct cgroup_slurm cg;
	char mem_path[512];
	double cores;
	int r;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	r = cgroup_parse_slurm(text, &cg);
	assert(r >= -1 && r <= 1);
	if (r == 1) {
		assert(cg.job > 0 && (cg.version == 1 || cg.version == 2));
		assert(strlen(cg.path) < sizeof(cg.path) && strstr(cg.path, "job_"));
		assert(strlen(cg.step) < sizeof(cg.step) && strlen(cg.controller) < sizeof(cg.controller));
	}
	r = cgroup_parse_memory_path(text, mem_path, sizeof(mem_path));
	assert(r >= 0 && r <= 2 && (r == 0 || strlen(mem_path) < sizeof(mem_path)));
	if (cgroup_parse_cpu_max(text, &cores) == 0)
		assert(cores >= 0);
	fuzz_limits(data, size);
	free(text);
	return 0;
}
