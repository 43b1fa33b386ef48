# The tuner: sources that go into daemon/libdlprof.a, its tests and bench.
TUNER_SOURCES =
