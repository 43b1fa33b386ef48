"""objective=goodput through the HTTP API: throughput x statistical efficiency.

Jobs run on a surface defined here where a larger global batch (a runtime
knob) gives more samples/s, and report per step their global batch and the
gradient norms of a quarter of it and of all of it, built from a known
|G|^2 and tr(Sigma) with noise.  With a small noise scale the goodput
workload must rank the larger batches below the order raw throughput gives
them (and recommend the smallest), while a throughput workload on the same
surface picks the largest; with a large noise scale goodput agrees with
throughput.  The workload and recommend answers show per config the raw
and the learning speed-up against the baseline (the declared default).
"""

import os
import random
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import BUILDDIR, Daemon, Tap  # noqa: E402

tap = Tap()
BATCHES = [32, 128, 512]
KNOBS = {"intra_threads": {"values": [1]}, "interop_threads": {"values": [1]}, "gpus": {"values": [0]},
         "batch": {"values": BATCHES, "default": 32, "runtime": True}}
SPS = {32: 600.0, 128: 900.0, 512: 1200.0}
G2 = 4.0


def step_samples(t, batch, trace, rng, noise):
    """One step's samples: throughput, global batch, and the norms of b = batch/4 and B = batch."""
    b, big = batch / 4.0, float(batch)
    noisy = lambda v: v * (1.0 + rng.gauss(0.0, noise))  # noqa: E731
    return [{"t": t, "name": "samples_per_s", "value": noisy(SPS[batch])},
            {"t": t, "name": "global_batch", "value": big},
            {"t": t, "name": "grad_batch_small", "value": b},
            {"t": t, "name": "grad_sqnorm_small", "value": noisy(G2 + trace / b)},
            {"t": t, "name": "grad_batch_large", "value": big},
            {"t": t, "name": "grad_sqnorm_large", "value": noisy(G2 + trace / big)}]


def run_job(d, rng, t, workload, objective, trace, noise, steps=360, per_batch=10):
    """One job following the daemon's batch; returns (the batches it ran, the time after it)."""
    job = d.register(workload, knobs=KNOBS, objective=objective)
    config = job["config"]
    ran = set()
    for _ in range(steps // per_batch):
        samples = []
        for _ in range(per_batch):
            t += 0.5
            samples += step_samples(t, config["batch"], trace, rng, noise)
        ran.add(config["batch"])
        status, _, body = d.post("/api/v1/jobs/%d/metrics" % job["id"], {"samples": samples, "config": config})
        assert status == 200, (status, body)
        config = body["config"]
    status, _, body = d.post("/api/v1/jobs/%d/end" % job["id"], {"exit_status": 0})
    assert status == 200, (status, body)
    return ran, t


def learn(d, rng, t, workload, objective, trace, noise=0.05):
    """Jobs until the workload has measured every batch (at most 4 jobs); noise: of each figure, relative."""
    seen = set()
    for _ in range(4):
        ran, t = run_job(d, rng, t, workload, objective, trace, noise)
        seen |= ran
        if seen == set(BATCHES):
            break
    assert seen == set(BATCHES), seen
    return t


def view(d, workload, objective):
    status, _, w = d.get("/api/v1/workloads/%s?objective=%s" % (workload, objective))
    assert status == 200, (status, w)
    return w


def recommend(d, workload, objective):
    status, _, rec = d.get("/api/v1/recommend?workload=%s&objective=%s" % (workload, objective))
    assert status == 200, (status, rec)
    return rec


def main():
    rng = random.Random(11)
    t = time.time() - 86400
    with Daemon() as d:
        # Noise scale 20: E(128) = 52/148, E(512) = 52/532 against batch 32.
        t = learn(d, rng, t, "gp-small-noise", "goodput", 20.0 * G2)
        t = learn(d, rng, t, "gp-small-noise", "throughput", 20.0 * G2)
        # Noise scale 5000: E(512) = 0.91, and 1200 x 0.91 still beats 900 x 0.98.  |G|^2 is then a
        # small difference of large norms: with the 5% noise of the others it could not be resolved.
        t = learn(d, rng, t, "gp-large-noise", "goodput", 5000.0 * G2, noise=0.01)

        @tap.test("small noise scale: goodput ranks larger batches below throughput's order")
        def _():
            gp = view(d, "gp-small-noise", "goodput")["goodput"]
            assert gp["ranked_by"] == "goodput", gp
            assert 17.0 < gp["noise_scale"] < 23.0, gp["noise_scale"]
            by_raw = [r["config"]["batch"] for r in sorted(gp["configs"], key=lambda r: -r["raw_speedup"])]
            by_learning = [r["config"]["batch"] for r in gp["configs"]]   # the answer's own order
            assert by_raw == [512, 128, 32], gp["configs"]
            assert by_learning == [32, 128, 512], gp["configs"]
            rows = {r["config"]["batch"]: r for r in gp["configs"]}
            assert abs(rows[512]["raw_speedup"] - 2.0) < 0.15, rows[512]
            assert rows[512]["efficiency"] < 0.12 and rows[512]["learning_speedup"] < 0.25, rows[512]
            assert rows[32]["raw_speedup"] == 1.0 and rows[32]["learning_speedup"] == 1.0, rows[32]
            assert gp["baseline"]["config"]["batch"] == 32, gp["baseline"]

        @tap.test("small noise scale: goodput recommends batch 32, throughput batch 512")
        def _():
            rec = recommend(d, "gp-small-noise", "goodput")
            assert rec["config"]["batch"] == 32, rec
            assert rec["goodput"]["configs"][0]["config"]["batch"] == 32, rec["goodput"]
            assert recommend(d, "gp-small-noise", "throughput")["config"]["batch"] == 512

        @tap.test("dlprofctl recommend prints raw and learning speed-up per config")
        def _():
            p = subprocess.run([os.path.join(BUILDDIR, "tools", "dlprofctl"), "--url", "127.0.0.1:%d" % d.port,
                                "recommend", "gp-small-noise", "objective=goodput"],
                               capture_output=True, text=True, timeout=30)
            assert p.returncode == 0, p.stderr
            lines = p.stdout.splitlines()
            assert any(line.startswith("learning speed-up (Pollux goodput): noise scale ") and
                       line.endswith("ranked by goodput") for line in lines), p.stdout
            head = [i for i, line in enumerate(lines) if line.startswith("CONFIG ")]
            assert len(head) == 1 and "LEARNING_SPEEDUP" in lines[head[0]], p.stdout
            rows = [line.split() for line in lines[head[0] + 1:head[0] + 4]]
            assert [r[0] for r in rows] == ["batch=32", "batch=128", "batch=512"], p.stdout
            assert rows[0][4:] == ["1x", "1x"] and rows[2][4].endswith("x") and rows[2][5].endswith("x"), rows
            assert float(rows[2][4][:-1]) > 1.8 and float(rows[2][5][:-1]) < 0.25, rows

        @tap.test("large noise scale: goodput agrees with throughput")
        def _():
            gp = view(d, "gp-large-noise", "goodput")["goodput"]
            assert gp["ranked_by"] == "goodput" and 4000 < gp["noise_scale"] < 6000, gp
            assert [r["config"]["batch"] for r in gp["configs"]] == [512, 128, 32], gp["configs"]
            assert recommend(d, "gp-large-noise", "goodput")["config"]["batch"] == 512

        @tap.test("no noise figures: ranked by throughput, efficiency null, and said so")
        def _():
            job = d.register("gp-no-noise", knobs=KNOBS, objective="goodput")
            samples = [{"t": t + i, "name": "samples_per_s", "value": 600.0} for i in range(20)]
            status, _, body = d.post("/api/v1/jobs/%d/metrics" % job["id"],
                                     {"samples": samples, "config": job["config"]})
            assert status == 200, body
            gp = view(d, "gp-no-noise", "goodput")["goodput"]
            assert gp["noise_scale"] is None and gp["ranked_by"] == "throughput", gp
            assert "no job reported gradient noise" in gp["note"], gp
            row = gp["configs"][0]
            assert row["efficiency"] is None and row["learning_speedup"] is None, row
            assert row["global_batch"] is None, row

        @tap.test("a restart keeps the noise scale and every config's raw and learning speed-up")
        def _():
            before = view(d, "gp-small-noise", "goodput")["goodput"]
            d.stop()
            d.start()
            after = view(d, "gp-small-noise", "goodput")["goodput"]
            assert after["ranked_by"] == "goodput", after
            assert after["noise_scale"] == before["noise_scale"] and after["noise_steps"] == before["noise_steps"], \
                (before, after)
            assert after["configs"] == before["configs"], (before["configs"], after["configs"])
            assert recommend(d, "gp-small-noise", "goodput")["config"]["batch"] == 32
    tap.done()


main()
