/*
 * Knob spaces: node-derived ranges and the prior's rules, declared knobs
 * replacing them, bad declarations refused, candidates and JSON configs,
 * mapping between spaces, and the filters that keep proposals to what a job
 * can run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "knobs.h"

static const struct knob_topology two_cpus = {.cpus_allowed = 2, .cores_allowed = 2, .numa_cores = 2};
static const struct knob_topology big = {.cpus_allowed = 64, .cores_allowed = 32, .numa_cores = 16,
					 .gpus_total = 4, .gpus_free = 4};

static void build(struct knob_space *sp, const struct knob_topology *topo, const char *declared)
{
	json_t *d = declared ? json_loads(declared, 0, NULL) : NULL;
	char err[200] = "";
	int rc = knobs_space_build(sp, topo, d, err, sizeof(err));

	json_decref(d);
	if (rc != 0)
		fail_msg("knobs_space_build: %s", err);
}

static long prior_value(const struct knob_space *sp, enum knob_id id)
{
	return knobs_int_value(sp, knobs_prior_candidate(sp), id, -1);
}

static void test_builtin_small_node(void **state)
{
	struct knob_space sp;
	int i = 0;

	(void)state;
	build(&sp, &two_cpus, NULL);
	i = knobs_find(&sp, "intra_threads");
	assert_true(i >= 0);
	assert_int_equal(sp.knobs[i].nvalues, 2);
	assert_true(sp.knobs[i].runtime);
	assert_false(sp.knobs[knobs_find(&sp, "interop_threads")].runtime);
	assert_int_equal(knobs_find(&sp, "gpus"), -1);  /* no GPUs, no knob */
	assert_int_equal(sp.knobs[knobs_find(&sp, "affinity")].nvalues, 1);
	assert_int_equal(sp.ncand, 4);
	assert_int_equal(prior_value(&sp, KNOB_INTRA_THREADS), 2);
	assert_int_equal(prior_value(&sp, KNOB_INTEROP_THREADS), 1);
}

/* Every built-in knob's name reads back to its id; a knob of another name is KNOB_OTHER, in a space too. */
static void test_knob_ids(void **state)
{
	struct knob_space sp;

	(void)state;
	for (int id = KNOB_OTHER + 1; id < KNOB_ID_COUNT; id++) {
		assert_non_null(knob_name((enum knob_id)id));
		assert_int_equal(knob_id_of(knob_name((enum knob_id)id)), id);
	}
	assert_null(knob_name(KNOB_OTHER));
	assert_int_equal(knob_id_of("intra_thread"), KNOB_OTHER);
	assert_int_equal(knob_id_of(""), KNOB_OTHER);
	build(&sp, &two_cpus, "{\"batch_size\":{\"min\":8,\"max\":64},\"my_knob\":{\"values\":[1,2]}}");
	assert_int_equal(sp.knobs[knobs_find(&sp, "my_knob")].id, KNOB_OTHER);
	assert_int_equal(knobs_find_id(&sp, KNOB_BATCH_SIZE), knobs_find(&sp, "batch_size"));
	assert_int_equal(knobs_find_id(&sp, KNOB_INTRA_THREADS), knobs_find(&sp, "intra_threads"));
	assert_int_equal(knobs_find_id(&sp, KNOB_GPUS), -1);
}

static void test_builtin_big_node_ladder(void **state)
{
	struct knob_space sp;
	const struct knob *k;
	bool has[65] = {false};
	int i;

	(void)state;
	build(&sp, &big, NULL);
	k = &sp.knobs[knobs_find(&sp, "intra_threads")];
	for (i = 0; i < k->nvalues; i++) {
		assert_true(k->ivalues[i] >= 1 && k->ivalues[i] <= 64);
		has[k->ivalues[i]] = true;
		if (i)
			assert_true(k->ivalues[i] > k->ivalues[i - 1]);
	}
	assert_true(has[1] && has[2] && has[16] && has[32] && has[64] && has[24]);
	assert_true(k->nvalues < 20);
	/* Physical cores, but no more than one NUMA domain; all idle GPUs. */
	assert_int_equal(prior_value(&sp, KNOB_INTRA_THREADS), 16);
	assert_int_equal(prior_value(&sp, KNOB_GPUS), 4);
}

static void test_efficiency_prior_starts_small(void **state)
{
	struct knob_topology t = big;
	struct knob_space sp;

	(void)state;
	t.efficiency = true;
	build(&sp, &t, NULL);
	assert_int_equal(prior_value(&sp, KNOB_INTRA_THREADS), 1);
	assert_int_equal(prior_value(&sp, KNOB_GPUS), 1);
}

static void test_declared_range_replaces(void **state)
{
	struct knob_space sp;
	struct knob_filter f;
	int i, c, allowed = 0;

	(void)state;
	build(&sp, &two_cpus, "{\"intra_threads\":{\"min\":1,\"max\":8},\"batch_size\":{\"values\":[16,32,64]}}");
	i = knobs_find(&sp, "intra_threads");
	assert_int_equal(sp.knobs[i].nvalues, 8);
	assert_true(sp.knobs[i].declared);
	assert_false(sp.knobs[knobs_find(&sp, "batch_size")].runtime);
	/* The prior stays at the physical cores inside a declared range. */
	assert_int_equal(prior_value(&sp, KNOB_INTRA_THREADS), 2);
	/* A declared range is the job's own: the topology filter keeps all of it. */
	knobs_filter_all(&sp, &f);
	assert_int_equal(knobs_filter_topology(&sp, &f, &two_cpus), 0);
	for (c = 0; c < sp.ncand; c++)
		allowed += knobs_filter_pass(&sp, &f, c);
	assert_int_equal(allowed, sp.ncand);
}

static void test_filter_topology_caps(void **state)
{
	struct knob_topology t = big;
	struct knob_space sp;
	struct knob_filter f;
	int c;

	(void)state;
	build(&sp, &t, NULL);
	t.cpus_allowed = 8;
	t.gpus_free = 1;
	knobs_filter_all(&sp, &f);
	assert_int_equal(knobs_filter_topology(&sp, &f, &t), 0);
	for (c = 0; c < sp.ncand; c++) {
		if (!knobs_filter_pass(&sp, &f, c))
			continue;
		assert_true(knobs_int_value(&sp, c, KNOB_INTRA_THREADS, 0) <= 8);
		assert_true(knobs_int_value(&sp, c, KNOB_GPUS, 0) <= 1);
	}
}

static void test_filter_no_gpu_left(void **state)
{
	struct knob_topology t = big;
	struct knob_space sp;
	struct knob_filter f;

	(void)state;
	build(&sp, &t, "{\"gpus\":{\"min\":2,\"max\":4}}");
	t.gpus_free = 1;
	knobs_filter_all(&sp, &f);
	assert_int_equal(knobs_filter_topology(&sp, &f, &t), -1);
	assert_int_equal(f.allowed[knobs_find(&sp, "gpus")], 1u);
}

/* Ranks x threads per rank: a layout above the CPUs is oversubscription and never proposed. */
static void test_filter_layouts(void **state)
{
	struct knob_topology t = big;
	struct knob_space sp;
	struct knob_filter f;
	int c, allowed = 0, over = 0;

	(void)state;
	t.cpus_allowed = 16;
	build(&sp, &t, "{\"ranks\":{\"values\":[1,2,4,8,16]}}");
	knobs_filter_all(&sp, &f);
	assert_int_equal(knobs_filter_topology(&sp, &f, &t), 0);
	for (c = 0; c < sp.ncand; c++) {
		long layout = knobs_int_value(&sp, c, KNOB_RANKS, 0) * knobs_int_value(&sp, c, KNOB_INTRA_THREADS, 0);
		if (knobs_filter_pass(&sp, &f, c)) {
			assert_true(layout <= 16);
			allowed++;
		} else if (layout > 16 && knobs_int_value(&sp, c, KNOB_INTRA_THREADS, 0) <= 16) {
			over++;
		}
	}
	/* 16x1, 8x2, 4x4, 2x8, 1x16 and the layouts below them stay; 16x16, 4x8, ... go. */
	assert_true(allowed > 0 && over > 0);
	c = knobs_prior_candidate(&sp);
	assert_true(knobs_filter_pass(&sp, &f, c));
	/* Without a ranks knob, intra x inter-op is not limited (an inter-op pool may pay off). */
	build(&sp, &two_cpus, NULL);
	knobs_filter_all(&sp, &f);
	assert_int_equal(knobs_filter_topology(&sp, &f, &two_cpus), 0);
	assert_int_equal(f.layout_cpus, 0);
	/* A declared thread range is the job's own: no layout limit either. */
	build(&sp, &two_cpus, "{\"ranks\":{\"values\":[1,2]},\"intra_threads\":{\"values\":[2,4]}}");
	knobs_filter_all(&sp, &f);
	assert_int_equal(knobs_filter_topology(&sp, &f, &two_cpus), 0);
	for (c = 0, allowed = 0; c < sp.ncand; c++)
		allowed += knobs_filter_pass(&sp, &f, c);
	assert_int_equal(allowed, sp.ncand);
}

static void test_bad_declarations(void **state)
{
	static const char *const bad[] = {
		"{\"intra_threads\":{\"min\":4,\"max\":2}}",
		"{\"intra_threads\":{\"min\":1}}",
		"{\"x\":{\"values\":[1,\"a\"]}}",
		"{\"x\":{\"values\":[]}}",
		"{\"x\":5}",
		"{\"phases\":{\"values\":[1]}}",
		"{\"a\":{\"values\":[1,2,3,4,5,6,7,8]},\"b\":{\"values\":[1,2,3,4,5,6,7,8]},"
		"\"c\":{\"values\":[1,2,3,4,5,6,7,8]},\"d\":{\"values\":[1,2,3,4,5,6,7,8]}}",
	};
	struct knob_space sp;
	char err[200];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *d = json_loads(bad[i], 0, NULL);
		assert_non_null(d);
		err[0] = '\0';
		assert_int_equal(knobs_space_build(&sp, &big, d, err, sizeof(err)), -1);
		assert_true(strlen(err) > 0);
		json_decref(d);
	}
}

static void test_encode_decode_json(void **state)
{
	struct knob_space sp;
	struct knob_config cfg;
	json_t *j, *partial;
	char text[200];
	int c;

	(void)state;
	build(&sp, &big, "{\"affinity\":{\"values\":[\"none\",\"close\",\"spread\"]}}");
	for (c = 0; c < sp.ncand; c++) {
		knobs_decode(&sp, c, &cfg);
		assert_int_equal(knobs_encode(&sp, &cfg), c);
		j = knobs_config_json(&sp, c);
		assert_int_equal(knobs_candidate_of(&sp, j, -1), c);
		json_decref(j);
	}
	/* Missing knobs come from the base; values outside the space are refused. */
	partial = json_pack("{s:i, s:s, s:{s:i}}", "intra_threads", 4, "affinity", "close", "phases", "x", 1);
	c = knobs_candidate_of(&sp, partial, knobs_prior_candidate(&sp));
	assert_true(c >= 0);
	assert_int_equal(knobs_int_value(&sp, c, KNOB_INTRA_THREADS, 0), 4);
	assert_int_equal(knobs_int_value(&sp, c, KNOB_GPUS, -1), 4);
	knobs_config_text(&sp, c, text, sizeof(text));
	assert_non_null(strstr(text, "affinity=close"));
	json_object_set_new(partial, "intra_threads", json_integer(5)); /* not on the ladder */
	assert_int_equal(knobs_candidate_of(&sp, partial, -1), -1);
	json_decref(partial);
}

static void test_space_json_roundtrip(void **state)
{
	struct knob_space a, b;
	json_t *j;

	(void)state;
	build(&a, &big, "{\"batch_size\":{\"values\":[16,32],\"runtime\":false},\"allocator\":{\"values\":[\"default\",\"jemalloc\"]}}");
	j = knobs_space_json(&a);
	assert_int_equal(knobs_space_from_json(&b, j), 0);
	assert_int_equal(a.ncand, b.ncand);
	assert_int_equal(a.nknobs, b.nknobs);
	assert_int_equal(knobs_prior_candidate(&a), knobs_prior_candidate(&b));
	json_decref(j);
}

static void test_pin_static(void **state)
{
	struct knob_space sp;
	struct knob_filter f;
	int c, start, n = 0;

	(void)state;
	build(&sp, &big, NULL);
	start = knobs_prior_candidate(&sp);
	knobs_filter_all(&sp, &f);
	knobs_filter_pin_static(&sp, &f, start);
	for (c = 0; c < sp.ncand; c++) {
		if (!knobs_filter_pass(&sp, &f, c))
			continue;
		n++;
		assert_int_equal(knobs_int_value(&sp, c, KNOB_INTEROP_THREADS, 0), knobs_int_value(&sp, start, KNOB_INTEROP_THREADS, 0));
		assert_int_equal(knobs_int_value(&sp, c, KNOB_GPUS, 0), knobs_int_value(&sp, start, KNOB_GPUS, 0));
	}
	assert_int_equal(n, sp.knobs[knobs_find(&sp, "intra_threads")].nvalues);
}

static void test_features_and_prior_shape(void **state)
{
	struct knob_space sp;
	double x[KNOB_FEATURES];
	int prior, d, c;

	(void)state;
	build(&sp, &big, NULL);
	prior = knobs_prior_candidate(&sp);
	d = knobs_features(&sp, prior, x);
	/* threads, inter-op, GPUs, threads in flight, oversubscribed: the fixed knobs add nothing */
	assert_int_equal(d, 5);
	assert_true(fabs(x[0] - 4.0) < 1e-12); /* log2(16) */
	assert_true(fabs(x[3] - (x[0] + x[1])) < 1e-12);
	assert_true(x[4] == 0.0);
	assert_true(fabs(knobs_prior_shape(&sp, prior) - 1.0) < 1e-12);
	for (c = 0; c < sp.ncand; c++) {
		double shape = knobs_prior_shape(&sp, c), within = 1.0;
		long flight = knobs_threads_in_flight(&sp, c);
		assert_true(shape <= 1.0 && shape > 0.0);
		assert_int_equal(flight, knobs_int_value(&sp, c, KNOB_INTRA_THREADS, 0) * knobs_int_value(&sp, c, KNOB_INTEROP_THREADS, 0));
		knobs_features(&sp, c, x);
		assert_true((x[4] > 0.0) == (flight > 64));
		/* Past the CPUs the prior expects a step to queue: at most their share of the rate. */
		if (flight > 64)
			assert_true(shape <= pow(64.0 / (double)flight, 0.5) * within);
	}
}

/*
 * The first config by rule: threads in flight within the physical cores of
 * one NUMA domain, shared among a forking job's inter-op teams; a data
 * loader with workers; a middle batch size; a declared default wins.
 */
static void test_prior_rules(void **state)
{
	const struct knob_topology sixteen = {.cpus_allowed = 16, .cores_allowed = 16, .numa_cores = 16};
	struct knob_space sp;

	(void)state;
	build(&sp, &big, "{\"interop_threads\":{\"values\":[1,2,4],\"default\":4}}");
	assert_int_equal(prior_value(&sp, KNOB_INTEROP_THREADS), 4);
	assert_int_equal(prior_value(&sp, KNOB_INTRA_THREADS), 4);        /* 16 cores of a domain over 4 teams */
	build(&sp, &sixteen, "{\"dataloader_workers\":{\"values\":[0,2,4,8,16]},\"batch_size\":{\"values\":[16,32,64,128]}}");
	assert_int_equal(prior_value(&sp, KNOB_DATALOADER_WORKERS), 4);   /* a quarter of the cores */
	assert_int_equal(prior_value(&sp, KNOB_BATCH_SIZE), 64);
	assert_int_equal(prior_value(&sp, KNOB_INTRA_THREADS), 16);
	build(&sp, &two_cpus, "{\"dataloader_workers\":{\"values\":[0,1,2]},\"batch_size\":{\"values\":[8,16],\"default\":8}}");
	assert_int_equal(prior_value(&sp, KNOB_DATALOADER_WORKERS), 1);   /* at least one worker */
	assert_int_equal(prior_value(&sp, KNOB_BATCH_SIZE), 8);           /* declared */
}

/* Another workload's space read through the knobs both have; the others at their priors. */
static void test_map_between_spaces(void **state)
{
	struct knob_space a, b;
	int map[4096], c, n = 0;

	(void)state;
	build(&a, &two_cpus, "{\"intra_threads\":{\"values\":[1,2,3]},\"batch_size\":{\"values\":[16,32]}}");
	build(&b, &two_cpus, "{\"intra_threads\":{\"values\":[1,2]},\"allocator\":{\"values\":[\"default\",\"jemalloc\"]}}");
	knobs_map(&a, &b, -1, NULL, map);
	for (c = 0; c < a.ncand; c++) {
		long th = knobs_int_value(&a, c, KNOB_INTRA_THREADS, 0);
		if (th == 3) {
			assert_int_equal(map[c], -1);                      /* b has no 3 */
			continue;
		}
		assert_true(map[c] >= 0);
		assert_int_equal(knobs_int_value(&b, map[c], KNOB_INTRA_THREADS, 0), th);
		assert_int_equal(knobs_int_value(&b, map[c], KNOB_INTEROP_THREADS, 0), knobs_int_value(&a, c, KNOB_INTEROP_THREADS, 0));
		n++;
	}
	assert_int_equal(n, a.ncand * 2 / 3);
	/* Only the threads, the rest at b's candidate base: inter-op 2 and jemalloc whatever a runs. */
	{
		static const enum knob_id only[] = {KNOB_INTRA_THREADS, KNOB_OTHER};
		json_t *cfg = json_pack("{s:i, s:i, s:s}", "intra_threads", 1, "interop_threads", 2, "allocator", "jemalloc");
		int base = knobs_candidate_of(&b, cfg, -1);
		json_decref(cfg);
		assert_true(base >= 0);
		knobs_map(&a, &b, base, only, map);
		for (c = 0; c < a.ncand; c++) {
			if (map[c] < 0)
				continue;
			assert_int_equal(knobs_int_value(&b, map[c], KNOB_INTEROP_THREADS, 0), 2);
			assert_int_equal(knobs_int_value(&b, map[c], KNOB_INTRA_THREADS, 0), knobs_int_value(&a, c, KNOB_INTRA_THREADS, 0));
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_builtin_small_node),
		cmocka_unit_test(test_knob_ids),
		cmocka_unit_test(test_builtin_big_node_ladder),
		cmocka_unit_test(test_efficiency_prior_starts_small),
		cmocka_unit_test(test_declared_range_replaces),
		cmocka_unit_test(test_filter_topology_caps),
		cmocka_unit_test(test_filter_no_gpu_left),
		cmocka_unit_test(test_filter_layouts),
		cmocka_unit_test(test_bad_declarations),
		cmocka_unit_test(test_encode_decode_json),
		cmocka_unit_test(test_space_json_roundtrip),
		cmocka_unit_test(test_pin_static),
		cmocka_unit_test(test_features_and_prior_shape),
		cmocka_unit_test(test_prior_rules),
		cmocka_unit_test(test_map_between_spaces),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
