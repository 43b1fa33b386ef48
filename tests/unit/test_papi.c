/*
 * Tests of the PAPI collector.  Without a PMU (most VMs, CI) init must fail
 * with a reason that names PAPI and what is missing; with one, it must count
 * this test's own busy thread.  libpapi is opened at init, not linked, and
 * must be unmapped again when PAPI cannot count.  Skipped when dlprofd is
 * built without PAPI.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <math.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "collector.h"
#include "collectors_fixture.h"

static void
available_or_says_why(void **state)
{
#ifdef HAVE_PAPI
	struct collector_env env = {"/proc", "/sys", NULL, 1.0};
	struct collector_out out = {0};
	pid_t self = getpid();
	struct collector_job job = {1, &self, 1, NULL, 0};
	char why[512] = "";
	volatile unsigned long spin;
	void *ctx;
	size_t i;

	(void)state;
	assert_false(fixture_mapped("/libpapi"));  /* not linked: opened at init */
	/* Where there is no PMU, PAPI is not even loaded to find out. */
	env.sys_root = "/nonexistent-dlprof-sys";
	assert_null(collector_papi.init(&env, why, sizeof(why)));
	assert_non_null(strstr(why, "PAPI cannot count: no PMU"));
	assert_false(fixture_mapped("/libpapi") || fixture_mapped("/libpfm"));
	env.sys_root = "/sys";
	ctx = collector_papi.init(&env, why, sizeof(why));
	if (ctx == NULL) {
		/* A node where PAPI cannot count must not keep it mapped. */
		assert_false(fixture_mapped("/libpapi") || fixture_mapped("/libpfm"));
		assert_true(strstr(why, "PAPI") != NULL || strstr(why, "libpapi") != NULL);
		if (access("/sys/bus/event_source/devices/cpu", F_OK) != 0)
			assert_true(strstr(why, "no PMU") != NULL || strstr(why, "disabled") != NULL);
		return;
	}
	collector_out_reset(&out, 1.0, 1.0);
	collector_papi.sample_job(ctx, &job, &out, why, sizeof(why));
	for (spin = 0; spin < 50000000; spin++)
		;
	collector_out_reset(&out, 2.0, 2.0);
	assert_int_equal(collector_papi.sample_job(ctx, &job, &out, why, sizeof(why)), COLLECTOR_OK);
	for (i = 0; i < out.n; i++)
		if (strcmp(out.v[i].name, "papi.instructions_per_s") == 0)
			assert_true(out.v[i].value > 0);
	collector_papi.fini(ctx);
	collector_out_free(&out);
#else
	(void)state;
	skip();
#endif
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(available_or_says_why),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
