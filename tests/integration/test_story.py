"""What the dashboard's heatmap, story and downloads read, over REST against
the built daemon: a real process with named threads (one spinning, one
idle) is sampled, and GET /api/v1/jobs/{id}/threads gives each thread by
name with its CPU per column and the time each reported phase took; the
names survive a restart; GET /api/v1/jobs/{id}/timeline tells a
distributed job's life (start, configs and why, ranks joined and left, a
verdict raised and cleared, its end and status); GET
/api/v1/jobs/{id}/record holds the same series as JSON and CSV.  TAP."""

import csv
import io
import shutil
import subprocess
import sys
import tempfile
import time

from harness import Daemon, Tap

tap = Tap()

# A process whose threads the kernel names (prctl PR_SET_NAME): one spins, one sleeps.
THREADS = r"""
import ctypes, threading, time
libc = ctypes.CDLL(None)
def named(n, busy):
    libc.prctl(15, n.encode(), 0, 0, 0)
    while True:
        if not busy:
            time.sleep(0.5)
for n, busy in (("spin-worker", True), ("idle-worker", False)):
    threading.Thread(target=named, args=(n, busy), daemon=True).start()
print("ready", flush=True)
time.sleep(120)
"""

ARGS = ["--interval", "0.25", "--store-interval", "0.5", "--diag-sustain", "2"]


def wait_for(fn, timeout=15, what="condition"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = fn()
        if v:
            return v
        time.sleep(0.2)
    raise AssertionError("timed out waiting for " + what)


def threads_of(d, jid, q=""):
    status, _, body = d.get("/api/v1/jobs/%d/threads%s" % (jid, q))
    assert status == 200, (status, body)
    return body


proc = subprocess.Popen([sys.executable, "-c", THREADS], stdout=subprocess.PIPE, text=True)
workdir = tempfile.mkdtemp(prefix="dlprof-story-")
try:
    assert proc.stdout.readline().strip() == "ready"
    with Daemon(ARGS, workdir=workdir) as d:
        jid = d.register("story-threads", pid=proc.pid)["id"]
        t0 = time.time()
        # Phases reported meanwhile: data 0.02 s and compute 0.06 s a step, ten steps a second.
        steps = []
        for k in range(30):
            t = t0 + k * 0.1
            steps.append({"t": t, "name": "phase_time_s", "phase": "data", "value": 0.02})
            steps.append({"t": t, "name": "phase_time_s", "phase": "compute", "value": 0.06})
        status, _, body = d.post("/api/v1/jobs/%d/metrics" % jid, {"samples": steps})
        assert status == 200, body

        def enough():
            b = threads_of(d, jid)
            named = {x["name"] for x in b["threads"]}
            return b if {"spin-worker", "idle-worker"} <= named and len(b["t"]) >= 5 else None

        body = wait_for(enough, what="five columns of both named threads")

        @tap.test("threads: each thread by name, its CPU per column, the spinning one busy, the idle one not")
        def _():
            rows = {x["name"]: x for x in body["threads"]}
            spin, idle = rows["spin-worker"], rows["idle-worker"]
            assert body["unit"] == "cores" and body["t"] == sorted(body["t"]), body["t"]
            assert all(len(x["values"]) == len(body["t"]) for x in body["threads"])
            assert spin["pid"] == proc.pid and spin["key"] == "thread.%d.%d" % (proc.pid, spin["tid"]), spin
            assert spin["mean"] > 0.1 and spin["mean"] > 10 * max(idle["mean"], 0.001), (spin, idle)
            assert max(v for v in idle["values"] if v is not None) < 0.05, idle
            # Rows in pid then tid order: the main thread (tid = pid) first.
            assert body["threads"][0]["tid"] == proc.pid, [x["tid"] for x in body["threads"]]

        @tap.test("threads: each phase's time lands in the columns, all of it")
        def _():
            b = threads_of(d, jid, "?from=%.3f&to=%.3f" % (t0 - 5, time.time() + 1))
            ph = {p["name"]: p["time_s"] for p in b["phases"]}
            assert set(ph) == {"data", "compute"}, ph
            # Steps after the last column's bucket are in no column; those before are in the first.
            last = b["t"][-1]
            least = sum(0.02 for k in range(30) if t0 + k * 0.1 <= last)
            most = sum(0.02 for k in range(30) if t0 + k * 0.1 <= last + b["step"])
            assert least - 1e-6 <= sum(ph["data"]) <= most + 1e-6, (sum(ph["data"]), least, most)
            assert abs(sum(ph["compute"]) - 3 * sum(ph["data"])) < 1e-6, ph
            assert all(len(v) == len(b["t"]) for v in ph.values())

        @tap.test("threads: a bad range is refused, an unknown job is 404")
        def _():
            assert d.get("/api/v1/jobs/%d/threads?from=10&to=5" % jid)[0] == 400
            assert d.get("/api/v1/jobs/%d/threads?step=0" % jid)[0] == 400
            assert d.get("/api/v1/jobs/999999/threads")[0] == 404

        @tap.test("per-thread series stay out of the job's latest values")
        def _():
            _, _, job = d.get("/api/v1/jobs/%d" % jid)
            assert "cpu.cores" in job["latest"], job["latest"]
            assert not [n for n in job["latest"] if n.startswith("thread.")], job["latest"]

        @tap.test("record: JSON and CSV hold the same series, threads labelled, as a download")
        def _():
            q = "from=%.3f&to=%.3f&step=1" % (t0 - 5, time.time() + 1)
            status, hdrs, doc = d.get("/api/v1/jobs/%d/record?%s" % (jid, q))
            assert status == 200 and 'filename="dlprofd-job-%d.json"' % jid in hdrs["content-disposition"], hdrs
            assert doc["job"]["id"] == jid and doc["range"]["step"] == 1, doc["range"]
            series = {(s["name"], s["phase"]): s for s in doc["series"]}
            spin = [s for s in doc["series"] if s["label"] == "spin-worker"]
            assert len(spin) == 1 and spin[0]["unit"] == "cores" and spin[0]["name"].endswith(".cores"), spin
            assert ("phase_time_s", "data") in series and ("cpu.cores", "") in series, list(series)
            status, hdrs, text = d.get("/api/v1/jobs/%d/record?%s&format=csv" % (jid, q))
            assert status == 200 and hdrs["content-type"].startswith("text/csv"), hdrs
            rows = list(csv.DictReader(io.StringIO(text.decode())))
            assert len(rows) == sum(len(s["points"]) for s in doc["series"]), (len(rows), len(doc["series"]))
            assert any(r["label"] == "spin-worker" for r in rows)
            assert d.get("/api/v1/jobs/%d/record?format=xml" % jid)[0] == 400

    with Daemon(ARGS, workdir=workdir) as d:
        @tap.test("thread names are kept: read back after a restart")
        def _():
            b = threads_of(d, jid, "?from=%.3f&to=%.3f" % (t0 - 5, time.time()))
            assert {"spin-worker", "idle-worker"} <= {x["name"] for x in b["threads"]}, b["threads"]

        # A job of two ranks whose data phase takes 70% of each step for 5 s, then 5% for 5 s,
        # reported as it runs (the diagnosis judges a job from its start).
        first = d.register("story-ranks", external_id="run:story",
                           rank={"rank": 0, "world_size": 2, "local_rank": 0})
        jid = first["id"]
        status, _, body = d.post("/api/v1/jobs", {"workload": "story-ranks", "external_id": "run:story",
                                                  "rank": {"rank": 1, "world_size": 2, "local_rank": 1}})
        assert status == 200 and body["id"] == jid, body
        begun = time.time()
        for k in range(20):
            share = 0.7 if k < 10 else 0.05
            t, samples = time.time(), []
            for i in range(5):
                at = t - 0.5 + i * 0.1
                samples += [{"t": at, "name": "step_time_s", "value": 0.1},
                            {"t": at, "name": "phase_time_s", "phase": "data", "value": 0.1 * share},
                            {"t": at, "name": "phase_time_s", "phase": "forward", "value": 0.1 * (1 - share)},
                            {"t": at, "name": "samples_per_s", "value": 640}]
            status, _, body = d.post("/api/v1/jobs/%d/metrics" % jid, {"samples": samples, "config": first["config"]})
            assert status == 200, body
            time.sleep(max(0, begun + (k + 1) * 0.5 - time.time()))
        assert d.post("/api/v1/jobs/%d/end" % jid, {"rank": 1, "exit_status": 0})[0] == 200
        assert d.post("/api/v1/jobs/%d/end" % jid, {"exit_status": 3})[0] == 200
        status, _, story = d.get("/api/v1/jobs/%d/timeline" % jid)

        @tap.test("timeline: started, the first config and why, ranks joined and left, ended with its status")
        def _():
            assert status == 200, story
            ev = story["events"]
            kinds = [e["kind"] for e in ev]
            assert kinds[0] == "started" and kinds[-1] == "ended", kinds
            assert ev[-1]["exit_status"] == 3 and ev[-1]["text"] == "ended, exit status 3", ev[-1]
            config = [e for e in ev if e["kind"] == "config"]
            assert config and config[0]["config"] == first["config"], config
            assert config[0]["why"] in ("exploring", "best", "settled", "drift"), config[0]
            joined = sorted(e["rank"] for e in ev if e["kind"] == "rank_joined")
            assert joined == [0, 1], ev
            left = [e for e in ev if e["kind"] == "rank_left"]
            assert len(left) == 1 and left[0]["rank"] == 1 and left[0]["exit_status"] == 0, left
            assert [e["t"] for e in ev] == sorted(e["t"] for e in ev)

        @tap.test("timeline: the input-bound verdict raised while data took 70%, cleared after")
        def _():
            ev = story["events"]
            raised = [e for e in ev if e["kind"] == "verdict_raised" and e["verdict"] == "input_bound"]
            cleared = [e for e in ev if e["kind"] == "verdict_cleared" and e["verdict"] == "input_bound"]
            assert len(raised) == 1 and len(cleared) == 1, [e for e in ev if e["kind"].startswith("verdict")]
            assert begun - 1 <= raised[0]["t"] <= begun + 3, raised[0]["t"] - begun
            # "until" is when the condition stopped holding: the first light step, about 4.5 s in.
            assert begun + 3.5 <= cleared[0]["t"] <= begun + 10, cleared[0]["t"] - begun
            assert "70%" in raised[0]["hint"], raised[0]

        @tap.test("timeline: a config the tuner changes is an event naming the knob and why")
        def _():
            j = d.register("story-tuned", knobs={"intra_threads": {"values": [1, 2, 4], "runtime": True}})
            cfg, t = j["config"], time.time() - 60
            for _ in range(40):
                batch = [{"t": t + i * 0.05, "name": "samples_per_s", "value": 100.0 * cfg["intra_threads"]}
                         for i in range(10)]
                t += 0.5
                status, _, ans = d.post("/api/v1/jobs/%d/metrics" % j["id"], {"samples": batch, "config": cfg})
                assert status == 200, ans
                cfg = ans["config"]
            ev = d.get("/api/v1/jobs/%d/timeline" % j["id"])[2]["events"]
            changes = [e for e in ev if e["kind"] == "config" and "changed" in e]
            assert changes, ev
            # Each names what changed (the knob the job declared, or one the node adds) and why.
            assert all(e["changed"] and e["why"] and e["text"].startswith("config ") for e in changes), changes
            assert any("intra_threads" in e["changed"] for e in changes), changes
finally:
    proc.kill()
    proc.wait()
    shutil.rmtree(workdir, ignore_errors=True)
tap.done()
