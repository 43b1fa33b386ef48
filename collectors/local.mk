# Collectors (collectors/*.c): their own library, compiled with base/ and
# collectors/ alone on the include path, so a collector that includes a
# daemon header does not compile (tests/unit/test_layering.sh proves it);
# and the tests of the collectors and of the daemon's sampling side.  The
# sampler, discovery and the series are the daemon's (daemon/local.mk).
noinst_LIBRARIES += collectors/libcollectors.a
collectors_libcollectors_a_CPPFLAGS = $(COLLECTORS_CPPFLAGS)
collectors_libcollectors_a_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(PAPI_CFLAGS)
collectors_libcollectors_a_SOURCES = $(COLLECTOR_SOURCES)
COLLECTOR_SOURCES = \
	collectors/collector.h collectors/registry.c collectors/resolution.c \
	collectors/dynlib.c collectors/dynlib.h \
	collectors/procfs.c collectors/procfs.h \
	collectors/cgroup.c collectors/cgroup.h \
	collectors/metrics.c collectors/metrics.h \
	collectors/perf_reason.c collectors/perf_reason.h \
	collectors/jobstate.c collectors/jobstate.h \
	collectors/threadset.c collectors/threadset.h \
	collectors/proc.c \
	collectors/perf.c \
	collectors/rapl.c \
	collectors/nvml.c
if HAVE_PAPI
COLLECTOR_SOURCES += collectors/papi.c
endif
if HAVE_LIKWID
COLLECTOR_SOURCES += collectors/likwid.c
endif

# The NVML test double: a plain shared object (no libtool), built without
# the sanitizers since it is dlopen'ed by sanitized and plain programs alike.
check_PROGRAMS += tests/nvml_double/libnvml-double.so
tests_nvml_double_libnvml_double_so_SOURCES = tests/nvml_double/nvml_double.c
tests_nvml_double_libnvml_double_so_CFLAGS = -std=c11 $(WARN_CFLAGS) -fPIC
tests_nvml_double_libnvml_double_so_LDFLAGS = -shared
tests_nvml_double_libnvml_double_so_LDADD =

EXTRA_DIST += tests/unit/collectors_fixture.h tests/unit/collector_values.h \
	tests/fixtures/proc-t0 tests/fixtures/proc-t1 \
	tests/fixtures/proc-sched-t0 tests/fixtures/proc-sched-t1 \
	tests/fixtures/proc-jobs-t0 tests/fixtures/proc-jobs-t1 \
	tests/fixtures/cgroup tests/fixtures/sys-slurm-v1 tests/fixtures/sys-slurm-v2 \
	tests/fixtures/sys-2socket tests/fixtures/sys-rapl

if HAVE_CMOCKA
COLLECTOR_TESTS = tests/unit/test_dynlib tests/unit/test_procfs tests/unit/test_cgroup tests/unit/test_proc tests/unit/test_perf \
	tests/unit/test_nvml tests/unit/test_papi tests/unit/test_likwid tests/unit/test_metrics \
	tests/unit/test_discovery tests/unit/test_store_series tests/unit/test_topology tests/unit/test_sampler \
	tests/unit/test_sample_window \
	tests/unit/test_jobstate tests/unit/test_threadset tests/unit/test_resolution tests/unit/test_rapl
check_PROGRAMS += $(COLLECTOR_TESTS)
TESTS += $(COLLECTOR_TESTS)
COLLECTOR_TEST_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(JANSSON_CFLAGS) $(SQLITE_CFLAGS) $(PAPI_CFLAGS)
COLLECTOR_TEST_LDADD = $(DLPROF_LIBS) $(CMOCKA_LIBS)
tests_unit_test_dynlib_SOURCES = tests/unit/test_dynlib.c
tests_unit_test_dynlib_CFLAGS = $(COLLECTOR_TEST_CFLAGS)
tests_unit_test_dynlib_LDADD = $(COLLECTOR_TEST_LDADD)
tests_unit_test_procfs_SOURCES = tests/unit/test_procfs.c
tests_unit_test_procfs_CFLAGS = $(COLLECTOR_TEST_CFLAGS)
tests_unit_test_procfs_LDADD = $(COLLECTOR_TEST_LDADD)
tests_unit_test_cgroup_SOURCES = tests/unit/test_cgroup.c
tests_unit_test_cgroup_CFLAGS = $(COLLECTOR_TEST_CFLAGS)
tests_unit_test_cgroup_LDADD = $(COLLECTOR_TEST_LDADD)
tests_unit_test_proc_SOURCES = tests/unit/test_proc.c
tests_unit_test_proc_CFLAGS = $(COLLECTOR_TEST_CFLAGS)
tests_unit_test_proc_LDADD = $(COLLECTOR_TEST_LDADD)
tests_unit_test_perf_SOURCES = tests/unit/test_perf.c
tests_unit_test_perf_CFLAGS = $(COLLECTOR_TEST_CFLAGS)
tests_unit_test_perf_LDADD = $(COLLECTOR_TEST_LDADD)
tests_unit_test_nvml_SOURCES = tests/unit/test_nvml.c
tests_unit_test_nvml_CFLAGS = $(COLLECTOR_TEST_CFLAGS)
tests_unit_test_nvml_LDADD = $(COLLECTOR_TEST_LDADD)
tests_unit_test_papi_SOURCES = tests/unit/test_papi.c
tests_unit_test_papi_CFLAGS = $(COLLECTOR_TEST_CFLAGS)
tests_unit_test_papi_LDADD = $(COLLECTOR_TEST_LDADD)
tests_unit_test_likwid_SOURCES = tests/unit/test_likwid.c
tests_unit_test_likwid_CFLAGS = $(COLLECTOR_TEST_CFLAGS)
tests_unit_test_likwid_LDADD = $(COLLECTOR_TEST_LDADD)
tests_unit_test_metrics_SOURCES = tests/unit/test_metrics.c
tests_unit_test_metrics_CFLAGS = $(COLLECTOR_TEST_CFLAGS)
tests_unit_test_metrics_LDADD = $(COLLECTOR_TEST_LDADD)
tests_unit_test_discovery_SOURCES = tests/unit/test_discovery.c
tests_unit_test_discovery_CFLAGS = $(COLLECTOR_TEST_CFLAGS)
tests_unit_test_discovery_LDADD = $(COLLECTOR_TEST_LDADD)
tests_unit_test_store_series_SOURCES = tests/unit/test_store_series.c tests/unit/store_fixture.h
tests_unit_test_store_series_CFLAGS = $(COLLECTOR_TEST_CFLAGS)
tests_unit_test_store_series_LDADD = $(COLLECTOR_TEST_LDADD)
tests_unit_test_topology_SOURCES = tests/unit/test_topology.c
tests_unit_test_topology_CFLAGS = $(COLLECTOR_TEST_CFLAGS)
tests_unit_test_topology_LDADD = $(COLLECTOR_TEST_LDADD)
tests_unit_test_sample_window_SOURCES = tests/unit/test_sample_window.c
tests_unit_test_sample_window_CFLAGS = $(COLLECTOR_TEST_CFLAGS)
tests_unit_test_sample_window_LDADD = $(COLLECTOR_TEST_LDADD)
tests_unit_test_sampler_SOURCES = tests/unit/test_sampler.c
tests_unit_test_sampler_CFLAGS = $(COLLECTOR_TEST_CFLAGS)
tests_unit_test_sampler_LDADD = $(COLLECTOR_TEST_LDADD)
tests_unit_test_jobstate_SOURCES = tests/unit/test_jobstate.c
tests_unit_test_jobstate_CFLAGS = $(COLLECTOR_TEST_CFLAGS)
tests_unit_test_jobstate_LDADD = $(COLLECTOR_TEST_LDADD)
tests_unit_test_threadset_SOURCES = tests/unit/test_threadset.c
tests_unit_test_threadset_CFLAGS = $(COLLECTOR_TEST_CFLAGS)
tests_unit_test_threadset_LDADD = $(COLLECTOR_TEST_LDADD)
tests_unit_test_rapl_SOURCES = tests/unit/test_rapl.c
tests_unit_test_rapl_CFLAGS = $(COLLECTOR_TEST_CFLAGS)
tests_unit_test_rapl_LDADD = $(COLLECTOR_TEST_LDADD)
tests_unit_test_resolution_SOURCES = tests/unit/test_resolution.c
tests_unit_test_resolution_CFLAGS = $(COLLECTOR_TEST_CFLAGS)
tests_unit_test_resolution_LDADD = $(COLLECTOR_TEST_LDADD)
endif

TESTS += tests/integration/test_sampling.py
SERIAL_TESTS += tests/integration/test_sampling.py
EXTRA_DIST += tests/integration/test_sampling.py
