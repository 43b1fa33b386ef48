# systemd integration: the service unit, the sysusers.d and tmpfiles.d
# snippets, and the example configuration installed to $(sysconfdir)/dlprofd.
# Files ending in .in get the configured paths at make time, not at
# configure time, so `make prefix=...` and DESTDIR installs stay right.

# The substitution shared with man/local.mk.
dlprof_edit = sed \
	-e 's|@sbindir[@]|$(sbindir)|g' \
	-e 's|@bindir[@]|$(bindir)|g' \
	-e 's|@sysconfdir[@]|$(sysconfdir)|g' \
	-e 's|@pkgdatadir[@]|$(pkgdatadir)|g' \
	-e 's|@pkglibdir[@]|$(pkglibdir)|g' \
	-e 's|@pkglibexecdir[@]|$(pkglibexecdir)|g' \
	-e 's|@PACKAGE_VERSION[@]|$(PACKAGE_VERSION)|g'

# configure.ac substitutes these from pkg-config systemd, or --with-*dir.
systemdsystemunitdir = @systemdsystemunitdir@
sysusersdir = @sysusersdir@
tmpfilesdir = @tmpfilesdir@

EXTRA_DIST += \
	systemd/dlprofd.service.in \
	systemd/dlprofd.conf.in \
	systemd/dlprofd.sysusers \
	systemd/dlprofd.tmpfiles

DLPROF_SYSTEMD_BUILT = \
	systemd/dlprofd.service \
	systemd/dlprofd.conf \
	systemd/sysusers.d/dlprofd.conf \
	systemd/tmpfiles.d/dlprofd.conf
noinst_DATA = $(DLPROF_SYSTEMD_BUILT)
CLEANFILES += $(DLPROF_SYSTEMD_BUILT)

systemdsystemunit_DATA = systemd/dlprofd.service
sysusers_DATA = systemd/sysusers.d/dlprofd.conf
tmpfiles_DATA = systemd/tmpfiles.d/dlprofd.conf

systemd/dlprofd.service: systemd/dlprofd.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) systemd && \
	$(dlprof_edit) $(srcdir)/systemd/dlprofd.service.in > $@.tmp && mv $@.tmp $@

systemd/dlprofd.conf: systemd/dlprofd.conf.in Makefile
	$(AM_V_GEN)$(MKDIR_P) systemd && \
	$(dlprof_edit) $(srcdir)/systemd/dlprofd.conf.in > $@.tmp && mv $@.tmp $@

# Installed under the name the package has in sysusers.d and tmpfiles.d.
systemd/sysusers.d/dlprofd.conf: systemd/dlprofd.sysusers
	$(AM_V_GEN)$(MKDIR_P) systemd/sysusers.d && cp $(srcdir)/systemd/dlprofd.sysusers $@

systemd/tmpfiles.d/dlprofd.conf: systemd/dlprofd.tmpfiles
	$(AM_V_GEN)$(MKDIR_P) systemd/tmpfiles.d && cp $(srcdir)/systemd/dlprofd.tmpfiles $@

# The example configuration is a conffile: `make install` puts it in place
# only when none is there, so a re-install never overwrites an admin's
# edits, and `make uninstall` removes it only when it is still unchanged.
dlprofconfdir = $(sysconfdir)/dlprofd

install-data-local: install-dlprofd-conf
uninstall-local: uninstall-dlprofd-conf

install-dlprofd-conf: systemd/dlprofd.conf
	$(MKDIR_P) '$(DESTDIR)$(dlprofconfdir)'
	@if test -f '$(DESTDIR)$(dlprofconfdir)/dlprofd.conf'; then \
	  echo "keeping existing $(DESTDIR)$(dlprofconfdir)/dlprofd.conf"; \
	else \
	  echo " $(INSTALL_DATA) systemd/dlprofd.conf '$(DESTDIR)$(dlprofconfdir)/dlprofd.conf'"; \
	  $(INSTALL_DATA) systemd/dlprofd.conf '$(DESTDIR)$(dlprofconfdir)/dlprofd.conf'; \
	fi

uninstall-dlprofd-conf:
	@f='$(DESTDIR)$(dlprofconfdir)/dlprofd.conf'; \
	if test -f "$$f" && cmp -s systemd/dlprofd.conf "$$f"; then \
	  echo " rm -f $$f"; rm -f "$$f"; \
	  rmdir '$(DESTDIR)$(dlprofconfdir)' 2>/dev/null || :; \
	fi

.PHONY: install-dlprofd-conf uninstall-dlprofd-conf

# distcheck installs into a scratch prefix: keep the systemd snippets there
# too instead of the absolute directories pkg-config names.
AM_DISTCHECK_CONFIGURE_FLAGS = \
	--with-systemdsystemunitdir='$$(prefix)/lib/systemd/system' \
	--with-sysusersdir='$$(prefix)/lib/sysusers.d' \
	--with-tmpfilesdir='$$(prefix)/lib/tmpfiles.d'

TESTS += tests/deploy/systemd_unit.sh tests/deploy/capabilities.py
EXTRA_DIST += tests/deploy/systemd_unit.sh tests/deploy/capabilities.py

# What `make install` puts on a node, installed into a scratch DESTDIR.
TESTS += tests/deploy/installed_files.sh
EXTRA_DIST += tests/deploy/installed_files.sh

# The Debian packaging travels in the tarball; `make deb` builds the .deb
# from it, as a user would from a release (outside this tree).
EXTRA_DIST += \
	debian/changelog \
	debian/control \
	debian/copyright \
	debian/rules \
	debian/source/format \
	debian/dlprofd.sysusers \
	debian/dlprofd.postrm \
	debian/python3-dlprof.install

# python3-dlprof built from debian/, installed, and imported by a job.
TESTS += tests/deploy/python_deb.py
EXTRA_DIST += tests/deploy/python_deb.py

deb: dist-gzip
	rm -rf deb-build && $(MKDIR_P) deb-build
	tar -C deb-build -xzf $(distdir).tar.gz
	cd deb-build/$(distdir) && dpkg-buildpackage -us -uc -b
	@ls deb-build/*.deb

clean-local: clean-deb
clean-deb:
	rm -rf deb-build

.PHONY: deb clean-deb
