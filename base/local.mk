# The ground floor (base/*.c): what the collectors and the daemon both stand
# on.  Compiled with base/ alone on the include path, so nothing here can
# include a collector's or the daemon's header; collectors/libcollectors.a
# and daemon/libdlprof.a sit on top of it (tests/unit/test_layering.sh).
noinst_LIBRARIES += base/libbase.a
base_libbase_a_CPPFLAGS = $(BASE_CPPFLAGS)
base_libbase_a_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
base_libbase_a_SOURCES = \
	base/log.c base/log.h \
	base/array.c base/array.h \
	base/clock.h \
	base/invariant.h \
	base/alloc_watch.c base/alloc_watch.h
