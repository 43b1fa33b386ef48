#!/usr/bin/python3
"""How long /api/v1/recommend takes, as a Slurm prologue sees it.

Starts the built daemon ($DLPROF_BUILDDIR/daemon/dlprofd, a temporary
database, 127.0.0.1 only), teaches it one workload through the HTTP API (two
jobs on a synthetic surface), then times N recommend requests, each on a new
connection as curl in a prologue would make it, for a learned workload, a
similar one and an unknown one.  Prints the median, 90th and 99th
percentile in milliseconds.

Usage: DLPROF_BUILDDIR=build /usr/bin/python3 bench/tuner/recommend_latency.py [N]
"""
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "integration"))
from harness import Daemon  # noqa: E402


def surface(c):
    t = c["intra_threads"]
    return 1000.0 * t / (1.0 + (t / 5.0) ** 2) * (1.04 if c.get("interop_threads") == 2 else 1.0)


def teach(d, rng):
    t = time.time() - 3600
    for _ in range(2):
        job = d.register("latency", params={"batch": 64},
                         knobs={"intra_threads": {"min": 1, "max": 12}, "interop_threads": {"values": [1, 2]}})
        config = job["config"]
        for _ in range(40):
            samples = []
            for _ in range(10):
                t += 0.2
                samples.append({"t": t, "name": "samples_per_s", "value": surface(config) * (1 + rng.gauss(0, 0.03))})
            _, _, body = d.post("/api/v1/jobs/%d/metrics" % job["id"], {"samples": samples, "config": config})
            config = body["config"]
        d.post("/api/v1/jobs/%d/end" % job["id"], {})


def percentiles(xs):
    xs = sorted(xs)
    return [xs[int(p * (len(xs) - 1))] for p in (0.5, 0.9, 0.99)]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    with Daemon() as d:
        teach(d, random.Random(1))
        for label, query in (("learned", "workload=latency&batch=64&format=env"),
                             ("similar", "workload=latency&batch=256&format=env"),
                             ("default", "workload=unknown&format=env"),
                             ("learned json", "workload=latency&batch=64")):
            times = []
            for _ in range(n):
                t0 = time.perf_counter()
                status, _, _ = d.get("/api/v1/recommend?" + query)
                times.append((time.perf_counter() - t0) * 1000.0)
                assert status == 200
            p50, p90, p99 = percentiles(times)
            print("%-13s n=%d  median %.2f ms  p90 %.2f ms  p99 %.2f ms" % (label, n, p50, p90, p99))


main()
