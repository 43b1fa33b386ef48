# Collectors (collectors/*.c), the sampler and job discovery: sources that
# go into daemon/libdlprof.a, and their tests.
COLLECTOR_SOURCES =
