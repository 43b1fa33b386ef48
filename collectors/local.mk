# Collectors (collectors/*.c), the sampler and job discovery: sources that
# go into daemon/libdlprof.a, and their tests.
COLLECTOR_SOURCES = \
	collectors/collector.h collectors/registry.c \
	collectors/procfs.c collectors/procfs.h \
	collectors/cgroup.c collectors/cgroup.h \
	collectors/metrics.c collectors/metrics.h \
	collectors/perf_reason.c collectors/perf_reason.h \
	collectors/proc.c \
	collectors/perf.c \
	collectors/nvml.c \
	daemon/sampler.c daemon/sampler.h \
	daemon/discovery.c daemon/discovery.h \
	daemon/store_series.c daemon/store_series.h \
	daemon/api_series.c \
	daemon/api_prometheus.c
if HAVE_PAPI
COLLECTOR_SOURCES += collectors/papi.c
endif
if HAVE_LIKWID
COLLECTOR_SOURCES += collectors/likwid.c
endif
