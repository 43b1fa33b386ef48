# Slurm integration: the TaskProlog and Epilog hooks (installed to
# $(pkglibexecdir)), the SPANK plugin (to $(pkglibdir), when Slurm's
# spank.h is there), their example settings, and the test that runs them
# in a real one-node Slurm cluster.

pkglibexec_SCRIPTS = contrib/slurm/dlprof-taskprolog contrib/slurm/dlprof-epilog
slurmexampledir = $(pkgdatadir)/slurm
slurmexample_DATA = contrib/slurm/plugstack.conf contrib/slurm/slurm-hooks.conf \
	contrib/slurm/README.md
CLEANFILES += $(pkglibexec_SCRIPTS) contrib/slurm/plugstack.conf

EXTRA_DIST += \
	contrib/slurm/dlprof-taskprolog.in \
	contrib/slurm/dlprof-epilog.in \
	contrib/slurm/plugstack.conf.in \
	contrib/slurm/slurm-hooks.conf \
	contrib/slurm/README.md \
	contrib/slurm/dlprof_spank.c \
	contrib/slurm/dlprof_spank.map \
	contrib/slurm/spank_json.c \
	contrib/slurm/spank_json.h

contrib/slurm/dlprof-taskprolog: contrib/slurm/dlprof-taskprolog.in Makefile
	$(AM_V_GEN)$(MKDIR_P) contrib/slurm && \
	$(dlprof_edit) $(srcdir)/contrib/slurm/dlprof-taskprolog.in > $@.tmp && chmod +x $@.tmp && mv $@.tmp $@
contrib/slurm/dlprof-epilog: contrib/slurm/dlprof-epilog.in Makefile
	$(AM_V_GEN)$(MKDIR_P) contrib/slurm && \
	$(dlprof_edit) $(srcdir)/contrib/slurm/dlprof-epilog.in > $@.tmp && chmod +x $@.tmp && mv $@.tmp $@
contrib/slurm/plugstack.conf: contrib/slurm/plugstack.conf.in Makefile
	$(AM_V_GEN)$(MKDIR_P) contrib/slurm && \
	$(dlprof_edit) $(srcdir)/contrib/slurm/plugstack.conf.in > $@.tmp && mv $@.tmp $@

# The SPANK plugin is loaded into slurmd and slurmstepd: position
# independent, no sanitizer runtime (those daemons are not built with one),
# and only the symbols SPANK looks up exported.
if HAVE_SPANK
spankdir = $(pkglibdir)
spank_PROGRAMS = contrib/slurm/dlprof_spank.so
contrib_slurm_dlprof_spank_so_SOURCES = contrib/slurm/dlprof_spank.c \
	contrib/slurm/spank_json.c contrib/slurm/spank_json.h tools/ctl_http.c tools/ctl_http.h
contrib_slurm_dlprof_spank_so_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools
contrib_slurm_dlprof_spank_so_CFLAGS = -std=c11 $(WARN_CFLAGS) -fPIC $(CURL_CFLAGS)
contrib_slurm_dlprof_spank_so_LDFLAGS = -shared \
	-Wl,--version-script=$(top_srcdir)/contrib/slurm/dlprof_spank.map
contrib_slurm_dlprof_spank_so_LDADD = $(CURL_LIBS)

# The plugin's job-step path with stand-ins for SPANK, for
# tests/integration/test_env_paths.py.
check_PROGRAMS += tests/deploy/spank_harness
tests_deploy_spank_harness_SOURCES = tests/deploy/spank_harness.c contrib/slurm/dlprof_spank.c \
	contrib/slurm/spank_json.c contrib/slurm/spank_json.h tools/ctl_http.c tools/ctl_http.h
tests_deploy_spank_harness_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tools
tests_deploy_spank_harness_CFLAGS = $(AM_CFLAGS) $(CURL_CFLAGS)
tests_deploy_spank_harness_LDADD = $(CURL_LIBS)
endif
EXTRA_DIST += tests/deploy/spank_harness.c

# The plugin's JSON scanner needs no Slurm: a cmocka test everywhere.
if HAVE_CMOCKA
check_PROGRAMS += tests/deploy/test_spank_json
TESTS += tests/deploy/test_spank_json
tests_deploy_test_spank_json_SOURCES = tests/deploy/test_spank_json.c \
	contrib/slurm/spank_json.c contrib/slurm/spank_json.h
tests_deploy_test_spank_json_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/contrib/slurm
tests_deploy_test_spank_json_CFLAGS = $(AM_CFLAGS) $(CMOCKA_CFLAGS)
tests_deploy_test_spank_json_LDADD = $(CMOCKA_LIBS)
endif

TESTS += tests/deploy/slurm.py
EXTRA_DIST += tests/deploy/slurm.py

# The cluster path for metrics: a Prometheus scrape configuration and a
# Grafana dashboard of what /metrics serves (tests/deploy/contrib_metrics.py).
promexampledir = $(pkgdatadir)/prometheus
promexample_DATA = contrib/prometheus/prometheus.yml contrib/prometheus/dlprofd-nodes.yml
grafanadir = $(pkgdatadir)/grafana
grafana_DATA = contrib/grafana/dlprofd-cluster.json
EXTRA_DIST += $(promexample_DATA) $(grafana_DATA)
