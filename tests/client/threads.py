"""The client applies the config the daemon assigns to torch (in fresh processes).

Each case runs a short script under /usr/bin/python3 with Debian's torch,
since torch allows inter-op threads to be set only once per process: the
threads assigned at start, inter-op threads refused after parallel work
started, torch imported after the session opened, and switching at step
boundaries (never inside a step).  Per-phase overrides are checked
against a scripted stand-in for the daemon: the real tuner assigns one
only when a phase's own measurements call for it, which a short run
cannot force.
"""

import http.server
import json
import os
import socketserver
import tempfile
import textwrap
import threading

import clientlib
from clientlib import Daemon, Tap, dlprof_lines, job, run_script

# The cases this file reports, its daemons' exits included; declared so a machine that cannot
# run it reports each of them skipped.
CASES = 7
tap = Tap(plan=CASES)

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
    tap.skip_all("no torch for /usr/bin/python3 (Debian python3-torch)")

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
                    for name in ("embedding", "lstm", "decoder"):
                        with s.phase(name):
                            for _ in range(3):
                                a @ a
                    end = torch.get_num_threads()
                    s.step(samples=64)
                    record.append([config.get("intra_threads"), begin, end])
                    if i >= 20 and len(set(c for c, _, _ in record)) >= 2:
                        break
            out(record=record)
        """)
        assert log == [], log
        for want, begin, end in r["record"]:
            assert begin == end == want, (want, begin, end)
        counts = [c for c, _, _ in r["record"]]
        print("# %d steps, thread counts assigned: %s" % (len(counts), sorted(set(counts))))
        assert len(set(counts)) == 2, "the daemon never assigned the other thread count"


class ScriptedDaemon(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """Answers the client's calls on a Unix socket with configs from a script:
    registration gets configs[0]; each metrics post the next one (the last
    one stays).  It keeps the bodies posted, to check what the job reported."""

    daemon_threads = True

    def __init__(self, path, configs):
        self.configs = configs
        self.posted = []
        self.lock = threading.Lock()
        super().__init__(path, ScriptedHandler)


class ScriptedHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def address_string(self):
        return "unix"

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        srv = self.server
        with srv.lock:
            if self.path == "/api/v1/jobs":
                status, answer = 201, {"id": 7, "state": "running", "config": srv.configs[0]}
            elif self.path == "/api/v1/jobs/7/metrics":
                srv.posted.append(body)
                config = srv.configs[min(len(srv.posted), len(srv.configs) - 1)]
                status, answer = 200, {"accepted": len(body.get("samples", [])), "config": config}
            else:
                status, answer = 200, {"id": 7, "state": "ended"}
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@tap.test("per-phase overrides apply on entering a phase (nested ones too), end on leaving it, "
          "change at step boundaries, and are reported with the steps they ran")
def _():
    configs = [{"intra_threads": 1, "phases": {"lstm": {"intra_threads": 2}}},
               {"intra_threads": 2, "phases": {"decoder": {"intra_threads": 1}}}]
    with tempfile.TemporaryDirectory(prefix="dlprof-threads-") as tmp:
        path = os.path.join(tmp, "d.sock")
        srv = ScriptedDaemon(path, configs)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        try:
            rc, stdout, stderr = run_script(["-c", PRELUDE + textwrap.dedent("""
                import torch
                record = []
                with dlprof.session(workload="threads-phases", interval=0.02) as s:
                    deadline = time.monotonic() + 60
                    while time.monotonic() < deadline:
                        config = s.config
                        seen = {"top": torch.get_num_threads()}
                        for name in ("embedding", "lstm", "decoder"):
                            with s.phase(name):
                                seen[name] = torch.get_num_threads()
                                if name == "lstm":
                                    with s.phase("cell"):
                                        seen["cell"] = torch.get_num_threads()
                        seen["after"] = torch.get_num_threads()
                        s.step(samples=8)
                        record.append([config, seen])
                        time.sleep(0.005)
                        if len(record) >= 5 and config == %s:
                            break
                out(record=record)
            """ % json.dumps(configs[1]))], env={"DLPROF_SOCKET": path})
        finally:
            srv.shutdown()
            srv.server_close()
    assert rc == 0, (rc, stderr)
    assert dlprof_lines(stderr) == [], stderr
    record = json.loads([x for x in stdout.splitlines() if x.startswith("RESULT ")][0][7:])["record"]
    assert [c for c, _ in record][0] == configs[0], record[0]
    assert record[-1][0] == configs[1], "the second config never applied: %s" % record[-1]
    for config, seen in record:
        top = config["intra_threads"]
        want = {name: config["phases"].get(name, {}).get("intra_threads", top)
                for name in ("embedding", "lstm", "decoder")}
        want.update(top=top, after=top, cell=want["lstm"])
        assert seen == want, (config, seen)
    # Each post says the threads its steps ran (besides what else the job runs
    # with: inter-op threads, affinity, allocator), its phases' overrides included.
    reported = [(b["config"].get("intra_threads"), b["config"].get("phases"))
                for b in srv.posted if b.get("samples")]
    for config in configs:
        assert (config["intra_threads"], config["phases"]) in reported, reported


tap.done()
