/*
 * Tests node_probe on a hand-written 2-socket sysfs tree
 * (tests/fixtures/sys-2socket: 2 packages x 4 cores x 2 SMT threads, two NUMA
 * domains, CPU N and N+8 siblings, as Linux numbers them), following the
 * documented formats of /sys/devices/system/cpu/cpuN/topology and
 * /sys/devices/system/node/nodeN/cpulist.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "collectors_fixture.h"
#include "node.h"

static void
two_sockets_two_numa(void **state)
{
	struct node_info n;
	char sys[1024], proc[1024];

	(void)state;
	memset(&n, 0, sizeof(n));
	assert_int_equal(node_probe(fixture_path(sys, sizeof(sys), "sys-2socket"),
				    fixture_path(proc, sizeof(proc), "proc-t0"), &n), 0);
	assert_int_equal(n.sockets, 2);
	assert_int_equal(n.cores, 8);
	assert_int_equal(n.cpus_online, 16);
	assert_int_equal(n.threads_per_core, 2);
	assert_int_equal(n.numa_nodes, 2);
	assert_int_equal(n.numa_cores[0], 4);
	assert_int_equal(n.numa_cores[1], 4);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(two_sockets_two_numa),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
