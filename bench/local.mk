# Benchmarks (bench/run): never part of make check; owned by the performance work.
#
# The peers are EXTRA_PROGRAMS: automake writes their rules and distributes
# their sources, but neither `make` nor `make check` builds them; bench/run
# builds them with `make bench-peers` in its own release build (build/bench).
# `make bench` runs the whole benchmark and rewrites bench/RESULTS.md.
BENCH_PEERS = \
	bench/peers/mhd_fixed \
	bench/peers/sqlite_loop \
	bench/peers/proc_loop \
	bench/peers/ingest_load \
	bench/peers/spawn_jobs \
	bench/peers/storm \
	bench/peers/history \
	bench/peers/trace_store \
	bench/peers/projection \
	bench/peers/cluster_load
EXTRA_PROGRAMS = $(BENCH_PEERS)
CLEANFILES += $(BENCH_PEERS)

bench_peers_mhd_fixed_SOURCES = bench/peers/mhd_fixed.c
bench_peers_mhd_fixed_CFLAGS = $(AM_CFLAGS) $(MHD_CFLAGS)
bench_peers_mhd_fixed_LDADD = daemon/libdlprof.a base/libbase.a $(MHD_LIBS)
bench_peers_sqlite_loop_SOURCES = bench/peers/sqlite_loop.c bench/peers/rows.h
bench_peers_sqlite_loop_CFLAGS = $(AM_CFLAGS) $(SQLITE_CFLAGS)
bench_peers_sqlite_loop_LDADD = $(SQLITE_LIBS)
bench_peers_proc_loop_SOURCES = bench/peers/proc_loop.c
bench_peers_ingest_load_SOURCES = bench/peers/ingest_load.c bench/peers/rows.h
bench_peers_spawn_jobs_SOURCES = bench/peers/spawn_jobs.c
bench_peers_storm_SOURCES = bench/peers/storm.c
bench_peers_history_SOURCES = bench/peers/history.c
bench_peers_history_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(SQLITE_CFLAGS)
bench_peers_history_LDADD = $(DLPROF_LIBS)
bench_peers_trace_store_SOURCES = bench/peers/trace_store.c
bench_peers_trace_store_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(SQLITE_CFLAGS)
bench_peers_trace_store_LDADD = $(DLPROF_LIBS)
bench_peers_projection_SOURCES = bench/peers/projection.c
bench_peers_projection_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) $(SQLITE_CFLAGS)
bench_peers_projection_LDADD = $(DLPROF_LIBS)
# Stands in for 1,000 nodes on the cluster store, with the daemon's own statements (bench/cluster).
bench_peers_cluster_load_SOURCES = bench/peers/cluster_load.c daemon/cluster_sql.c
bench_peers_cluster_load_CFLAGS = $(AM_CFLAGS) $(PQ_CFLAGS) -I$(top_srcdir)/daemon
bench_peers_cluster_load_LDADD = $(PQ_LIBS) -lm

EXTRA_DIST += bench/run bench/cluster bench/projection bench/README.md bench/RESULTS.md \
	bench/goodput/README.md bench/goodput/train.py bench/goodput/learning_speedup.py \
	bench/history/record.py bench/history/train_job.py bench/history/trace-2026-11-26.jsonl.gz \
	bench/history/trace-2026-11-26-quantum.jsonl.gz bench/history/trace-2026-11-27.jsonl.gz \
	bench/web/run.mjs

.PHONY: bench bench-peers
bench-peers: $(BENCH_PEERS)
bench:
	$(top_srcdir)/bench/run
