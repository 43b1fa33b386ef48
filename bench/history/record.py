#!/usr/bin/python3
"""Records what dlprofd stores at 1 Hz for real PyTorch jobs (history bench).

    record.py --daemon build/release/daemon/dlprofd --minutes 20 --out trace.jsonl.gz

Starts dlprofd on a fresh database with its default sampling (every
second, per-thread figures every store_interval, 10 s; --store-interval
changes it), keeps --concurrent real training jobs running (train_job.py:
an MLP, a CNN or an LSTM, 0 to 2 DataLoader workers, 3 to 8 minutes each,
fresh processes through the dlprof client), then reads
every stored series back over the REST API in raw ten-minute windows and
writes one JSON line per series: job (0 the node, else the job's workload),
name, phase, the times and the values exactly as stored.  bench/peers/history
--trace replays such a recording as its synthetic node's values.
"""
import argparse
import gzip
import json
import os
import random
import re
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.path.normpath(os.path.join(HERE, "..", ".."))
PYTHON = "/usr/bin/python3"
RAW_MAX = 900            # below STORE_SERIES_MAX_POINTS (1000): an answer this long may be buckets
SAMPLED_PREFIXES = ("cpu", "mem", "sched", "gpu", "io", "net", "disk", "load", "perf", "papi", "likwid",
                    "energy", "rapl", "proc")


def get(url):
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.loads(r.read())


def start_daemon(binary, d, store_interval):
    conf = os.path.join(d, "history.conf")
    with open(conf, "w") as f:
        f.write("interval = 1\n")
        if store_interval:
            f.write("store_interval = %g\n" % store_interval)
    logf = open(os.path.join(d, "daemon.log"), "w")
    proc = subprocess.Popen([binary, "--foreground", "--listen", "127.0.0.1:0", "--db", os.path.join(d, "d.db"),
                             "--socket", "", "--config", conf, "--web-root", os.path.join(SRCDIR, "web")],
                            stdout=logf, stderr=subprocess.STDOUT)
    deadline = time.time() + 30
    while time.time() < deadline:
        with open(logf.name) as f:
            text = f.read()
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", text)
        if m and "started:" in text:
            return proc, "http://127.0.0.1:%s" % m.group(1)
        if proc.poll() is not None:
            raise RuntimeError("dlprofd exited:\n" + text)
        time.sleep(0.05)
    raise RuntimeError("dlprofd did not start")


def run_jobs(url, minutes, concurrent, rng):
    env = dict(os.environ, DLPROF_URL=url)
    end = time.time() + minutes * 60
    running = []
    started = 0
    while time.time() < end or running:
        running = [p for p in running if p.poll() is None]
        while time.time() < end - 30 and len(running) < concurrent:
            seconds = min(rng.uniform(180, 480), end - time.time())
            args = [PYTHON, os.path.join(HERE, "train_job.py"), rng.choice(["mlp", "cnn", "rnn"]), "%.0f" % seconds,
                    "--workers", str(rng.choice([0, 0, 1, 2])), "--batch", str(rng.choice([32, 64, 128]))]
            running.append(subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            started += 1
            time.sleep(rng.uniform(0, 30))
        time.sleep(1)
    return started


def dump(url, db, out, since):
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    # Flushed series, and the jobs' own batches still staged (encoded a span after theirs closes).
    series = con.execute("SELECT k.job_id, coalesce(w.name, ''), k.name, k.phase FROM"
                         " (SELECT job_id, name, phase FROM series UNION"
                         "  SELECT job_id, name, coalesce(phase, '') FROM samples) k"
                         " LEFT JOIN jobs j ON j.id = k.job_id LEFT JOIN workloads w ON w.id = j.workload_id"
                         " ORDER BY k.job_id, k.name, k.phase").fetchall()
    con.close()
    now = time.time()
    n = 0
    with gzip.open(out, "wt") as f:
        for job, workload, name, phase in series:
            t, v = [], []
            # An answer keeps raw points in buckets of (to - from) / 1000 seconds: a job's steps
            # can be milliseconds apart, so its own series are read 5 s at a time.
            sampled = not phase and name.split(".")[0] in SAMPLED_PREFIXES
            full = 600.0 if sampled else 5.0
            frm, width = since - 60, full
            while frm < now + 60:
                q = "%s/api/v1/jobs/%d/series?name=%s&from=%.3f&to=%.3f" % (url, job, name, frm, frm + width)
                if phase:
                    q += "&phase=" + urllib.request.quote(phase)
                a = get(q)
                if a["tier"] != "raw":
                    raise RuntimeError("%s: tier %s, not raw" % (q, a["tier"]))
                # A window of more points than an answer keeps comes back in buckets: read it in halves.
                if len(a["points"]) >= RAW_MAX and width > 0.01:
                    width /= 2
                    continue
                for p in a["points"]:
                    if p[0] >= frm and p[0] < frm + width:
                        t.append(p[0])
                        v.append(p[1])
                frm += width
                width = full
            f.write(json.dumps({"job": job, "workload": workload, "name": name, "phase": phase, "t": t, "v": v}) + "\n")
            n += len(t)
    return len(series), n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--daemon", default=os.path.join(SRCDIR, "build", "release", "daemon", "dlprofd"))
    ap.add_argument("--minutes", type=float, default=20)
    ap.add_argument("--concurrent", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--store-interval", type=float, help="seconds between per-thread reads (default: dlprofd's)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    d = tempfile.mkdtemp(prefix="dlprof-history-")
    since = time.time()
    proc, url = start_daemon(a.daemon, d, a.store_interval)
    try:
        jobs = run_jobs(url, a.minutes, a.concurrent, random.Random(a.seed))
        time.sleep(3)
        series, points = dump(url, os.path.join(d, "d.db"), a.out, since)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    print(json.dumps({"jobs": jobs, "series": series, "points": points, "out": a.out}))
    subprocess.run(["rm", "-rf", d])


if __name__ == "__main__":
    sys.exit(main())
