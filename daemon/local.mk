# The daemon: everything but main.c goes into libdlprof.a, which the tests
# link against (with the collectors' library and base/'s), so tests
# exercise the real sources.
noinst_LIBRARIES += daemon/libdlprof.a
daemon_libdlprof_a_CFLAGS = $(AM_CFLAGS) $(MHD_CFLAGS) $(SQLITE_CFLAGS) $(JANSSON_CFLAGS) \
	$(INIH_CFLAGS) $(JEMALLOC_CFLAGS) $(SYSTEMD_CFLAGS) $(PAPI_CFLAGS) $(PQ_CFLAGS)
daemon_libdlprof_a_SOURCES = \
	daemon/app.h \
	daemon/config.c daemon/config.h \
	daemon/migrations.h \
	daemon/store.c daemon/store.h daemon/store_internal.h \
	daemon/store_jobs.c \
	daemon/store_events.c daemon/store_events.h \
	daemon/store_labels.c daemon/store_labels.h \
	daemon/store_ranks.c \
	daemon/store_samples.c \
	daemon/store_batches.c \
	daemon/store_pending.c \
	daemon/series_codec.c daemon/series_codec.h \
	daemon/series_summary.c daemon/series_summary.h \
	daemon/http.c daemon/http.h \
	daemon/router.c daemon/router.h \
	daemon/routes.c daemon/api.h \
	daemon/server.c daemon/server.h \
	daemon/peer_uid.c daemon/peer_uid.h \
	daemon/mhd_pool.c daemon/mhd_pool.h \
	daemon/node.c daemon/node.h \
	daemon/stats.c daemon/stats.h \
	daemon/validate.c daemon/validate.h \
	daemon/reported.c daemon/reported.h \
	daemon/api_node.c \
	daemon/jobs.c daemon/jobs.h \
	daemon/api_jobs.c \
	daemon/job_view.c daemon/job_view.h \
	daemon/api_ingest.c \
	daemon/api_static.c \
	daemon/sampler.c daemon/sampler.h \
	daemon/energy.c daemon/energy.h \
	daemon/energy_report.c daemon/energy_report.h \
	daemon/gpu_pick.c daemon/gpu_pick.h \
	daemon/job_env.c daemon/job_env.h \
	daemon/sample_window.c daemon/sample_window.h \
	daemon/discovery.c daemon/discovery.h \
	daemon/store_series.c daemon/store_series.h \
	daemon/store_blocks.c \
	daemon/store_tiers.c \
	daemon/store_times.c \
	daemon/api_series.c \
	daemon/api_threads.c \
	daemon/timeline.c daemon/timeline.h \
	daemon/api_timeline.c \
	daemon/api_record.c \
	daemon/live.c daemon/live.h \
	daemon/api_prometheus.c \
	daemon/cluster.c daemon/cluster.h daemon/cluster_sql.c daemon/cluster_sql.h \
	daemon/cluster_pg.c daemon/cluster_pg.h \
	daemon/store_cluster.c daemon/store_cluster.h daemon/store_cluster_ranks.c \
	daemon/cluster_ranks.c daemon/cluster_ranks.h \
	daemon/api_cluster.c \
	$(DIAG_SOURCES) \
	$(TUNER_SOURCES)
nodist_daemon_libdlprof_a_SOURCES = daemon/migrations.c daemon/cluster_migrations.c

# The daemon's library stands on the collectors' and on the ground floor (in
# that order: a static library's undefined symbols are looked up in those after it).
DLPROF_LIBS = daemon/libdlprof.a collectors/libcollectors.a base/libbase.a $(MHD_LIBS) $(SQLITE_LIBS) $(JANSSON_LIBS) $(INIH_LIBS) \
	$(JEMALLOC_LIBS) $(SYSTEMD_LIBS) $(PQ_LIBS)

sbin_PROGRAMS += daemon/dlprofd
daemon_dlprofd_SOURCES = daemon/main.c
daemon_dlprofd_CFLAGS = $(daemon_libdlprof_a_CFLAGS)
daemon_dlprofd_LDADD = $(DLPROF_LIBS)
