/*
 * Tests of the likwid collector: where it counts, the topology it describes
 * must match what the kernel says (logical CPUs); where it cannot (no MSR
 * access, as on VMs) it is unavailable with the reason, and liblikwid
 * (opened at init, not linked) is never mapped.
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
#include "collectors_fixture.h"

static void
topology_and_counting_note(void **state)
{
#ifdef HAVE_LIKWID
	struct collector_env env = {"/proc", "/sys", NULL, 1.0};
	char why[512] = "";
	json_t *d;
	void *ctx;

	(void)state;
	assert_false(fixture_mapped("/liblikwid"));  /* not linked: opened at init */
	ctx = collector_likwid.init(&env, why, sizeof(why));
	if (access("/dev/cpu/0/msr", F_OK) != 0) {
		/* It cannot count here: unavailable with the reason, and the library never opened. */
		assert_null(ctx);
		assert_non_null(strstr(why, "cannot count: no /dev/cpu/0/msr"));
		assert_false(fixture_mapped("/liblikwid"));
		return;
	}
	if (ctx == NULL) {
		/* MSRs there but refused, or a CPU this likwid does not know: said so. */
		assert_non_null(strstr(why, "cannot count"));
		assert_false(fixture_mapped("/liblikwid"));
		return;
	}
	d = collector_likwid.describe(ctx);
	assert_non_null(d);
	assert_int_equal(json_integer_value(json_object_get(d, "hw_threads")), sysconf(_SC_NPROCESSORS_CONF));
	assert_true(json_integer_value(json_object_get(d, "sockets")) >= 1);
	assert_true(json_array_size(json_object_get(d, "caches")) >= 1);
	json_decref(d);
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
