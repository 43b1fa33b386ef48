# Schema migrations, numbered, applied in order; compiled into the daemon.
MIGRATIONS = \
	sql/001_initial.sql \
	sql/002_series_rollup.sql \
	sql/003_tuner.sql \
	sql/004_phase_index.sql \
	sql/006_ingest_seq.sql \
	sql/007_series_blocks.sql \
	sql/008_cluster_outbox.sql \
	sql/009_ranks.sql \
	sql/010_series_blocks_rowid.sql \
	sql/011_sampler_flushed.sql \
	sql/012_goodput_state.sql \
	sql/013_cluster_ranks.sql \
	sql/014_series_codec_v2.sql \
	sql/015_series_blocks_key.sql \
	sql/016_series_tiers.sql \
	sql/017_job_story.sql \
	sql/018_reported_batches.sql \
	sql/019_series_sums_index.sql
# The cluster store's schema on PostgreSQL, versioned the same way.
CLUSTER_MIGRATIONS = \
	sql/cluster/001_shared.sql \
	sql/cluster/002_ranks.sql

EXTRA_DIST += $(MIGRATIONS) $(CLUSTER_MIGRATIONS) build-aux/sql2c.sh
BUILT_SOURCES += daemon/migrations.c daemon/cluster_migrations.c
CLEANFILES += daemon/migrations.c daemon/cluster_migrations.c

daemon/migrations.c: $(MIGRATIONS) $(top_srcdir)/build-aux/sql2c.sh $(top_srcdir)/sql/local.mk
	$(AM_V_GEN)$(MKDIR_P) daemon && (cd $(top_srcdir) && $(SHELL) build-aux/sql2c.sh $(MIGRATIONS)) > $@.tmp && mv $@.tmp $@

daemon/cluster_migrations.c: $(CLUSTER_MIGRATIONS) $(top_srcdir)/build-aux/sql2c.sh $(top_srcdir)/sql/local.mk
	$(AM_V_GEN)$(MKDIR_P) daemon && (cd $(top_srcdir) && SQL2C_TABLE=cluster_migrations $(SHELL) build-aux/sql2c.sh $(CLUSTER_MIGRATIONS)) > $@.tmp && mv $@.tmp $@
