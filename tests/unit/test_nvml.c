/*
 * Tests of the NVML collector against the test double
 * (tests/nvml_double/libnvml-double.so, built by make check), which answers
 * fixed values for two GPUs, one with MIG on.  No GPU is needed: this checks
 * the collector's code path, names and units, not a driver.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "collector.h"
#include "collector_values.h"

static char double_path[1024];

static void *
init_double(char *why, size_t len)
{
	struct collector_env env = {"/proc", "/sys", double_path, 1.0};

	return collector_nvml.init(&env, why, len);
}

static void
per_gpu_values(void **state)
{
	struct collector_out out = {0};
	char why[256] = "";
	void *ctx;

	(void)state;
	unsetenv("NVML_DOUBLE_FAIL");
	ctx = init_double(why, sizeof(why));
	assert_non_null(ctx);
	assert_string_equal(why, "");
	collector_out_reset(&out, 1.0, 1.0);
	assert_int_equal(collector_nvml.sample_node(ctx, &out, why, sizeof(why)), COLLECTOR_OK);
	assert_true(collector_value_of(&out, 0, "gpu.0.util_percent") == 42);
	assert_true(collector_value_of(&out, 0, "gpu.0.mem_util_percent") == 17);
	assert_true(collector_value_of(&out, 0, "gpu.0.mem_used_bytes") == 4.0 * (1 << 30));
	assert_true(collector_value_of(&out, 0, "gpu.0.mem_total_bytes") == 16.0 * (1 << 30));
	assert_float_equal(collector_value_of(&out, 0, "gpu.0.power_watts"), 123.456, 1e-9);
	assert_true(collector_value_of(&out, 0, "gpu.0.temperature_celsius") == 55);
	assert_true(collector_value_of(&out, 0, "gpu.0.sm_clock_hz") == 1410e6);
	assert_true(collector_value_of(&out, 0, "gpu.1.util_percent") == 7);
	/* GPU 1 has MIG on with two instances of 10 GiB. */
	assert_true(collector_value_of(&out, 0, "gpu.1.mig.0.mem_used_bytes") == 1.0 * (1 << 30));
	assert_true(collector_value_of(&out, 0, "gpu.1.mig.1.mem_used_bytes") == 2.0 * (1 << 30));
	assert_true(collector_value_of(&out, 0, "gpu.1.mig.1.mem_total_bytes") == 10.0 * (1 << 30));
	assert_true(isnan(collector_value_of(&out, 0, "gpu.0.mig.0.mem_used_bytes")));
	collector_nvml.fini(ctx);
	collector_out_free(&out);
}

static void
per_job_attribution(void **state)
{
	struct collector_out out = {0};
	char why[256] = "", pid[32];
	pid_t self = getpid(), other = 1;
	struct collector_job mine = {5, &self, 1, NULL, 0}, theirs = {6, &other, 1, NULL, 0};
	json_t *desc;
	void *ctx;

	(void)state;
	snprintf(pid, sizeof(pid), "%d", (int)self);
	setenv("NVML_DOUBLE_PID", pid, 1);
	ctx = init_double(why, sizeof(why));
	assert_non_null(ctx);
	collector_out_reset(&out, 1.0, 1.0);
	assert_int_equal(collector_nvml.sample_node(ctx, &out, why, sizeof(why)), COLLECTOR_OK);
	assert_int_equal(collector_nvml.sample_job(ctx, &mine, &out, why, sizeof(why)), COLLECTOR_OK);
	assert_int_equal(collector_nvml.sample_job(ctx, &theirs, &out, why, sizeof(why)), COLLECTOR_OK);
	/* The process lists as node values: what the daemon checks before handing a GPU out. */
	assert_true(collector_value_of(&out, 0, "gpu.0.processes") == 1);
	assert_true(collector_value_of(&out, 0, "gpu.1.processes") == 0);
	assert_true(collector_value_of(&out, 5, "gpu.count") == 1);
	assert_true(collector_value_of(&out, 5, "gpu.mem_bytes") == 1.0 * (1 << 30));
	assert_true(collector_value_of(&out, 5, "gpu.util_percent") == 30);
	assert_true(isnan(collector_value_of(&out, 6, "gpu.count")));
	desc = collector_nvml.describe(ctx);
	assert_int_equal(json_array_size(json_object_get(desc, "gpus")), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(desc, "gpus"), 1), "uuid")),
			    "GPU-double-1");
	json_decref(desc);
	collector_nvml.fini(ctx);
	collector_out_free(&out);
	unsetenv("NVML_DOUBLE_PID");
}

/* Node and two jobs sampled as the sampler does: the node first, then each job. */
static void
sample_all(void *ctx, struct collector_out *out, double mono, const struct collector_job *a,
	   const struct collector_job *b)
{
	char why[256] = "";

	collector_out_reset(out, 1000.0 + mono, mono);
	assert_int_equal(collector_nvml.sample_node(ctx, out, why, sizeof(why)), COLLECTOR_OK);
	assert_int_equal(collector_nvml.sample_job(ctx, a, out, why, sizeof(why)), COLLECTOR_OK);
	assert_int_equal(collector_nvml.sample_job(ctx, b, out, why, sizeof(why)), COLLECTOR_OK);
}

static void
energy_from_the_counter_shared_by_sm(void **state)
{
	struct collector_out out = {0};
	char why[256] = "", pid[32];
	pid_t self = getpid(), other = getppid(), nobody = 1;
	struct collector_job mine = {5, &self, 1, NULL, 0}, theirs = {6, &other, 1, NULL, 0};
	struct collector_job idle = {7, &nobody, 1, NULL, 0};
	void *ctx;

	(void)state;
	snprintf(pid, sizeof(pid), "%d", (int)self);
	setenv("NVML_DOUBLE_PID", pid, 1);
	snprintf(pid, sizeof(pid), "%d", (int)other);
	setenv("NVML_DOUBLE_PID2", pid, 1);
	setenv("NVML_DOUBLE_ENERGY_MJ", "1000000", 1);
	ctx = init_double(why, sizeof(why));
	assert_non_null(ctx);
	/* The first tick is the counter's baseline. */
	sample_all(ctx, &out, 1.0, &mine, &theirs);
	assert_true(collector_value_of(&out, 0, "gpu.0.energy_joules") == 0);
	assert_true(collector_value_of(&out, 5, "energy.gpu_joules") == 0);
	/* 250 J on GPU 0 (125 J on GPU 1, which runs no job) over the next tick. */
	setenv("NVML_DOUBLE_ENERGY_MJ", "1250000", 1);
	sample_all(ctx, &out, 2.0, &mine, &theirs);
	assert_float_equal(collector_value_of(&out, 0, "gpu.0.energy_joules"), 250.0, 1e-9);
	assert_float_equal(collector_value_of(&out, 0, "gpu.1.energy_joules"), 125.0, 1e-9);
	assert_float_equal(collector_value_of(&out, 0, "energy.gpu_joules"), 375.0, 1e-9);
	/* GPU 0's processes run 30 % and 10 % SM: three quarters and one quarter. */
	assert_float_equal(collector_value_of(&out, 5, "energy.gpu_joules"), 187.5, 1e-9);
	assert_float_equal(collector_value_of(&out, 6, "energy.gpu_joules"), 62.5, 1e-9);
	/* Cumulative; a counter that went back (a driver reload) adds nothing. */
	setenv("NVML_DOUBLE_ENERGY_MJ", "1000", 1);
	sample_all(ctx, &out, 3.0, &mine, &idle);
	assert_float_equal(collector_value_of(&out, 0, "gpu.0.energy_joules"), 250.0, 1e-9);
	assert_float_equal(collector_value_of(&out, 5, "energy.gpu_joules"), 187.5, 1e-9);
	/* A job with no process on a GPU has no GPU energy series. */
	assert_true(isnan(collector_value_of(&out, 7, "energy.gpu_joules")));
	/* A job that left the node is forgotten: seen again, it starts from nothing. */
	setenv("NVML_DOUBLE_ENERGY_MJ", "5000", 1);
	collector_nvml.job_gone(ctx, 5);
	sample_all(ctx, &out, 4.0, &mine, &theirs);
	assert_float_equal(collector_value_of(&out, 5, "energy.gpu_joules"), 3.0, 1e-9);
	assert_float_equal(collector_value_of(&out, 6, "energy.gpu_joules"), 63.5, 1e-9);
	collector_nvml.fini(ctx);
	collector_out_free(&out);
	unsetenv("NVML_DOUBLE_PID");
	unsetenv("NVML_DOUBLE_PID2");
	unsetenv("NVML_DOUBLE_ENERGY_MJ");
}

static void
energy_from_power_without_the_counter(void **state)
{
	struct collector_out out = {0};
	char why[256] = "";
	void *ctx;

	(void)state;
	/* Before Volta the driver has no energy counter: power times the tick's length. */
	setenv("NVML_DOUBLE_FAIL", "energy", 1);
	ctx = init_double(why, sizeof(why));
	assert_non_null(ctx);
	collector_out_reset(&out, 1001.0, 1.0);
	assert_int_equal(collector_nvml.sample_node(ctx, &out, why, sizeof(why)), COLLECTOR_OK);
	assert_true(collector_value_of(&out, 0, "gpu.0.energy_joules") == 0);
	collector_out_reset(&out, 1003.0, 3.0);
	assert_int_equal(collector_nvml.sample_node(ctx, &out, why, sizeof(why)), COLLECTOR_OK);
	assert_float_equal(collector_value_of(&out, 0, "gpu.0.energy_joules"), 123.456 * 2, 1e-9);
	assert_float_equal(collector_value_of(&out, 0, "gpu.1.energy_joules"), 60.0 * 2, 1e-9);
	assert_float_equal(collector_value_of(&out, 0, "energy.gpu_joules"), (123.456 + 60.0) * 2, 1e-9);
	collector_nvml.fini(ctx);
	collector_out_free(&out);
	unsetenv("NVML_DOUBLE_FAIL");
}

static void
reasons_when_unavailable(void **state)
{
	struct collector_env env = {"/proc", "/sys", "/nonexistent/libnvidia-ml.so.1", 1.0};
	char why[512] = "";

	(void)state;
	assert_null(collector_nvml.init(&env, why, sizeof(why)));
	assert_non_null(strstr(why, "/nonexistent/libnvidia-ml.so.1 not found"));
	setenv("NVML_DOUBLE_FAIL", "init", 1);
	assert_null(init_double(why, sizeof(why)));
	assert_string_equal(why, "nvmlInit failed: Driver Not Loaded");
	setenv("NVML_DOUBLE_FAIL", "count", 1);
	assert_null(init_double(why, sizeof(why)));
	assert_string_equal(why, "NVML found no GPU");
	unsetenv("NVML_DOUBLE_FAIL");
	/* A library without NVML's symbols: the collector names the first one missing. */
	env.nvml_library = "libm.so.6";
	assert_null(collector_nvml.init(&env, why, sizeof(why)));
	assert_non_null(strstr(why, "lacks nvmlInit_v2"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(per_gpu_values),
		cmocka_unit_test(per_job_attribution),
		cmocka_unit_test(energy_from_the_counter_shared_by_sm),
		cmocka_unit_test(energy_from_power_without_the_counter),
		cmocka_unit_test(reasons_when_unavailable),
	};
	const char *b = getenv("DLPROF_BUILDDIR");

	snprintf(double_path, sizeof(double_path), "%s/tests/nvml_double/libnvml-double.so", b != NULL ? b : ".");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
