"""Limits that keep one client from starving the others.

* 300 idle connections and slowloris clients (half-sent headers, bodies
  that never finish) do not stop /healthz, and idle ones are closed after
  connection_timeout;
* past max_connections new TCP connections wait, but the Unix socket (its
  own listener) still answers, and TCP recovers when idle ones time out;
* a full write queue pushes back with 503 busy and Retry-After, and every
  acknowledged sample is stored;
* a client over ingest_rate gets 429 with Retry-After, others do not, and
  it may go on after waiting that long;
* request bodies held in memory share a budget: past it, 503 with
  Retry-After instead of more memory.
"""

import http.client
import json
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Daemon, Tap, staged_samples, status_of, wait_until  # noqa: E402

tap = Tap()
H = b"Host: x\r\n"


def connect(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    return s


def closed_by_server(s):
    """True once the server has closed s (EOF or reset); False while it is open."""
    s.setblocking(False)
    try:
        return s.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        s.setblocking(True)


def slow_clients():
    with Daemon(args=["--connection-timeout", "3"]) as d:
        socks = []
        for i in range(300):
            s = connect(d.port)
            kind = i % 3
            if kind == 1:      # slowloris: headers that never end
                s.sendall(b"GET /healthz HTTP/1.1\r\n" + H + b"X-Slow: ")
            elif kind == 2:    # a body that never finishes
                s.sendall(b"POST /api/v1/jobs HTTP/1.1\r\n" + H + b"Content-Type: application/json\r\n"
                          b"Content-Length: 1000000\r\n\r\n{\"workload\":")
            socks.append(s)

        @tap.test("300 idle and slowloris connections do not stop /healthz")
        def _():
            status, _, body = d.get("/healthz", timeout=10)
            assert status == 200 and body == b"ok\n", (status, body)

        @tap.test("... nor a registration and a read on fresh connections")
        def _():
            assert d.post("/api/v1/jobs", {"workload": "beside-slow-clients"})[0] == 201
            assert d.get("/api/v1/jobs")[0] == 200

        @tap.test("idle and stalled connections are closed after connection_timeout")
        def _():
            wait_until(lambda: all(closed_by_server(s) for s in socks), timeout=30, interval=0.5)

        for s in socks:
            s.close()

        d.stop()   # the harness judges its exit, as a case of its own


def connection_limit():
    with Daemon(args=["--max-connections", "40", "--connection-timeout", "3"]) as d:
        socks = [connect(d.port) for _ in range(40)]

        @tap.test("at max_connections the Unix socket listener still answers /healthz")
        def _():
            status, _, body = d.get("/healthz", unix=True)
            assert status == 200, (status, body)

        @tap.test("TCP answers again once the idle connections time out")
        def _():
            wait_until(lambda: all(closed_by_server(s) for s in socks), timeout=30, interval=0.5)
            wait_until(lambda: d.get("/healthz", timeout=5)[0] == 200, timeout=20, interval=0.5)

        for s in socks:
            s.close()
        d.stop()   # the harness judges its exit, as a case of its own


def post_batch(port, path, values):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("POST", path, body=json.dumps(
            {"samples": [{"t": time.time(), "name": "queue_probe", "value": v} for v in values]}),
            headers={"Content-Type": "application/json"})
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, json.loads(r.read() or b"null")
    finally:
        conn.close()


def register_when_room(d, workload):
    """Registers as a client should under a queue of one: the daemon's own
    writes (the sampler's node series) may hold the slot; 503 busy says retry."""
    def attempt():
        status, _, body = d.post("/api/v1/jobs", {"workload": workload})
        assert status in (201, 503), (status, body)
        return body["id"] if status == 201 else None
    return wait_until(attempt, timeout=20, interval=0.2)


def queue_full():
    with Daemon(args=["--queue-limit", "1"]) as d:
        job = register_when_room(d, "queue")
        path = "/api/v1/jobs/%d/metrics" % job
        results, lock = [], threading.Lock()

        def worker(k):
            for i in range(60):
                values = [float(k * 100000 + i * 100 + j) for j in range(100)]
                status, hdrs, body = post_batch(d.port, path, values)
                with lock:
                    results.append((status, hdrs, body, values))

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        busy = [r for r in results if r[0] == 503]

        @tap.test("a full write queue answers 503 busy with Retry-After (%d of %d)" % (len(busy), len(results)))
        def _():
            assert busy, "the queue never filled: 12 writers against a queue of 1"
            for status, hdrs, body, _ in busy:
                assert body["error"] == "busy" and hdrs.get("retry-after") == "1", (hdrs, body)

        @tap.test("under a full queue every answer is 200 or 503 busy")
        def _():
            others = [(r[0], r[2]) for r in results if r[0] not in (200, 503)]
            assert not others, others[:5]

        @tap.test("every sample acknowledged while the queue pushed back is stored")
        def _():
            import sqlite3
            want = {v for r in results if r[0] == 200 for v in r[3]}
            con = sqlite3.connect(d.db)
            have = {r["value"] for r in staged_samples(con, name="queue_probe")}
            con.close()
            assert want and not (want - have), len(want - have)

        d.stop()   # the harness judges its exit, as a case of its own


def rate_limit():
    with Daemon(args=["--ingest-rate", "2", "--ingest-burst", "5"]) as d:
        job = d.register("rate", )["id"]
        path = "/api/v1/jobs/%d/metrics" % job
        answers = [d.post(path, {"samples": []}) for _ in range(30)]
        limited = [a for a in answers if a[0] == 429]

        @tap.test("a client over ingest_rate gets 429 rate_limited with Retry-After")
        def _():
            assert limited, [a[0] for a in answers]
            assert all(a[0] in (200, 429) for a in answers), [a[0] for a in answers]
            for status, hdrs, body in limited:
                assert body["error"] == "rate_limited" and int(hdrs["retry-after"]) >= 1, (hdrs, body)

        @tap.test("another client (the Unix socket, by uid) is not limited by it")
        def _():
            status, _, body = d.post(path, {"samples": []}, unix=True)
            assert status == 200, (status, body)

        @tap.test("reads are never rate limited")
        def _():
            assert all(d.get("/api/v1/jobs/%d" % job)[0] == 200 for _ in range(20))

        @tap.test("after waiting Retry-After the client may post again")
        def _():
            time.sleep(int(limited[-1][1]["retry-after"]))
            assert d.post(path, {"samples": []})[0] == 200

        d.stop()   # the harness judges its exit, as a case of its own


def unread_bytes(port):
    """Bytes that arrived on the daemon's established connections on port but that it has not read yet."""
    total = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                rows = f.readlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "01":
                total += int(fields[4].split(":")[1], 16)
    return total


def body_budget():
    # max_body 8 MiB: 64 MiB of bodies in memory at once, in power-of-two buffers of up to 8 MiB.
    # Eight held uploads of 7 MiB fill it exactly.  No probe may run while they are
    # still being read: a probe's own buffer would then be the one that makes a
    # held upload's last doubling cross the budget, and that upload's 503 comes
    # only once its body is complete (this made the case flaky before).
    with Daemon() as d:
        held = []
        part = b"{\"workload\":\"" + b"a" * (7 << 20)
        for _ in range(8):
            s = connect(d.port)
            s.sendall(b"POST /api/v1/jobs HTTP/1.1\r\n" + H + b"Content-Type: application/json\r\n"
                      b"Content-Length: %d\r\n\r\n" % (len(part) + 2) + part)
            held.append(s)
        wait_until(lambda: unread_bytes(d.port) == 0, timeout=30, interval=0.1)
        time.sleep(0.5)   # the daemon's thread hands the last chunk it read to the handler

        @tap.test("past the budget of bodies in memory a new upload gets 503 busy with Retry-After")
        def _():
            status, hdrs, body = d.post("/api/v1/jobs", {"workload": "x" * 5000})
            assert status == 503 and hdrs.get("retry-after") == "1" and body["error"] == "busy", (status, hdrs, body)

        @tap.test("requests without a body are still served while the budget is spent")
        def _():
            assert d.get("/healthz")[0] == 200 and d.get("/api/v1/jobs")[0] == 200

        @tap.test("the held uploads complete with their own answer, and the budget is free again")
        def _():
            for s in held:
                s.sendall(b"\"}")
                answer = b""
                while b"\r\n\r\n" not in answer:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    answer += chunk
                # All eight fit the budget: each is admitted and refused as a workload name too long.
                assert status_of(answer) == 400, answer[:200]
                s.close()
            wait_until(lambda: d.post("/api/v1/jobs", {"workload": "after"})[0] == 201, timeout=10)

        d.stop()   # the harness judges its exit, as a case of its own


slow_clients()
connection_limit()
queue_full()
rate_limit()
body_budget()
tap.done()
