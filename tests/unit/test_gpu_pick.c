/*
 * Tests of the GPU pick (daemon/gpu_pick.c) over fixture GPU states: busy
 * by process, by utilisation and by memory are passed over, a lease keeps
 * a GPU from the next asker and gives the same holder the same GPUs, a
 * Slurm allocation is never left, too few idle GPUs fill up with the least
 * busy and say so, and without NVML nothing is verified.  Also the
 * mapping's side (knobs_env.c): picked UUIDs become CUDA_VISIBLE_DEVICES,
 * indices come with CUDA_DEVICE_ORDER=PCI_BUS_ID.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "gpu_pick.h"
#include "knobs_env.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* GPU i idle: no process, 0 %, 256 MiB of 16 GiB. */
static struct gpu_seen idle_gpu(int i)
{
	struct gpu_seen g = {.index = i, .util_percent = 0, .mem_used_bytes = 0.25 * GIB, .mem_total_bytes = 16 * GIB,
			     .processes = 0};

	snprintf(g.uuid, sizeof(g.uuid), "GPU-fixture-%d", i);
	return g;
}

static void pick(struct gpu_leases *l, const struct gpu_seen *g, size_t n, long want, const char *allowed,
		 const char *holder, double now, struct gpu_pick *out)
{
	struct gpu_pick_request req = {want, allowed, holder, now, NULL, 0};

	gpu_pick(l, g, n, &req, out);
}

static void passes_over_busy_gpus(void **state)
{
	struct gpu_seen g[5] = {idle_gpu(0), idle_gpu(1), idle_gpu(2), idle_gpu(3), idle_gpu(4)};
	struct gpu_leases *l = gpu_leases_new(60);
	struct gpu_pick p;

	(void)state;
	g[0].processes = 1;                 /* a process runs on it, nothing else shows */
	g[1].util_percent = 35;             /* busy by utilisation */
	g[2].mem_used_bytes = 6 * GIB;      /* memory held, no process listed (another container) */
	pick(l, g, 5, 2, NULL, "a", 100, &p);
	assert_true(p.verified);
	assert_int_equal(p.n, 2);
	assert_int_equal(p.idle, 2);
	assert_int_equal(p.index[0], 3);
	assert_int_equal(p.index[1], 4);
	assert_string_equal(p.devices, "GPU-fixture-3,GPU-fixture-4");
	assert_false(p.by_index);
	assert_non_null(strstr(p.reason, "2 idle GPUs of this node picked: 3,4"));
	gpu_leases_free(l);
}

static void a_lease_keeps_a_gpu_from_the_next_asker(void **state)
{
	struct gpu_seen g[3] = {idle_gpu(0), idle_gpu(1), idle_gpu(2)};
	struct gpu_leases *l = gpu_leases_new(60);
	struct gpu_pick a, b, again, later;

	(void)state;
	pick(l, g, 3, 1, NULL, "slurm:1", 100, &a);
	pick(l, g, 3, 1, NULL, "slurm:2", 101, &b);
	assert_int_equal(a.index[0], 0);
	assert_int_equal(b.index[0], 1);   /* 0 is leased: still idle in the sample, but handed out */
	/* The first holder asking again (its registration after its recommendation) gets the same GPU. */
	pick(l, g, 3, 1, NULL, "slurm:1", 102, &again);
	assert_int_equal(again.n, 1);
	assert_int_equal(again.index[0], 0);
	assert_non_null(strstr(again.reason, "already leased to slurm:1"));
	/* Anonymous askers never share a lease. */
	pick(l, g, 3, 1, NULL, NULL, 103, &later);
	assert_int_equal(later.index[0], 2);
	pick(l, g, 3, 1, NULL, NULL, 104, &later);
	assert_int_equal(later.idle, 0);   /* 0, 1 and 2 are leased: a busy one, said so */
	assert_non_null(strstr(later.reason, "handed to another job"));
	/* After the lease, an idle GPU is free again. */
	pick(l, g, 3, 1, NULL, "slurm:3", 100 + 61 + 3, &later);
	assert_int_equal(later.index[0], 0);
	gpu_leases_free(l);
}

static void a_running_job_keeps_its_gpu_past_the_lease(void **state)
{
	struct gpu_seen g[2] = {idle_gpu(0), idle_gpu(1)};
	struct gpu_leases *l = gpu_leases_new(60);
	const char *running[] = {"slurm:1"};
	struct gpu_pick_request req = {1, NULL, "slurm:1", 100, running, 1};
	struct gpu_pick p;

	(void)state;
	gpu_pick(l, g, 2, &req, &p);
	assert_int_equal(p.index[0], 0);
	/* Long after the lease the job still runs, loading data: its GPU shows idle but is its own. */
	req = (struct gpu_pick_request){1, NULL, "slurm:2", 1000, running, 1};
	gpu_pick(l, g, 2, &req, &p);
	assert_int_equal(p.index[0], 1);
	/* The job itself asking again (another task) gets its GPU. */
	req = (struct gpu_pick_request){1, NULL, "slurm:1", 1001, running, 1};
	gpu_pick(l, g, 2, &req, &p);
	assert_int_equal(p.index[0], 0);
	/* Once it ended, the GPU is free. */
	req = (struct gpu_pick_request){1, NULL, NULL, 2000, NULL, 0};
	gpu_pick(l, g, 2, &req, &p);
	assert_int_equal(p.index[0], 0);
	gpu_leases_free(l);
}

static void stays_inside_the_slurm_allocation(void **state)
{
	struct gpu_seen g[4] = {idle_gpu(0), idle_gpu(1), idle_gpu(2), idle_gpu(3)};
	struct gpu_leases *l = gpu_leases_new(60);
	struct gpu_pick p;

	(void)state;
	g[2].processes = 2;
	/* Slurm gave GPUs 2 and 3 (SLURM_JOB_GPUS): 0 and 1 are idle but not the job's. */
	pick(l, g, 4, 1, "2,3", "slurm:7", 100, &p);
	assert_int_equal(p.n, 1);
	assert_int_equal(p.index[0], 3);
	assert_non_null(strstr(p.reason, "the job's allocation"));
	/* By UUID (or its leading part, as CUDA takes it), the same. */
	pick(l, g, 4, 2, "GPU-fixture-2, GPU-fixture-3", "slurm:8", 100, &p);
	assert_int_equal(p.n, 2);
	for (int i = 0; i < p.n; i++)
		assert_true(p.index[i] == 2 || p.index[i] == 3);
	/* An allocation NVML does not know: nothing is verified, the mapping keeps the first N. */
	pick(l, g, 4, 1, "GPU-elsewhere", "slurm:9", 100, &p);
	assert_false(p.verified);
	assert_int_equal(p.n, 0);
	assert_string_equal(p.devices, "");
	gpu_leases_free(l);
}

static void too_few_idle_fills_with_the_least_busy_and_says_so(void **state)
{
	struct gpu_seen g[3] = {idle_gpu(0), idle_gpu(1), idle_gpu(2)};
	struct gpu_leases *l = gpu_leases_new(60);
	struct gpu_pick p;

	(void)state;
	g[0].util_percent = 90;
	g[0].processes = 3;
	g[1].util_percent = 20;
	g[1].processes = 1;
	pick(l, g, 3, 2, NULL, "j", 100, &p);
	assert_true(p.verified);
	assert_int_equal(p.n, 2);
	assert_int_equal(p.idle, 1);
	assert_int_equal(p.index[0], 2);
	assert_int_equal(p.index[1], 1);   /* less busy than 0 */
	assert_non_null(strstr(p.reason, "only 1 of the 2 GPUs asked are idle"));
	assert_non_null(strstr(p.reason, "GPU 1: a process runs on it"));
	/* A holder handed a busy GPU asks again once one is free: it gets the free one, not its lease. */
	g[2].processes = 1;
	pick(l, g, 3, 1, NULL, "m", 200, &p);
	assert_int_equal(p.idle, 0);
	assert_int_equal(p.index[0], 2);
	g[1].processes = 0;
	g[1].util_percent = 0;
	pick(l, g, 3, 1, NULL, "m", 201, &p);
	assert_int_equal(p.idle, 1);
	assert_int_equal(p.index[0], 1);
	g[1].processes = 1;
	g[1].util_percent = 20;
	g[2].processes = 0;
	/* More than there are: all of them, said so. */
	pick(l, g, 3, 5, NULL, "k", 100, &p);
	assert_int_equal(p.n, 3);
	assert_non_null(strstr(p.reason, "5 GPUs asked but this node has only 3"));
	gpu_leases_free(l);
}

static void a_gpu_missing_from_the_sample_or_in_mig_mode_is_not_idle(void **state)
{
	struct gpu_seen g[3] = {idle_gpu(0), idle_gpu(1), idle_gpu(2)};
	struct gpu_leases *l = gpu_leases_new(60);
	struct gpu_pick p;

	(void)state;
	g[0].processes = -1;   /* the driver gave no process list */
	g[1].mig = true;       /* CUDA would see its instances, not the GPU's UUID */
	pick(l, g, 3, 1, NULL, "j", 100, &p);
	assert_int_equal(p.index[0], 2);
	/* Busy GPUs fill a short pick, measured ones first, a MIG one never (after j's lease). */
	g[2].processes = 1;
	pick(l, g, 3, 1, NULL, "k", 200, &p);
	assert_int_equal(p.n, 1);
	assert_int_equal(p.index[0], 2);
	pick(l, g, 3, 1, "1", "m", 200, &p);
	assert_false(p.verified);
	assert_int_equal(p.n, 0);
	assert_non_null(strstr(p.reason, "in MIG mode"));
	gpu_leases_free(l);
}

static void without_nvml_nothing_is_verified(void **state)
{
	struct gpu_leases *l = gpu_leases_new(60);
	struct gpu_pick p;
	json_t *config = json_pack("{s:i}", "gpus", 2), *env;

	(void)state;
	pick(l, NULL, 0, 2, NULL, "j", 100, &p);
	assert_false(p.verified);
	assert_int_equal(p.n, 0);
	assert_non_null(strstr(p.reason, "could not be verified"));
	assert_non_null(strstr(p.reason, "first 2 devices"));
	/* What the mapping does then: today's first N, nothing more. */
	env = knobs_env(config, p.verified ? p.devices : NULL);
	assert_string_equal(json_string_value(json_object_get(env, "CUDA_VISIBLE_DEVICES")), "0,1");
	assert_null(json_object_get(env, "CUDA_DEVICE_ORDER"));
	json_decref(env);
	json_decref(config);
	gpu_leases_free(l);
}

static void the_mapping_exports_what_was_picked(void **state)
{
	struct gpu_seen g[3] = {idle_gpu(0), idle_gpu(1), idle_gpu(2)};
	struct gpu_leases *l = gpu_leases_new(60);
	struct gpu_pick p;
	json_t *config = json_pack("{s:i}", "gpus", 1), *env, *j;

	(void)state;
	g[0].processes = 1;
	pick(l, g, 3, 1, NULL, "j", 100, &p);
	env = knobs_env(config, p.devices);
	assert_string_equal(json_string_value(json_object_get(env, "CUDA_VISIBLE_DEVICES")), "GPU-fixture-1");
	assert_null(json_object_get(env, "CUDA_DEVICE_ORDER"));
	json_decref(env);
	j = gpu_pick_json(&p);
	assert_true(json_is_true(json_object_get(j, "verified")));
	assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(j, "devices"), 0), "index")), 1);
	json_decref(j);
	/* A GPU without a UUID: indices, in NVML's (PCI bus) order. */
	g[2].uuid[0] = '\0';
	g[1].processes = 1;
	pick(l, g, 3, 1, NULL, "k", 100, &p);
	assert_true(p.by_index);
	env = knobs_env(config, p.devices);
	assert_string_equal(json_string_value(json_object_get(env, "CUDA_VISIBLE_DEVICES")), "2");
	assert_string_equal(json_string_value(json_object_get(env, "CUDA_DEVICE_ORDER")), "PCI_BUS_ID");
	json_decref(env);
	json_decref(config);
	gpu_leases_free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(passes_over_busy_gpus),
		cmocka_unit_test(a_lease_keeps_a_gpu_from_the_next_asker),
		cmocka_unit_test(a_running_job_keeps_its_gpu_past_the_lease),
		cmocka_unit_test(stays_inside_the_slurm_allocation),
		cmocka_unit_test(too_few_idle_fills_with_the_least_busy_and_says_so),
		cmocka_unit_test(a_gpu_missing_from_the_sample_or_in_mig_mode_is_not_idle),
		cmocka_unit_test(without_nvml_nothing_is_verified),
		cmocka_unit_test(the_mapping_exports_what_was_picked),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
