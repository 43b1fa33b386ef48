"""The cluster store: two daemons sharing what they learn through a real PostgreSQL.

A private PostgreSQL (pgserver.py) and daemons A and B of the same hardware
class (the same machine) with cluster_store set.  Jobs run on A only, on the
response surface of test_tuner.py; B must then recommend the workload as
learned, with no job run on B, within a few seconds, and B's first job must
start within 3% of A's best.  A node C of another hardware class (hw_class
set) asks what other classes measured when the workload is recommended: A's
trials become its prior (source other_class), never its trials; C's first
job starts within 3% of A's best and C's own trials then take over, while
the nodes of A's class never pool C's trials.  Then the faults: PostgreSQL killed (SIGKILL to
all its processes) while A keeps learning, and started again: every trial of
A reaches the shared store exactly once, including trials sent twice as
after a crash between the shared commit and the outbox delete; a daemon whose cluster store is
unreachable at start starts and serves; and the outbox stays within its
bound.
"""

import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import BUILDDIR, Daemon, Tap, wait_for  # noqa: E402
from pgserver import PgServer, cluster_args  # noqa: E402

tap = Tap()
KNOBS = {"intra_threads": {"min": 1, "max": 12}, "interop_threads": {"values": [1, 2]}}
WORKLOAD = "shared-resnet"


def surface(config):
    """Peaks at 5 threads; two inter-op threads help up to 6 intra-op threads."""
    t = config["intra_threads"]
    i = config.get("interop_threads", 1)
    v = 1000.0 * t / (1.0 + (t / 5.0) ** 2)
    if i == 2 and t <= 6:
        v *= 1.06
    return v


BEST = max(surface({"intra_threads": t, "interop_threads": i}) for t in range(1, 13) for i in (1, 2))


def surface_c(config):
    """Node C's hardware: fewer cores, so the peak is at 3 threads and inter-op threads do not help."""
    t = config["intra_threads"]
    return 600.0 * t / (1.0 + (t / 3.0) ** 2)


BEST_C = max(surface_c({"intra_threads": t}) for t in range(1, 13))
CLASS_C = "x86_64-test-other-3c-1numa-0gpu"


def run_job(d, rng, t0, steps=400, batch=10, workload=WORKLOAD, during=None, fn=surface, first=None):
    """One job on d; during(batch index) runs between batches; first(config) sees its start.
    Returns the time after it."""
    job = d.register(workload, params={"batch": 64}, knobs=KNOBS)
    config = job["config"]
    if first:
        first(config)
    t = t0
    for k in range(steps // batch):
        samples = []
        for _ in range(batch):
            t += 0.25
            samples.append({"t": t, "name": "samples_per_s",
                            "value": fn(config) * (1.0 + rng.gauss(0.0, 0.03))})
        status, _, body = d.post("/api/v1/jobs/%d/metrics" % job["id"], {"samples": samples, "config": config})
        assert status == 200, (status, body)
        config = body["config"]
        if during:
            during(k)
    status, _, body = d.post("/api/v1/jobs/%d/end" % job["id"], {"exit_status": 0})
    assert status == 200, (status, body)
    return t


def ctl(d, *args):
    """dlprofctl against d over HTTP: (exit code, stdout)."""
    p = subprocess.run([os.path.join(BUILDDIR, "tools", "dlprofctl"), "-u", d.url] + list(args),
                       capture_output=True, text=True, timeout=30)
    return p.returncode, p.stdout


def local_trials(d):
    """(store_id, ids of trials stored on d) from its own database."""
    with sqlite3.connect("file:%s?mode=ro" % d.db, uri=True) as db:
        store_id = db.execute("SELECT store_id FROM cluster_meta").fetchone()[0]
        ids = {r[0] for r in db.execute("SELECT id FROM trials WHERE n >= 2 AND mean IS NOT NULL")}
    return store_id, ids


def outbox_ids(db_path):
    with sqlite3.connect("file:%s?mode=ro" % db_path, uri=True) as db:
        return [r[0] for r in db.execute("SELECT trial_id FROM cluster_outbox ORDER BY trial_id")]


def shared_trials(pg, store_id):
    rows = pg.sql("SELECT trial_id FROM dlprofd_trials WHERE store_id = '%s'" % store_id)
    return [int(r[0]) for r in rows]


def outbox_empty(d):
    status, _, body = d.get("/api/v1/cluster/workloads")
    return status == 200 and body["cluster"]["connected"] and body["cluster"]["outbox"]["waiting"] == 0


def main():
    rng = random.Random(11)
    with PgServer() as pg, Daemon(args=cluster_args(pg, "node-a")) as a, \
            Daemon(args=cluster_args(pg, "node-b")) as b:
        state = {}

        @tap.test("both nodes connect to the shared store and migrate it once")
        def _():
            for d in (a, b):
                wait_for("connected", lambda d=d: d.get("/api/v1/cluster/workloads")[2]["cluster"]["connected"],
                         20)
            assert pg.sql("SELECT version FROM dlprofd_schema") == [["2"]], pg.sql("SELECT * FROM dlprofd_schema")
            _, _, body = a.get("/api/v1/cluster/workloads")
            assert body["cluster"]["node"] == "node-a" and body["cluster"]["schema_version"] == 2, body

        @tap.test("before any job: B has never seen the workload")
        def _():
            status, _, rec = b.get("/api/v1/recommend?workload=%s&batch=64" % WORKLOAD)
            assert status == 200 and rec["source"] == "default", (status, rec)

        @tap.test("learned on A is recommended as learned on B, with no job on B, within a few seconds")
        def _():
            t = time.time() - 86400
            for _ in range(4):
                t = run_job(a, rng, t)
            state["t"] = t
            _, _, rec_a = a.get("/api/v1/recommend?workload=%s&batch=64" % WORKLOAD)
            assert rec_a["source"] == "learned", rec_a
            ended = time.time()

            def learned_on_b():
                _, _, rec = b.get("/api/v1/recommend?workload=%s&batch=64" % WORKLOAD)
                return rec if rec["source"] == "learned" and rec["trials"] >= rec_a["trials"] else None
            rec_b = wait_for("B learns A's trials", learned_on_b, 10)
            state["lag"] = time.time() - ended
            assert rec_b["config"] == rec_a["config"], (rec_a, rec_b)
            assert surface(rec_b["config"]) / BEST >= 0.97, rec_b
            _, _, jobs_b = b.get("/api/v1/jobs")
            assert jobs_b["jobs"] == [], jobs_b
            state["rec_a"] = rec_a
            print("# B recommended A's best %.2fs after A's last job ended" % state["lag"])

        @tap.test("B's first job of the workload starts within 3% of A's best")
        def _():
            job = b.register(WORKLOAD, params={"batch": 64}, knobs=KNOBS)
            best_a = surface(state["rec_a"]["config"])
            assert surface(job["config"]) >= 0.97 * best_a, (job["config"], state["rec_a"])
            status, _, _ = b.post("/api/v1/jobs/%d/end" % job["id"], {"exit_status": 0})
            assert status == 200

        @tap.test("a node of another class: A's trials are its prior (source other_class), never its trials; "
                  "its first job starts within 3% of A's best, then its own trials take over")
        def _():
            class_a = a.get("/api/v1/node")[2]["hw_class"]
            with Daemon(args=cluster_args(pg, "node-c") + ["--hw-class", CLASS_C]) as c:
                assert c.get("/api/v1/node")[2]["hw_class"] == CLASS_C
                wait_for("C connected", lambda: c.get("/api/v1/cluster/workloads")[2]["cluster"]["connected"], 20)

                def prior_on_c():
                    _, _, rec = c.get("/api/v1/recommend?workload=%s&batch=64" % WORKLOAD)
                    return rec if rec["source"] == "other_class" else None
                rec = wait_for("C's recommendation from A's class", prior_on_c, 10)
                assert rec["other_class"]["hw_class"] == class_a and rec["trials"] == 0, rec
                assert rec["other_class"]["trials"] >= 4, rec
                assert surface(rec["config"]) >= 0.97 * surface(state["rec_a"]["config"]), (rec, state["rec_a"])
                _, _, link = c.get("/api/v1/cluster/workloads")
                assert link["cluster"]["pulled"] == 0, link["cluster"]  # another class's trials are not pulled
                assert link["cluster"]["other_classes"]["answered"] >= 1, link["cluster"]
                status, _, view = c.get("/api/v1/workloads/%s?batch=64" % WORKLOAD)
                assert status == 200 and view["source"] == "other_class" and view["trials"] == 0, view
                assert view["other_class"]["hw_class"] == class_a and view["tried"] == [], view
                rc, out = ctl(c, "recommend", WORKLOAD, "batch=64")
                assert rc == 0 and "other_class" in out and class_a in out, (rc, out)

                started = []
                t = run_job(c, rng, time.time() - 7200, fn=surface_c, first=started.append)
                assert surface(started[0]) >= 0.97 * surface(state["rec_a"]["config"]), (started, state["rec_a"])
                for _ in range(2):
                    t = run_job(c, rng, t, fn=surface_c)
                _, own = local_trials(c)
                _, _, rec = c.get("/api/v1/recommend?workload=%s&batch=64" % WORKLOAD)
                assert rec["source"] == "learned" and rec["trials"] <= len(own), (rec, len(own))
                assert surface_c(rec["config"]) >= 0.97 * BEST_C, rec
                print("# C started at %r (A's best %r); learned %r on its own trials" % (
                    started[0], state["rec_a"]["config"], rec["config"]))
                wait_for("C's outbox drains", lambda: outbox_empty(c), 20)
                pushed_c = time.time()
                rc = c.stop()  # what the asks hold is freed (a leak fails the sanitized build's exit)
                assert rc == 0, (rc, c.log()[-3000:])

            # A's class never pools C's trials: B's pulls begun after C's push bring none of them.
            def b_pulled_after(t0):
                _, _, body = b.get("/api/v1/cluster/workloads")
                return body["cluster"] if body["cluster"]["last_pull"] > t0 else None
            first = wait_for("B pulls after C's push", lambda: b_pulled_after(pushed_c), 15)
            link_b = wait_for("B pulls again", lambda: b_pulled_after(first["last_pull"]), 15)
            assert int(pg.sql("SELECT count(*) FROM dlprofd_trials WHERE hw_class = '%s'" % CLASS_C)[0][0]) > 0
            shared_a = int(pg.sql("SELECT count(*) FROM dlprofd_trials WHERE hw_class = '%s'" % class_a)[0][0])
            assert link_b["pulled"] == shared_a, (link_b, shared_a)
            _, _, rec_b = b.get("/api/v1/recommend?workload=%s&batch=64" % WORKLOAD)
            assert rec_b["source"] == "learned" and rec_b["config"] == state["rec_a"]["config"], rec_b

        @tap.test("the cluster view shows the workload, its class, nodes and jobs, on either node")
        def _():
            def seen():
                _, _, body = b.get("/api/v1/cluster/workloads/%s" % WORKLOAD)
                return body if isinstance(body, dict) and body.get("workload", {}).get("jobs", 0) >= 4 else None
            body = wait_for("the view", seen, 10)
            w = body["workload"]
            class_a = a.get("/api/v1/node")[2]["hw_class"]
            assert w["name"] == WORKLOAD and w["nodes"] == 2 and sorted(w["classes"]) == sorted([class_a, CLASS_C]), w
            v = [v for v in w["variants"] if v["hw_class"] == class_a][0]
            assert v["params"] == {"batch": 64} and v["best"]["config"] == state["rec_a"]["config"], v
            status, _, body = b.get("/api/v1/cluster/workloads/never-learned")
            assert status == 404, (status, body)

        @tap.test("/metrics shows the link: up, outbox, trials pushed and pulled")
        def _():
            status, _, text = b.get("/metrics")
            text = text.decode()
            assert status == 200 and "dlprofd_cluster_up 1\n" in text, text[-2000:]
            assert "dlprofd_cluster_outbox_trials 0\n" in text and "# TYPE dlprofd_cluster_pulled_trials_total counter" in text
            pulled = [line for line in text.splitlines() if line.startswith("dlprofd_cluster_pulled_trials_total ")]
            assert len(pulled) == 1 and float(pulled[0].split()[1]) >= state["rec_a"]["trials"], pulled
            p = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
            assert p.returncode == 0, p.stdout + p.stderr

        @tap.test("dlprofctl cluster [WORKLOAD] prints the link and the table; --json the answer")
        def _():
            rc, out = ctl(b, "cluster")
            assert rc == 0, (rc, out)
            assert out.startswith("shared store: connected as node node-b"), out
            class_a = a.get("/api/v1/node")[2]["hw_class"]
            row = [line for line in out.splitlines() if line.startswith(WORKLOAD) and class_a in line]
            assert len(row) == 1 and "batch=64" in row[0] and "intra_threads=%d" % state["rec_a"]["config"][
                "intra_threads"] in row[0], out
            rc, out = ctl(b, "cluster", WORKLOAD)
            assert rc == 0 and WORKLOAD in out, (rc, out)
            rc, out = ctl(b, "--json", "cluster", WORKLOAD)
            assert rc == 0 and json.loads(out)["workload"]["name"] == WORKLOAD, (rc, out)
            rc, out = ctl(b, "cluster", "never-learned")
            assert rc == 1, (rc, out)

        @tap.test("PostgreSQL killed mid-run: A keeps serving and learning; nothing lost or duplicated")
        def _():
            killed = {}

            def crash(k):
                if k == 5:
                    pg.kill()
                    killed["at"] = time.time()
                if k == 30:
                    # Down for a while: trials pile up in A's outbox.
                    _, _, body = a.get("/api/v1/cluster/workloads")
                    assert not body["cluster"]["connected"], body["cluster"]
                    killed["waiting"] = body["cluster"]["outbox"]["waiting"]
                    pg.start()
            t = run_job(a, rng, state["t"], during=crash)
            t = run_job(a, rng, t)
            state["t"] = t
            assert killed["waiting"] > 0, killed
            wait_for("A's outbox drains", lambda: outbox_empty(a), 40)
            store_id, ids = local_trials(a)
            shared = shared_trials(pg, store_id)
            assert len(shared) == len(set(shared)), "duplicates in the shared store"
            assert set(shared) == ids, (sorted(ids - set(shared)), sorted(set(shared) - ids))

        @tap.test("a trial sent twice (crash between the shared commit and the outbox delete) is stored once")
        def _():
            store_id, ids = local_trials(a)
            before = shared_trials(pg, store_id)
            a.stop()
            with sqlite3.connect(a.db) as db:
                db.executemany("INSERT INTO cluster_outbox (trial_id) VALUES (?)", [(i,) for i in sorted(ids)])
            a.start()
            wait_for("A's outbox drains again", lambda: outbox_empty(a), 30)
            after = shared_trials(pg, store_id)
            assert sorted(after) == sorted(before), (len(before), len(after))
            _, _, body = a.get("/api/v1/cluster/workloads")
            assert body["cluster"]["pushed"] == 0, body["cluster"]

        @tap.test("B learned everything A measured while PostgreSQL was down")
        def _():
            store_id, ids = local_trials(a)

            def caught_up():
                _, _, body = b.get("/api/v1/cluster/workloads")
                return body["cluster"]["pulled"] >= len(ids)
            wait_for("B pulls A's trials", caught_up, 15)

        @tap.test("a node that polls (cluster_updates = poll, no LISTEN) learns A's new trials within its interval")
        def _():
            _, _, body = b.get("/api/v1/cluster/workloads")
            assert body["cluster"]["updates"] == "notify" and body["cluster"]["poll_interval"] == 5, body["cluster"]
            with Daemon(args=cluster_args(pg, "node-d") + ["--cluster-updates", "poll",
                                                           "--cluster-poll-interval", "1"]) as d:
                store_id, ids = local_trials(a)
                wait_for("D reads its class", lambda: d.get("/api/v1/cluster/workloads")[2]["cluster"]["pulled"]
                         >= len(ids), 20)
                link = d.get("/api/v1/cluster/workloads")[2]["cluster"]
                assert link["updates"] == "poll" and link["poll_interval"] == 1, link
                assert "polling (no LISTEN)" in d.log(), d.log()[-2000:]
                state["t"] = run_job(a, rng, state["t"])
                wait_for("A's outbox drains", lambda: outbox_empty(a), 20)
                _, ids = local_trials(a)
                _, _, rec_a = a.get("/api/v1/recommend?workload=%s&batch=64" % WORKLOAD)

                def learned():
                    _, _, rec = d.get("/api/v1/recommend?workload=%s&batch=64" % WORKLOAD)
                    return rec if rec["trials"] >= rec_a["trials"] else None
                rec_d = wait_for("D learns A's newest trials without a notification", learned, 10)
                assert rec_d["source"] == "learned" and rec_d["config"] == rec_a["config"], (rec_a, rec_d)
                assert d.get("/api/v1/cluster/workloads")[2]["cluster"]["pulled"] >= len(ids)

    @tap.test("a node whose cluster store is unreachable at start starts and serves")
    def _():
        with PgServer() as gone:
            conninfo = gone.conninfo
        # The directory (and socket) no longer exist: every connection fails at once.
        with Daemon(args=["--cluster-store", conninfo + " connect_timeout=2", "--cluster-outbox-limit", "3"]) as c:
            status, _, body = c.get("/healthz")
            assert status == 200, (status, body)
            status, _, rec = c.get("/api/v1/recommend?workload=%s&batch=64" % WORKLOAD)
            assert status == 200 and rec["source"] == "default", rec
            job = c.register(WORKLOAD, params={"batch": 64}, knobs=KNOBS)
            status, _, body = c.post("/api/v1/jobs/%d/metrics" % job["id"], {"samples": [
                {"t": time.time(), "name": "samples_per_s", "value": 10.0}]})
            assert status == 200, (status, body)
            _, _, body = c.get("/api/v1/cluster/workloads")
            assert body["cluster"]["configured"] and not body["cluster"]["connected"], body
            assert body["cluster"]["error"], body
            assert body["workloads"] == [] and body["as_of"] is None, body

    @tap.test("the outbox is bounded: beyond cluster_outbox_limit the oldest trials are dropped and counted; "
              "without cluster_store trials stay out of it")
    def _():
        with PgServer() as gone:
            conninfo = gone.conninfo
        workdir = tempfile.mkdtemp(prefix="dlprof-test-")
        try:
            with Daemon(args=["--cluster-store", conninfo, "--cluster-outbox-limit", "3"], workdir=workdir) as c:
                run_job(c, random.Random(3), time.time() - 3600)
                _, ids = local_trials(c)
                assert len(ids) > 3, ids
                _, _, body = c.get("/api/v1/cluster/workloads")
                outbox = body["cluster"]["outbox"]
                assert outbox["waiting"] == 3 and outbox["dropped"] == len(ids) - 3, (outbox, len(ids))
                kept = outbox_ids(c.db)
                assert kept == sorted(ids)[-3:], (kept, sorted(ids))
            # The same database without cluster_store: new trials stay out of the outbox.
            with Daemon(workdir=workdir) as d:
                run_job(d, random.Random(4), time.time() - 1800)
                _, ids_after = local_trials(d)
                assert len(ids_after) > len(ids), (len(ids), len(ids_after))
                assert outbox_ids(d.db) == kept, (kept, outbox_ids(d.db))
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    @tap.test("without cluster_store the cluster view says so and nothing else changes")
    def _():
        with Daemon() as d:
            status, _, body = d.get("/api/v1/cluster/workloads")
            assert status == 200 and body["cluster"] == {"configured": False}, body
            status, _, _ = d.get("/api/v1/cluster/workloads/%s" % WORKLOAD)
            assert status == 404
            rc, out = ctl(d, "cluster")
            assert rc == 0 and "learns alone" in out, (rc, out)

    tap.done()


if __name__ == "__main__":
    main()
