# Benchmarks (bench/run): never part of make check; owned by the performance work.
