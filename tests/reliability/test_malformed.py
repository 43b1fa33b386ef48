"""Malformed input at every layer: broken HTTP (request line, headers,
lengths, chunking, binary noise) and broken API input on every endpoint
(bad JSON of every kind, wrong media types, bad query values, hostile
paths).  Each answer has the right status; API errors are ASCII-only JSON
naming the problem; after each case the daemon still answers /healthz; at
the end it exits cleanly with no sanitizer report.  (413, 404, 405, 415 on
registration and the ingest field checks are in tests/integration.)"""

import json
import os
import re
import subprocess
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Daemon, Tap, raw, status_of  # noqa: E402

tap = Tap()

H = b"Host: x\r\n"
JSON = b"Content-Type: application/json\r\n"

# name, bytes, statuses allowed (None: the server closed without an answer)
PROTOCOL = [
    ("request line without a version", b"GET /healthz\r\n\r\n", {400}),
    ("unsupported HTTP version", b"GET /healthz HTTP/9.9\r\n" + H + b"\r\n", {505}),
    ("header line without a colon", b"GET /healthz HTTP/1.1\r\n" + H + b"NoColon\r\n\r\n", {400}),
    ("a 100 KiB header", b"GET /healthz HTTP/1.1\r\n" + H + b"X-A: " + b"a" * 100000 + b"\r\n\r\n",
     {400, 413, 431, None}),
    ("3000 headers", b"GET /healthz HTTP/1.1\r\n" + H + b"".join(b"X-%d: y\r\n" % i for i in range(3000)) + b"\r\n",
     {400, 413, 431, None}),
    # libmicrohttpd answers 414 when its buffer fills while reading the line, or
    # closes the connection when the client is still sending (seen in CI runs).
    ("a 100 KiB URL", b"GET /" + b"a" * 100000 + b" HTTP/1.1\r\n" + H + b"\r\n", {414, 431, None}),
    ("negative Content-Length", b"POST /api/v1/jobs HTTP/1.1\r\n" + H + b"Content-Length: -1\r\n\r\n", {400}),
    ("non-numeric Content-Length", b"POST /api/v1/jobs HTTP/1.1\r\n" + H + b"Content-Length: abc\r\n\r\n", {400}),
    ("Content-Length past 2^64", b"POST /api/v1/jobs HTTP/1.1\r\n" + H + b"Content-Length: " + b"9" * 25 + b"\r\n\r\n",
     {400, 413}),
    ("bad chunk size", b"POST /api/v1/jobs HTTP/1.1\r\n" + H + JSON + b"Transfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n0\r\n\r\n",
     {400}),
    ("body shorter than its Content-Length", b"POST /api/v1/jobs HTTP/1.1\r\n" + H + JSON +
     b"Content-Length: 100\r\n\r\n{\"a\":", {None}),
    ("unknown transfer coding", b"POST /api/v1/jobs HTTP/1.1\r\n" + H + b"Transfer-Encoding: gzip\r\n\r\n",
     {400, 411, 501, None}),
    ("binary noise", bytes(range(256)) * 4, {400, None}),
    ("a bare request word", b"GARBAGE\r\n\r\n", {400, None}),
    ("unknown method on a known path", b"BREW /healthz HTTP/1.1\r\n" + H + b"\r\n", {405}),
    ("unknown method on an unknown path", b"BREW /nope HTTP/1.1\r\n" + H + b"\r\n", {404}),
    ("NUL inside the path", b"GET /heal\x00thz HTTP/1.1\r\n" + H + b"\r\n", {400, 404}),
    ("OPTIONS *", b"OPTIONS * HTTP/1.1\r\n" + H + b"\r\n", {400, 404, 405}),
]


def send(port, data):
    try:
        return raw(port, data, timeout=10)
    except OSError:
        return b""   # the server closed first (a reset is an answer too)


def check_json_error(body, status, expect_status, words=()):
    assert status == expect_status, (status, body)
    assert isinstance(body, dict) and set(body) == {"error", "detail"}, body
    assert body["detail"], body
    for w in words:
        assert w in body["detail"], (w, body)


def ascii_json(answer):
    """The JSON body of a raw answer, checked to be plain ASCII."""
    head, _, body = answer.partition(b"\r\n\r\n")
    assert b"application/json" in head, head
    assert all(c < 0x80 for c in body), body
    return json.loads(body)


with Daemon() as d:
    def alive():
        assert d.proc.poll() is None, d.log()[-3000:]
        status, _, body = d.get("/healthz")
        assert status == 200, (status, body)

    for name, data, allowed in PROTOCOL:
        @tap.test("HTTP: %s is answered %s and the daemon keeps serving" % (name, sorted(allowed, key=str)))
        def _(data=data, allowed=allowed):
            answer = send(d.port, data)
            assert status_of(answer) in allowed, answer[:300]
            alive()

    @tap.test("HTTP: pipelined requests on one connection are both answered")
    def _():
        req = b"GET /healthz HTTP/1.1\r\n" + H + b"\r\n"
        answer = send(d.port, req + req.replace(b"\r\n\r\n", b"\r\nConnection: close\r\n\r\n"))
        assert answer.count(b"HTTP/1.1 200") == 2, answer

    @tap.test("HTTP: Expect: 100-continue gets 100, then the handler's answer")
    def _():
        answer = send(d.port, b"POST /api/v1/jobs HTTP/1.1\r\n" + H + JSON +
                      b"Expect: 100-continue\r\nContent-Length: 2\r\n\r\n{}")
        assert answer.startswith(b"HTTP/1.1 100") and b"HTTP/1.1 400" in answer, answer

    job = d.register("malformed")["id"]
    posts = ["/api/v1/jobs", "/api/v1/jobs/%d/metrics" % job, "/api/v1/jobs/%d/end" % job]
    bad_bodies = [
        ("truncated JSON", b'{"samples": [', "bad_json", ("line", "column")),
        ("a JSON string, not an object", b'"samples"', "bad_json", ("expected",)),
        ("JSON null", b"null", "bad_json", ("expected",)),
        ("nesting 100000 deep", b"[" * 100000 + b"]" * 100000, "bad_json", ("column",)),
        ("a duplicate key", b'{"workload":"a","workload":"b","samples":[]}', "bad_json", ("duplicate",)),
        ("invalid UTF-8 in a string", b'{"workload":"\xff\xfe","samples":[]}', "bad_json", ("decode",)),
        ("a NUL escape in a key", b'{"a\\u0000b":1}', "bad_json", ()),
        ("a number beyond double", b'{"workload":"x","pid":1e999}', "bad_json", ()),
        ("trailing garbage", b'{"workload":"x"} {}', "bad_json", ()),
    ]
    for path in posts:
        for what, body, error, words in bad_bodies:
            @tap.test("POST %s with %s: 400 %s naming the problem"
                      % (path.replace("/jobs/%d/" % job, "/jobs/{id}/"), what, error))
            def _(path=path, body=body, error=error, words=words):
                answer = send(d.port, b"POST " + path.encode() + b" HTTP/1.1\r\n" + H + JSON +
                              b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
                assert status_of(answer) == 400, answer[:300]
                err = ascii_json(answer)
                assert err["error"] == error, err
                for w in words:
                    assert w in err["detail"], (w, err)

    @tap.test("POST metrics and end with text/plain: 415 naming the type")
    def _():
        for path in posts[1:]:
            status, _, body = d.request("POST", path, raw=b"{}", headers={"Content-Type": "text/plain"})
            check_json_error(body, status, 415, ("text/plain",))

    @tap.test("POST metrics with an empty body: 400")
    def _():
        status, _, body = d.request("POST", posts[1], raw=b"", headers={"Content-Type": "application/json"})
        check_json_error(body, status, 400)

    queries = [
        ("/api/v1/jobs?state=%ff", 400, "state"),
        ("/api/v1/jobs?state=", 400, "state"),
        ("/api/v1/jobs/%d/series?name=samples_per_s&from=abc" % job, 400, "from"),
        ("/api/v1/jobs/%d/series?name=samples_per_s&from=10&to=5" % job, 400, "before"),
        ("/api/v1/jobs/%d/series?name=samples_per_s&step=-1" % job, 400, "step"),
        ("/api/v1/jobs/%d/series?name=BAD%%00name" % job, 400, "name"),
        ("/api/v1/jobs/%d/series?name=samples_per_s&from=1e999" % job, 400, "from"),
        ("/api/v1/jobs/%d/series" % job, 400, "name"),
        ("/api/v1/recommend", 400, "workload"),
        ("/api/v1/recommend?workload=x&format=xml", 400, "format"),
        ("/api/v1/jobs/99999999999999999999", 404, "job"),
        ("/api/v1/jobs/-1", 404, "job"),
        ("/api/v1/jobs/1e3", 404, "job"),
        ("/api/v1/jobs/%ff%fe", 404, "job"),
        ("/api/v1/jobs/0x10/series?name=loss", 404, "job"),
        ("/api/v1/workloads/%ff", 404, ""),
        ("/api/v1/workloads/" + "w" * 3000, 404, ""),
        ("/%ff%fe%fd", 404, ""),
        ("/api/v1/jobs/%d/%%2e%%2e/%%2e%%2e/healthz" % job, 404, ""),
        ("/api/v1/jobs?" + "&".join("a%d=1" % i for i in range(40)), 400, "query"),
    ]
    for path, status_want, word in queries:
        @tap.test("GET %s: %d, JSON naming the problem" % (path if len(path) < 70 else path[:67] + "...", status_want))
        def _(path=path, status_want=status_want, word=word):
            answer = send(d.port, b"GET " + path.encode() + b" HTTP/1.1\r\n" + H + b"Connection: close\r\n\r\n")
            assert status_of(answer) == status_want, answer[:400]
            err = ascii_json(answer)
            assert set(err) == {"error", "detail"} and word in err["detail"], err

    @tap.test("recommend?format=env is safe to eval whatever the workload name and params")
    def _():
        hostile = "a'b\"c$(touch pw1)`touch pw2`;touch pw3\nexport LD_PRELOAD=/x.so"
        # Names are printable text (a newline is refused with 400); params may hold anything.
        q = urllib.parse.urlencode({"workload": hostile.replace("\n", " "), "p": hostile, "format": "env"})
        status, _, text = d.get("/api/v1/recommend?" + q)
        assert status == 200, (status, text)
        r = subprocess.run(["sh", "-c", 'eval "$1"; printf "%s|%s" "$DLPROF_WORKLOAD" "${LD_PRELOAD:-unset}"',
                            "sh", text.decode()], capture_output=True, text=True, timeout=10, cwd=d.workdir)
        assert r.returncode == 0, r
        assert not any(os.path.exists(os.path.join(d.workdir, m)) for m in ("pw1", "pw2", "pw3")), text
        assert r.stdout.endswith("|unset") and "touch" in r.stdout, (r.stdout, text)

    @tap.test("recommend?format=slurm prints one export line per variable, nothing injected")
    def _():
        q = urllib.parse.urlencode({"workload": "a\nexport LD_PRELOAD=/x.so", "format": "slurm"})
        status, _, body = d.get("/api/v1/recommend?" + q)
        assert status == 400 and "workload" in body["detail"], (status, body)
        q = urllib.parse.urlencode({"workload": "a;export LD_PRELOAD=/x.so", "p\nexport Y=1": "b\nexport Z=1",
                                    "format": "slurm"})
        status, _, text = d.get("/api/v1/recommend?" + q)
        assert status == 200, (status, text)
        names = [line.split("=", 1)[0] for line in text.decode().splitlines() if line]
        assert all(re.match(r"^export [A-Z_]+$", n) for n in names), text
        assert "export LD_PRELOAD" not in names and "export Y" not in names and "export Z" not in names, text
        assert len(names) == len(set(names)), text

    @tap.test("after all of it the daemon serves reads and writes")
    def _():
        alive()
        status, _, body = d.post("/api/v1/jobs/%d/metrics" % job,
                                 {"samples": [{"t": time.time(), "name": "loss", "value": 1.0}]})
        assert status == 200 and body["accepted"] == 1, (status, body)

    d.stop()   # the harness judges its exit, as a case of its own

tap.done()
