"""Crash safety: kill -9 while several threads ingest as fast as they can,
three times over.  After each kill the database passes PRAGMA
integrity_check, the daemon starts on it again, and every sample whose
request was answered 2xx is in it (each sample carries a unique value, so a
lost one is named).  Answers that never arrived may or may not be stored;
only the acknowledged ones are a promise."""

import http.client
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Daemon, Tap, staged_samples, wait_until  # noqa: E402

ROUNDS = 3
THREADS = 6
BATCH = 40
MIN_ACKED_BATCHES = 30   # per round, before the kill

tap = Tap()
workdir = tempfile.mkdtemp(prefix="dlprof-crash-")
db = os.path.join(workdir, "dlprofd.db")
acked = set()            # values of acknowledged samples, over all rounds
acked_lock = threading.Lock()


def ingest(port, job, base, stop, counter):
    """Posts batches of unique values on one keep-alive connection until the daemon dies."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    seq = 0
    while not stop.is_set():
        values = [float(base + seq + i) for i in range(BATCH)]
        seq += BATCH
        now = time.time()
        body = json.dumps({"samples": [{"t": now, "name": "crash_probe", "value": v} for v in values]})
        try:
            conn.request("POST", "/api/v1/jobs/%d/metrics" % job, body=body,
                         headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            resp.read()
        except (OSError, http.client.HTTPException):
            return   # killed: this batch's fate is unknown, and that is allowed
        if 200 <= resp.status < 300:
            with acked_lock:
                acked.update(values)
                counter[0] += 1


def integrity():
    con = sqlite3.connect(db)
    try:
        return con.execute("PRAGMA integrity_check").fetchall()
    finally:
        con.close()


def stored_values():
    con = sqlite3.connect(db)
    try:
        return {r["value"] for r in staged_samples(con, name="crash_probe")}
    finally:
        con.close()


for rnd in range(ROUNDS):
    d = Daemon(db=db, workdir=workdir)
    d.start()
    job = d.register("crash-%d" % rnd)["id"]
    stop = threading.Event()
    counter = [0]
    threads = [threading.Thread(target=ingest, args=(d.port, job, (rnd * THREADS + k) * 10 ** 7, stop, counter))
               for k in range(THREADS)]
    for t in threads:
        t.start()

    @tap.test("round %d: %d threads get batches acknowledged under load" % (rnd + 1, THREADS))
    def _():
        wait_until(lambda: counter[0] >= MIN_ACKED_BATCHES, timeout=60, interval=0.02)

    d.kill9()   # while the threads still post
    stop.set()
    for t in threads:
        t.join(timeout=20)

    @tap.test("round %d: after kill -9 the database passes integrity_check" % (rnd + 1))
    def _():
        assert integrity() == [("ok",)], integrity()

    d2 = Daemon(db=db, workdir=workdir)

    @tap.test("round %d: the daemon starts again on the killed database" % (rnd + 1))
    def _():
        d2.start()
        assert d2.get("/healthz")[0] == 200

    @tap.test("round %d: every acknowledged sample is stored (%d so far)" % (rnd + 1, len(acked)))
    def _():
        with acked_lock:
            want = set(acked)
        missing = want - stored_values()
        assert want and not missing, "%d acknowledged samples lost, e.g. %s" % (len(missing), sorted(missing)[:5])

    if d2.proc:
        d2.stop()   # the harness judges its exit, as a case of its own

shutil.rmtree(workdir, ignore_errors=True)
tap.done()
