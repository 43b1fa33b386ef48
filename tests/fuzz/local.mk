# libFuzzer targets (make fuzz, with clang) and their seed corpora; owned by the reliability work.
#
# Each target is one clang command over the fuzz harness and the daemon
# sources it needs, with libFuzzer, ASan and UBSan; nothing here goes
# through libdlprof.a, whose objects are built by $(CC) with other
# sanitizers.  tests/fuzz/run.sh (a TAP suite of make check) replays the
# committed corpus and regression inputs, then fuzzes each target for
# DLPROF_FUZZ_SECONDS (default 45), two at a time.

FUZZ_TARGETS = tests/fuzz/fuzz_validate tests/fuzz/fuzz_router tests/fuzz/fuzz_config \
	tests/fuzz/fuzz_procfs tests/fuzz/fuzz_cgroup tests/fuzz/fuzz_series_codec
FUZZ_FLAGS = -g -O1 -std=c11 -pthread -fno-omit-frame-pointer \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
FUZZ_COMPILE = $(FUZZ_CC) $(AM_CPPFLAGS) $(CPPFLAGS) $(FUZZ_FLAGS)
FUZZ_V = $(FUZZ_V_@AM_V@)
FUZZ_V_ = $(FUZZ_V_@AM_DEFAULT_V@)
FUZZ_V_0 = @echo "  FUZZCC   $@";

FUZZ_SRC_VALIDATE = $(srcdir)/tests/fuzz/fuzz_validate.c $(srcdir)/daemon/validate.c $(srcdir)/daemon/http.c \
	$(srcdir)/daemon/config.c $(srcdir)/base/log.c $(srcdir)/base/alloc_watch.c
FUZZ_SRC_ROUTER = $(srcdir)/tests/fuzz/fuzz_router.c $(srcdir)/daemon/router.c $(srcdir)/daemon/routes.c \
	$(srcdir)/daemon/http.c $(srcdir)/base/alloc_watch.c $(srcdir)/daemon/api_static.c tests/fuzz/route_stubs.c
FUZZ_SRC_CONFIG = $(srcdir)/tests/fuzz/fuzz_config.c $(srcdir)/daemon/config.c $(srcdir)/base/log.c
FUZZ_SRC_PROCFS = $(srcdir)/tests/fuzz/fuzz_procfs.c $(srcdir)/collectors/procfs.c $(srcdir)/base/array.c
FUZZ_SRC_SERIES_CODEC = $(srcdir)/tests/fuzz/fuzz_series_codec.c $(srcdir)/daemon/series_codec.c
FUZZ_SRC_CGROUP = $(srcdir)/tests/fuzz/fuzz_cgroup.c $(srcdir)/collectors/cgroup.c $(srcdir)/collectors/procfs.c $(srcdir)/base/array.c

if HAVE_FUZZ_CC
fuzz: $(FUZZ_TARGETS)

tests/fuzz/fuzz_validate: $(FUZZ_SRC_VALIDATE) autoconfig.h
	@$(MKDIR_P) tests/fuzz
	$(FUZZ_V)$(FUZZ_COMPILE) $(JANSSON_CFLAGS) $(INIH_CFLAGS) -o $@ $(FUZZ_SRC_VALIDATE) $(JANSSON_LIBS) $(INIH_LIBS) -lm
tests/fuzz/fuzz_router: $(FUZZ_SRC_ROUTER) autoconfig.h
	@$(MKDIR_P) tests/fuzz
	$(FUZZ_V)$(FUZZ_COMPILE) $(JANSSON_CFLAGS) -o $@ $(FUZZ_SRC_ROUTER) $(JANSSON_LIBS)
tests/fuzz/fuzz_config: $(FUZZ_SRC_CONFIG) autoconfig.h
	@$(MKDIR_P) tests/fuzz
	$(FUZZ_V)$(FUZZ_COMPILE) $(INIH_CFLAGS) -o $@ $(FUZZ_SRC_CONFIG) $(INIH_LIBS) -lm
tests/fuzz/fuzz_procfs: $(FUZZ_SRC_PROCFS) autoconfig.h
	@$(MKDIR_P) tests/fuzz
	$(FUZZ_V)$(FUZZ_COMPILE) -o $@ $(FUZZ_SRC_PROCFS)
tests/fuzz/fuzz_cgroup: $(FUZZ_SRC_CGROUP) autoconfig.h
	@$(MKDIR_P) tests/fuzz
	$(FUZZ_V)$(FUZZ_COMPILE) -o $@ $(FUZZ_SRC_CGROUP)
tests/fuzz/fuzz_series_codec: $(FUZZ_SRC_SERIES_CODEC) autoconfig.h
	@$(MKDIR_P) tests/fuzz
	$(FUZZ_V)$(FUZZ_COMPILE) -o $@ $(FUZZ_SRC_SERIES_CODEC) -lm

# Stubs for every handler of the route table but the static one, so new
# routes are routed by the fuzzer without linking the store.
tests/fuzz/route_stubs.c: $(srcdir)/daemon/routes.c $(srcdir)/tests/fuzz/local.mk
	@$(MKDIR_P) tests/fuzz
	$(AM_V_GEN){ \
	  echo '/* Generated from daemon/routes.c by tests/fuzz/local.mk; do not edit. */'; \
	  echo '#include "router.h"'; \
	  echo 'void fuzz_stub_handler(const struct http_request *req, struct http_response *resp);'; \
	  sed -n 's/^[[:space:]]*{"[A-Z]*",[[:space:]]*"[^"]*",[[:space:]]*\([a-z_0-9]*\),.*/\1/p' \
	    $(srcdir)/daemon/routes.c | sort -u | grep -v '^api_static$$' | \
	  sed 's/.*/void &(const struct http_request *, struct http_response *); void &(const struct http_request *req, struct http_response *resp) { fuzz_stub_handler(req, resp); }/'; \
	} > $@.tmp && mv $@.tmp $@

TESTS += tests/fuzz/run.sh
# The suite runs the targets: build them first (make check builds no
# clang targets by itself).
tests/fuzz/run.log: $(FUZZ_TARGETS)
else
fuzz:
	@echo "make fuzz needs clang (configure found none); install clang and re-run configure" >&2; exit 1
endif

.PHONY: fuzz
CLEANFILES += $(FUZZ_TARGETS) tests/fuzz/route_stubs.c tests/fuzz/route_stubs.c.tmp
EXTRA_DIST += tests/fuzz/run.sh tests/fuzz/fuzz_validate.c tests/fuzz/fuzz_router.c tests/fuzz/fuzz_config.c \
	tests/fuzz/fuzz_procfs.c tests/fuzz/fuzz_cgroup.c tests/fuzz/fuzz_series_codec.c tests/fuzz/corpus tests/fuzz/regress tests/fuzz/dict
