"""The ranks of a distributed job through the REST API, as a job not written in Python sends them.

Ranks that register at the same moment with their shared external id and a
"rank" object become one job; the job's JSON carries world_size and ranks
(rank, local rank, node, pid, step time, wait, throughput, state); rank 0's
samples_per_s is the job's global throughput (its own plus the other ranks'
latest) and the others' samples are their own series; a rank's end ends the
job only with the last rank here; a job whose other ranks run elsewhere says
how many this node does not see; discovery keeps a job whose first
process ended while another rank's runs.  The report names a straggler from the
ranks' figures and names none in a balanced job.  Malformed rank fields are
refused with 400.
"""

import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from harness import Daemon, Tap  # noqa: E402

tap = Tap()


def sleeper():
    return subprocess.Popen(["sleep", "300"])


def join(d, ext, rank, world, pid, node=None, **extra):
    r = {"rank": rank, "world_size": world, "local_rank": rank}
    if node:
        r["node"] = node
    r.update(extra)
    return d.post("/api/v1/jobs", {"workload": "ranks", "external_id": ext, "pid": pid, "rank": r})


def post(d, jid, rank, samples, seq):
    status, _, body = d.post("/api/v1/jobs/%d/metrics" % jid, {"samples": samples, "rank": rank, "seq": seq,
                                                                 "stream": "r%d" % rank})
    assert status == 200, (status, body)
    return body


def steps(t, n, step, comm, data=0.0, sps=None):
    out = []
    for i in range(n):
        ti = t + i * 0.01
        out += [{"t": ti, "name": "step_time_s", "value": step}, {"t": ti, "name": "comm_wait_s", "value": comm},
                {"t": ti, "name": "phase_time_s", "value": data, "phase": "data"}]
        if sps is not None:
            out.append({"t": ti, "name": "samples_per_s", "value": sps})
    return out


def job(d, jid):
    status, _, body = d.get("/api/v1/jobs/%d" % jid)
    assert status == 200, (status, body)
    return body


def report(d, jid):
    status, _, body = d.get("/api/v1/jobs/%d/report" % jid)
    assert status == 200, (status, body)
    return body


procs = [sleeper() for _ in range(4)]
try:
    with Daemon() as d:
        ids = [None] * 4

        @tap.test("four ranks registering at once become one job")
        def _():
            go = threading.Barrier(4)

            def one(r):
                go.wait()
                status, _, body = join(d, "run:together", r, 4, procs[r].pid)
                assert status in (200, 201), (status, body)
                ids[r] = body["id"]
            threads = [threading.Thread(target=one, args=(r,)) for r in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert len(set(ids)) == 1, ids
            j = job(d, ids[0])
            assert j["world_size"] == 4 and j["ranks_elsewhere"] == 0, j
            assert [k["rank"] for k in j["ranks"]] == [0, 1, 2, 3], j["ranks"]
            assert [k["pid"] for k in j["ranks"]] == [p.pid for p in procs], j["ranks"]
            assert [k["local_rank"] for k in j["ranks"]] == [0, 1, 2, 3], j["ranks"]
            assert all(k["node"] and k["state"] == "running" for k in j["ranks"]), j["ranks"]
            status, _, listed = d.get("/api/v1/jobs")
            assert [x["id"] for x in listed["jobs"]].count(ids[0]) == 1, listed

        @tap.test("rank 0's throughput is the job's global one, counted once; other ranks' are their own series")
        def _():
            jid, now = ids[0], time.time()
            for r in (1, 2, 3):
                post(d, jid, r, [{"t": now, "name": "samples_per_s", "value": 100.0 + r}], 1)
            post(d, jid, 0, [{"t": now, "name": "samples_per_s", "value": 100.0}], 1)
            j = job(d, jid)
            assert abs(j["latest"]["samples_per_s"] - (100 + 101 + 102 + 103)) < 1e-6, j["latest"]
            assert j["latest"]["rank2.samples_per_s"] == 102.0, j["latest"]
            assert [k["samples_per_s"] for k in j["ranks"]] == [100.0, 101.0, 102.0, 103.0], j["ranks"]

        @tap.test("a rank's figures: means per step after its first batch, its share waiting")
        def _():
            jid, now = ids[0], time.time()
            for r in range(4):
                post(d, jid, r, steps(now, 5, 0.5, 0.2), 2)
            k = job(d, jid)["ranks"][1]
            assert k["steps"] == 5, k
            assert abs(k["step_time_s"] - 0.5) < 1e-9 and abs(k["comm_share"] - 0.4) < 1e-9, k
            rep = report(d, jid)
            assert [v for v in rep["verdicts"] if v["kind"] == "straggler"] == [], rep["verdicts"]
            assert len(rep["ranks"]) == 4 and abs(rep["ranks"][0]["comm_share"] - 0.4) < 1e-9, rep["ranks"]

        @tap.test("the rank the others wait for is named the straggler, with its node, how much slower and its cause")
        def _():
            jid, now = ids[0], time.time() + 1
            for r in range(4):
                # Rank 2 loads its data slowly: it waits least, the others wait for it.
                post(d, jid, r, steps(now, 20, 0.5, 0.02 if r == 2 else 0.2, 0.2 if r == 2 else 0.02), 3)
            rep = report(d, jid)
            v = rep["verdicts"][0]
            assert v["kind"] == "straggler" and v["rank"] == 2 and v["node"], v
            assert v["cause"] == "data_phase", v
            assert 1.3 < v["slower"] < 1.7, v
            assert rep["headline"].startswith("straggler"), rep["headline"]

        @tap.test("a rank's end leaves the job running; the last rank's ends it with the first failure's status")
        def _():
            jid = ids[0]
            for r, status in ((3, 0), (1, 7), (2, 0)):
                s, _, body = d.post("/api/v1/jobs/%d/end" % jid, {"rank": r, "exit_status": status})
                assert s == 200, (s, body)
                assert job(d, jid)["state"] == "running"
            s, _, body = d.post("/api/v1/jobs/%d/end" % jid, {"rank": 0, "exit_status": 0})
            assert s == 200, (s, body)
            j = job(d, jid)
            assert j["state"] == "ended" and j["exit_status"] == 7, j
            assert all(k["state"] == "ended" for k in j["ranks"]), j["ranks"]
            s, _, body = d.post("/api/v1/jobs/%d/end" % jid, {"rank": 9})
            assert s == 404, (s, body)

        @tap.test("a job whose other ranks run on other nodes says how many this node does not see")
        def _():
            s0, _, a = join(d, "slurm:77", 0, 4, procs[0].pid, node="n1", nodes=2)
            s1, _, b = join(d, "slurm:77", 1, 4, procs[1].pid, node="n1", nodes=2)
            assert s0 == 201 and s1 == 200 and a["id"] == b["id"], (s0, a, s1, b)
            j = job(d, a["id"])
            assert j["world_size"] == 4 and j["nodes"] == 2 and j["ranks_elsewhere"] == 2, j
            assert [k["node"] for k in j["ranks"]] == ["n1", "n1"], j["ranks"]

        @tap.test("the job lives while any of its ranks' processes does, not only its first pid's")
        def _():
            a, b = sleeper(), sleeper()
            try:
                s0, _, x = join(d, "run:lives", 0, 2, a.pid)
                s1, _, y = join(d, "run:lives", 1, 2, b.pid)
                assert s0 == 201 and s1 == 200 and x["id"] == y["id"], (x, y)
                jid = x["id"]
                assert job(d, jid)["pid"] == a.pid
                a.kill()
                a.wait()
                time.sleep(3)      # discovery sees an exit at its next tick (1 s)
                assert job(d, jid)["state"] == "running", job(d, jid)
                b.kill()
                b.wait()
                deadline = time.time() + 10
                while job(d, jid)["state"] == "running" and time.time() < deadline:
                    time.sleep(0.2)
                assert job(d, jid)["state"] == "ended", job(d, jid)
            finally:
                for p in (a, b):
                    if p.poll() is None:
                        p.kill()
                        p.wait()

        @tap.test("malformed rank fields are refused with 400")
        def _():
            pid = procs[0].pid
            for body in ({"workload": "x", "pid": pid, "rank": {"rank": 0, "world_size": 2}},
                         {"workload": "x", "external_id": "e", "rank": {"rank": 2, "world_size": 2}},
                         {"workload": "x", "external_id": "e", "rank": {"rank": 0}},
                         {"workload": "x", "external_id": "e", "rank": {"rank": 0, "world_size": 2, "x": 1}},
                         {"workload": "x", "external_id": "e", "rank": {"rank": -1, "world_size": 2}},
                         {"workload": "x", "external_id": "e", "rank": 3}):
                s, _, answer = d.post("/api/v1/jobs", body)
                assert s == 400, (s, body, answer)
            jid = d.register(pid=pid)["id"]
            s, _, answer = d.post("/api/v1/jobs/%d/metrics" % jid, {"samples": [], "rank": -1})
            assert s == 400, (s, answer)
            s, _, answer = d.post("/api/v1/jobs/%d/end" % jid, {"rank": "0"})
            assert s == 400, (s, answer)
finally:
    for p in procs:
        p.kill()
        p.wait()
tap.done()
