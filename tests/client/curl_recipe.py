"""The curl recipe for non-Python jobs (client/examples/report-with-curl.sh)
works against the daemon over TCP and over the Unix socket, and runs the
same with the daemon down."""

import os
import shutil
import subprocess
import tempfile

from clientlib import SRCDIR, Daemon, Tap, job, jobs, samples

# The cases this file reports, its daemons' exits included; declared so a machine that cannot
# run it reports each of them skipped.
CASES = 4
tap = Tap(plan=CASES)
SCRIPT = os.path.join(SRCDIR, "client", "examples", "report-with-curl.sh")


def run(env, steps=3):
    full = {k: v for k, v in os.environ.items() if not k.startswith("DLPROF_") and k != "OMP_NUM_THREADS"}
    full.update(env)
    p = subprocess.run(["sh", SCRIPT, str(steps)], env=full, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=120)
    return p.returncode, p.stdout.decode()


def check(d, before):
    new = [j for j in jobs(d) if j["id"] not in before]
    assert len(new) == 1, new
    j = job(d, new[0]["id"])
    assert j["workload"] == "my-solver" and j["params"] == {"n": 1024}, j
    assert j["state"] == "ended" and j["exit_status"] == 0, j
    assert len(samples(d, j["id"], "step_time_s")) == 3
    assert len(samples(d, j["id"], "samples_per_s")) == 3
    assert [x["phase"] for x in samples(d, j["id"], "phase_time_s")] == ["solve"] * 3
    return j


if shutil.which("curl") is None:
    tap.skip_all("curl is not installed")

with Daemon() as d:
    @tap.test("over TCP: registers, reports three steps, ends")
    def _():
        before = {j["id"] for j in jobs(d)}
        rc, out = run({"DLPROF_URL": d.url})
        assert rc == 0, out
        check(d, before)

    @tap.test("over the Unix socket: the same, and the job belongs to our uid")
    def _():
        before = {j["id"] for j in jobs(d)}
        rc, out = run({"DLPROF_SOCKET": d.socket_path})
        assert rc == 0, out
        assert check(d, before)["uid"] == os.getuid()

    @tap.test("with the daemon down the job runs all its steps and exits 0")
    def _():
        down = tempfile.mkdtemp(prefix="dlprof-down-")
        try:
            rc, out = run({"DLPROF_SOCKET": os.path.join(down, "none.sock")})
        finally:
            os.rmdir(down)
        assert rc == 0, out
        assert "job unregistered" in out, out

tap.done()
