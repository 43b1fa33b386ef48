# Manual pages: dlprofd(8), dlprofd.conf(5), dlprofctl(1), in roff.  The
# .in sources get the configured paths at make time (dlprof_edit is in
# systemd/local.mk), like the unit.

man_MANS = man/dlprofd.8 man/dlprofd.conf.5 man/dlprofctl.1
EXTRA_DIST += man/dlprofd.8.in man/dlprofd.conf.5.in man/dlprofctl.1.in
CLEANFILES += $(man_MANS)

man/dlprofd.8: man/dlprofd.8.in Makefile
	$(AM_V_GEN)$(MKDIR_P) man && $(dlprof_edit) $(srcdir)/man/dlprofd.8.in > $@.tmp && mv $@.tmp $@
man/dlprofd.conf.5: man/dlprofd.conf.5.in Makefile
	$(AM_V_GEN)$(MKDIR_P) man && $(dlprof_edit) $(srcdir)/man/dlprofd.conf.5.in > $@.tmp && mv $@.tmp $@
man/dlprofctl.1: man/dlprofctl.1.in Makefile
	$(AM_V_GEN)$(MKDIR_P) man && $(dlprof_edit) $(srcdir)/man/dlprofctl.1.in > $@.tmp && mv $@.tmp $@

TESTS += tests/deploy/man_pages.sh
EXTRA_DIST += tests/deploy/man_pages.sh
