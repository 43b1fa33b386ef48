#!/usr/bin/python3
"""Records what dlprofd stores for real PyTorch jobs (history bench).

    record.py --daemon build/release/daemon/dlprofd --dumper build/release/bench/peers/trace_store \
        --minutes 20 --out trace.jsonl.gz

Starts dlprofd on a fresh database with its default sampling (every
second, per-thread figures every store_interval, 10 s; --store-interval
changes it), keeps --concurrent real training jobs running (train_job.py:
an MLP, a CNN or an LSTM, 0 to 2 DataLoader workers, 3 to 8 minutes each,
fresh processes through the dlprof client), stops dlprofd (a clean stop
keeps every point), then has bench/peers/trace_store --dump read every
series from the database and writes one JSON line per series: job (0 the
node), workload, name, phase, the times and the values exactly as stored
(the REST API answers with 16 significant digits, which is not every
double).  bench/peers/history --trace replays such a recording's sampled
series as its synthetic node's values; bench/peers/trace_store writes all
of it through a store and says what each tier keeps.
"""
import argparse
import gzip
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.path.normpath(os.path.join(HERE, "..", ".."))
PYTHON = "/usr/bin/python3"


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


def dump(dumper, db, out):
    """Every series of the stopped daemon's database, points sorted by time, as JSON lines."""
    series = points = 0
    text = subprocess.run([dumper, "--dump", db], check=True, stdout=subprocess.PIPE).stdout
    with gzip.open(out, "wt") as f:
        for line in text.splitlines():
            d = json.loads(line)
            p = sorted(d.pop("p"))
            d["t"] = [x[0] for x in p]
            d["v"] = [x[1] for x in p]
            f.write(json.dumps(d) + "\n")
            series += 1
            points += len(p)
    return series, points


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--daemon", default=os.path.join(SRCDIR, "build", "release", "daemon", "dlprofd"))
    ap.add_argument("--dumper", default=os.path.join(SRCDIR, "build", "release", "bench", "peers", "trace_store"))
    ap.add_argument("--minutes", type=float, default=20)
    ap.add_argument("--concurrent", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--store-interval", type=float, help="seconds between per-thread reads (default: dlprofd's)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    d = tempfile.mkdtemp(prefix="dlprof-history-")
    proc, url = start_daemon(a.daemon, d, a.store_interval)
    try:
        jobs = run_jobs(url, a.minutes, a.concurrent, random.Random(a.seed))
        time.sleep(3)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    series, points = dump(a.dumper, os.path.join(d, "d.db"), a.out)
    print(json.dumps({"jobs": jobs, "series": series, "points": points, "out": a.out}))
    subprocess.run(["rm", "-rf", d])


if __name__ == "__main__":
    sys.exit(main())
