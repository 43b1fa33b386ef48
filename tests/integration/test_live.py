"""The live stream (GET /api/v1/jobs/{id}/live) against the built daemon.

A stream sends one server-sent event per sampler tick with the tick's
values, and an "ingest" event after a job's reported samples commit; an
unknown job is 404.  Streams are bounded: with all 32 held by clients that
never read, the next is refused with 503 and Retry-After, and other
requests are still answered; the daemon then stops cleanly (SIGTERM) with
every stream still open.  How fast is the benchmarks' business: a loaded
machine decides latencies, so none is asserted here.  TAP output.
"""

import json
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Daemon, Tap  # noqa: E402

tap = Tap()
STREAMS = 32


def open_stream(d, path, rcvbuf=None):
    s = socket.socket()
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.connect(("127.0.0.1", d.port))
    s.sendall(("GET %s HTTP/1.1\r\nHost: t\r\nAccept: text/event-stream\r\n\r\n" % path).encode())
    return s


def read_for(s, seconds):
    s.settimeout(0.2)
    data = b""
    end = time.time() + seconds
    while time.time() < end:
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            continue
        if not chunk:
            break
        data += chunk
    return data.decode(errors="replace")


def events(text):
    """(event name, parsed data) of each complete event in a chunked SSE body."""
    out = []
    for line_block in text.split("\n\n"):
        name, data = "message", None
        for line in line_block.splitlines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data = json.loads(line[6:])
        if data is not None:
            out.append((name, data))
    return out


with Daemon(args=["--interval", "0.25"]) as d:
    job = d.register("live-test")

    @tap.test("a node stream sends each tick with its values, newest time last")
    def _():
        s = open_stream(d, "/api/v1/jobs/0/live")
        text = read_for(s, 2.5)
        s.close()
        assert text.startswith("HTTP/1.1 200"), text[:200]
        assert "text/event-stream" in text.split("\r\n\r\n")[0], text[:300]
        ticks = [e for n, e in events(text) if n == "message"]
        assert len(ticks) >= 5, text[-500:]
        times = [e["t"] for e in ticks]
        assert times == sorted(times) and len(set(times)) == len(times), times
        assert all(e["job"] == 0 and "mem.used_bytes" in e["values"] for e in ticks), ticks[-1]

    @tap.test("a job's stream says when its reported samples are committed")
    def _():
        s = open_stream(d, "/api/v1/jobs/%d/live" % job["id"])
        time.sleep(0.5)
        status, _, body = d.post("/api/v1/jobs/%d/metrics" % job["id"],
                                 {"samples": [{"t": time.time(), "name": "samples_per_s", "value": 5}]})
        assert status == 200, (status, body)
        text = read_for(s, 1.5)
        s.close()
        assert ("ingest", {"job": job["id"]}) in events(text), text[-500:]

    @tap.test("an unknown job's stream is 404")
    def _():
        status, _, body = d.get("/api/v1/jobs/999999/live")
        assert status == 404, (status, body)

    # The streams closed above leave the hub at their next tick's write.
    time.sleep(2.0)
    held = [open_stream(d, "/api/v1/jobs/0/live", rcvbuf=1024) for _ in range(STREAMS)]
    answers = []
    for h in held:
        h.settimeout(5)
        answers.append(h.recv(15))
    time.sleep(2.0)   # every stream is served, none is read: their socket buffers fill

    @tap.test("with %d streams held by clients that do not read, the next is refused with 503" % STREAMS)
    def _():
        assert answers == [b"HTTP/1.1 200 OK"] * STREAMS, answers
        s = open_stream(d, "/api/v1/jobs/0/live")
        s.settimeout(5)
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = s.recv(4096)
            if not chunk:
                break
            head += chunk
        s.close()
        assert head.startswith(b"HTTP/1.1 503") and b"Retry-After" in head, head

    @tap.test("other requests are still answered")
    def _():
        for _ in range(5):
            status, _, body = d.get("/api/v1/jobs/0/series?name=mem.used_bytes", timeout=30)
            assert status == 200 and body["points"], (status, body)

    d.stop()   # with every stream held: the harness judges the exit (0, in time, no sanitizer report)

    for s in held:
        s.close()

tap.done()
