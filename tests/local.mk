# The core's tests: cmocka unit tests (one file per module) and the
# integration suites that start the built daemon.  Other parts of the tree
# add their own tests in their fragments.

EXTRA_DIST += tests/integration/harness.py

# What the full suite needs from configure (cmocka, clang, spank.h, PAPI, likwid): a part it
# did not find fails this suite, naming the package, instead of dropping the suites it builds.
TESTS += tests/prerequisites.sh
EXTRA_DIST += tests/prerequisites.sh
AM_TESTS_ENVIRONMENT += DLPROF_CONFIGURED='cmocka=$(have_cmocka) clang=$(FUZZ_CC) spank=$(have_spank) \
	papi=$(have_papi) likwid=$(have_likwid)'; export DLPROF_CONFIGURED;

TESTS += tests/integration/test_api.py
EXTRA_DIST += tests/integration/test_api.py

# Who may claim a job (other uids over the socket and loopback TCP), exactly-once ingest.
TESTS += tests/integration/test_jobs.py
EXTRA_DIST += tests/integration/test_jobs.py

# The live event stream: ticks, ingest events, the bound on streams, stop with streams held.
TESTS += tests/integration/test_live.py
SERIAL_TESTS += tests/integration/test_live.py
EXTRA_DIST += tests/integration/test_live.py

# What the dashboard's heatmap, story and downloads read: named threads of a real process, a
# distributed job's timeline with a verdict raised and cleared, a job's record as JSON and CSV.
TESTS += tests/integration/test_story.py
# Its heatmap case reads a spinning thread's share of a CPU.
SERIAL_TESTS += tests/integration/test_story.py
EXTRA_DIST += tests/integration/test_story.py

# The ranks of a distributed job over REST: one job, global throughput, rank ends, the straggler.
TESTS += tests/integration/test_ranks.py
EXTRA_DIST += tests/integration/test_ranks.py

# cmocka unit tests: one per module, linked against the real sources.
if HAVE_CMOCKA
UNIT_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS) $(JANSSON_CFLAGS) $(SQLITE_CFLAGS)
UNIT_LDADD = $(DLPROF_LIBS) $(CMOCKA_LIBS)

check_PROGRAMS += tests/unit/test_router tests/unit/test_validate tests/unit/test_config tests/unit/test_store
TESTS += tests/unit/test_router tests/unit/test_validate tests/unit/test_config tests/unit/test_store
check_PROGRAMS += tests/unit/test_log
TESTS += tests/unit/test_log
tests_unit_test_log_SOURCES = tests/unit/test_log.c
tests_unit_test_log_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_log_LDADD = $(UNIT_LDADD)
check_PROGRAMS += tests/unit/test_mhd_pool
TESTS += tests/unit/test_mhd_pool
tests_unit_test_mhd_pool_SOURCES = tests/unit/test_mhd_pool.c
tests_unit_test_mhd_pool_CFLAGS = $(UNIT_CFLAGS) $(MHD_CFLAGS)
tests_unit_test_mhd_pool_LDADD = $(UNIT_LDADD)
tests_unit_test_router_SOURCES = tests/unit/test_router.c
tests_unit_test_router_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_router_LDADD = $(UNIT_LDADD)
tests_unit_test_validate_SOURCES = tests/unit/test_validate.c
tests_unit_test_validate_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_validate_LDADD = $(UNIT_LDADD)
tests_unit_test_config_SOURCES = tests/unit/test_config.c
tests_unit_test_config_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_config_LDADD = $(UNIT_LDADD)
# The job lifecycle's rules (jobs.c) and the loopback peer's uid (peer_uid.c).
check_PROGRAMS += tests/unit/test_jobs tests/unit/test_peer_uid
TESTS += tests/unit/test_jobs tests/unit/test_peer_uid
tests_unit_test_jobs_SOURCES = tests/unit/test_jobs.c tests/unit/store_fixture.h
tests_unit_test_jobs_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_jobs_LDADD = $(UNIT_LDADD)
tests_unit_test_peer_uid_SOURCES = tests/unit/test_peer_uid.c
tests_unit_test_peer_uid_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_peer_uid_LDADD = $(UNIT_LDADD)
# A job's story (timeline.c): events in order, configs and why, phase overrides, verdicts, ranks.
check_PROGRAMS += tests/unit/test_timeline
TESTS += tests/unit/test_timeline
tests_unit_test_timeline_SOURCES = tests/unit/test_timeline.c
tests_unit_test_timeline_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_timeline_LDADD = $(UNIT_LDADD)
# A job's share of the node's CPU energy (energy.c).
check_PROGRAMS += tests/unit/test_energy
TESTS += tests/unit/test_energy
tests_unit_test_energy_SOURCES = tests/unit/test_energy.c
tests_unit_test_energy_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_energy_LDADD = $(UNIT_LDADD)
# Which GPUs a job is handed (gpu_pick.c): idle, leased, inside its allocation.
check_PROGRAMS += tests/unit/test_gpu_pick
TESTS += tests/unit/test_gpu_pick
tests_unit_test_gpu_pick_SOURCES = tests/unit/test_gpu_pick.c
tests_unit_test_gpu_pick_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_gpu_pick_LDADD = $(UNIT_LDADD)
tests_unit_test_store_SOURCES = tests/unit/test_store.c tests/unit/store_fixture.h
tests_unit_test_store_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_store_LDADD = $(UNIT_LDADD)
# The ranks of distributed jobs in the store (store_ranks.c), on a store seeded with them.
check_PROGRAMS += tests/unit/test_store_ranks
TESTS += tests/unit/test_store_ranks
tests_unit_test_store_ranks_SOURCES = tests/unit/test_store_ranks.c tests/unit/store_fixture.h
tests_unit_test_store_ranks_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_store_ranks_LDADD = $(UNIT_LDADD)
# The cluster store's outboxes in the node's database (store_cluster.c, store_cluster_ranks.c).
check_PROGRAMS += tests/unit/test_store_cluster
TESTS += tests/unit/test_store_cluster
tests_unit_test_store_cluster_SOURCES = tests/unit/test_store_cluster.c tests/unit/store_fixture.h
tests_unit_test_store_cluster_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_store_cluster_LDADD = $(UNIT_LDADD)
# The live event streams (live.c) served by the daemon's MHD pool from a real sampler's ticks.
check_PROGRAMS += tests/unit/test_live
TESTS += tests/unit/test_live
tests_unit_test_live_SOURCES = tests/unit/test_live.c tests/unit/store_fixture.h
tests_unit_test_live_CFLAGS = $(UNIT_CFLAGS) $(MHD_CFLAGS)
tests_unit_test_live_LDADD = $(UNIT_LDADD)
# The cluster thread's link to PostgreSQL (cluster_pg.c), against a private server
# (tests/integration/pgserver.py); every case skips where no PostgreSQL server is installed.
check_PROGRAMS += tests/unit/test_cluster_pg
TESTS += tests/unit/test_cluster_pg
tests_unit_test_cluster_pg_SOURCES = tests/unit/test_cluster_pg.c tests/unit/store_fixture.h
tests_unit_test_cluster_pg_CFLAGS = $(UNIT_CFLAGS) $(PQ_CFLAGS)
tests_unit_test_cluster_pg_LDADD = $(UNIT_LDADD)
# The series block codec: bit-exact round trips, size, damaged blocks refused.
check_PROGRAMS += tests/unit/test_series_codec
TESTS += tests/unit/test_series_codec
tests_unit_test_series_codec_SOURCES = tests/unit/test_series_codec.c
tests_unit_test_series_codec_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_series_codec_LDADD = $(UNIT_LDADD)
# A job's view rendered once per state of the store (job_view.c).
check_PROGRAMS += tests/unit/test_job_view
TESTS += tests/unit/test_job_view
tests_unit_test_job_view_SOURCES = tests/unit/test_job_view.c
tests_unit_test_job_view_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_job_view_LDADD = $(UNIT_LDADD)
# A database the release before sql/016 wrote, for test_store_series' migration case.
EXTRA_DIST += tests/fixtures/store-b4c3343/db.gz tests/fixtures/store-b4c3343/points.h \
	tests/fixtures/store-b4c3343/make.c
# The series' tiers and the storage budget: dense spans, summaries, the raw window, bytes on disk.
check_PROGRAMS += tests/unit/test_store_tiers
TESTS += tests/unit/test_store_tiers
tests_unit_test_store_tiers_SOURCES = tests/unit/test_store_tiers.c tests/unit/store_fixture.h
tests_unit_test_store_tiers_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_store_tiers_LDADD = $(UNIT_LDADD)
check_PROGRAMS += tests/unit/test_array
TESTS += tests/unit/test_array
tests_unit_test_array_SOURCES = tests/unit/test_array.c
tests_unit_test_array_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_array_LDADD = $(UNIT_LDADD)
# Every GET route under a failing Nth allocation: libc's allocator is
# wrapped at link time for the daemon's objects (the test fails the Nth call).
check_PROGRAMS += tests/unit/test_oom
TESTS += tests/unit/test_oom
tests_unit_test_oom_SOURCES = tests/unit/test_oom.c
tests_unit_test_oom_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_oom_LDFLAGS = $(AM_LDFLAGS) -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=strndup,--wrap=open_memstream
tests_unit_test_oom_LDADD = $(UNIT_LDADD)
endif
# One request through the route table, for the unit tests that drive handlers.
EXTRA_DIST += tests/unit/route_call.h

TESTS += tests/integration/test_allocator.py

# One config through recommend, registration, the Slurm hooks and the client: the same variables.
TESTS += tests/integration/test_env_paths.py
EXTRA_DIST += tests/integration/test_env_paths.py

# A GPU job waiting on its input (NVML double): the verdicts point at the data-loader workers.
TESTS += tests/integration/test_gpu_input.py
EXTRA_DIST += tests/integration/test_gpu_input.py

# The layers (base/, collectors/, the daemon) as the build holds them: probes compiled
# with each layer's own command, which tests/unit/layers.env carries from here.
TESTS += tests/unit/test_layering.sh
EXTRA_DIST += tests/unit/test_layering.sh
CLEANFILES += tests/unit/layers.env
tests/unit/layers.env: Makefile
	$(AM_V_GEN)$(MKDIR_P) tests/unit && { \
	  echo "base_cc='$(CC) $(DEFS) $(base_libbase_a_CPPFLAGS) $(CPPFLAGS) $(base_libbase_a_CFLAGS) $(CFLAGS)'"; \
	  echo "collectors_cc='$(CC) $(DEFS) $(collectors_libcollectors_a_CPPFLAGS) $(CPPFLAGS) $(collectors_libcollectors_a_CFLAGS) $(CFLAGS)'"; \
	  echo "collectors_link='$(AM_LDFLAGS) $(LDFLAGS) -Wl,--whole-archive collectors/libcollectors.a -Wl,--no-whole-archive base/libbase.a $(JANSSON_LIBS) $(LIBS)'"; \
	} >$@.tmp && mv $@.tmp $@
tests/unit/test_layering.log: tests/unit/layers.env base/libbase.a collectors/libcollectors.a
EXTRA_DIST += tests/integration/test_allocator.py
TESTS += tests/integration/test_startup.py
EXTRA_DIST += tests/integration/test_startup.py
TESTS += tests/integration/test_prometheus.py
# A job's energy (RAPL fixture counters advanced by the test, the NVML double) in its view, report and /metrics.
TESTS += tests/integration/test_energy.py
EXTRA_DIST += tests/integration/test_energy.py
EXTRA_DIST += tests/integration/test_prometheus.py
# The cluster store: daemons sharing what they learn through a private PostgreSQL.
TESTS += tests/integration/test_cluster.py
EXTRA_DIST += tests/integration/test_cluster.py tests/integration/pgserver.py
# A job spanning nodes seen whole from each through the cluster store: REST ranks on two daemons,
# and a real gloo job across two network namespaces (root, ip netns, torch; skipped otherwise).
TESTS += tests/integration/test_cluster_ranks.py
EXTRA_DIST += tests/integration/test_cluster_ranks.py
# contrib/'s Prometheus configuration and Grafana dashboard query what /metrics serves.
TESTS += tests/deploy/contrib_metrics.py
EXTRA_DIST += tests/deploy/contrib_metrics.py
# The suites that switch uids, run again from behind a 0700 directory.
TESTS += tests/deploy/private_checkout.sh
EXTRA_DIST += tests/deploy/private_checkout.sh
# The Markdown documents link only to what the tree (and the tarball) has.
TESTS += tests/deploy/doc_links.py
EXTRA_DIST += tests/deploy/doc_links.py
# docs/ARCHITECTURE.md names every configuration key, route, start step and module the code has.
TESTS += tests/deploy/architecture_doc.py
EXTRA_DIST += tests/deploy/architecture_doc.py

# Suites that scripts/test also runs against the release build (jemalloc).
# The out-of-memory suite runs in every build: a crash only -O2 shows is the one users meet.
RELEASE_TESTS = tests/integration/test_api.py tests/integration/test_allocator.py $(RELIABILITY_RELEASE_TESTS) \
	tests/unit/test_oom
