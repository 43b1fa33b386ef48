/*
 * Tests of the perf collector: the reasons given when perf_event_open is
 * refused or finds no PMU (pure functions, so every path is covered on any
 * kernel), and real software counting of this test's own busy thread.
 * Hardware events are checked only for their honest absence or presence.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "collector.h"
#include "perf_reason.h"

static void
reason_paranoid(void **state)
{
	char why[256];

	(void)state;
	perf_reason_open(EACCES, 3, why, sizeof(why));
	assert_non_null(strstr(why, "perf_event_paranoid is 3: grant CAP_PERFMON"));
	perf_reason_open(EPERM, PERF_PARANOID_UNKNOWN, why, sizeof(why));
	assert_non_null(strstr(why, "grant CAP_PERFMON"));
	/* At 2 or less paranoid is not the cause: never ask for what is already set. */
	for (int paranoid = -1; paranoid <= 2; paranoid++) {
		perf_reason_open(EPERM, paranoid, why, sizeof(why));
		assert_null(strstr(why, "2 or less"));
		assert_non_null(strstr(why, "seccomp"));
		assert_non_null(strstr(why, "LSM"));
	}
	perf_reason_open(ENOSYS, 1, why, sizeof(why));
	assert_non_null(strstr(why, "not supported by this kernel"));
	perf_reason_open(EMFILE, 1, why, sizeof(why));
	assert_non_null(strstr(why, "LimitNOFILE"));
}

static void
reason_no_pmu(void **state)
{
	char why[256];

	(void)state;
	perf_reason_hw(ENOENT, 0, why, sizeof(why));
	assert_non_null(strstr(why, "no PMU"));
	perf_reason_hw(EOPNOTSUPP, 1, why, sizeof(why));
	assert_non_null(strstr(why, "does not support cycles"));
	perf_reason_hw(EACCES, 1, why, sizeof(why));
	assert_non_null(strstr(why, "CAP_PERFMON"));
}

static double
mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double
value_of(const struct collector_out *out, const char *name)
{
	size_t i;

	for (i = 0; i < out->n; i++)
		if (strcmp(out->v[i].name, name) == 0)
			return out->v[i].value;
	return NAN;
}

/* A CPU PMU is "cpu" (x86) or any event source of PERF_TYPE_RAW (ARM, Intel hybrid); software ones are not. */
static void
core_pmu_found_by_name_or_type(void **state)
{
	char dir[] = "/tmp/dlprof-test-pmu-XXXXXX", path[512], cmd[600];
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_false(perf_core_pmu(dir));  /* no bus/event_source at all */
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/bus/event_source/devices/software %s/bus/event_source/devices/armv8_pmuv3_0",
		 dir, dir);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/bus/event_source/devices/software/type", dir);
	assert_non_null(f = fopen(path, "w"));
	fputs("1\n", f);
	fclose(f);
	assert_false(perf_core_pmu(dir));  /* armv8_pmuv3_0 has no type yet */
	snprintf(path, sizeof(path), "%s/bus/event_source/devices/armv8_pmuv3_0/type", dir);
	assert_non_null(f = fopen(path, "w"));
	fputs("4\n", f);
	fclose(f);
	assert_true(perf_core_pmu(dir));
	snprintf(cmd, sizeof(cmd), "rm -rf %s/bus/event_source/devices/armv8_pmuv3_0 && mkdir %s/bus/event_source/devices/cpu",
		 dir, dir);
	assert_int_equal(system(cmd), 0);
	assert_true(perf_core_pmu(dir));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* Counts this process while it spins for a fifth of a second. */
static void
counts_own_busy_thread(void **state)
{
	struct collector_env env = {"/proc", "/sys", NULL, 1.0};
	struct collector_out out = {0};
	char why[256] = "";
	pid_t self = getpid();
	struct collector_job job = {1, &self, 1, NULL, 0};
	volatile unsigned long spin = 0;
	double t0, cores;
	void *ctx;

	(void)state;
	ctx = collector_perf.init(&env, why, sizeof(why));
	if (ctx == NULL) {
		/* Refused here (paranoid 3, seccomp): the reason must say what to do. */
		assert_true(strlen(why) > 10);
		skip();
	}
	if (access("/sys/bus/event_source/devices/cpu", F_OK) != 0)
		assert_non_null(strstr(why, "no PMU"));
	collector_out_reset(&out, 1.0, t0 = mono_s());
	assert_int_equal(collector_perf.sample_job(ctx, &job, &out, why, sizeof(why)), COLLECTOR_OK);
	assert_true(isnan(value_of(&out, "perf.task_clock_cores")));
	while (mono_s() - t0 < 0.2)
		spin++;
	collector_out_reset(&out, 2.0, mono_s());
	assert_int_equal(collector_perf.sample_job(ctx, &job, &out, why, sizeof(why)), COLLECTOR_OK);
	cores = value_of(&out, "perf.task_clock_cores");
	/* One thread spun: at most one core, and more than nothing even on a loaded machine. */
	assert_true(cores > 0.05 && cores <= 1.05);
	/* The software group's four members come back from one read, each in its place. */
	assert_false(isnan(value_of(&out, "perf.context_switches_per_s")));
	assert_false(isnan(value_of(&out, "perf.cpu_migrations_per_s")));
	assert_false(isnan(value_of(&out, "perf.page_faults_per_s")));
	/* Between detail ticks the counters are not read. */
	collector_out_reset(&out, 3.0, mono_s());
	out.detail = 0;
	assert_int_equal(collector_perf.sample_job(ctx, &job, &out, why, sizeof(why)), COLLECTOR_OK);
	assert_int_equal(out.n, 0);
	collector_perf.job_gone(ctx, 1);
	collector_perf.fini(ctx);
	collector_out_free(&out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reason_paranoid),
		cmocka_unit_test(reason_no_pmu),
		cmocka_unit_test(core_pmu_found_by_name_or_type),
		cmocka_unit_test(counts_own_busy_thread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
