"""Storage faults: the database on a small tmpfs filled to the brim, its
directory removed under the daemon, a read-only file system at start, and
corrupt files at the database path.

While the database cannot be written, ingest and registration answer 503
with Retry-After and a reason, /healthz says why, reads and the dashboard
keep working; when space returns the next write succeeds by itself; nothing
acknowledged is lost and integrity_check passes.  A corrupt file is refused
with a clear message and left byte for byte as it was.  The tmpfs cases
need root (mount); they are skipped with the reason otherwise."""

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import DAEMON, Daemon, Tap, fill, is_root, staged_samples, tmpfs, wait_until  # noqa: E402

tap = Tap()
workdir = tempfile.mkdtemp(prefix="dlprof-storage-")


def batch(n, base):
    now = time.time()
    return {"samples": [{"t": now, "name": "fault_probe", "value": float(base + i)} for i in range(n)]}


def stored(db):
    con = sqlite3.connect(db)
    try:
        ok = con.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        values = {r["value"] for r in staged_samples(con, name="fault_probe")}
        return ok, values
    finally:
        con.close()


def reads_work(d, job):
    """The read side a user sees while writes fail."""
    for path in ("/api/v1/jobs", "/api/v1/jobs/%d" % job, "/api/v1/node", "/", "/metrics",
                 "/api/v1/jobs/%d/series?name=fault_probe" % job):
        status, _, body = d.get(path)
        assert status == 200, (path, status, body)


def refused_503(status, hdrs, body, word=None):
    assert status == 503, (status, body)
    assert hdrs.get("retry-after", "").isdigit(), hdrs
    assert isinstance(body, dict) and body.get("error") and body.get("detail"), body
    if word:
        assert word in body["detail"].lower(), body


def disk_full():
    with tmpfs(6 << 20) as fs:
        mnt = fs.path
        db = os.path.join(mnt, "dlprofd.db")
        acked = set()
        with Daemon(db=db, workdir=workdir) as d:
            job = d.register("disk-full")["id"]
            status, seq = 200, 0

            @tap.test("disk full: ingest fills the file system, then answers 503 with Retry-After, saying the disk is full")
            def _():
                nonlocal status, seq
                for _ in range(400):
                    status, hdrs, body = d.post("/api/v1/jobs/%d/metrics" % job, batch(500, seq))
                    if status != 200:
                        break
                    acked.update(float(seq + i) for i in range(500))
                    seq += 500
                # To the brim: whatever SQLite left free is taken too.
                fill(os.path.join(mnt, "filler"))
                status, hdrs, body = d.post("/api/v1/jobs/%d/metrics" % job, batch(500, seq))
                refused_503(status, hdrs, body, "full")
                assert acked, "nothing was acknowledged before the disk filled"

            @tap.test("disk full: /healthz answers 503 and says the disk is full")
            def _():
                status, hdrs, body = d.get("/healthz")
                refused_503(status, hdrs, body, "full")

            @tap.test("disk full: registration answers 503, or 201 only for a job it stored")
            def _():
                # A row this small may still fit: in a page with room, or in WAL frames reused after a
                # checkpoint (the WAL need not grow). What must never happen is a 201 for a lost job.
                status, hdrs, body = d.post("/api/v1/jobs", {"workload": "late"})
                if status == 201:
                    got, _, stored = d.get("/api/v1/jobs/%d" % body["id"])
                    assert got == 200 and stored.get("workload") == "late", (got, stored)
                else:
                    refused_503(status, hdrs, body)

            @tap.test("disk full: reads, series, /metrics and the dashboard keep working")
            def _():
                reads_work(d, job)

            @tap.test("disk full: ingest resumes by itself once space returns")
            def _():
                nonlocal seq
                os.unlink(os.path.join(mnt, "filler"))
                fs.resize(32 << 20)

                def accepted():
                    nonlocal seq
                    status, _, _ = d.post("/api/v1/jobs/%d/metrics" % job, batch(10, seq))
                    if status == 200:
                        acked.update(float(seq + i) for i in range(10))
                    seq += 10
                    return status == 200
                wait_until(accepted, timeout=20, interval=0.5)
                wait_until(lambda: d.get("/healthz")[0] == 200, timeout=10)

            d.stop()   # the harness judges its exit, as a case of its own

        @tap.test("disk full: integrity_check passes and every acknowledged sample is stored")
        def _():
            ok, values = stored(db)
            assert ok, "integrity_check failed"
            missing = acked - values
            assert not missing, "%d acknowledged samples lost" % len(missing)


def vanished_directory():
    dbdir = os.path.join(workdir, "vanishing")
    os.makedirs(dbdir)
    db = os.path.join(dbdir, "dlprofd.db")
    with Daemon(db=db, workdir=workdir) as d:
        job = d.register("vanished")["id"]
        status, _, _ = d.post("/api/v1/jobs/%d/metrics" % job, batch(10, 0))
        assert status == 200, status
        shutil.rmtree(dbdir)

        @tap.test("vanished directory: ingest answers 503 saying so, instead of writing into a deleted file")
        def _():
            status, hdrs, body = d.post("/api/v1/jobs/%d/metrics" % job, batch(10, 100))
            refused_503(status, hdrs, body, "removed")

        @tap.test("vanished directory: /healthz says the database file was removed")
        def _():
            status, hdrs, body = d.get("/healthz")
            refused_503(status, hdrs, body, "removed")

        @tap.test("vanished directory: reads and the dashboard keep working")
        def _():
            reads_work(d, job)

        os.makedirs(dbdir)

        @tap.test("vanished directory: ingest resumes into a recreated database once the directory is back")
        def _():
            wait_until(lambda: d.post("/api/v1/jobs/%d/metrics" % job, batch(10, 200))[0] == 200,
                       timeout=10, interval=0.5)
            assert os.path.exists(db), os.listdir(dbdir)
            assert d.get("/healthz")[0] == 200
            # What was acknowledged before the directory vanished came along.
            ok, values = stored(db)
            assert ok, "integrity_check failed"
            assert set(range(10)) | set(range(200, 210)) <= {int(v) for v in values}, values
            reads_work(d, job)

        d.stop()   # the harness judges its exit, as a case of its own


def read_only():
    with tmpfs(16 << 20) as fs:
        mnt = fs.path
        db = os.path.join(mnt, "dlprofd.db")
        with Daemon(db=db, workdir=workdir) as d:
            job = d.register("read-only")["id"]
            assert d.post("/api/v1/jobs/%d/metrics" % job, batch(10, 0))[0] == 200
        fs.remount("ro")
        d = Daemon(db=db, workdir=workdir)
        try:
            d.start()
            started = True
        except RuntimeError:
            started = False

        @tap.test("read-only file system at start: no crash, and a message that names it")
        def _():
            if started:
                status, hdrs, body = d.post("/api/v1/jobs/%d/metrics" % job, batch(10, 10))
                refused_503(status, hdrs, body, "read")
            else:
                assert d.proc.returncode == 1 and "readonly" in d.log().replace("read-only", "readonly"), d.log()

        @tap.test("read-only file system at start: the daemon serves reads and answers ingest 503")
        def _():
            assert started, d.log()[-2000:]
            reads_work(d, job)
            status, hdrs, body = d.get("/healthz")
            refused_503(status, hdrs, body, "read-only")

        if started:
            @tap.test("read-only file system: ingest resumes by itself once it is writable again")
            def _():
                fs.remount("rw")
                wait_until(lambda: d.post("/api/v1/jobs/%d/metrics" % job, batch(10, 300))[0] == 200,
                           timeout=10, interval=0.5)
                assert d.get("/healthz")[0] == 200
            d.stop()   # the harness judges its exit, as a case of its own

        @tap.test("read-only file system: what was stored before is intact")
        def _():
            ok, values = stored(db)
            assert ok, "integrity_check failed"
            assert set(range(10)) <= {int(v) for v in values}, values


def corrupt_files():
    src = os.path.join(workdir, "good.db")
    with Daemon(db=src, workdir=workdir) as d:
        job = d.register("corrupt")["id"]
        for k in range(10):
            assert d.post("/api/v1/jobs/%d/metrics" % job, batch(300, k * 300))[0] == 200
    good = open(src, "rb").read()
    cases = [
        ("a truncated database", lambda b: b[:len(b) // 2]),
        ("garbage in page 1 after the header", lambda b: b[:100] + os.urandom(3996) + b[4096:]),
        ("garbage in a later page", lambda b: b[:8192] + b"\xa5" * 4096 + b[12288:]),
        ("a garbled header", lambda b: b[:16] + b"\x00\xff" * 42 + b[100:]),
    ]
    for what, mutate in cases:
        @tap.test("%s at the database path is refused with a clear message and left untouched" % what)
        def _(mutate=mutate):
            path = os.path.join(workdir, "corrupt.db")
            with open(path, "wb") as f:
                f.write(mutate(good))
            before = hashlib.sha256(open(path, "rb").read()).hexdigest()
            r = subprocess.run([DAEMON, "--db", path, "--listen", "127.0.0.1:0", "--socket", "",
                                "--config", os.path.join(workdir, "none.conf")],
                               capture_output=True, text=True, timeout=30)
            assert r.returncode != 0, r.stderr
            assert "corrupt" in r.stderr or "not a database" in r.stderr, r.stderr
            assert hashlib.sha256(open(path, "rb").read()).hexdigest() == before, "the file was modified"
            for side in (path + "-wal", path + "-shm"):
                if os.path.exists(side):
                    os.unlink(side)


with open(os.path.join(workdir, "none.conf"), "w") as f:
    f.write("# empty\n")
corrupt_files()
vanished_directory()
if is_root():
    try:
        disk_full()
        read_only()
    except OSError as e:
        tap.skip("disk full and read-only file system", "cannot mount a tmpfs: %s" % e)
else:
    tap.skip("disk full and read-only file system", "needs root to mount a tmpfs")
shutil.rmtree(workdir, ignore_errors=True)
tap.done()
