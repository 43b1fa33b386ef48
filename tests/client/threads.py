"""The client applies the config the daemon assigns to torch (in fresh processes).

Each case runs a short script under /usr/bin/python3 with Debian's torch,
since torch allows inter-op threads to be set only once per process: the
threads assigned at start, inter-op threads refused after parallel work
started, torch imported after the session opened, and switching at step
boundaries (never inside a step) with per-phase overrides.
"""

import json
import textwrap

import clientlib
from clientlib import Daemon, Tap, dlprof_lines, job, run_script

tap = Tap()

PRELUDE = textwrap.dedent("""
    import json, os, sys, time
    import dlprof
    def out(**kw):
        print("RESULT " + json.dumps(kw), flush=True)
""")


def run(d, body, env=None):
    """Runs PRELUDE + body; returns (result dict, dlprof log lines)."""
    full = {"DLPROF_SOCKET": d.socket_path}
    full.update(env or {})
    rc, stdout, stderr = run_script(["-c", PRELUDE + textwrap.dedent(body)], env=full)
    assert rc == 0, (rc, stderr)
    lines = [line[len("RESULT "):] for line in stdout.splitlines() if line.startswith("RESULT ")]
    assert len(lines) == 1, stdout
    return json.loads(lines[0]), dlprof_lines(stderr)


if not clientlib.has_torch():
    tap.skip("threads", "no torch for /usr/bin/python3 (Debian python3-torch)")
    tap.done()

with Daemon() as d:
    @tap.test("the threads assigned at registration are torch's intra- and inter-op threads")
    def _():
        r, log = run(d, """
            import torch
            knobs = {"intra_threads": {"values": [2]}, "interop_threads": {"values": [2]}}
            with dlprof.session(workload="threads-start", knobs=knobs, interval=3600) as s:
                out(config=s.config, intra=torch.get_num_threads(),
                    interop=torch.get_num_interop_threads(), job=s.job_id)
        """)
        assert log == [], log
        assert r["config"].get("intra_threads") == 2, r
        assert r["config"].get("interop_threads") == 2, r
        assert r["intra"] == 2 and r["interop"] == 2, r
        assert job(d, r["job"])["state"] == "ended"

    @tap.test("inter-op threads after parallel work started: one warning, torch keeps its own")
    def _():
        r, log = run(d, """
            import torch
            torch.set_num_interop_threads(1)       # what a job might do first
            knobs = {"intra_threads": {"values": [2]}, "interop_threads": {"values": [2]}}
            with dlprof.session(workload="threads-late-interop", knobs=knobs, interval=3600) as s:
                s.step(samples=1)
                out(intra=torch.get_num_threads(), interop=torch.get_num_interop_threads())
        """)
        assert r == {"intra": 2, "interop": 1}, r
        assert len(log) == 1 and "inter-op" in log[0], log

    @tap.test("DLPROF_INTEROP_THREADS from a prologue applies when the daemon assigns none")
    def _():
        r, log = run(d, """
            import torch
            with dlprof.session(workload="threads-env-interop", interval=3600) as s:
                out(interop=torch.get_num_interop_threads(), job=s.job_id)
        """, env={"DLPROF_INTEROP_THREADS": "2", "DLPROF_SOCKET": d.socket_path + ".absent"})
        assert r == {"interop": 2, "job": None}, r
        assert len(log) == 1 and "not answering" in log[0], log

    @tap.test("torch imported after the session opened still runs the assigned threads")
    def _():
        r, log = run(d, """
            knobs = {"intra_threads": {"values": [2]}}
            with dlprof.session(workload="threads-late-import", knobs=knobs, interval=3600) as s:
                env = os.environ.get("OMP_NUM_THREADS")
                import torch
                s.step(samples=1)
                out(env=env, intra=torch.get_num_threads())
        """, env={"OMP_NUM_THREADS": "1"})
        assert r == {"env": "2", "intra": 2}, r
        assert log == [], log

    # The daemon's tuner explores the whole-job thread count first, then,
    # once confident, per phase: the job runs until it has seen both (or a
    # bounded number of steps), recording every step and phase on the way.
    switch = {}

    @tap.test("new threads apply at step boundaries only, never inside a step")
    def _():
        r, log = run(d, """
            import torch
            knobs = {"intra_threads": {"values": [1, 2]}}
            a = torch.randn(64, 64)
            record = []
            with dlprof.session(workload="threads-switch", knobs=knobs, interval=0.02) as s:
                for i in range(3000):
                    config = s.config
                    begin = torch.get_num_threads()
                    phases = {}
                    for name in ("embedding", "lstm", "decoder"):
                        with s.phase(name):
                            phases[name] = torch.get_num_threads()
                            for _ in range(3):
                                a @ a
                    end = torch.get_num_threads()
                    s.step(samples=64)
                    record.append([config, begin, end, phases])
                    if (i >= 20 and "phases" in config
                            and len(set(c.get("intra_threads") for c, _, _, _ in record)) >= 2):
                        break
            out(record=record)
        """)
        assert log == [], log
        record = switch["record"] = r["record"]
        configs = []
        for config, begin, end, _ in record:
            assert begin == end == config["intra_threads"], (config, begin, end)
            if config not in configs:
                configs.append(config)
        print("# %d steps, %d configs: %s" % (len(record), len(configs), json.dumps(configs)))
        assert len(set(c["intra_threads"] for c in configs)) == 2, \
            "the daemon never assigned the other thread count: %s" % configs

    record = switch.get("record", [])
    if record and not any(config.get("phases") for config, _, _, _ in record):
        tap.skip("per-phase overrides apply on entering a phase and end on leaving it",
                 "the daemon assigned no per-phase override within the run")
    else:
        @tap.test("per-phase overrides apply on entering a phase and end on leaving it")
        def _():
            assert record, "no steps recorded"
            for config, _, _, phases in record:
                overrides = config.get("phases", {})
                for name, threads in phases.items():
                    want = overrides.get(name, {}).get("intra_threads", config["intra_threads"])
                    assert threads == want, (name, threads, config)

tap.done()
