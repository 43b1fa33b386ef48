# The job-side Python client and its tests.
