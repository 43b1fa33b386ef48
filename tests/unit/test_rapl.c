/*
 * Tests of the RAPL collector on powercap fixture trees
 * (tests/fixtures/sys-rapl: two packages with core, uncore and DRAM
 * subzones, psys, an MMIO zone and the control-type directory), copied to a
 * temporary sys_root whose energy_uj files the tests advance: zones found
 * and named, joules and watts, a counter that wraps, subzones and psys left
 * out of the node's total, and the reasons when RAPL cannot be read.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "collector.h"
#include "collectors_fixture.h"
#include "collector_values.h"

struct tree {
	char dir[64];              /* the temporary sys_root */
};

static int
tree_teardown(void **state)
{
	struct tree *t = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t->dir);
	if (system(cmd) != 0)
		return -1;
	free(t);
	return 0;
}

static int
tree_setup(void **state)
{
	struct tree *t = calloc(1, sizeof(*t));
	char dst[128];

	if (t == NULL)
		return -1;
	snprintf(t->dir, sizeof(t->dir), "/tmp/dlprof-rapl-XXXXXX");
	if (mkdtemp(t->dir) == NULL) {
		free(t);
		return -1;
	}
	*state = t;
	chmod(t->dir, 0755);
	snprintf(dst, sizeof(dst), "%s/class", t->dir);
	mkdir(dst, 0755);
	snprintf(dst, sizeof(dst), "%s/class/powercap", t->dir);
	/* cmocka runs no teardown after a failed setup: the tree goes here. */
	if (fixture_install("sys-rapl/class/powercap", dst) < 0) {
		tree_teardown(state);
		return -1;
	}
	return 0;
}

static void
set_uj(const struct tree *t, const char *zone, const char *value)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/class/powercap/%s/energy_uj", t->dir, zone);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", value);
	fclose(f);
}

static void *
init_at(const char *sys_root, char *why, size_t len)
{
	struct collector_env env = {"/proc", sys_root, NULL, 1.0};

	return collector_rapl.init(&env, why, len);
}

static void
zones_discovered_and_named(void **state)
{
	struct tree *t = *state;
	static const char *const keys[] = {"package_0", "package_0.core", "package_0.uncore", "package_0.dram",
					   "package_1", "package_1.dram", "psys"};
	static const int counted[] = {1, 0, 0, 1, 1, 1, 0};
	char why[512] = "x";
	json_t *desc, *zones;
	void *ctx;
	size_t i;

	ctx = init_at(t->dir, why, sizeof(why));
	assert_non_null(ctx);
	assert_string_equal(why, "");
	desc = collector_rapl.describe(ctx);
	zones = json_object_get(desc, "zones");
	/* intel-rapl (the control type) and intel-rapl-mmio:0 are not zones of ours. */
	assert_int_equal(json_array_size(zones), 7);
	for (i = 0; i < 7; i++) {
		json_t *z = json_array_get(zones, i);
		assert_string_equal(json_string_value(json_object_get(z, "zone")), keys[i]);
		assert_int_equal(json_is_true(json_object_get(z, "in_node_total")), counted[i]);
	}
	json_decref(desc);
	collector_rapl.fini(ctx);
}

static void
joules_watts_and_wrap(void **state)
{
	struct tree *t = *state;
	struct collector_out out = {0};
	char why[512] = "";
	void *ctx;

	ctx = init_at(t->dir, why, sizeof(why));
	assert_non_null(ctx);
	/* The first sample is the baseline: no joules yet, no power. */
	collector_out_reset(&out, 100.0, 10.0);
	assert_int_equal(collector_rapl.sample_node(ctx, &out, why, sizeof(why)), COLLECTOR_OK);
	assert_true(collector_value_of(&out, 0, "energy.cpu_joules") == 0);
	assert_true(collector_value_of(&out, 0, "rapl.package_0.energy_joules") == 0);
	assert_true(isnan(collector_value_of(&out, 0, "power.cpu_watts")));
	/* Two seconds later. */
	set_uj(t, "intel-rapl:0", "3000000");        /* +2 J */
	set_uj(t, "intel-rapl:0:0", "1900000");      /* +1.5 J, inside the package */
	set_uj(t, "intel-rapl:0:1", "110000");       /* +0.1 J, inside the package */
	set_uj(t, "intel-rapl:0:2", "700000");       /* +0.5 J */
	set_uj(t, "intel-rapl:1", "100000");         /* wrapped: 262143328850 - 262143000000 + 100000 uJ */
	set_uj(t, "intel-rapl:1:0", "550000");       /* +0.25 J */
	set_uj(t, "intel-rapl:2", "15000000");       /* +10 J: the platform, holding the packages */
	collector_out_reset(&out, 102.0, 12.0);
	assert_int_equal(collector_rapl.sample_node(ctx, &out, why, sizeof(why)), COLLECTOR_OK);
	assert_float_equal(collector_value_of(&out, 0, "rapl.package_0.energy_joules"), 2.0, 1e-9);
	assert_float_equal(collector_value_of(&out, 0, "rapl.package_0.power_watts"), 1.0, 1e-6);
	assert_float_equal(collector_value_of(&out, 0, "rapl.package_0.core.energy_joules"), 1.5, 1e-9);
	assert_float_equal(collector_value_of(&out, 0, "rapl.package_1.energy_joules"), 0.42885, 1e-9);
	assert_float_equal(collector_value_of(&out, 0, "rapl.psys.energy_joules"), 10.0, 1e-9);
	/* Packages and DRAM only: not core, uncore or psys. */
	assert_float_equal(collector_value_of(&out, 0, "energy.cpu_joules"), 2.0 + 0.5 + 0.42885 + 0.25, 1e-9);
	assert_float_equal(collector_value_of(&out, 0, "power.cpu_watts"), (2.0 + 0.5 + 0.42885 + 0.25) / 2, 1e-6);
	/* Cumulative: a tick with nothing consumed keeps the joules and shows no power. */
	collector_out_reset(&out, 103.0, 13.0);
	assert_int_equal(collector_rapl.sample_node(ctx, &out, why, sizeof(why)), COLLECTOR_OK);
	assert_float_equal(collector_value_of(&out, 0, "energy.cpu_joules"), 3.17885, 1e-9);
	assert_true(collector_value_of(&out, 0, "power.cpu_watts") == 0);
	/* A zone that stops reading is a transient failure that names the file. */
	set_uj(t, "intel-rapl:0", "garbage");
	collector_out_reset(&out, 104.0, 14.0);
	assert_int_equal(collector_rapl.sample_node(ctx, &out, why, sizeof(why)), COLLECTOR_TRANSIENT);
	assert_non_null(strstr(why, "intel-rapl:0/energy_uj"));
	/* Read again: the failed zone counts its joules since its last read, each once. */
	set_uj(t, "intel-rapl:0", "4000000");        /* +1 J since 3000000 */
	collector_out_reset(&out, 105.0, 15.0);
	assert_int_equal(collector_rapl.sample_node(ctx, &out, why, sizeof(why)), COLLECTOR_OK);
	assert_float_equal(collector_value_of(&out, 0, "rapl.package_0.energy_joules"), 3.0, 1e-9);
	assert_float_equal(collector_value_of(&out, 0, "energy.cpu_joules"), 4.17885, 1e-9);
	collector_rapl.fini(ctx);
	collector_out_free(&out);
}

/* Makes every energy_uj readable by its owner only. */
static void
restrict_counters(const struct tree *t)
{
	static const char *const zones[] = {"intel-rapl:0", "intel-rapl:0:0", "intel-rapl:0:1", "intel-rapl:0:2",
					    "intel-rapl:1", "intel-rapl:1:0", "intel-rapl:2"};
	char path[256];
	size_t i;

	for (i = 0; i < sizeof(zones) / sizeof(zones[0]); i++) {
		snprintf(path, sizeof(path), "%s/class/powercap/%s/energy_uj", t->dir, zones[i]);
		assert_int_equal(chmod(path, 0400), 0);
	}
}

/*
 * init as a user who may not read the counters: as root (who reads any
 * file), in a child that becomes nobody.  Returns whether it failed with
 * the root-only reason.
 */
static int
init_refused_as_user(const struct tree *t)
{
	char why[512] = "";
	void *ctx;
	pid_t pid;
	int status;

	if (geteuid() != 0) {
		ctx = init_at(t->dir, why, sizeof(why));
		if (ctx != NULL)
			collector_rapl.fini(ctx);
		return ctx == NULL && strstr(why, "readable by root only (since CVE-2020-8694)") != NULL;
	}
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (setgid(65534) < 0 || setuid(65534) < 0)
			_exit(2);
		ctx = init_at(t->dir, why, sizeof(why));
		_exit(ctx == NULL && strstr(why, "readable by root only (since CVE-2020-8694)") != NULL ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void
unreadable_counters_say_why(void **state)
{
	struct tree *t = *state;

	restrict_counters(t);
	assert_true(init_refused_as_user(t));
}

static void
partly_unreadable_keeps_the_rest(void **state)
{
	struct tree *t = *state;
	struct collector_out out = {0};
	char why[512] = "";
	void *ctx;

	/* A zone whose counter is not a number is left out, and the note says how many. */
	set_uj(t, "intel-rapl:2", "");
	ctx = init_at(t->dir, why, sizeof(why));
	assert_non_null(ctx);
	assert_non_null(strstr(why, "1 of 7 RAPL zones unreadable"));
	collector_out_reset(&out, 1.0, 1.0);
	assert_int_equal(collector_rapl.sample_node(ctx, &out, why, sizeof(why)), COLLECTOR_OK);
	assert_true(isnan(collector_value_of(&out, 0, "rapl.psys.energy_joules")));
	assert_true(collector_value_of(&out, 0, "rapl.package_1.dram.energy_joules") == 0);
	collector_rapl.fini(ctx);
	collector_out_free(&out);
}

static void
psys_alone_is_no_cpu_energy(void **state)
{
	struct tree *t = *state;
	struct collector_out out = {0};
	char cmd[256], why[512] = "";
	void *ctx;

	/* Only the platform zone: it holds more than the CPUs, so it is not the node's CPU energy. */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'/class/powercap/intel-rapl:0* '%s'/class/powercap/intel-rapl:1*", t->dir,
		 t->dir);
	assert_int_equal(system(cmd), 0);
	ctx = init_at(t->dir, why, sizeof(why));
	assert_non_null(ctx);
	assert_non_null(strstr(why, "no package or DRAM zone readable"));
	collector_out_reset(&out, 1.0, 1.0);
	assert_int_equal(collector_rapl.sample_node(ctx, &out, why, sizeof(why)), COLLECTOR_OK);
	set_uj(t, "intel-rapl:2", "6000000");
	collector_out_reset(&out, 2.0, 2.0);
	assert_int_equal(collector_rapl.sample_node(ctx, &out, why, sizeof(why)), COLLECTOR_OK);
	assert_float_equal(collector_value_of(&out, 0, "rapl.psys.energy_joules"), 1.0, 1e-9);
	assert_true(isnan(collector_value_of(&out, 0, "energy.cpu_joules")));
	assert_true(isnan(collector_value_of(&out, 0, "power.cpu_watts")));
	collector_rapl.fini(ctx);
	collector_out_free(&out);
}

static void
no_powercap_says_why(void **state)
{
	char why[512] = "", path[1024];

	(void)state;
	assert_null(init_at("/nonexistent-sys", why, sizeof(why)));
	assert_non_null(strstr(why, "no powercap interface (/nonexistent-sys/class/powercap"));
	/* A powercap class with no RAPL zone in it (the control type only, or another driver's zones). */
	fixture_path(path, sizeof(path), "sys-2socket");
	assert_null(init_at(path, why, sizeof(why)));
	assert_non_null(strstr(why, "no powercap interface"));
}

static void
no_zone_says_why(void **state)
{
	struct tree *t = *state;
	char cmd[256], why[512] = "";

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'/class/powercap/intel-rapl:*", t->dir);
	assert_int_equal(system(cmd), 0);
	assert_null(init_at(t->dir, why, sizeof(why)));
	assert_non_null(strstr(why, "no RAPL zone under"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(zones_discovered_and_named, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(joules_watts_and_wrap, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(unreadable_counters_say_why, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(partly_unreadable_keeps_the_rest, tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(psys_alone_is_no_cpu_energy, tree_setup, tree_teardown),
		cmocka_unit_test(no_powercap_says_why),
		cmocka_unit_test_setup_teardown(no_zone_says_why, tree_setup, tree_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
