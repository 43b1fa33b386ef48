/*
 * Tests of the /proc parsers on files copied from this machine's /proc
 * (tests/fixtures/proc-t0, a 3-thread busy process) and on hand-made
 * edge cases.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "collectors_fixture.h"
#include "procfs.h"

#define BUSY_PID 19869

static void
read_fixture(const char *rel, char *buf, size_t len)
{
	char path[1024];

	assert_true(procfs_read(fixture_path(path, sizeof(path), rel), buf, len) > 0);
}

static void
stat_of_real_process(void **state)
{
	struct procfs_stat st;
	char buf[4096];

	(void)state;
	read_fixture("proc-t0/19869/stat", buf, sizeof(buf));
	assert_int_equal(procfs_parse_stat(buf, &st), 0);
	assert_string_equal(st.comm, "busy");
	assert_int_equal(st.state, 'S');
	assert_int_equal(st.ppid, 19866);
	assert_int_equal(st.utime, 96);
	assert_int_equal(st.stime, 0);
	assert_int_equal(st.num_threads, 4);
	assert_int_equal(st.starttime, 78382);
	assert_int_equal(st.rss_pages, 273);
	assert_int_equal(st.minflt, 130);
	assert_int_equal(st.processor, 1);
}

static void
stat_comm_with_spaces_and_parens(void **state)
{
	struct procfs_stat st;
	const char *line = "42 (a) (b c)) R 1 42 42 0 -1 0 7 0 3 0 11 12 0 0 20 0 2 0 555 100 9 18446744073709551615 "
			   "0 0 0 0 0 0 0 0 0 0 0 0 17 3 0\n";

	(void)state;
	assert_int_equal(procfs_parse_stat(line, &st), 0);
	assert_string_equal(st.comm, "a) (b c)");
	assert_int_equal(st.state, 'R');
	assert_int_equal(st.minflt, 7);
	assert_int_equal(st.majflt, 3);
	assert_int_equal(st.utime, 11);
	assert_int_equal(st.stime, 12);
	assert_int_equal(st.num_threads, 2);
	assert_int_equal(st.starttime, 555);
	assert_int_equal(st.rss_pages, 9);
	assert_int_equal(st.processor, 3);
}

static void
stat_rejects_garbage(void **state)
{
	struct procfs_stat st;

	(void)state;
	assert_int_equal(procfs_parse_stat("no parens here", &st), -1);
	assert_int_equal(procfs_parse_stat("1 (x) S 1", &st), -1);
	assert_int_equal(procfs_parse_stat("1 (x) S 1 1 1 0 -1 0 x 0 3 0 11 12 0 0 20 0 2 0 555 100 9\n", &st), -1);
}

/* A real-time thread's negative priority, and an old kernel's line that ends at rss. */
static void
stat_negative_fields_and_short_lines(void **state)
{
	struct procfs_stat st;

	(void)state;
	assert_int_equal(procfs_parse_stat("7 (rt) S 1 7 7 0 -1 0 1 0 0 0 5 6 0 0 -51 0 1 0 99 100 4\n", &st), 0);
	assert_int_equal(st.utime, 5);
	assert_int_equal(st.num_threads, 1);
	assert_int_equal(st.starttime, 99);
	assert_int_equal(st.rss_pages, 4);
	assert_int_equal(st.processor, -1);
	/* One field short of rss: refused. */
	assert_int_equal(procfs_parse_stat("7 (rt) S 1 7 7 0 -1 0 1 0 0 0 5 6 0 0 -51 0 1 0 99 100\n", &st), -1);
}

static void
schedstat_of_real_thread(void **state)
{
	struct procfs_schedstat ss;
	char buf[256];

	(void)state;
	read_fixture("proc-sched-t0/8585/task/8586/schedstat", buf, sizeof(buf));
	assert_int_equal(procfs_parse_schedstat(buf, &ss), 0);
	assert_true(ss.cpu_ns == 1018313330ULL);
	assert_true(ss.wait_ns == 318922230ULL);
	assert_true(ss.slices == 914);
	assert_int_equal(procfs_parse_schedstat("12 34\n", &ss), -1);
	assert_int_equal(procfs_parse_schedstat("12 -3 4\n", &ss), -1);
}

/* A kept descriptor reads the file's current text from its start, as procfs regenerates it. */
static void
reread_sees_rewrites(void **state)
{
	char path[] = "/tmp/dlprof-test-reread-XXXXXX", buf[64];
	int fd, w;

	(void)state;
	w = mkstemp(path);
	assert_true(w >= 0);
	assert_int_equal(write(w, "first version\n", 14), 14);
	fd = procfs_openf("%s", path);
	assert_true(fd >= 0);
	assert_int_equal(procfs_reread(fd, buf, sizeof(buf)), 14);
	assert_string_equal(buf, "first version\n");
	assert_int_equal(ftruncate(w, 0), 0);
	assert_int_equal(pwrite(w, "v2", 2, 0), 2);
	assert_int_equal(procfs_reread(fd, buf, sizeof(buf)), 2);
	assert_string_equal(buf, "v2");
	/* A buffer too small gets what fits, terminated. */
	assert_int_equal(procfs_reread(fd, buf, 2), 1);
	assert_string_equal(buf, "v");
	close(fd);
	close(w);
	unlink(path);
}

static void
cpu_line_and_btime(void **state)
{
	struct procfs_cpu cpu;
	char buf[16384];

	(void)state;
	read_fixture("proc-t0/stat", buf, sizeof(buf));
	assert_int_equal(procfs_parse_cpu(buf, &cpu), 0);
	assert_int_equal(cpu.ncpu, 2);
	assert_true(cpu.btime > 1600000000);
	assert_true(cpu.user + cpu.system + cpu.idle > 0);
	assert_int_equal(procfs_parse_cpu("intr 1 2 3\n", &cpu), -1);
}

static void
meminfo_and_loadavg(void **state)
{
	struct procfs_mem mem;
	struct procfs_load load;
	char buf[8192];

	(void)state;
	read_fixture("proc-t0/meminfo", buf, sizeof(buf));
	assert_int_equal(procfs_parse_meminfo(buf, &mem), 0);
	assert_true(mem.total_kb > 0);
	assert_true(mem.available_kb > 0 && mem.available_kb <= mem.total_kb);
	/* Kernels before 3.14: no MemAvailable, free memory stands in. */
	assert_int_equal(procfs_parse_meminfo("MemTotal: 100 kB\nMemFree: 40 kB\n", &mem), 0);
	assert_int_equal(mem.available_kb, 40);
	assert_int_equal(procfs_parse_meminfo("Buffers: 1 kB\n", &mem), -1);
	read_fixture("proc-t0/loadavg", buf, sizeof(buf));
	assert_int_equal(procfs_parse_loadavg(buf, &load), 0);
	assert_true(load.total > 0);
	assert_int_equal(procfs_parse_loadavg("0.5 0.25 0.125 3/200 999\n", &load), 0);
	assert_true(load.load1 == 0.5 && load.load5 == 0.25 && load.load15 == 0.125);
	assert_int_equal(load.running, 3);
	assert_int_equal(load.total, 200);
}

static void
status_fields(void **state)
{
	char buf[8192], list[64];

	(void)state;
	read_fixture("proc-t1/19869/task/19871/status", buf, sizeof(buf));
	assert_int_equal(procfs_status_int(buf, "voluntary_ctxt_switches"), 0);
	assert_int_equal(procfs_status_int(buf, "nonvoluntary_ctxt_switches"), 765);
	assert_int_equal(procfs_status_int(buf, "NoSuchKey"), -1);
	assert_int_equal(procfs_status_str(buf, "Cpus_allowed_list", list, sizeof(list)), 0);
	assert_string_equal(list, "0-1");
	assert_int_equal(procfs_status_str(buf, "Name", list, sizeof(list)), 0);
	assert_string_equal(list, "busy");
}

static void
cpu_lists(void **state)
{
	unsigned char mask[16];

	(void)state;
	assert_int_equal(procfs_cpulist_count("0-3,8,10-11\n"), 7);
	assert_int_equal(procfs_cpulist_count("5"), 1);
	assert_int_equal(procfs_cpulist_count(""), 0);
	assert_int_equal(procfs_cpulist_count("3-1"), -1);
	assert_int_equal(procfs_cpulist_count("a-b"), -1);
	assert_int_equal(procfs_cpulist_count("1-"), -1);
	assert_int_equal(procfs_cpulist_mask("1-2,14-20", mask, 16), 0);
	assert_int_equal(mask[0], 0);
	assert_int_equal(mask[1], 1);
	assert_int_equal(mask[2], 1);
	assert_int_equal(mask[3], 0);
	assert_int_equal(mask[15], 1);
}

/* What the count and the mask, parsed by one walker, each check on their own. */
static void
cpu_list_edges(void **state)
{
	unsigned char mask[16];

	(void)state;
	assert_int_equal(procfs_cpulist_count(" 0-3 "), 4);
	assert_int_equal(procfs_cpulist_count("0-3x"), -1);
	assert_int_equal(procfs_cpulist_count("0-65535"), 65536);
	assert_int_equal(procfs_cpulist_count("0-65536"), -1);
	assert_int_equal(procfs_cpulist_mask("3-1", mask, 16), -1);
	assert_int_equal(procfs_cpulist_mask("0,9-100000", mask, 16), 0);
	assert_int_equal(mask[0], 1);
	assert_int_equal(mask[8], 0);
	assert_int_equal(mask[15], 1);
	assert_int_equal(procfs_cpulist_mask("\n", mask, 16), 0);
	assert_int_equal(mask[0], 0);
}

static void
environ_lookup(void **state)
{
	static const char env[] = "A=1\0SLURM_JOB_ID=77\0SLURM_JOB_IDX=9\0EMPTY=\0";
	char v[16];

	(void)state;
	assert_int_equal(procfs_environ_get(env, sizeof(env) - 1, "SLURM_JOB_ID", v, sizeof(v)), 0);
	assert_string_equal(v, "77");
	assert_int_equal(procfs_environ_get(env, sizeof(env) - 1, "A", v, sizeof(v)), 0);
	assert_string_equal(v, "1");
	assert_int_equal(procfs_environ_get(env, sizeof(env) - 1, "SLURM", v, sizeof(v)), -1);
	assert_int_equal(procfs_environ_get(env, sizeof(env) - 1, "NONE", v, sizeof(v)), -1);
	/* Not NUL-terminated at the end: the last entry still counts, nothing read past len. */
	assert_int_equal(procfs_environ_get("X=abc", 5, "X", v, sizeof(v)), 0);
	assert_string_equal(v, "abc");
}

static void
list_task_ids(void **state)
{
	char path[1024];
	pid_t *ids;
	ssize_t n;

	(void)state;
	n = procfs_list_ids(fixture_path(path, sizeof(path), "proc-t0/19869/task"), &ids);
	assert_int_equal(n, 4);
	assert_int_equal(ids[0], BUSY_PID);
	assert_true(ids[1] < ids[2] && ids[2] < ids[3]);
	free(ids);
	assert_int_equal(procfs_list_ids("/nonexistent-dlprof", &ids), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stat_of_real_process),
		cmocka_unit_test(stat_comm_with_spaces_and_parens),
		cmocka_unit_test(stat_rejects_garbage),
		cmocka_unit_test(stat_negative_fields_and_short_lines),
		cmocka_unit_test(schedstat_of_real_thread),
		cmocka_unit_test(reread_sees_rewrites),
		cmocka_unit_test(cpu_line_and_btime),
		cmocka_unit_test(meminfo_and_loadavg),
		cmocka_unit_test(status_fields),
		cmocka_unit_test(cpu_lists),
		cmocka_unit_test(cpu_list_edges),
		cmocka_unit_test(environ_lookup),
		cmocka_unit_test(list_task_ids),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
