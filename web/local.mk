# The dashboard: static files installed to $(pkgdatadir)/web, and browser tests.
