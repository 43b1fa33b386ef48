/*
 * Tests of the metric catalogue: every Prometheus family name is unique and
 * well formed, GPU sample names split right, and units resolve.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "metrics.h"

static const char *const prefix[] = {"node_", "job_", "gpu_", "gpu_", "node_"};

static void
family_names_unique_and_conventional(void **state)
{
	char a[128], b[128];
	unsigned i, k;
	size_t len;

	(void)state;
	for (i = 0; i < metric_catalogue_len; i++) {
		const struct metric_info *m = &metric_catalogue[i];

		/* A row without a name is written by api_prometheus.c itself (jobs' energy, labelled by source). */
		if (m->prom == NULL) {
			assert_int_equal(m->scope, METRIC_JOB);
			continue;
		}
		snprintf(a, sizeof(a), "%s%s", prefix[m->scope], m->prom);
		for (const char *p = a; *p; p++)
			assert_true(islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_');
		len = strlen(a);
		/* Counters end in _total, gauges never do. */
		assert_int_equal(m->type == METRIC_COUNTER, len > 6 && strcmp(a + len - 6, "_total") == 0);
		assert_true(m->help != NULL && m->help[0] != '\0');
		for (k = i + 1; k < metric_catalogue_len; k++) {
			if (metric_catalogue[k].prom == NULL)
				continue;
			snprintf(b, sizeof(b), "%s%s", prefix[metric_catalogue[k].scope], metric_catalogue[k].prom);
			assert_string_not_equal(a, b);
		}
	}
}

static void
gpu_names_split(void **state)
{
	const char *rest;
	int gpu, mig;

	(void)state;
	assert_int_equal(metric_split_gpu("gpu.3.util_percent", &gpu, &mig, &rest), 0);
	assert_int_equal(gpu, 3);
	assert_int_equal(mig, -1);
	assert_string_equal(rest, "util_percent");
	assert_int_equal(metric_split_gpu("gpu.1.mig.0.mem_used_bytes", &gpu, &mig, &rest), 0);
	assert_int_equal(gpu, 1);
	assert_int_equal(mig, 0);
	assert_string_equal(rest, "mem_used_bytes");
	assert_int_equal(metric_split_gpu("gpu.util_percent", &gpu, &mig, &rest), -1);
	assert_int_equal(metric_split_gpu("gpu.2.", &gpu, &mig, &rest), -1);
	assert_int_equal(metric_split_gpu("cpu.cores", &gpu, &mig, &rest), -1);
}

static void
zone_names_split(void **state)
{
	const char *zone, *rest;
	int len;

	(void)state;
	assert_int_equal(metric_split_zone("rapl.package_0.dram.energy_joules", &zone, &len, &rest), 0);
	assert_int_equal(len, 14);
	assert_memory_equal(zone, "package_0.dram", 14);
	assert_string_equal(rest, "energy_joules");
	assert_int_equal(metric_split_zone("rapl.psys.power_watts", &zone, &len, &rest), 0);
	assert_int_equal(len, 4);
	assert_int_equal(metric_split_zone("rapl.power_watts", &zone, &len, &rest), -1);
	assert_int_equal(metric_split_zone("rapl.psys.", &zone, &len, &rest), -1);
	assert_int_equal(metric_split_zone("energy.cpu_joules", &zone, &len, &rest), -1);
	/* Counters are known as counters by scope: the node's CPU energy, a zone's, a job's. */
	assert_int_equal(metric_of(0, "energy.cpu_joules")->type, METRIC_COUNTER);
	assert_int_equal(metric_of(0, "rapl.package_1.energy_joules")->type, METRIC_COUNTER);
	assert_int_equal(metric_of(0, "rapl.package_1.power_watts")->type, METRIC_GAUGE);
	assert_int_equal(metric_of(7, "energy.gpu_joules")->type, METRIC_COUNTER);
	assert_null(metric_of(7, "rapl.psys.energy_joules"));
}

static void
units(void **state)
{
	(void)state;
	assert_string_equal(metric_unit("cpu.cores"), "cores");
	assert_string_equal(metric_unit("mem.rss_bytes"), "bytes");
	assert_string_equal(metric_unit("gpu.0.power_watts"), "W");
	assert_string_equal(metric_unit("gpu.1.mig.2.mem_used_bytes"), "bytes");
	assert_string_equal(metric_unit("step_time_s"), "s");
	assert_string_equal(metric_unit("my_own_metric"), "");
	assert_string_equal(metric_unit("rapl.package_0.dram.energy_joules"), "J");
	assert_string_equal(metric_unit("rapl.psys.power_watts"), "W");
	assert_string_equal(metric_unit("energy.gpu_joules"), "J");
	assert_string_equal(metric_unit("gpu.1.energy_joules"), "J");
	assert_non_null(metric_find(METRIC_NODE, "load.1"));
	assert_null(metric_find(METRIC_NODE, "cpu.threads"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(family_names_unique_and_conventional),
		cmocka_unit_test(gpu_names_split),
		cmocka_unit_test(zone_names_split),
		cmocka_unit_test(units),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
