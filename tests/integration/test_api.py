"""The core REST API against the built daemon: every endpoint, every error
status, ownership over the Unix socket, persistence across a restart,
signals and command-line errors."""

import json
import os
import signal
import socket
import subprocess
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from harness import DAEMON, Daemon, Tap, UnixHTTPConnection, as_uid, wait_until  # noqa: E402

tap = Tap()
workdir = tempfile.mkdtemp(prefix="dlprof-api-")


def now():
    return time.time()


with Daemon(workdir=workdir) as d:
    @tap.test("GET /healthz answers 200 ok")
    def _():
        status, hdrs, body = d.get("/healthz")
        assert status == 200 and body == b"ok\n", (status, body)

    @tap.test("GET /api/v1/node describes the topology")
    def _():
        status, _, node = d.get("/api/v1/node")
        assert status == 200, status
        for key in ("hostname", "hw_class", "sockets", "cores", "threads_per_core", "numa_nodes",
                    "cpus_allowed", "cpus_allowed_list", "gpus", "collectors", "latest", "daemon"):
            assert key in node, key
        assert node["cores"] >= 1 and node["cpus_allowed"] == len(os.sched_getaffinity(0)), node
        assert node["hw_class"].endswith("gpu"), node["hw_class"]

    @tap.test("POST /api/v1/jobs registers a job: 201 with id and config")
    def _():
        status, _, body = d.post("/api/v1/jobs", {"workload": "lstm-infer", "params": {"hidden": 1024, "batch": 64},
                                                  "pid": os.getpid(), "external_id": "slurm:77"})
        assert status == 201, (status, body)
        assert body["id"] >= 1 and isinstance(body["config"], dict), body
        assert body["params"] == {"batch": 64, "hidden": 1024}, body

    @tap.test("GET /api/v1/jobs lists running jobs with their config")
    def _():
        status, _, body = d.get("/api/v1/jobs")
        assert status == 200, status
        jobs = body["jobs"]
        assert any(j["workload"] == "lstm-infer" and j["external_id"] == "slurm:77" and j["source"] == "slurm"
                   for j in jobs), jobs

    @tap.test("a registration with the external id of a running job adopts it (200, same id)")
    def _():
        status, _, first = d.post("/api/v1/jobs", {"workload": "slurm-job-name", "external_id": "slurm:4242"})
        assert status == 201 and first["adopted"] is False, (status, first)
        status, _, again = d.post("/api/v1/jobs", {"workload": "resnet", "params": {"batch": 8},
                                                   "external_id": "slurm:4242", "objective": "goodput"})
        assert status == 200 and again["adopted"] is True and again["id"] == first["id"], (status, again)
        job = d.get("/api/v1/jobs/%d" % first["id"])[2]
        assert job["workload"] == "resnet" and job["objective"] == "goodput", job
        running = [j for j in d.get("/api/v1/jobs")[2]["jobs"] if j["external_id"] == "slurm:4242"]
        assert len(running) == 1, running
        d.post("/api/v1/jobs/%d/end" % first["id"], {})
        status, _, third = d.post("/api/v1/jobs", {"workload": "resnet", "external_id": "slurm:4242"})
        assert status == 201 and third["id"] != first["id"], (status, third)
        d.post("/api/v1/jobs/%d/end" % third["id"], {})

    job = d.register("cnn-train", params={"batch": 32})
    jid = job["id"]

    @tap.test("GET /api/v1/jobs/{id} shows one job")
    def _():
        status, _, body = d.get("/api/v1/jobs/%d" % jid)
        assert status == 200 and body["id"] == jid and body["state"] == "running", body
        assert body["workload"] == "cnn-train" and body["params"] == {"batch": 32}, body
        assert "trials" in body and "phases" in body and "latest" in body, body

    @tap.test("POST metrics stores a batch and answers accepted and config")
    def _():
        t = now()
        samples = [{"t": t + i * 0.1, "name": "samples_per_s", "value": 10.0 + i, "phase": "conv"} for i in range(5)]
        status, _, body = d.post("/api/v1/jobs/%d/metrics" % jid, {"samples": samples, "config": {"intra_threads": 2}})
        assert status == 200, (status, body)
        assert body["accepted"] == 5 and isinstance(body["config"], dict), body
        status, _, job = d.get("/api/v1/jobs/%d" % jid)
        assert job["latest"]["samples_per_s"] == 14.0, job["latest"]
        assert job["phases"] == ["conv"], job["phases"]

    bad_batches = [
        ({"samples": [{"t": now(), "name": "Bad-Name", "value": 1}]}, "samples[0].name"),
        ({"samples": [{"t": now(), "name": "x" * 65, "value": 1}]}, "samples[0].name"),
        ({"samples": [{"t": now(), "name": "ok", "value": "1"}]}, "samples[0].value"),
        ({"samples": [{"t": now(), "name": "ok", "value": 1}, {"t": now() - 86400 * 30, "name": "ok", "value": 1}]},
         "samples[1].t"),
        ({"samples": [{"t": now() + 3600, "name": "ok", "value": 1}]}, "samples[0].t"),
        ({"samples": [{"name": "ok", "value": 1}]}, "samples[0].t"),
        ({"samples": "nope"}, "samples"),
        ({"samples": [], "extra": 1}, "extra"),
        ({"samples": [{"t": now(), "name": "ok", "value": 1, "phase": "a\nb"}]}, "samples[0].phase"),
    ]
    for body_, field in bad_batches:
        @tap.test("ingest rejects a bad batch naming %s" % field)
        def _(body_=body_, field=field):
            before = d.get("/api/v1/jobs/%d" % jid)[2]["latest"]
            status, _, resp = d.post("/api/v1/jobs/%d/metrics" % jid, body_)
            assert status == 400, (status, resp)
            assert resp["error"] == "bad_request" and resp["detail"].startswith(field), resp
            assert d.get("/api/v1/jobs/%d" % jid)[2]["latest"] == before

    @tap.test("ingest of NaN (invalid JSON) is a 400 naming the position")
    def _():
        status, _, resp = d.request("POST", "/api/v1/jobs/%d/metrics" % jid,
                                    raw=b'{"samples":[{"t":1,"name":"a","value":NaN}]}',
                                    headers={"Content-Type": "application/json"})
        assert status == 400 and resp["error"] == "bad_json" and "column" in resp["detail"], resp

    @tap.test("nothing of a rejected batch is stored (one bad sample among good ones)")
    def _():
        t = now()
        good = [{"t": t, "name": "probe_metric", "value": 1.0}] * 3
        status, _, _ = d.post("/api/v1/jobs/%d/metrics" % jid, {"samples": good + [{"t": t, "name": "BAD", "value": 1}]})
        assert status == 400
        assert "probe_metric" not in d.get("/api/v1/jobs/%d" % jid)[2]["latest"]

    @tap.test("unknown job: 404 for get, metrics and end")
    def _():
        for method, path in (("GET", "/api/v1/jobs/999999"), ("POST", "/api/v1/jobs/999999/metrics"),
                             ("POST", "/api/v1/jobs/999999/end"), ("GET", "/api/v1/jobs/abc")):
            status, _, body = d.request(method, path, body={"samples": []} if method == "POST" else None)
            assert status == 404 and body["error"] == "not_found", (path, status, body)

    @tap.test("405 with Allow for a wrong method")
    def _():
        status, hdrs, body = d.request("DELETE", "/api/v1/jobs/%d" % jid)
        assert status == 405 and hdrs["allow"] == "GET" and body["error"] == "method_not_allowed", (status, hdrs)
        status, hdrs, _ = d.request("PUT", "/api/v1/jobs")
        assert status == 405 and "GET" in hdrs["allow"] and "POST" in hdrs["allow"], hdrs

    @tap.test("404 for unknown API paths")
    def _():
        status, _, body = d.get("/api/v1/nothing")
        assert status == 404 and body["error"] == "not_found", body
        status, _, body = d.post("/api/v1/nothing", {})
        assert status == 404, status

    @tap.test("415 for a body that is not JSON")
    def _():
        status, _, body = d.request("POST", "/api/v1/jobs", raw=b"workload=x",
                                    headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert status == 415 and body["error"] == "unsupported_media_type", body

    @tap.test("400 for bad registrations, naming the field")
    def _():
        cases = [({}, "workload"), ({"workload": ""}, "workload"), ({"workload": "x", "pid": -1}, "pid"),
                 ({"workload": "x", "params": [1]}, "params"), ({"workload": "x", "params": {"a": {"b": 1}}}, "params.a"),
                 ({"workload": "x", "objective": "speed"}, "objective"), ({"workload": "x", "color": 1}, "color"),
                 ({"workload": "x", "knobs": {"intra_threads": {"min": 4, "max": 2}}}, "knobs.intra_threads")]
        for body_, field in cases:
            status, _, resp = d.post("/api/v1/jobs", body_)
            assert status == 400 and resp["detail"].startswith(field), (body_, status, resp)
        status, _, resp = d.request("POST", "/api/v1/jobs", raw=b"[1,2]", headers={"Content-Type": "application/json"})
        assert status == 400, status

    @tap.test("413 for a body over the limit")
    def _():
        big = b'{"samples":[' + b'{"t":1,"name":"a","value":1},' * 400000 + b'{}]}'
        try:
            status, _, body = d.request("POST", "/api/v1/jobs/%d/metrics" % jid, raw=big,
                                        headers={"Content-Type": "application/json"})
        except (ConnectionResetError, BrokenPipeError):
            raise AssertionError("connection reset instead of 413")
        assert status == 413 and body["error"] == "too_large", (status, body)

    @tap.test("GET /api/v1/jobs?state= validates and filters")
    def _():
        assert d.get("/api/v1/jobs?state=bogus")[0] == 400
        assert d.get("/api/v1/jobs?state=all")[0] == 200

    @tap.test("POST end marks the job ended with its exit status; metrics then get 409")
    def _():
        status, _, body = d.post("/api/v1/jobs/%d/end" % jid, {"exit_status": 3})
        assert status == 200 and body["state"] == "ended", body
        job = d.get("/api/v1/jobs/%d" % jid)[2]
        assert job["state"] == "ended" and job["exit_status"] == 3 and job["ended"] >= job["started"], job
        status, _, body = d.post("/api/v1/jobs/%d/metrics" % jid, {"samples": []})
        assert status == 409, status
        ended = d.get("/api/v1/jobs?state=ended")[2]["jobs"]
        assert any(j["id"] == jid for j in ended)
        assert not any(j["id"] == jid for j in d.get("/api/v1/jobs")[2]["jobs"])

    @tap.test("ending an ended job keeps its end time and takes an exit status it lacked")
    def _():
        j = d.register("ended-twice")["id"]
        assert d.post("/api/v1/jobs/%d/end" % j, {})[0] == 200
        first = d.get("/api/v1/jobs/%d" % j)[2]
        assert first["exit_status"] is None, first
        assert d.post("/api/v1/jobs/%d/end" % j, {"exit_status": 7})[0] == 200
        again = d.get("/api/v1/jobs/%d" % j)[2]
        assert again["exit_status"] == 7 and again["ended"] == first["ended"], (first, again)
        assert d.post("/api/v1/jobs/%d/end" % j, {"exit_status": 9})[0] == 200
        assert d.get("/api/v1/jobs/%d" % j)[2]["exit_status"] == 7

    @tap.test("the dashboard is served at / with its content type")
    def _():
        status, hdrs, body = d.get("/")
        assert status == 200 and hdrs["content-type"].startswith("text/html"), (status, hdrs)

    @tap.test("static files: no path traversal, no hidden files")
    def _():
        for path in ("/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/.git/config", "/..%2fMakefile.am",
                     "/vendor/../../configure.ac"):
            status, _, body = d.get(path)
            assert status == 404, (path, status, body)

    @tap.test("Unix socket: the same API, and a job belongs to the uid that registered it")
    def _():
        status, _, body = d.request("POST", "/api/v1/jobs", body={"workload": "mine"}, unix=True)
        assert status == 201, (status, body)
        root_job = body["id"]
        assert d.get("/api/v1/jobs/%d" % root_job)[2]["uid"] == os.getuid()
        sock = d.socket_path

        def nobody_writes():
            conn = UnixHTTPConnection(sock)
            conn.request("POST", "/api/v1/jobs/%d/metrics" % root_job, body=json.dumps({"samples": []}),
                         headers={"Content-Type": "application/json"})
            r = conn.getresponse()
            out = {"status": r.status, "body": json.loads(r.read())}
            conn.request("POST", "/api/v1/jobs", body=json.dumps({"workload": "theirs"}),
                         headers={"Content-Type": "application/json"})
            r = conn.getresponse()
            out["register"] = r.status
            out["job"] = json.loads(r.read()).get("id")
            return out
        res = as_uid(65534, nobody_writes)
        assert res["status"] == 403 and res["body"]["error"] == "forbidden", res
        assert res["register"] == 201, res
        # root may change anyone's job
        status, _, _ = d.request("POST", "/api/v1/jobs/%d/metrics" % res["job"], body={"samples": []}, unix=True)
        assert status == 200, status
        assert d.get("/api/v1/jobs/%d" % res["job"])[2]["uid"] == 65534

    @tap.test("error bodies are JSON with error and detail")
    def _():
        status, hdrs, body = d.get("/api/v1/jobs/0")
        assert hdrs["content-type"] == "application/json" and set(body) == {"error", "detail"}, body

    @tap.test("SIGHUP reloads without dropping the server")
    def _():
        d.proc.send_signal(signal.SIGHUP)
        wait_until(lambda: "reload: configuration" in d.log())
        assert d.get("/healthz")[0] == 200

    persisted = d.register("survivor", params={"n": 1})["id"]
    db = d.db

    @tap.test("SIGTERM exits 0")
    def _():
        rc = d.stop()
        assert rc == 0, (rc, d.log()[-2000:])

with Daemon(db=db, workdir=workdir) as d2:
    @tap.test("a registered job survives a restart")
    def _():
        status, _, body = d2.get("/api/v1/jobs/%d" % persisted)
        assert status == 200 and body["workload"] == "survivor" and body["params"] == {"n": 1}, body


webroot = os.path.join(workdir, "webroot")
os.makedirs(os.path.join(webroot, "css"))
with open(os.path.join(webroot, "index.html"), "w") as f:
    f.write("<!doctype html><title>t</title>")
with open(os.path.join(workdir, "secret.txt"), "w") as f:
    f.write("secret")
os.symlink(workdir, os.path.join(webroot, "out"))                       # a directory link leading out
os.symlink(os.path.join(workdir, "secret.txt"), os.path.join(webroot, "css", "s.css"))
with Daemon(args=["--web-root", webroot], workdir=workdir) as d3:
    @tap.test("static files: symbolic links inside the web root never lead out of it")
    def _():
        assert d3.get("/")[0] == 200
        for path in ("/out/secret.txt", "/css/s.css"):
            status, _, body = d3.get(path)
            assert status == 404, (path, status, body)


@tap.test("a bad flag value exits 2 naming the key")
def _():
    r = subprocess.run([DAEMON, "--interval", "soon"], capture_output=True, text=True, timeout=10)
    assert r.returncode == 2 and "--interval" in r.stderr, (r.returncode, r.stderr)


@tap.test("a bad config file value exits 2 naming file, line and key")
def _():
    path = os.path.join(workdir, "bad.conf")
    with open(path, "w") as f:
        f.write("[dlprofd]\ninterval = 1\nread_access = everyone\n")
    r = subprocess.run([DAEMON, "--config", path, "--check-config"], capture_output=True, text=True, timeout=10)
    assert r.returncode == 2 and "bad.conf:3: read_access" in r.stderr, (r.returncode, r.stderr)


@tap.test("--check-config accepts a good file; flags win over the file")
def _():
    path = os.path.join(workdir, "good.conf")
    with open(path, "w") as f:
        f.write("listen = 127.0.0.1:1\ninterval = 0.5\n")
    r = subprocess.run([DAEMON, "--config", path, "--interval", "2", "-n"], capture_output=True, text=True, timeout=10)
    assert r.returncode == 0 and "configuration ok" in r.stdout, (r.returncode, r.stderr)


@tap.test("--help and --version exit 0")
def _():
    for flag in ("--help", "--version"):
        r = subprocess.run([DAEMON, flag], capture_output=True, text=True, timeout=10)
        assert r.returncode == 0 and r.stdout, flag


@tap.test("a database from a newer dlprofd is refused with a clear message")
def _():
    import sqlite3
    path = os.path.join(workdir, "newer.db")
    con = sqlite3.connect(path)
    con.execute("PRAGMA application_id = %d" % 0x646c7066)
    con.execute("PRAGMA user_version = 9999")
    con.execute("CREATE TABLE t(x)")
    con.commit()
    con.close()
    r = subprocess.run([DAEMON, "--db", path, "--listen", "127.0.0.1:0", "--socket", ""],
                       capture_output=True, text=True, timeout=10)
    assert r.returncode != 0 and "newer than this dlprofd" in r.stderr, r.stderr


@tap.test("a foreign file at the database path is refused and left untouched")
def _():
    path = os.path.join(workdir, "foreign.db")
    with open(path, "w") as f:
        f.write("not a database at all, but somebody's notes\n" * 10)
    before = open(path).read()
    r = subprocess.run([DAEMON, "--db", path, "--listen", "127.0.0.1:0", "--socket", ""],
                       capture_output=True, text=True, timeout=10)
    assert r.returncode != 0 and "not an SQLite database" in r.stderr, r.stderr
    assert open(path).read() == before


shutil.rmtree(workdir, ignore_errors=True)
tap.done()
