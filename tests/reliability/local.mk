# Reliability suites: crash safety, storage faults, limits, load; owned by the reliability work.
