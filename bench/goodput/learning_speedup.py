#!/usr/bin/env python3
"""Learning speed-up: does objective=goodput pick the config that reaches a target loss soonest?

For each global batch (16 to 256, a 16x range) bench/goodput/train.py trains
a 2-rank gloo DDP job in fresh processes until its held-out loss reaches
--target (at most --max-seconds of training): the truth is the training
time to target.  Every step of those runs (samples/s and the gradient noise
figures the dlprof client's DDP hook measured) is then sent to a fresh
dlprofd through the REST API, one job per run under the config it ran, once
under objective=goodput and once under objective=throughput; the daemon's
rankings and the configs its recommend answers pick are set against the
truth.  Prints a table and, with --results, writes it as Markdown.
Timings on a shared machine are figures, not assertions.
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.abspath(os.path.join(HERE, "..", ".."))
PY = "/usr/bin/python3"
BATCHES = [16, 32, 64, 128, 256]
FIXED = {"intra_threads": {"values": [1]}, "interop_threads": {"values": [1]}, "gpus": {"values": [0]}}
FIGURES = ("global_batch", "grad_batch_small", "grad_sqnorm_small", "grad_batch_large", "grad_sqnorm_large")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(url, method, path, body=None):
    req = urllib.request.Request(url + path, method=method, data=json.dumps(body).encode() if body else None,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)


def time_to_target(history, target):
    """Training seconds at which the held-out loss first reached target (linear between evaluations)."""
    for (t0, _, l0), (t1, _, l1) in zip(history, history[1:]):
        if l1 <= target:
            return t0 + (t1 - t0) * (l0 - target) / (l0 - l1) if l0 > target else t0
    return None


def report_run(url, run, objective, knobs):
    """One job of the daemon per run: its steps, under the config it ran."""
    job = call(url, "POST", "/api/v1/jobs", {"workload": "gp-bench", "knobs": knobs, "objective": objective})
    config = dict(job["config"], batch=run["global_batch"])
    t = time.time() - run["train_seconds"] - 5
    rows = run["samples"]
    for i in range(0, len(rows), 200):
        samples = []
        for row in rows[i:i + 200]:
            t += row["global_batch"] / row["samples_per_s"]
            samples.append({"t": t, "name": "samples_per_s", "value": row["samples_per_s"]})
            if objective == "goodput":
                samples += [{"t": t, "name": n, "value": row[n]} for n in FIGURES]
        call(url, "POST", "/api/v1/jobs/%d/metrics" % job["id"], {"samples": samples, "config": config})
    call(url, "POST", "/api/v1/jobs/%d/end" % job["id"], {"exit_status": 0})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--builddir", default=os.environ.get("DLPROF_BUILDDIR", os.path.join(SRC, "build", "asan")))
    ap.add_argument("--target", type=float, default=1.8, help="held-out loss to reach")
    ap.add_argument("--max-seconds", type=float, default=30.0, help="training seconds a run may take")
    ap.add_argument("--eval-seconds", type=float, default=0.5, help="training seconds between held-out losses")
    ap.add_argument("--lr-scale", choices=("none", "sqrt"), default="none",
                    help="Adam's rate: the same for every batch, or x sqrt(batch / 16) (AdaptDL's rule for Adam)")
    ap.add_argument("--results", help="write the table here as Markdown")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="dlprof-goodput-bench-")
    runs = {}
    for m in BATCHES:
        out = os.path.join(work, "run%d.json" % m)
        subprocess.run([PY, os.path.join(HERE, "train.py"), "--batch", str(m), "--target", str(args.target),
                        "--max-seconds", str(args.max_seconds), "--eval-seconds", str(args.eval_seconds),
                        "--lr-scale", args.lr_scale, "--out", out], check=True)
        with open(out) as f:
            runs[m] = json.load(f)
        runs[m]["to_target"] = time_to_target(runs[m]["history"], args.target)
        print("batch %3d: %s s to target" % (m, "%.1f" % runs[m]["to_target"] if runs[m]["to_target"] else "never"),
              flush=True)
    port = free_port()
    url = "http://127.0.0.1:%d" % port
    daemon = subprocess.Popen([os.path.join(args.builddir, "daemon", "dlprofd"), "--listen", "127.0.0.1:%d" % port,
                               "--socket", "", "--db", os.path.join(work, "d.db"), "--web-root", os.path.join(SRC, "web")],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                call(url, "GET", "/api/v1/node")
                break
            except OSError:
                time.sleep(0.1)
        knobs = dict(FIXED, batch={"values": BATCHES, "default": BATCHES[0]})
        picks, views = {}, {}
        for objective in ("goodput", "throughput"):
            for m in BATCHES:
                report_run(url, runs[m], objective, knobs)
            picks[objective] = call(url, "GET", "/api/v1/recommend?workload=gp-bench&objective=" + objective)
            views[objective] = call(url, "GET", "/api/v1/workloads/gp-bench?objective=" + objective)
    finally:
        daemon.terminate()
        daemon.wait()
    print_table(args, runs, picks, views)


def print_table(args, runs, picks, views):
    gp = views["goodput"]["goodput"]
    rows = {r["config"]["batch"]: r for r in gp["configs"]}
    reached = {m: r["to_target"] for m, r in runs.items() if r["to_target"]}
    fastest = min(reached, key=reached.get) if reached else None
    gp_pick, tp_pick = picks["goodput"]["config"]["batch"], picks["throughput"]["config"]["batch"]
    lines = ["| global batch | samples/s (median) | time to loss %.2f (s) | efficiency | raw speed-up | "
             "learning speed-up | throughput rank | goodput rank | time rank |" % args.target,
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    gp_order = [r["config"]["batch"] for r in gp["configs"]]
    # The throughput workload's own measured means (its trials), best first.
    tried = [p for p in views["throughput"]["tried"] if p["phase"] == ""]
    tp_order = [p["config"]["batch"] for p in sorted(tried, key=lambda p: -p["mean"])]
    time_order = sorted(BATCHES, key=lambda m: reached.get(m, float("inf")))
    for m in BATCHES:
        r = rows[m]
        lines.append("| %d | %.0f | %s | %.3f | %.2fx | %.2fx | %d | %d | %d |" % (
            m, statistics.median(s["samples_per_s"] for s in runs[m]["samples"]),
            "%.1f" % reached[m] if m in reached else "not in %.0f" % args.max_seconds, r["efficiency"],
            r["raw_speedup"], r["learning_speedup"], tp_order.index(m) + 1, gp_order.index(m) + 1,
            time_order.index(m) + 1))
    summary = [
        "noise scale phi (all runs' steps, ratio of averages): %.1f; baseline batch %d" % (
            gp["noise_scale"], gp["baseline"]["global_batch"]),
        "fastest to the target: batch %s (%.1f s)" % (fastest, reached[fastest]) if fastest else "no run reached it",
        "goodput picks batch %d: %s" % (gp_pick, "%.1f s, %+.0f%% against the fastest" % (
            reached[gp_pick], 100 * (reached[gp_pick] / reached[fastest] - 1)) if gp_pick in reached else "never reached"),
        "throughput picks batch %d: %s" % (tp_pick, "%.1f s, %+.0f%% against the fastest" % (
            reached[tp_pick], 100 * (reached[tp_pick] / reached[fastest] - 1)) if tp_pick in reached else "never reached"),
    ]
    text = "\n".join(lines + [""] + ["- " + s for s in summary])
    print(text)
    if args.results:
        with open(args.results, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
