"""dlprofctl run, the launcher, against the built daemon.

It registers the job and starts the command as N local ranks, each with the
variables env:// reads (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE,
MASTER_ADDR, MASTER_PORT), the config's variables from the daemon's one
mapping (the registration answer's env) and the run id the ranks share;
prints what it chose on stderr; ends the job with the first failing rank's
status and exits with it.  A real gloo job of 2 ranks under it is the
launcher's one job with both ranks.  One process gets DLPROF_JOB, and the
client reports to that job.  --ranks auto declares ranks per node as a
static knob and starts as many as the daemon's config says.
"""

import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "client"))
import clientlib  # noqa: E402
from clientlib import CLIENT, SYSTEM_PYTHON, Daemon, Tap, job, jobs  # noqa: E402
from harness import BUILDDIR  # noqa: E402

tap = Tap()
CTL = os.path.join(BUILDDIR, "tools", "dlprofctl")


def run(d, *args, env=None, timeout=300):
    full = dict(os.environ, PYTHONPATH=CLIENT)
    full.update(env or {})
    for k in ("SLURM_JOB_ID", "SLURM_STEP_ID", "SLURM_NTASKS"):
        full.pop(k, None)
    p = subprocess.run([CTL, "--url", d.url, "run"] + list(args), env=full, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=timeout)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


with Daemon() as d:
    @tap.test("N local ranks get env://'s variables and the config's; the job ends with the first failure")
    def _():
        script = ('echo "$RANK $LOCAL_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $MASTER_ADDR $MASTER_PORT '
                  '$DLPROF_RUN_ID $OMP_NUM_THREADS"; exit $((RANK == 2 ? 5 : 0))')
        rc, out, err = run(d, "--workload", "launch-test", "--ranks", "3", "--", "sh", "-c", script)
        assert rc == 5, (rc, out, err)
        lines = sorted(line.split() for line in out.splitlines())
        assert [x[:4] for x in lines] == [["0", "0", "3", "3"], ["1", "1", "3", "3"], ["2", "2", "3", "3"]], lines
        assert len({tuple(x[4:]) for x in lines}) == 1 and lines[0][4] == "127.0.0.1", lines
        j = [x for x in jobs(d) if x["workload"] == "launch-test"][0]
        assert j["external_id"] == "run:" + lines[0][6], (j, lines)
        assert j["state"] == "ended" and j["exit_status"] == 5, j
        # The variables are the registration answer's: the one mapping every path uses.
        assert lines[0][7] == str(j["config"]["intra_threads"]), (lines, j["config"])
        assert "dlprofctl run: job %d, workload launch-test: 3 ranks" % j["id"] in err, err
        assert "OMP_NUM_THREADS=%s" % lines[0][7] in err, err

    @tap.test("--ranks auto: ranks per node are a static knob; the launcher starts the daemon's choice")
    def _():
        rc, out, err = run(d, "--workload", "auto-ranks", "--ranks", "auto", "--", "sh", "-c",
                           'echo "$WORLD_SIZE $DLPROF_KNOB_RANKS $OMP_NUM_THREADS"')
        assert rc == 0, (rc, out, err)
        j = [x for x in jobs(d) if x["workload"] == "auto-ranks"][0]
        assert j["knobs"]["ranks"]["runtime"] is False and 1 in j["knobs"]["ranks"]["values"], j["knobs"]
        n = j["config"]["ranks"]
        assert out.split("\n").count("%d %d %d" % (n, n, j["config"]["intra_threads"])) == n, (out, j["config"])
        assert "the daemon's choice of the ranks knob" in err, err

    @tap.test("one process: DLPROF_JOB names the job the launcher registered")
    def _():
        code = ("import dlprof\nwith dlprof.session(workload='x') as s:\n    s.step(samples=1)\n"
                "    print(s.job_id)\n")
        rc, out, err = run(d, "--workload", "one-proc", "--", SYSTEM_PYTHON, "-c", code)
        assert rc == 0, (rc, out, err)
        j = [x for x in jobs(d) if x["workload"] == "one-proc"][0]
        assert out.split() == [str(j["id"])], (out, j)
        assert j["state"] == "ended" and j["exit_status"] == 0 and j["world_size"] == 1, j

    if not clientlib.has_torch():
        tap.skip("a gloo job under the launcher", "no torch for /usr/bin/python3")
    else:
        @tap.test("a gloo job of 2 ranks under the launcher is its one job with both ranks")
        def _():
            out_dir = tempfile.mkdtemp(prefix="dlprof-run-")
            out = os.path.join(out_dir, "o.json")
            rc, _, err = run(d, "--workload", "launched-mlp", "--ranks", "2", "--", SYSTEM_PYTHON,
                             os.path.join(HERE, "..", "client", "dist_job.py"), "--launched", "--steps", "10",
                             "--out", out)
            assert rc == 0, err[-3000:]
            ranks = []
            for r in range(2):
                with open(os.path.join(out_dir, "rank%d.json" % r)) as f:
                    ranks.append(json.load(f))
            launched = [x for x in jobs(d) if x["workload"] == "launched-mlp"]
            assert len(launched) == 1, launched
            j = job(d, launched[0]["id"])
            assert [r["job_id"] for r in ranks] == [j["id"]] * 2, (ranks, j["id"])
            assert j["world_size"] == 2 and [k["pid"] for k in j["ranks"]] == [r["pid"] for r in ranks], j
            assert j["state"] == "ended" and j["exit_status"] == 0, j
tap.done()
