#!/usr/bin/env python3
"""Ranks per node x threads per rank: every fixed layout measured, and what `--ranks auto` learns.

Starts a dlprofd (the build's, or --daemon) on a free port, then:
1. each fixed layout R x T with R*T up to the CPUs (1x1, 1x2, 2x1, ...), --reps
   times, as dist_job.py's own env:// ranks with T threads each: the job's
   global samples/s (the mean of rank 0's samples_per_s after its first
   third) as dlprofd stored it;
2. --auto-runs runs of `dlprofctl run --ranks auto -- dist_job.py --launched`:
   the layout the tuner chose each time and what it measured.
Prints a table; timings on a shared machine are figures, not assertions.
"""

import argparse
import itertools
import json
import os
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.abspath(os.path.join(HERE, "..", ".."))
JOB = os.path.join(SRC, "tests", "client", "dist_job.py")
PY = "/usr/bin/python3"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def job_sps(db, jid):
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=10)
    try:
        vals = [r[0] for r in con.execute("SELECT value FROM samples WHERE job_id = ? AND name = 'samples_per_s' "
                                          "ORDER BY t", (jid,))]
    finally:
        con.close()
    vals = vals[len(vals) // 3:]
    return sum(vals) / len(vals) if vals else float("nan")


def last_job(url):
    import urllib.request
    with urllib.request.urlopen(url + "/api/v1/jobs?state=all") as r:
        return json.load(r)["jobs"][0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--builddir", default=os.path.join(SRC, "build", "asan"))
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--auto-runs", type=int, default=8)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--width", type=int, default=512)
    args = ap.parse_args()
    cpus = len(os.sched_getaffinity(0))
    work = tempfile.mkdtemp(prefix="dlprof-layouts-")
    db, port = os.path.join(work, "d.db"), free_port()
    url = "http://127.0.0.1:%d" % port
    daemon = subprocess.Popen([os.path.join(args.builddir, "daemon", "dlprofd"), "--listen", "127.0.0.1:%d" % port,
                               "--socket", "", "--db", db, "--web-root", os.path.join(SRC, "web")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(2)
    env = dict(os.environ, PYTHONPATH=os.path.join(SRC, "client", "python"), DLPROF_URL=url)
    common = ["--steps", str(args.steps), "--width", str(args.width), "--out", os.path.join(work, "o.json")]
    try:
        print("layout  samples/s (each run)")
        layouts = [(r, t) for r, t in itertools.product([1, 2, 4, 8, 16], repeat=2) if r * t <= cpus]
        for r, t in layouts:
            got = []
            for _ in range(args.reps):
                subprocess.run([PY, JOB, "--ranks", str(r), "--threads", str(t), "--workload", "layouts-fixed"] + common, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                got.append(job_sps(db, last_job(url)["id"]))
            print("%dx%d    %s" % (r, t, "  ".join("%.0f" % g for g in got)), flush=True)
        print("auto run  layout chosen  samples/s")
        for i in range(args.auto_runs):
            subprocess.run([os.path.join(args.builddir, "tools", "dlprofctl"), "--url", url, "run", "--workload",
                            "layouts-auto", "--ranks", "auto", "--", PY, JOB, "--launched", "--workload", "layouts-auto"] + common,
                           env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            j = last_job(url)
            print("%-9d %dx%d          %.0f" % (i + 1, j["config"]["ranks"], j["config"]["intra_threads"],
                                              job_sps(db, j["id"])), flush=True)
    finally:
        daemon.terminate()
        daemon.wait()


if __name__ == "__main__":
    main()
