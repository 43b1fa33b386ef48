/*
 * Tests of the likwid collector: the topology it describes must match what
 * the kernel says (logical CPUs), and when it cannot count (no MSR access,
 * as on VMs) its note must say so, and liblikwid (opened at init, not
 * linked) must be unmapped again while the topology is still described.
 * Skipped when built without likwid.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "collector.h"

/* Whether a file whose path contains name is mapped in this process. */
static int
mapped(const char *name)
{
	char line[4096];
	FILE *f = fopen("/proc/self/maps", "r");
	int found = 0;

	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f) != NULL)
		found = strstr(line, name) != NULL;
	fclose(f);
	return found;
}

static void
topology_and_counting_note(void **state)
{
#ifdef HAVE_LIKWID
	struct collector_env env = {"/proc", "/sys", NULL, 1.0};
	char why[512] = "";
	json_t *d;
	void *ctx;

	(void)state;
	assert_false(mapped("/liblikwid"));  /* not linked: opened at init */
	ctx = collector_likwid.init(&env, why, sizeof(why));
	assert_non_null(ctx);
	/* Topology only: the summary is kept as plain data, the library unmapped. */
	if (strstr(why, "topology only") != NULL)
		assert_false(mapped("/liblikwid"));
	d = collector_likwid.describe(ctx);
	assert_non_null(d);
	assert_int_equal(json_integer_value(json_object_get(d, "hw_threads")), sysconf(_SC_NPROCESSORS_CONF));
	assert_true(json_integer_value(json_object_get(d, "sockets")) >= 1);
	assert_true(json_array_size(json_object_get(d, "caches")) >= 1);
	json_decref(d);
	if (access("/dev/cpu/0/msr", F_OK) != 0)
		assert_non_null(strstr(why, "topology only: cannot count, no /dev/cpu/0/msr"));
	collector_likwid.fini(ctx);
#else
	(void)state;
	skip();
#endif
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(topology_and_counting_note),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
