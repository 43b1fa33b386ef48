"""A shortened bench/load as a CI case: wrk at 64 and 500 connections of
valid reads for DLPROF_LOAD_SECONDS (default 5) each.  Every answer is 2xx
or a deliberate 503 with Retry-After, no socket fails, and the daemon is
alive after each level and exits cleanly.  Skipped when wrk is missing."""

import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import DAEMON, SRCDIR, Tap  # noqa: E402

SECONDS = int(os.environ.get("DLPROF_LOAD_SECONDS", "5"))
# The cases this file reports, its daemons' exits included; declared so a machine that cannot
# run it reports each of them skipped.
CASES = 6
tap = Tap(plan=CASES)

if not shutil.which("wrk"):
    tap.skip_all("wrk is not installed (Debian package wrk)")

r = subprocess.run([os.path.join(SRCDIR, "bench", "load"), "--daemon", DAEMON, "--seconds", str(SECONDS),
                    "--connections", "64,500", "--json"], capture_output=True, text=True, timeout=SECONDS * 2 + 240)
print("\n".join("# " + line for line in r.stdout.splitlines()[:-1]), flush=True)
try:
    res = json.loads(r.stdout.splitlines()[-1])
except (IndexError, ValueError):
    res = None


@tap.test("bench/load ran and reported")
def _():
    assert res is not None, (r.returncode, r.stdout[-2000:], r.stderr[-2000:])


for level in (res or {}).get("results", []):
    @tap.test("%d connections: %d answers, every one 2xx (%d) or 503 with Retry-After (%d)"
              % (level["connections"], level["requests"], level["ok"], level["busy"]))
    def _(level=level):
        assert level["requests"] > 0 and level["other"] == 0, level

    @tap.test("%d connections: no socket errors, the daemon alive after" % level["connections"])
    def _(level=level):
        assert level["connect"] + level["read"] + level["write"] + level["timeout"] == 0, level
        assert level["alive"], level

if res:
    @tap.test("the daemon exits 0 after the load (no sanitizer report)")
    def _():
        assert res["daemon_exit"] == 0, res
tap.done()
