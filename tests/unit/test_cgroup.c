/*
 * Tests of Slurm job detection from /proc/PID/cgroup (v1, v2 and this
 * machine's hybrid layout) and of cgroup CPU limits, on hand-written
 * fixtures that follow Slurm's documented cgroup layouts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cgroup.h"
#include "collectors_fixture.h"
#include "procfs.h"

static int
parse_fixture(const char *rel, struct cgroup_slurm *cg)
{
	char path[1024], buf[4096];

	assert_true(procfs_read(fixture_path(path, sizeof(path), rel), buf, sizeof(buf)) > 0);
	return cgroup_parse_slurm(buf, cg);
}

static void
v2_job_and_step(void **state)
{
	struct cgroup_slurm cg;

	(void)state;
	assert_int_equal(parse_fixture("cgroup/v2-slurm.txt", &cg), 1);
	assert_int_equal(cg.job, 4242);
	assert_string_equal(cg.step, "0");
	assert_string_equal(cg.path, "/system.slice/slurmstepd.scope/job_4242");
	assert_int_equal(cg.version, 2);
	assert_int_equal(parse_fixture("cgroup/v2-slurm-extern.txt", &cg), 1);
	assert_string_equal(cg.step, "extern");
}

static void
v1_prefers_cpuset(void **state)
{
	struct cgroup_slurm cg;

	(void)state;
	assert_int_equal(parse_fixture("cgroup/v1-slurm.txt", &cg), 1);
	assert_int_equal(cg.job, 4242);
	assert_string_equal(cg.step, "batch");
	assert_string_equal(cg.path, "/slurm/uid_1000/job_4242");
	assert_int_equal(cg.version, 1);
	assert_string_equal(cg.controller, "cpuset");
}

static void
not_in_a_job(void **state)
{
	struct cgroup_slurm cg;

	(void)state;
	assert_int_equal(parse_fixture("cgroup/v2-none.txt", &cg), 0);
	assert_int_equal(parse_fixture("cgroup/this-machine.txt", &cg), 0);
	assert_int_equal(cg.job, 0);
	assert_int_equal(cgroup_parse_slurm("0::/job_x/step_0\n", &cg), 0);
	assert_int_equal(cgroup_parse_slurm("0::/a/job_12abc\n", &cg), 0);
}

static void
malformed_text(void **state)
{
	struct cgroup_slurm cg;

	(void)state;
	assert_int_equal(parse_fixture("cgroup/malformed.txt", &cg), -1);
}

static void
cpu_max_lines(void **state)
{
	double cores = -1;

	(void)state;
	assert_int_equal(cgroup_parse_cpu_max("max 100000\n", &cores), 0);
	assert_true(cores == 0);
	assert_int_equal(cgroup_parse_cpu_max("150000 100000\n", &cores), 0);
	assert_true(cores == 1.5);
	assert_int_equal(cgroup_parse_cpu_max("150000\n", &cores), -1);
	assert_int_equal(cgroup_parse_cpu_max("x 100000\n", &cores), -1);
	assert_int_equal(cgroup_parse_cpu_max("100 0\n", &cores), -1);
}

static void
limits_v2_and_v1(void **state)
{
	struct cgroup_slurm cg;
	char root[1024];
	double quota;
	int cpus;

	(void)state;
	assert_int_equal(parse_fixture("cgroup/v2-slurm.txt", &cg), 1);
	assert_int_equal(cgroup_cpu_limits(fixture_path(root, sizeof(root), "sys-slurm-v2"), &cg, &quota, &cpus), 0);
	assert_true(quota == 4.0);
	assert_int_equal(cpus, 4);
	assert_int_equal(parse_fixture("cgroup/v1-slurm.txt", &cg), 1);
	assert_int_equal(cgroup_cpu_limits(fixture_path(root, sizeof(root), "sys-slurm-v1"), &cg, &quota, &cpus), 0);
	assert_true(quota == 2.0);
	assert_int_equal(cpus, 4);
	/* The v2 job under the v1 tree: no such directory. */
	assert_int_equal(parse_fixture("cgroup/v2-slurm.txt", &cg), 1);
	assert_int_equal(cgroup_cpu_limits(root, &cg, &quota, &cpus), -1);
}

/* The memory cgroup from /proc/PID/cgroup, and the limit of its nearest limiting ancestor. */
static void
memory_limits_v2_and_v1(void **state)
{
	char root[1024], text[4096], path[512], file[1100];
	double bytes;
	FILE *f;
	size_t n;

	(void)state;
	snprintf(file, sizeof(file), "%s/cgroup/v1-slurm.txt", fixture_path(root, sizeof(root), ""));
	assert_non_null(f = fopen(file, "r"));
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	assert_int_equal(cgroup_parse_memory_path(text, path, sizeof(path)), 1);
	assert_string_equal(path, "/slurm/uid_1000/job_4242/step_batch/task_0");
	assert_int_equal(cgroup_memory_limit(fixture_path(root, sizeof(root), "sys-slurm-v1"), path, 1, &bytes), 0);
	assert_true(bytes == 4294967296.0);
	assert_int_equal(cgroup_parse_memory_path("0::/system.slice/slurmstepd.scope/job_4242/step_0/user/task_0\n",
						  path, sizeof(path)), 2);
	assert_int_equal(cgroup_memory_limit(fixture_path(root, sizeof(root), "sys-slurm-v2"), path, 2, &bytes), 0);
	assert_true(bytes == 8589934592.0);
	/* The task's own cgroup says max: the job's limit above it is the one in force. */
	assert_int_equal(cgroup_memory_limit(fixture_path(root, sizeof(root), "sys-slurm-v2"),
					     "/system.slice/slurmstepd.scope/job_4242/step_0/user/task_0", 2, &bytes), 0);
	assert_true(bytes == 8589934592.0);
	assert_int_equal(cgroup_parse_memory_path("1:name=systemd:/x\n", path, sizeof(path)), 0);
	assert_int_equal(cgroup_memory_limit(root, "/nowhere", 2, &bytes), -1);
	assert_true(bytes == 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(v2_job_and_step),
		cmocka_unit_test(v1_prefers_cpuset),
		cmocka_unit_test(not_in_a_job),
		cmocka_unit_test(malformed_text),
		cmocka_unit_test(cpu_max_lines),
		cmocka_unit_test(limits_v2_and_v1),
		cmocka_unit_test(memory_limits_v2_and_v1),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
