# Reliability suites: crash safety, storage faults, limits, load; owned by the reliability work.
#
# Python TAP suites on tests/integration/harness.py (through common.py);
# the ones that mount a tmpfs or create network namespaces skip with the
# reason when not run as root.  bench/soak and bench/load are the
# hand-run tools behind test_soak.py and test_load.py.

RELIABILITY_PY_TESTS = \
	tests/reliability/test_malformed.py \
	tests/reliability/test_crash.py \
	tests/reliability/test_storage.py \
	tests/reliability/test_limits.py \
	tests/reliability/test_remote.py \
	tests/reliability/test_concurrency.py \
	tests/reliability/test_soak.py \
	tests/reliability/test_load.py \
	tests/reliability/test_sql_static.py
TESTS += $(RELIABILITY_PY_TESTS)
EXTRA_DIST += tests/reliability/common.py $(RELIABILITY_PY_TESTS) bench/soak bench/load bench/load.lua

# Suites worth running as shipped too (scripts/test: RELEASE_TESTS): the soak
# judges the RSS only on jemalloc, and the load test measures the real thing.
RELIABILITY_RELEASE_TESTS = tests/reliability/test_soak.py tests/reliability/test_load.py \
	tests/reliability/test_crash.py

# The concurrency suites for a ThreadSanitizer build (configure --enable-tsan
# --without-jemalloc): the writer (unit test_store), the accepting thread and
# its workers (unit test_mhd_pool), and the HTTP pool, writer, sampler and
# reloads all at once (test_concurrency.py), and the cluster store's thread
# beside handlers and the tuner (test_cluster.py); the live streams between the
# sampler's tick hook and an MHD worker (unit test_live), and the cluster link's
# waits ended from another thread (unit test_cluster_pg).  A race fails them.
TSAN_TESTS = tests/unit/test_store tests/unit/test_mhd_pool tests/reliability/test_concurrency.py \
	tests/integration/test_cluster.py tests/unit/test_oom \
	tests/unit/test_live tests/unit/test_cluster_pg

# The access rule and token comparison of server.c, as a unit.
if HAVE_CMOCKA
check_PROGRAMS += tests/reliability/test_access
TESTS += tests/reliability/test_access
tests_reliability_test_access_SOURCES = tests/reliability/test_access.c
tests_reliability_test_access_CFLAGS = $(UNIT_CFLAGS) $(MHD_CFLAGS)
tests_reliability_test_access_LDADD = $(UNIT_LDADD)
endif
