# The job-side Python client and its tests.
#
# The client is pure Python (standard library only) and is not built: it is
# installed by `pip install ./client/python` where jobs run, or used from the
# source tree with PYTHONPATH=client/python.  Its tests drive the built
# daemon through tests/integration/harness.py; the torch ones need Debian's
# python3-torch for /usr/bin/python3 and skip without it.

EXTRA_DIST += \
	client/README.md \
	client/examples/report-with-curl.sh \
	client/python/pyproject.toml \
	client/python/dlprof/__init__.py \
	client/python/dlprof/__main__.py \
	client/python/dlprof/_apply.py \
	client/python/dlprof/_auto.py \
	client/python/dlprof/_boot/sitecustomize.py \
	client/python/dlprof/_buffer.py \
	client/python/dlprof/_ddp.py \
	client/python/dlprof/_dist.py \
	client/python/dlprof/_imports.py \
	client/python/dlprof/_noise.py \
	client/python/dlprof/_patch.py \
	client/python/dlprof/_probe.py \
	client/python/dlprof/_reporter.py \
	client/python/dlprof/_session.py \
	client/python/dlprof/_steps.py \
	client/python/dlprof/_transport.py \
	tests/client/clientlib.py \
	tests/client/torch_job.py \
	tests/client/dist_job.py \
	tests/client/goodput_job.py \
	tests/client/auto_job.py \
	tests/client/auto_ddp_job.py

CLIENT_TESTS = \
	tests/client/session.py \
	tests/client/resilience.py \
	tests/client/exactly_once.py \
	tests/client/threads.py \
	tests/client/torch_e2e.py \
	tests/client/dist.py \
	tests/client/goodput.py \
	tests/client/curl_recipe.py \
	tests/client/pip_install.py \
	tests/client/auto.py \
	tests/client/auto_dist.py

TESTS += $(CLIENT_TESTS)
# Their straggler verdicts judge how the ranks share the CPUs.
SERIAL_TESTS += tests/client/dist.py tests/client/auto_dist.py
EXTRA_DIST += $(CLIENT_TESTS)

# As shipped (jemalloc in the daemon), the torch jobs under the client run
# too: the end-to-end loop is what users run.
RELEASE_TESTS += tests/client/torch_e2e.py
