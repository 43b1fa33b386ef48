"""A short run of bench/soak as a CI case: many jobs ingesting (half over
the Unix socket) with churn, series readers and dashboards polling, for
DLPROF_SOAK_SECONDS (default 30).  No errors, every kind of request made,
and a clean daemon exit.  The RSS must stay flat (a bound on its growth
after the warm-up) where the daemon runs on jemalloc, as shipped; under
ASan the RSS is reported only, since the quarantine holds freed memory by
design."""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import DAEMON, SRCDIR, Tap  # noqa: E402

SECONDS = float(os.environ.get("DLPROF_SOAK_SECONDS", "30"))
MAX_GROWTH_MB = 16.0
tap = Tap()

r = subprocess.run([os.path.join(SRCDIR, "bench", "soak"), "--daemon", DAEMON, "--seconds", str(SECONDS),
                    "--jobs", "12", "--churn", str(max(5.0, SECONDS / 3)), "--json"],
                   capture_output=True, text=True, timeout=SECONDS + 180)
print("\n".join("# " + line for line in r.stdout.splitlines()[:-1]), flush=True)
try:
    res = json.loads(r.stdout.splitlines()[-1])
except (IndexError, ValueError):
    res = None


@tap.test("bench/soak ran and reported")
def _():
    assert res is not None, (r.returncode, r.stdout[-2000:], r.stderr[-2000:])


if res:
    @tap.test("soak: no errors (%d requests)" % sum(k["requests"] for k in res["kinds"].values()))
    def _():
        assert res["errors"] == 0 and r.returncode == 0, res["error_examples"]

    @tap.test("soak: registrations, ingest, ends, series, job views and dashboard polls all happened")
    def _():
        for kind in ("register", "ingest", "end", "series", "job view", "dashboard"):
            assert res["kinds"].get(kind, {}).get("requests", 0) > 0, (kind, res["kinds"])
        assert res["samples"] > 0

    rss = res["rss_kb"]
    growth = (rss["end"] - rss["start"]) / 1024.0
    if res["allocator"] == "jemalloc":
        @tap.test("soak: RSS flat after the warm-up (%.1f -> %.1f MB, at most +%.0f MB)"
                  % (rss["start"] / 1024, rss["end"] / 1024, MAX_GROWTH_MB))
        def _():
            assert growth <= MAX_GROWTH_MB, rss
    else:
        tap.skip("soak: RSS flat (%.1f -> %.1f MB)" % (rss["start"] / 1024, rss["end"] / 1024),
                 "allocator %s: the sanitizer's quarantine grows by design; judged in the release build"
                 % res["allocator"])
tap.done()
