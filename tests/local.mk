# The core's tests: cmocka unit tests (one file per module) and the
# integration suites that start the built daemon.  Other parts of the tree
# add their own tests in their fragments.
