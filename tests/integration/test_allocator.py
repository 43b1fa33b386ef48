"""jemalloc is the daemon's allocator in release builds: /api/v1/node says
so with jemalloc's own figures.  Sanitizer builds use ASan's allocator and
say "libc"; the check is skipped there."""

import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from harness import DAEMON, Daemon, Tap  # noqa: E402

tap = Tap()
linked = b"jemalloc" in subprocess.run(["ldd", DAEMON], capture_output=True).stdout

with Daemon() as d:
    node = d.get("/api/v1/node")[2]
    if not linked:
        tap.skip("jemalloc figures in /api/v1/node", "this build does not link jemalloc (sanitizer build)")

        @tap.test("an unlinked build reports the libc allocator")
        def _():
            assert node["daemon"]["allocator"] == "libc", node["daemon"]
    else:
        @tap.test("the daemon runs on jemalloc and reports its figures")
        def _():
            daemon = node["daemon"]
            assert daemon["allocator"] == "jemalloc", daemon
            assert 0 < daemon["allocated_bytes"] <= daemon["resident_bytes"], daemon
tap.done()
