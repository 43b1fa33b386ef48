"""dlprofctl against the real daemon: every command over TCP and the Unix
socket, tables and --json, the errors the daemon returns, and the exit
codes when the daemon is down, refuses, or never answers.  TAP output."""

import json
import os
import socket
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from harness import BUILDDIR, Daemon, Tap  # noqa: E402

CTL = os.path.join(BUILDDIR, "tools", "dlprofctl")
EXIT_OK, EXIT_REFUSED, EXIT_USAGE, EXIT_DOWN = 0, 1, 2, 3

tap = Tap()


def ctl(*args, env=None, timeout=30):
    """Runs dlprofctl; returns (exit code, stdout, stderr)."""
    full_env = dict(os.environ)
    for name in ("DLPROF_URL", "DLPROF_SOCKET", "DLPROF_TOKEN"):
        full_env.pop(name, None)
    full_env.update(env or {})
    p = subprocess.run([CTL] + list(args), capture_output=True, text=True, env=full_env,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def expect(result, code):
    rc, out, err = result
    assert rc == code, "exit %d, wanted %d\nstdout: %s\nstderr: %s" % (rc, code, out, err)
    return out, err


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


if not os.access(CTL, os.X_OK):
    tap.bail("dlprofctl not built: %s" % CTL)


@tap.test("--help prints the commands and exits 0")
def _():
    out, _ = expect(ctl("--help"), EXIT_OK)
    for word in ("status", "jobs", "job JOB", "workloads", "recommend", "report", "end"):
        assert word in out, word


@tap.test("--version names the program")
def _():
    out, _ = expect(ctl("--version"), EXIT_OK)
    assert out.startswith("dlprofctl "), out


@tap.test("usage errors exit 2 with a hint")
def _():
    for args in ([], ["frobnicate"], ["job"], ["job", "abc"], ["report", "1", "novalue"],
                 ["report", "1", "x=notanumber"], ["recommend", "w", "--format", "yaml"],
                 ["--url", "http://x", "--socket", "/x", "status"], ["--timeout", "-1", "status"],
                 ["jobs", "--state", "sleeping"], ["--bogus", "status"], ["export"],
                 ["export", "1", "--from", "yesterday"], ["export", "1", "--step", "0"],
                 ["export", "1", "--from", "-1h", "--to", "-2h"]):
        _, err = expect(ctl(*args), EXIT_USAGE)
        assert "dlprofctl:" in err and "--help" in err, (args, err)


with Daemon() as d:
    tcp = ["--url", "127.0.0.1:%d" % d.port]          # http:// added by dlprofctl
    unix = ["--socket", d.socket_path]

    @tap.test("status over HTTP: up, with the node")
    def _():
        out, _ = expect(ctl(*tcp, "status"), EXIT_OK)
        lines = dict(line.split(None, 1) for line in out.splitlines() if line.strip() and "  " in line)
        assert lines["daemon"].startswith("up"), out
        _, _, node = d.get("/api/v1/node")
        assert lines["hostname"] == node["hostname"], out
        assert "COLLECTOR" in out and "proc" in out, out

    @tap.test("status over the Unix socket")
    def _():
        out, _ = expect(ctl(*unix, "status"), EXIT_OK)
        assert "unix:" + d.socket_path in out, out

    @tap.test("status --json: healthy, node, running count")
    def _():
        out, _ = expect(ctl(*unix, "--json", "status"), EXIT_OK)
        doc = json.loads(out)
        assert doc["healthy"] is True and doc["node"]["hostname"], doc
        # The daemon may discover Slurm jobs of other suites running beside this one:
        # compare with what the API itself counts rather than with zero.
        _, _, jobs = d.get("/api/v1/jobs?state=running")
        assert doc["running_jobs"] == len(jobs["jobs"]), (doc["running_jobs"], jobs)

    @tap.test("DLPROF_SOCKET and DLPROF_URL choose the daemon")
    def _():
        expect(ctl("status", env={"DLPROF_SOCKET": d.socket_path}), EXIT_OK)
        expect(ctl("status", env={"DLPROF_URL": d.url}), EXIT_OK)

    @tap.test("jobs --all with no jobs says 'no jobs'")
    def _():
        def none():
            return not d.get("/api/v1/jobs?state=all")[2]["jobs"]
        # Discovery may find another suite's Slurm job: only an empty daemon decides.
        if none():
            out, _ = expect(ctl(*tcp, "jobs", "--all"), EXIT_OK)
            assert out.strip() == "no jobs" or not none(), out

    job = d.register("ctl-test", params={"batch": 8}, external_id="slurm:4242")
    jid = job["id"]

    @tap.test("jobs lists the running job in a table")
    def _():
        out, _ = expect(ctl(*tcp, "jobs"), EXIT_OK)
        header, *rows = out.splitlines()
        assert header.split()[:4] == ["ID", "WORKLOAD", "STATE", "EXTERNAL"], header
        row = [r.split() for r in rows if r.split()[0] == str(jid)]
        assert row and row[0][1:4] == ["ctl-test", "running", "slurm:4242"], out

    @tap.test("jobs --json is the daemon's list")
    def _():
        out, _ = expect(ctl(*unix, "--json", "jobs"), EXIT_OK)
        _, _, body = d.get("/api/v1/jobs?state=running")
        assert json.loads(out) == body, (out, body)

    @tap.test("job ID and job by external id show the same job")
    def _():
        by_id, _ = expect(ctl(*tcp, "job", str(jid)), EXIT_OK)
        by_ext, _ = expect(ctl(*tcp, "job", "slurm:4242"), EXIT_OK)
        assert by_id == by_ext, (by_id, by_ext)
        fields = dict(line.split(None, 1) for line in by_id.splitlines() if line.strip())
        assert fields["workload"] == "ctl-test" and fields["params"] == "batch=8", by_id

    @tap.test("report sends samples the daemon keeps")
    def _():
        out, _ = expect(ctl(*unix, "report", str(jid), "samples_per_s=3.5", "step_time_s=0.25",
                            "--phase", "fwd"), EXIT_OK)
        assert "accepted 2" in out, out
        _, _, body = d.get("/api/v1/jobs/%d" % jid)
        assert body["latest"]["samples_per_s"] == 3.5, body["latest"]

    @tap.test("export: the job's record as JSON to a file, its series as CSV, as the API gives them")
    def _():
        import tempfile
        import time
        now = time.time()
        q = "from=%.3f&to=%.3f&step=1" % (now - 600, now + 1)
        _, _, want = d.get("/api/v1/jobs/%d/record?format=json&%s" % (jid, q))
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "job.json")
            _, err = expect(ctl(*tcp, "export", "slurm:4242", "--from", "%.3f" % (now - 600),
                                "--to", "%.3f" % (now + 1), "--step", "1", "-o", path), EXIT_OK)
            assert "written to " + path in err, err
            with open(path) as f:
                doc = json.load(f)
            assert not os.path.exists(path + ".part")
        assert doc["job"]["id"] == jid and doc["job"]["workload"] == "ctl-test", doc["job"]
        assert doc["series"] == want["series"], (doc["series"], want["series"])
        got = {(s["name"], s["phase"]): s["points"] for s in doc["series"]}
        assert [p[1] for p in got[("samples_per_s", "fwd")]] == [3.5], got
        assert doc["timeline"][0]["kind"] == "started", doc["timeline"]
        assert "verdicts" in (doc["report"] or {"verdicts": []}), doc["report"]
        out, _ = expect(ctl(*unix, "export", str(jid), "--csv", "--from", "-10m"), EXIT_OK)
        header, *rows = out.splitlines()
        assert header == "name,phase,label,unit,t,value", header
        assert any(r.startswith('samples_per_s,"fwd","",samples/s,') and r.endswith(",3.5") for r in rows), out

    @tap.test("a refused request exits 1 with the daemon's error")
    def _():
        _, err = expect(ctl(*tcp, "job", "999999"), EXIT_REFUSED)
        assert "404" in err and "not_found" in err, err
        _, err = expect(ctl(*tcp, "report", str(jid), "Bad-Name=1"), EXIT_REFUSED)
        assert "400" in err, err
        _, err = expect(ctl(*tcp, "end", "slurm:0"), EXIT_REFUSED)
        assert "no running job" in err, err

    @tap.test("workloads prints a table or says there are none")
    def _():
        out, _ = expect(ctl(*tcp, "workloads"), EXIT_OK)
        assert out.startswith("WORKLOAD") or out.startswith("no workloads"), out

    @tap.test("recommend --format env prints the daemon's export lines")
    def _():
        status, _, env_body = d.get("/api/v1/recommend?workload=ctl-test&format=env&batch=8")
        assert status == 200, (status, env_body)
        out, _ = expect(ctl(*unix, "recommend", "ctl-test", "batch=8", "--format", "env"), EXIT_OK)
        text = env_body.decode() if isinstance(env_body, bytes) else env_body
        assert out.strip() == text.strip(), (out, text)
        assert "export OMP_NUM_THREADS=" in out, out

    @tap.test("recommend prints the config as a table")
    def _():
        out, _ = expect(ctl(*tcp, "recommend", "ctl-test"), EXIT_OK)
        assert "KNOB" in out and "intra_threads" in out, out

    @tap.test("end by external id ends the job with its exit status")
    def _():
        out, _ = expect(ctl(*unix, "end", "slurm:4242", "--exit-status", "3"), EXIT_OK)
        assert out.strip() == "job %d ended" % jid, out
        _, _, body = d.get("/api/v1/jobs/%d" % jid)
        assert body["state"] == "ended" and body["exit_status"] == 3, body

    @tap.test("end --exit-status reaches a job that ended without one (discovery before the Epilog)")
    def _():
        early = d.register("ctl-test", external_id="slurm:4343")["id"]
        status, _, body = d.post("/api/v1/jobs/%d/end" % early, {})
        assert status == 200, body
        _, err = expect(ctl(*unix, "end", "slurm:4343"), EXIT_REFUSED)
        assert "no running job" in err, err
        out, _ = expect(ctl(*unix, "end", "slurm:4343", "--exit-status", "7"), EXIT_OK)
        assert out.strip() == "job %d ended" % early, out
        _, _, body = d.get("/api/v1/jobs/%d" % early)
        assert body["state"] == "ended" and body["exit_status"] == 7, body
        # An exit status once known is kept: a second Epilog does not overwrite it.
        expect(ctl(*unix, "end", "slurm:4343", "--exit-status", "9"), EXIT_REFUSED)
        assert d.get("/api/v1/jobs/%d" % early)[2]["exit_status"] == 7

    @tap.test("jobs --all lists ended jobs; jobs does not")
    def _():
        out, _ = expect(ctl(*tcp, "jobs", "--all"), EXIT_OK)
        assert any(r.split()[:3] == [str(jid), "ctl-test", "ended"] for r in out.splitlines()), out
        out, _ = expect(ctl(*tcp, "jobs"), EXIT_OK)
        # Discovery may list Slurm jobs of suites running beside this one: ours must be gone.
        assert not any(r.split()[:1] == [str(jid)] for r in out.splitlines()), out
        assert out.strip() == "no running jobs" or out.startswith("ID "), out

    dead_url = d.url
    dead_socket = d.socket_path

# The daemon is stopped now.


@tap.test("daemon down over HTTP: exit 3 and a clear message")
def _():
    _, err = expect(ctl("--url", dead_url, "status"), EXIT_DOWN)
    assert "cannot reach dlprofd at " + dead_url in err, err


@tap.test("daemon down over the socket: exit 3 naming the socket")
def _():
    _, err = expect(ctl("--socket", dead_socket, "jobs"), EXIT_DOWN)
    assert "unix:" + dead_socket in err, err


@tap.test("every command exits 3 when nobody listens")
def _():
    url = "http://127.0.0.1:%d" % free_port()
    for args in (["status"], ["jobs"], ["job", "1"], ["job", "slurm:1"], ["workloads"],
                 ["recommend", "w"], ["report", "1", "x=1"], ["end", "slurm:1"]):
        expect(ctl("--url", url, *args), EXIT_DOWN)


@tap.test("a daemon that never answers: exit 3 after --timeout")
def _():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(8)        # accepts connections (the kernel does), never answers
    try:
        _, err = expect(ctl("--url", "127.0.0.1:%d" % s.getsockname()[1], "--timeout", "0.3",
                            "status"), EXIT_DOWN)
        assert "cannot reach" in err, err
    finally:
        s.close()


tap.done()
