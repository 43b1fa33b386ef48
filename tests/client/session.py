"""The client's session against the real daemon, without torch.

Registration, the samples a step produces and how they are stored,
buffering (nothing sent between flushes, one request per flush), the
periodic flush, the early report the daemon asks for while it measures, the
end of the job with its exit status, reuse of a job from DLPROF_JOB, the
Unix socket, and bad input that must never raise.
"""

import math
import os
import subprocess
import sys
import time

import clientlib
from clientlib import Daemon, Tap, dlprof_log, job, jobs, samples, wait_until, warnings_in

import dlprof

tap = Tap()


def client_samples(d, job_id):
    """The job's samples the client sent: the daemon's own sampler adds
    dotted collector names (cpu.*, mem.*) for a job with a pid."""
    return [x for x in samples(d, job_id) if "." not in x["name"]]


def steps(s, n, phases=("embedding", "lstm"), samples_per_step=8, sleep=0.002, **metrics):
    for i in range(n):
        for p in phases:
            with s.phase(p):
                time.sleep(sleep)
        s.step(samples=samples_per_step, loss=1.0 / (i + 1), **metrics)


with Daemon() as d:
    @tap.test("a session registers the job with its workload, params, pid and command")
    def _():
        with dlprof.session(workload="unit-register", params={"batch": 64, "hidden": "1024"},
                            url=d.url) as s:
            assert isinstance(s.job_id, int) and s.job_id > 0, s.job_id
            j = job(d, s.job_id)
            assert j["state"] == "running", j
            assert j["workload"] == "unit-register", j
            assert j["params"] == {"batch": 64, "hidden": "1024"}, j
            assert j["pid"] == os.getpid(), j
            assert "session.py" in (j["command"] or ""), j
            assert isinstance(s.config, dict)

    @tap.test("steps store step_time_s, samples_per_s, loss, phase_time_s per phase and user metrics")
    def _():
        with dlprof.session(workload="unit-steps", url=d.url, interval=3600) as s:
            steps(s, 5, tokens=12.5)
            assert s.flush(), "flush did not empty the buffer"
            jid = s.job_id
            st = samples(d, jid, "step_time_s")
            sps = samples(d, jid, "samples_per_s")
            loss = samples(d, jid, "loss")
            pt = samples(d, jid, "phase_time_s")
            tok = samples(d, jid, "tokens")
        assert len(st) == 5 and len(sps) == 5 and len(loss) == 5 and len(tok) == 5, \
            (len(st), len(sps), len(loss), len(tok))
        for a, b in zip(st, sps):
            assert a["t"] == b["t"] and a["value"] > 0, (a, b)
            # Durations to the microsecond, the rate to what they allow.
            assert round(a["value"], 6) == a["value"], a
            assert abs(b["value"] - 8 / a["value"]) <= 8 * 1e-6 / a["value"] ** 2 / 2, (a, b)
        assert [x["value"] for x in loss] == [1.0 / (i + 1) for i in range(5)], loss
        assert all(x["value"] == 12.5 for x in tok), tok
        assert sorted(set(x["phase"] for x in pt)) == ["embedding", "lstm"], pt
        assert len(pt) == 10 and all(x["value"] >= 0.002 for x in pt), pt
        # A step's phases fit into the step.
        for a in st:
            mine = [x["value"] for x in pt if x["t"] == a["t"]]
            assert all(round(v, 6) == v for v in mine), mine
            # Each duration rounded to the microsecond: half a microsecond each way.
            assert sum(mine) <= a["value"] + 0.5e-6 * (len(mine) + 1), (mine, a)
        assert all(x["phase"] is None for x in st + sps + loss + tok)
        j = job(d, jid)
        assert j["phases"] == ["embedding", "lstm"], j
        for name in ("step_time_s", "samples_per_s", "loss", "tokens"):
            assert name in j["latest"], j["latest"]

    @tap.test("samples are buffered between flushes and one flush sends them in one request")
    def _():
        with dlprof.session(workload="unit-buffer", url=d.url, interval=3600) as s:
            before = clientlib.prometheus(d, "dlprofd_ingest_requests_total")
            steps(s, 20, phases=(), sleep=0)
            time.sleep(0.3)
            assert client_samples(d, s.job_id) == [], "samples were sent before a flush"
            assert s.flush()
            stored = client_samples(d, s.job_id)
            after = clientlib.prometheus(d, "dlprofd_ingest_requests_total")
        assert len([x for x in stored if x["name"] == "step_time_s"]) == 20, stored
        if before is None:
            raise AssertionError("/metrics has no dlprofd_ingest_requests_total")
        assert after - before == 1, (before, after)

    @tap.test("the background thread flushes on its own about every interval")
    def _():
        with dlprof.session(workload="unit-periodic", url=d.url, interval=0.1) as s:
            steps(s, 3, phases=())
            wait_until(lambda: len(samples(d, s.job_id, "step_time_s")) == 3, timeout=10)
            steps(s, 2, phases=())
            wait_until(lambda: len(samples(d, s.job_id, "step_time_s")) == 5, timeout=10)

    @tap.test("while the daemon measures a config it proposed, the session reports within the steps it asks")
    def _():
        knobs = {"intra_threads": {"values": [1, 2]}}
        with dlprof.session(workload="unit-report-within", url=d.url, interval=3600, knobs=knobs) as s:
            steps(s, 1, phases=())
            assert s.flush()
            # The answer asked for the next report within 2 steps (the first plan is
            # being measured): the next steps are sent with no flush, no interval.
            steps(s, 4, phases=())
            wait_until(lambda: len(samples(d, s.job_id, "step_time_s")) >= 3, timeout=10)

    @tap.test("after a flush and a step the session runs the config the daemon holds for the job")
    def _():
        with dlprof.session(workload="unit-config", url=d.url, interval=3600) as s:
            steps(s, 2, phases=())
            assert s.flush()
            s.step(samples=1)           # the boundary where a new config is adopted
            held = job(d, s.job_id)["config"]
            assert held == s.config, (held, s.config)
            # Without torch the client observes and reports the allocator.
            assert s.config.get("allocator") in (None, "default", "jemalloc"), s.config

    @tap.test("leaving the session sends the rest and ends the job with exit status 0")
    def _():
        with dlprof.session(workload="unit-end", url=d.url, interval=3600) as s:
            steps(s, 3, phases=("decoder",))
            jid = s.job_id
        j = job(d, jid)
        assert j["state"] == "ended" and j["exit_status"] == 0, j
        assert len(samples(d, jid, "step_time_s")) == 3
        assert len(samples(d, jid, "phase_time_s")) == 3

    @tap.test("an exception ends the job with exit status 1 and still propagates")
    def _():
        jid = None
        try:
            with dlprof.session(workload="unit-raise", url=d.url) as s:
                jid = s.job_id
                steps(s, 1, phases=())
                raise ValueError("boom")
        except ValueError:
            pass
        else:
            raise AssertionError("the exception was swallowed")
        j = job(d, jid)
        assert j["state"] == "ended" and j["exit_status"] == 1, j

    @tap.test("sys.exit(3) inside the session ends the job with exit status 3")
    def _():
        jid = None
        try:
            with dlprof.session(workload="unit-exit", url=d.url) as s:
                jid = s.job_id
                raise SystemExit(3)
        except SystemExit as e:
            assert e.code == 3
        j = job(d, jid)
        assert j["exit_status"] == 3, j

    @tap.test("DLPROF_JOB from a prologue: the session reuses that job and leaves it running")
    def _():
        reg = d.register("unit-prologue", external_id="slurm:4242")
        n_jobs = len(jobs(d))
        os.environ["DLPROF_JOB"] = str(reg["id"])
        try:
            with dlprof.session(workload="ignored", url=d.url, interval=3600) as s:
                assert s.job_id == reg["id"], (s.job_id, reg)
                steps(s, 2, phases=())
        finally:
            del os.environ["DLPROF_JOB"]
        assert len(jobs(d)) == n_jobs, "a new job was registered"
        j = job(d, reg["id"])
        assert j["state"] == "running", j
        assert len(samples(d, reg["id"], "step_time_s")) == 2

    @tap.test("DLPROF_JOB with end_job=True ends the reused job")
    def _():
        reg = d.register("unit-prologue-end")
        os.environ["DLPROF_JOB"] = str(reg["id"])
        try:
            with dlprof.session(url=d.url, end_job=True) as s:
                steps(s, 1, phases=())
        finally:
            del os.environ["DLPROF_JOB"]
        assert job(d, reg["id"])["state"] == "ended"

    @tap.test("DLPROF_URL and DLPROF_WORKLOAD from the environment are the defaults")
    def _():
        os.environ["DLPROF_URL"] = d.url
        os.environ["DLPROF_WORKLOAD"] = "unit-from-env"
        try:
            with dlprof.session() as s:
                assert job(d, s.job_id)["workload"] == "unit-from-env"
        finally:
            del os.environ["DLPROF_URL"], os.environ["DLPROF_WORKLOAD"]

    @tap.test("over the Unix socket (argument and DLPROF_SOCKET) the job belongs to our uid")
    def _():
        with dlprof.session(workload="unit-socket", socket=d.socket_path, interval=3600) as s:
            steps(s, 2, phases=("lstm",))
            assert s.flush()
            j = job(d, s.job_id)
            assert j["uid"] == os.getuid(), j
            assert len(samples(d, s.job_id, "phase_time_s")) == 2
        assert job(d, s.job_id)["state"] == "ended"
        os.environ["DLPROF_SOCKET"] = d.socket_path
        try:
            with dlprof.session(workload="unit-socket-env") as s:
                assert s.job_id is not None and job(d, s.job_id)["uid"] == os.getuid()
        finally:
            del os.environ["DLPROF_SOCKET"]

    @tap.test("knobs and objective are registered as declared")
    def _():
        knobs = {"intra_threads": {"min": 1, "max": 2},
                 "batch_size": {"values": [16, 32], "runtime": False}}
        with dlprof.session(workload="unit-knobs", url=d.url, knobs=knobs, objective="goodput") as s:
            j = job(d, s.job_id)
        assert j["knobs"] == knobs, j
        assert j["objective"] == "goodput", j

    @tap.test("bad metrics and phases are warned about once, left out, and the rest is stored")
    def _():
        with dlprof_log() as records:
            with dlprof.session(workload="unit-bad", url=d.url, interval=3600) as s:
                for _ in range(3):
                    with s.phase("bad\nphase"):
                        pass
                    with s.phase("ok phase"):
                        pass
                    bad = {"Bad Name": 1, "inf_metric": math.inf, "step_time_s": 3, "text": "x"}
                    s.step(samples="many", loss=float("nan"), good=2, **bad)
                assert s.flush()
                jid = s.job_id
        warned = warnings_in(records)
        assert len(warned) == 7, warned        # phase, samples, loss, Bad Name, inf, reserved, text
        names = sorted(set(x["name"] for x in client_samples(d, jid)))
        assert names == ["good", "phase_time_s", "step_time_s"], names
        assert set(x["phase"] for x in samples(d, jid, "phase_time_s")) == {"ok phase"}
        assert clientlib.prometheus(d, "dlprofd_ingest_rejected_total") in (None, 0.0)

    @tap.test("a registration the daemon refuses is warned about once; the job runs on")
    def _():
        with dlprof_log() as records:
            with dlprof.session(workload="unit-refused", params={"nested": [1, 2]}, url=d.url,
                                interval=0.05) as s:
                steps(s, 3, phases=("lstm",))
                time.sleep(0.3)
                steps(s, 2, phases=())
                assert s.job_id is None
        warned = warnings_in(records)
        assert len(warned) == 1 and "params" in warned[0], warned
        assert not [j for j in jobs(d) if j["workload"] == "unit-refused"]

    if os.geteuid() != 0:
        tap.skip("another uid's job over the socket: 403, one warning, the job runs on",
                 "needs root to run a job as another uid")
    else:
        @tap.test("another uid's job over the socket: 403, one warning, the job runs on")
        def _():
            with dlprof.session(workload="unit-owner", socket=d.socket_path, interval=3600) as s, \
                    clientlib.client_for_any_uid() as client:
                # The socket's directory is private to the test; let uid 65534 in.
                os.chmod(os.path.dirname(d.socket_path), 0o755)
                script = ("import dlprof\n"
                          "with dlprof.session(interval=3600) as t:\n"
                          "    for _ in range(3):\n"
                          "        t.step(samples=1)\n"
                          "    t.flush()\n"
                          "    t.step(samples=1)\n"
                          "    t.flush()\n"
                          "print('done')\n")
                env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": client,
                       "DLPROF_SOCKET": d.socket_path, "DLPROF_JOB": str(s.job_id)}
                p = subprocess.run([sys.executable, "-c", script], env=env, cwd="/",
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60,
                                   preexec_fn=lambda: (os.setgid(65534), os.setuid(65534)))
                err = p.stderr.decode()
                assert p.returncode == 0 and p.stdout.decode().strip() == "done", (p.returncode, err)
                lines = [x for x in err.splitlines() if x.startswith("dlprof:")]
                assert len(lines) == 1 and "403" in lines[0], err
                assert client_samples(d, s.job_id) == [], "another uid's samples were stored"
                assert job(d, s.job_id)["state"] == "running"

    @tap.test("params that are not JSON at all: one warning, the job runs on")
    def _():
        with dlprof_log() as records:
            with dlprof.session(workload="unit-unencodable", params={"model": object()}, url=d.url) as s:
                steps(s, 2, phases=("lstm",))
                assert s.job_id is None
        warned = warnings_in(records)
        assert len(warned) == 1 and "not JSON" in warned[0], warned

    @tap.test("a job ended by someone else: one warning, the job runs on")
    def _():
        with dlprof_log() as records:
            with dlprof.session(workload="unit-ended", url=d.url, interval=3600) as s:
                status, _, _ = d.post("/api/v1/jobs/%d/end" % s.job_id, {"exit_status": 0})
                assert status == 200
                steps(s, 2, phases=())
                s.flush()
                steps(s, 2, phases=())
                s.flush()
        warned = warnings_in(records)
        assert len(warned) == 1 and "409" in warned[0], warned



@tap.test("the client never imported torch (it only uses a torch the job imported)")
def _():
    assert "torch" not in sys.modules


tap.done()
