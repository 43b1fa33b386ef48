"""Every thread of the daemon busy at once: the HTTP pool (ingest from
several jobs, registrations and ends, reads of jobs, series, workloads,
/metrics and the dashboard), the writer (batches from many requests and
the sampler), the sampler at a 50 ms interval, the tuner, and SIGHUP
reloads swapping the access settings under live requests.

Meant for the ThreadSanitizer build (scripts/test runs it there, see
TSAN_TESTS): a data race makes the daemon's log carry a TSan report and the
suite fail.  Under ASan it checks the same answers and a clean exit."""

import http.client
import json
import os
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Daemon, Tap, sanitizer_report  # noqa: E402

DURATION = float(os.environ.get("DLPROF_CONCURRENCY_SECONDS", "8"))
tap = Tap()
errors, counts = [], {}
lock = threading.Lock()


EXPECTED = {"register": 201, "ingest": 200, "end": 200, "read": 200}


def note(kind, status, body):
    with lock:
        counts[kind] = counts.get(kind, 0) + 1
        if status != EXPECTED[kind]:
            errors.append((kind, status, body if isinstance(body, dict) else str(body)[:200]))


def call(conn, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    conn.request(method, path, body=data, headers={"Content-Type": "application/json"} if data else {})
    r = conn.getresponse()
    payload = r.read()
    if r.getheader("Content-Type", "").startswith("application/json") and payload:
        payload = json.loads(payload)
    return r.status, payload


def ingester(d, stop, k):
    conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=30)
    status, job = call(conn, "POST", "/api/v1/jobs", {"workload": "conc-%d" % (k % 2), "params": {"k": k % 2}})
    note("register", status, job)
    i = 0
    while not stop.is_set():
        i += 1
        t = time.time()
        samples = [{"t": t, "name": "samples_per_s", "value": 100.0 + k + (i % 7)},
                   {"t": t, "name": "step_time_s", "value": 0.01 * (1 + k)},
                   {"t": t, "name": "phase_time_s", "phase": "fwd", "value": 0.005}]
        status, body = call(conn, "POST", "/api/v1/jobs/%d/metrics" % job["id"],
                            {"samples": samples, "config": {"intra_threads": 1 + k % 2}})
        note("ingest", status, body)
        if i % 25 == 0:   # a job ends and the next one starts
            status, body = call(conn, "POST", "/api/v1/jobs/%d/end" % job["id"], {"exit_status": 0})
            note("end", status, body)
            status, job = call(conn, "POST", "/api/v1/jobs", {"workload": "conc-%d" % (k % 2)})
            note("register", status, job)


def reader(d, stop, k):
    conn = http.client.HTTPConnection("127.0.0.1", d.port, timeout=30)
    paths = ["/api/v1/jobs?state=all", "/api/v1/node", "/metrics", "/api/v1/workloads", "/",
             "/api/v1/recommend?workload=conc-0&k=0", "/healthz"]
    i = 0
    while not stop.is_set():
        path = paths[(i + k) % len(paths)]
        i += 1
        status, body = call(conn, "GET", path)
        note("read", status, body)
        if path.startswith("/api/v1/jobs?") and status == 200 and body["jobs"]:
            jid = body["jobs"][-1]["id"]
            for p in ("/api/v1/jobs/%d" % jid, "/api/v1/jobs/%d/series?name=samples_per_s" % jid):
                status, b2 = call(conn, "GET", p)
                note("read", status, b2)


def reloader(d, stop):
    conf = os.path.join(d.workdir, "none.conf")
    i = 0
    while not stop.is_set():
        i += 1
        with open(conf, "w") as f:
            f.write("token = t%d\nread_access = any\ninterval = %s\n" % (i, "0.05" if i % 2 else "0.07"))
        d.proc.send_signal(signal.SIGHUP)
        stop.wait(0.5)


def guarded(fn, *args):
    """Runs a client; a broken connection (the daemon died, say) is an error too."""
    try:
        fn(*args)
    except (OSError, http.client.HTTPException, ValueError) as e:
        with lock:
            errors.append((fn.__name__, 0, repr(e)))


# Rate limiting is off: six ingesters from one address outrun ingest_rate in a
# fast build, and a 429 here would be the limiter working (test_limits.py), not
# a concurrency fault.
with Daemon(args=["--interval", "0.05", "--http-threads", "4", "--ingest-rate", "0"]) as d:
    stop = threading.Event()
    threads = [threading.Thread(target=guarded, args=(ingester, d, stop, k)) for k in range(6)]
    threads += [threading.Thread(target=guarded, args=(reader, d, stop, k)) for k in range(4)]
    threads.append(threading.Thread(target=guarded, args=(reloader, d, stop)))
    for t in threads:
        t.start()
    stop.wait(DURATION)
    stop.set()
    for t in threads:
        t.join(timeout=60)

    @tap.test("every thread ran: %s" % ", ".join("%s %d" % kv for kv in sorted(counts.items())))
    def _():
        for kind in ("register", "ingest", "end", "read"):
            assert counts.get(kind, 0) > 0, counts
        assert not any(t.is_alive() for t in threads), "a client thread hung"

    @tap.test("no answer under concurrency was an error")
    def _():
        assert not errors, errors[:5]

    @tap.test("no sanitizer report while it ran")
    def _():
        report = sanitizer_report(d.log())
        assert report is None, report

    d.stop()   # the harness judges its exit, as a case of its own

tap.done()
