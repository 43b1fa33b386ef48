"""End to end: PyTorch jobs (LSTM inference, CNN training) under the client.

torch_job.py runs each model for about two seconds against the built
daemon; the test compares what the job saw (its report) with what the
daemon stored: the job and its end, the throughput series and phases, the
loss, and that torch ran the threads the daemon assigned at every step.
Then the same jobs run with the daemon down: they complete, unharmed, with
one warning.
"""

import json
import math
import os
import tempfile

import clientlib
from clientlib import Daemon, Tap, dlprof_lines, job, run_torch_job, samples

# The cases this file reports, its daemons' exits included; declared so a machine that cannot
# run it reports each of them skipped.
CASES = 7
tap = Tap(plan=CASES)

if not clientlib.has_torch():
    tap.skip_all("no torch for /usr/bin/python3 (Debian python3-torch)")

LSTM_PHASES = ["decoder", "embedding", "lstm"]
CNN_PHASES = ["backward", "data", "forward", "optimizer"]
# Declared knobs: the job's own range, so the daemon may choose either count.
THREAD_KNOBS = {"intra_threads": {"values": [1, 2]}, "interop_threads": {"values": [1]}}
CNN_KNOBS = dict(THREAD_KNOBS, dataloader_workers={"values": [1], "runtime": False})


def check_threads(report):
    """torch's threads equal the config in force at every step and phase."""
    checked = 0
    for st in report["steps"]:
        want = st["config"].get("intra_threads")
        if want is None:
            continue
        assert st["threads_begin"] == st["threads_end"] == want, st
        overrides = st["config"].get("phases", {})
        for name, threads in st["phases"].items():
            assert threads == overrides.get(name, {}).get("intra_threads", want), (name, st)
        checked += 1
    assert checked == len(report["steps"]), "steps without an assigned thread count: %d of %d" % (
        len(report["steps"]) - checked, len(report["steps"]))
    assert report["threads_after_steps"] == report["config_at_end"]["intra_threads"], report


def check_stored(d, report, phases):
    jid = report["job_id"]
    n = len(report["steps"])
    j = job(d, jid)
    assert j["state"] == "ended" and j["exit_status"] == 0, j
    assert j["phases"] == phases, j["phases"]
    sps = samples(d, jid, "samples_per_s")
    assert len(sps) == n, (len(sps), n)
    assert all(x["value"] > 0 and math.isfinite(x["value"]) for x in sps)
    by_phase = {}
    for x in samples(d, jid, "phase_time_s"):
        by_phase[x["phase"]] = by_phase.get(x["phase"], 0) + 1
    assert by_phase == {p: n for p in phases}, by_phase
    # The same through the API the dashboard reads.
    status, _, body = d.get("/api/v1/jobs/%d/series?name=samples_per_s" % jid)
    assert status == 200, (status, body)
    got = [p[1] for p in body["points"]]
    assert len(got) == n and all(math.isclose(a, x["value"], rel_tol=1e-9) for a, x in zip(got, sps)), \
        (got, [x["value"] for x in sps])
    for phase in phases:
        status, _, body = d.get("/api/v1/jobs/%d/series?name=phase_time_s&phase=%s" % (jid, phase))
        assert status == 200 and len(body["points"]) == n, (phase, status, body)
    return j, sps


with Daemon() as d:
    env = {"DLPROF_SOCKET": d.socket_path}

    @tap.test("LSTM inference under the client: job, throughput series, phases, ended")
    def _():
        rc, report, err = run_torch_job("lstm", env, "--knobs", json.dumps(THREAD_KNOBS))
        assert rc == 0 and report, (rc, err)
        assert dlprof_lines(err) == [], err
        assert report["job_id"] == report["job_id_at_end"] and report["job_id"] > 0, report
        j, sps = check_stored(d, report, LSTM_PHASES)
        assert j["workload"] == "lstm-infer" and j["params"] == {"batch": 16}, j
        assert j["uid"] == os.getuid(), j
        print("# lstm: %d steps in %.2f s, median %.0f samples/s" % (
            len(report["steps"]), report["seconds"], sorted(x["value"] for x in sps)[len(sps) // 2]))
        global lstm_report
        lstm_report = report

    @tap.test("LSTM: torch ran the intra-op threads the daemon assigned, at every step and phase")
    def _():
        check_threads(lstm_report)
        assert lstm_report["interop_threads"] == 1, lstm_report

    @tap.test("CNN training under the client: loss series, phases, DataLoader workers, ended")
    def _():
        rc, report, err = run_torch_job("cnn", env, "--knobs", json.dumps(CNN_KNOBS))
        assert rc == 0 and report, (rc, err)
        assert dlprof_lines(err) == [], err
        j, _ = check_stored(d, report, CNN_PHASES)
        assert j["objective"] == "goodput", j
        loss = samples(d, report["job_id"], "loss")
        assert [x["value"] for x in loss] == [st["loss"] for st in report["steps"]], "loss series differs"
        assert report["dataloader_workers"] == 1 and report["env_dataloader_workers"] == "1", report
        global cnn_report
        cnn_report = report

    @tap.test("CNN: torch ran the intra-op threads the daemon assigned, at every step and phase")
    def _():
        check_threads(cnn_report)

    for kind in ("lstm", "cnn"):
        @tap.test("%s with the daemon down: completes unharmed, one warning, threads untouched" % kind)
        def _():
            down = tempfile.mkdtemp(prefix="dlprof-down-")
            try:
                rc, report, err = run_torch_job(kind, {"DLPROF_SOCKET": os.path.join(down, "none.sock")},
                                                "--knobs", json.dumps(CNN_KNOBS), "--seconds", "1")
            finally:
                os.rmdir(down)
            assert rc == 0 and report, (rc, err)
            lines = dlprof_lines(err)
            assert len(lines) == 1 and "not answering" in lines[0], err
            assert report["job_id"] is None and report["config_at_end"] == {}, report
            assert len(report["steps"]) >= 5, len(report["steps"])
            threads = {report["threads_before"], report["threads_after_steps"]}
            threads.update(st["threads_begin"] for st in report["steps"])
            assert threads == {report["threads_before"]}, threads
            assert report["dataloader_workers"] is None and report["env_dataloader_workers"] is None

tap.done()
