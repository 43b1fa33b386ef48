"""Goodput's gradient noise figures measured by the client on real torch jobs.

One process with gradient accumulation (goodput_job.py: micro_batch() after
each micro-batch's backward) and a 2-rank gloo DistributedDataParallel job
(dist_job.py --ddp --noise: the comm hook measures the local and the
all-reduced gradient) report per step the figures objective=goodput needs;
the daemon's noise scale from them must be finite and positive, and the
config with the larger global batch must get an efficiency below 1.
"""

import json
import math
import os
import shutil
import tempfile

import clientlib
from clientlib import Daemon, Tap, run_script, samples

# The cases this file reports, its daemons' exits included; declared so a machine that cannot
# run it reports each of them skipped.
CASES = 3
tap = Tap(plan=CASES)
HERE = os.path.dirname(os.path.abspath(__file__))
FIGURES = ("grad_batch_small", "grad_sqnorm_small", "grad_batch_large", "grad_sqnorm_large", "global_batch")

if not clientlib.has_torch():
    tap.skip_all("no torch for /usr/bin/python3 (Debian python3-torch)")


def run_json(script, d, *args):
    """Runs script --out FILE in a folder of its own (dist_job.py's ranks write beside FILE)."""
    top = tempfile.mkdtemp(prefix="dlprof-goodput-")
    out = os.path.join(top, "out.json")
    try:
        rc, _, err = run_script([os.path.join(HERE, script), "--out", out] + list(args),
                                env={"DLPROF_URL": d.url}, timeout=300)
        assert rc == 0, err[-3000:]
        with open(out) as f:
            return json.load(f)
    finally:
        shutil.rmtree(top, ignore_errors=True)


def figures(d, jid):
    """{name: [values]} of the goodput figures the job reported."""
    got = {name: [s["value"] for s in samples(d, jid, name)] for name in FIGURES}
    for name, values in got.items():
        assert values and all(math.isfinite(v) for v in values), (name, values[:5])
    return got


def goodput_view(d, workload):
    status, _, body = d.get("/api/v1/workloads/%s?objective=goodput" % workload)
    assert status == 200, (status, body)
    return body["goodput"]


with Daemon() as d:
    @tap.test("1 process, 8 micro-batches a step: noise scale finite and positive, batch 512 less efficient")
    def _():
        # One step's estimate is very noisy: the daemon uses the noise scale once precise, which
        # takes some hundreds of steps here; jobs of the workload run until it is and both batches
        # were measured (at most 3, 400 steps each).
        for _ in range(3):
            res = run_json("goodput_job.py", d, "--steps", "400", "--micro", "8", "--hidden", "512",
                           "--batches", "32,512")
            got = figures(d, res["job_id"])
            assert len(got["grad_sqnorm_small"]) == res["steps"], len(got["grad_sqnorm_small"])
            for small, big, m in zip(got["grad_batch_small"], got["grad_batch_large"], got["global_batch"]):
                assert small * 8 == big == m and m in (32, 512), (small, big, m)
            # A micro-batch's gradient is noisier than the step's: a larger squared norm on average.
            assert sum(got["grad_sqnorm_small"]) > sum(got["grad_sqnorm_large"]), got
            gp = goodput_view(d, "goodput-mlp")
            est = gp["noise_estimate"]
            assert est and math.isfinite(est["value"]) and est["value"] > 0, gp
            rows = {r["config"]["batch"]: r for r in gp["configs"]}
            if gp["noise_scale"] is not None and set(rows) == {32, 512}:
                break
        assert gp["noise_scale"] is not None and 0 < gp["noise_scale"] < 1e6, gp
        assert gp["ranked_by"] == "goodput", gp
        assert set(rows) == {32, 512}, gp            # the tuner tried both
        assert gp["baseline"]["config"]["batch"] == 32, gp["baseline"]
        assert rows[32]["efficiency"] == 1.0 and 0 < rows[512]["efficiency"] < 1, rows
        assert rows[512]["learning_speedup"] < rows[512]["raw_speedup"], rows[512]

    @tap.test("2 ranks (gloo DDP, comm hook with noise_scale): noise scale estimate finite and positive")
    def _():
        out = run_json("dist_job.py", d, "--ranks", "2", "--steps", "60", "--width", "256", "--batch", "16",
                       "--ddp", "--noise", "--workload", "goodput-ddp")
        jid = out["ranks"][0]["job_id"]
        got = figures(d, jid)
        # Rank 0 reports for the job (the daemon's tuner reads rank 0): every step.
        assert len(got["grad_sqnorm_small"]) == 60, len(got["grad_sqnorm_small"])
        assert set(got["grad_batch_small"]) == {16} and set(got["grad_batch_large"]) == {32}, got
        assert set(got["global_batch"]) == {32}, got["global_batch"]
        assert sum(got["grad_sqnorm_small"]) > sum(got["grad_sqnorm_large"]), got
        assert samples(d, jid, "rank1.grad_sqnorm_small") == [], "rank 1 repeats rank 0's figures"
        gp = goodput_view(d, "goodput-ddp")
        est = gp["noise_estimate"]
        assert est and math.isfinite(est["value"]) and est["value"] > 0 and est["rel_se"] >= 0, gp
        assert gp["baseline"]["global_batch"] == 32, gp
        if gp["noise_scale"] is None:
            # 60 steps may not pin it down: then it is not used, and the answer says so.
            assert gp["ranked_by"] == "throughput" and "not yet precise" in gp["note"], gp
        else:
            # The tuner may try other threads per rank; every config has the baseline's global batch.
            assert gp["configs"] and all(r["efficiency"] == 1.0 for r in gp["configs"]), gp["configs"]

tap.done()
