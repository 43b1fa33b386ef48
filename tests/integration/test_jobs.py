"""Who may claim a job, and what is stored once, against the built daemon.

As another uid (65534, from a forked child that reads nothing of the
checkout) over the Unix socket and over loopback TCP: registering root's
process is refused (403), a pid that names no process too (400), its own
process is registered as its job; a job registered over TCP belongs to its
caller, so another uid cannot end it; adopting another uid's job by its
external id is refused and the owner stays.  A numbered metrics batch sent
twice is stored and counted once.  A reader from another host without the
token sees no command lines (in a network namespace pair; needs root).
The uid cases need root and fail without it, as test_api.py's do.
"""

import http.client
import json
import os
import re
import sqlite3
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "reliability"))
from harness import Daemon, Tap, UnixHTTPConnection, as_uid, staged_samples  # noqa: E402
from common import NetPair  # noqa: E402

NOBODY = 65534
OTHER = 65533
tap = Tap()


def call(d, unix, method, path, body=None):
    """One request to d over the socket or loopback TCP; (status, JSON body)."""
    conn = UnixHTTPConnection(d.socket_path) if unix else http.client.HTTPConnection("127.0.0.1", d.port,
                                                                                     timeout=10)
    try:
        data = json.dumps(body).encode() if body is not None else None
        conn.request(method, path, body=data, headers={"Content-Type": "application/json"} if data else {})
        r = conn.getresponse()
        raw = r.read()
        return r.status, (json.loads(raw) if raw else None)
    finally:
        conn.close()


def owner(d, job_id):
    status, _, body = d.get("/api/v1/jobs/%d" % job_id)
    assert status == 200, (status, body)
    return body["uid"]


def stored(d, job_id):
    db = sqlite3.connect("file:%s?mode=ro" % d.db, uri=True, timeout=10)
    try:
        return len(staged_samples(db, job_id, "samples_per_s"))
    finally:
        db.close()


def ingested(d):
    status, _, body = d.get("/metrics")
    for line in body.decode().splitlines():
        if line.startswith("dlprofd_ingest_samples_total "):
            return float(line.split()[1])
    raise AssertionError("no dlprofd_ingest_samples_total")


def claims(d, unix):
    daemon_pid = d.proc.pid

    def attempt():
        out = {}
        out["root"] = call(d, unix, "POST", "/api/v1/jobs", {"workload": "steal", "pid": daemon_pid})
        out["init"] = call(d, unix, "POST", "/api/v1/jobs", {"workload": "steal", "pid": 1})
        # The highest pid the kernel may hand out, plus one: never a process.
        with open("/proc/sys/kernel/pid_max") as f:
            ghost = min(int(f.read()) + 1, 4194304)
        out["ghost"] = call(d, unix, "POST", "/api/v1/jobs", {"workload": "ghost", "pid": ghost})
        out["own"] = call(d, unix, "POST", "/api/v1/jobs", {"workload": "own", "pid": os.getpid()})
        return out
    return as_uid(NOBODY, attempt)


with Daemon() as d:
    for unix, how in ((True, "the Unix socket"), (False, "loopback TCP")):
        @tap.test("over %s another uid may not register root's processes: 403" % how)
        def _():
            res = claims(d, unix)
            for key in ("root", "init"):
                status, body = res[key]
                assert status == 403 and body["error"] == "forbidden", (key, res[key])
                assert "another user" in body["detail"], body
            status, _, body = d.get("/api/v1/jobs?state=all")
            assert not [j for j in body["jobs"] if j["workload"] == "steal"], body

        @tap.test("over %s a pid that names no process: 400, nothing registered" % how)
        def _():
            status, body = claims(d, unix)["ghost"]
            assert status == 400 and body["error"] == "no_such_process", (status, body)

        @tap.test("over %s a uid registers its own process; the job is that uid's" % how)
        def _():
            status, body = claims(d, unix)["own"]
            assert status == 201, (status, body)
            assert owner(d, body["id"]) == NOBODY

    @tap.test("root may register another user's process; the job is that user's")
    def _():
        child = subprocess.Popen(["sleep", "60"], preexec_fn=lambda: (os.setgid(NOBODY), os.setuid(NOBODY)))
        try:
            status, body = call(d, False, "POST", "/api/v1/jobs", {"workload": "prologue", "pid": child.pid})
            assert status == 201, (status, body)
            assert owner(d, body["id"]) == NOBODY
        finally:
            child.kill()
            child.wait()

    @tap.test("over loopback TCP a job belongs to its caller: another uid may not end it")
    def _():
        status, body = call(d, False, "POST", "/api/v1/jobs", {"workload": "root-tcp"})
        assert status == 201, (status, body)
        job = body["id"]
        assert owner(d, job) == 0
        status, body = as_uid(NOBODY, lambda: call(d, False, "POST", "/api/v1/jobs/%d/end" % job, {}))
        assert status == 403 and body["error"] == "forbidden", (status, body)
        status, body = as_uid(NOBODY, lambda: call(d, False, "POST", "/api/v1/jobs/%d/metrics" % job,
                                                   {"samples": []}))
        assert status == 403, (status, body)
        assert d.get("/api/v1/jobs/%d" % job)[2]["state"] == "running"

    @tap.test("adopting another uid's job by external id: 403, the owner stays")
    def _():
        first = {"workload": "mine", "external_id": "slurm:777"}
        second = {"workload": "theirs", "external_id": "slurm:777"}
        status, body = as_uid(NOBODY, lambda: call(d, True, "POST", "/api/v1/jobs", first))
        assert status == 201, (status, body)
        job = body["id"]
        status, body = as_uid(OTHER, lambda: call(d, True, "POST", "/api/v1/jobs", second))
        assert status == 403 and body["error"] == "forbidden", (status, body)
        view = d.get("/api/v1/jobs/%d" % job)[2]
        assert view["uid"] == NOBODY and view["workload"] == "mine", view
        # The owner itself (and root) still adopt it.
        status, body = as_uid(NOBODY, lambda: call(d, True, "POST", "/api/v1/jobs", first))
        assert status == 200 and body["adopted"] and body["id"] == job, (status, body)
        status, body = call(d, True, "POST", "/api/v1/jobs", first)
        assert status == 200 and body["id"] == job and owner(d, job) == NOBODY, (status, body)
        status, body = as_uid(NOBODY, lambda: call(d, True, "POST", "/api/v1/jobs/%d/end" % job, {}))
        assert status == 200, (status, body)

    @tap.test("a numbered batch sent twice is stored and counted once; the resend answers duplicate")
    def _():
        job = d.register("once")["id"]
        before = ingested(d)
        batch = {"samples": [{"t": time.time(), "name": "samples_per_s", "value": 12.5}],
                 "config": {}, "seq": 1, "stream": "test"}
        status, _, first = d.post("/api/v1/jobs/%d/metrics" % job, batch)
        assert status == 200 and first["accepted"] == 1 and first["duplicate"] is False, first
        status, _, again = d.post("/api/v1/jobs/%d/metrics" % job, batch)
        assert status == 200 and again["accepted"] == 0 and again["duplicate"] is True, again
        assert isinstance(again["config"], dict), again
        assert stored(d, job) == 1 and ingested(d) - before == 1, (stored(d, job), ingested(d) - before)
        batch["seq"] = 2
        status, _, third = d.post("/api/v1/jobs/%d/metrics" % job, batch)
        assert status == 200 and third["duplicate"] is False and stored(d, job) == 2, third

    @tap.test("a bad seq or stream is a 400 naming it")
    def _():
        job = d.register("bad-seq")["id"]
        for bad, field in (({"seq": 0}, "seq"), ({"seq": "1"}, "seq"), ({"seq": 1.5}, "seq"),
                           ({"seq": 1, "stream": ""}, "stream"), ({"stream": "x"}, "stream"),
                           ({"seq": 1, "stream": "a\nb"}, "stream")):
            body = dict({"samples": []}, **bad)
            status, _, answer = d.post("/api/v1/jobs/%d/metrics" % job, body)
            assert status == 400 and answer["detail"].startswith(field), (bad, status, answer)


def remote_reader():
    """A daemon in a namespace of its own, read from another one without the token."""
    class NsDaemon(Daemon):
        def __init__(self, net):
            super().__init__(args=["--listen", NetPair.SERVER + ":0"])
            self.net = net

        def command(self):
            return self.net.server_cmd() + super().command()

    with NetPair("dlj%d" % os.getpid()) as net, NsDaemon(net) as d:
        rport = int(re.search(r"listening on 192\.0\.2\.1:(\d+)", d.log()).group(1))
        secret = "/home/alice/train.py --data /home/alice/private --api-key s3cr3t"
        status, _, body = d.post("/api/v1/jobs", {"workload": "private", "command": secret}, unix=True)
        assert status == 201, (status, body)
        job = body["id"]

        def read(path, host=NetPair.SERVER, port=rport):
            conn = http.client.HTTPConnection(host, port, timeout=10)
            try:
                conn.request("GET", path)
                r = conn.getresponse()
                return r.status, r.read().decode()
            finally:
                conn.close()

        @tap.test("read_access = any: a reader on the network sees jobs but no command line")
        def _():
            for path in ("/api/v1/jobs", "/api/v1/jobs/%d" % job, "/api/v1/jobs?state=all", "/metrics",
                         "/api/v1/workloads", "/api/v1/node"):
                status, text = net.in_client(lambda: read(path))
                assert status == 200, (path, status, text[:200])
                assert "alice" not in text and "s3cr3t" not in text, (path, text[:400])
            status, text = net.in_client(lambda: read("/api/v1/jobs/%d" % job))
            view = json.loads(text)
            assert view["workload"] == "private" and view["command"] is None, view

        @tap.test("local readers still see the command line")
        def _():
            status, text = net.in_server(lambda: read("/api/v1/jobs/%d" % job, "127.0.0.1", d.port))
            assert status == 200 and json.loads(text)["command"] == secret, text
            assert d.get("/api/v1/jobs/%d" % job, unix=True)[2]["command"] == secret


if os.geteuid() != 0:
    tap.skip("a reader on the network sees no command line", "needs root to create network namespaces")
else:
    try:
        remote_reader()
    except OSError as e:
        tap.skip("a reader on the network sees no command line", "no network namespaces here: %s" % e)
tap.done()
