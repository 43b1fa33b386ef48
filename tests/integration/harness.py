"""Test harness for suites that drive the built daemon.

Standard library only.  Gives:

* ``Tap``: a TAP producer (``ok``/``not ok``/``skip``), one per test file,
  so automake's tap-driver counts single cases.  A suite that may have to
  skip as a whole declares its cases up front, ``Tap(plan=N)``, and
  ``skip_all(reason)`` then reports each of the N as skipped (the driver
  checks the plan against the cases run, and tests/summary.sh fails a
  suite that skips as an uncounted "1..0");
* ``Daemon``: starts ``$DLPROF_BUILDDIR/daemon/dlprofd`` on 127.0.0.1 with
  an ephemeral port (read back from its log), a temporary database and a
  Unix socket, and stops it (SIGTERM, then SIGKILL as a last resort).
  Every daemon the suite started is judged as a test case of its own when
  it stops: exit 0 after SIGTERM, in time, with no sanitizer report in its
  log; one that crashed, hung, leaked or exited by itself fails it (a test
  that ends one on purpose, or makes it exit, says so: ``kill9``, or
  ``stop(SIGKILL)``, which also just reaps one that exited).  ``Tap.done``
  stops and judges any left running;
* ``Daemon.request``: one HTTP request, returning (status, headers, body),
  the body parsed as JSON when it is JSON.

A test file looks like::

    from harness import Tap, Daemon
    tap = Tap()
    with Daemon() as d:
        @tap.test("healthz answers ok")
        def _():
            status, _, body = d.get("/healthz")
            assert status == 200, status
    tap.done()
"""

import atexit
import http.client
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import traceback

BUILDDIR = os.environ.get("DLPROF_BUILDDIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
SRCDIR = os.environ.get("DLPROF_SRCDIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
DAEMON = os.path.join(BUILDDIR, "daemon", "dlprofd")


SANITIZER_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                   "WARNING: ThreadSanitizer", "SUMMARY: UndefinedBehaviorSanitizer")


def sanitizer_report(log):
    """The first sanitizer finding in a daemon log, or None."""
    for mark in SANITIZER_MARKS:
        i = log.find(mark)
        if i >= 0:
            return log[max(0, i - 200):i + 3000]
    return None


def _varint(b, pos):
    v = shift = 0
    while True:
        c = b[pos]
        pos += 1
        v |= (c & 0x7f) << shift
        shift += 7
        if not c & 0x80:
            return v, pos


def _batch_points(blob):
    """A staged batch's points (daemon/store_batches.c's format), as (job_id, name, phase or None, t, value)."""
    assert blob[0] == 1, "unknown staged batch format %d" % blob[0]
    runs, pos = _varint(blob, 1)
    times = None
    for _ in range(runs):
        job, pos = _varint(blob, pos)
        n, pos = _varint(blob, pos)
        name = blob[pos:pos + n].decode()
        pos += n
        n, pos = _varint(blob, pos)
        phase = blob[pos:pos + n].decode() or None
        pos += n
        n, pos = _varint(blob, pos)
        shared = blob[pos]
        pos += 1
        if not shared:
            times = struct.unpack_from("<%dd" % n, blob, pos)
            pos += 8 * n
        values = struct.unpack_from("<%dd" % n, blob, pos)
        pos += 8 * n
        for t, v in zip(times, values):
            yield job, name, phase, t, v
    assert pos == len(blob)


def staged_samples(con, job_id=None, name=None):
    """
    The points a stopped, crashed or running daemon's database holds but
    has not encoded into blocks (those the tests read: a test's life is
    shorter than a ten-minute span): the staged rows of samples, and the
    points of the staged batches at or after the reported mark (sql/018).
    Dicts of job_id, t, name, value, phase, by time, then as stored.
    """
    out = [(r[0], r[1], r[2], r[3], r[4]) for r in
           con.execute("SELECT job_id, name, phase, t, value FROM samples ORDER BY rowid")]
    if con.execute("SELECT count(*) FROM sqlite_master WHERE name = 'reported_batches'").fetchone()[0]:
        mark = con.execute("SELECT t FROM reported_flushed").fetchone()[0]
        for (blob,) in con.execute("SELECT data FROM reported_batches ORDER BY id"):
            out.extend(p for p in _batch_points(bytes(blob)) if p[3] >= mark)
    rows = [{"job_id": p[0], "name": p[1], "phase": p[2], "t": p[3], "value": p[4]} for p in out
            if (job_id is None or p[0] == job_id) and (name is None or p[1] == name)]
    rows.sort(key=lambda r: r["t"])
    return rows


class Tap:
    """Prints TAP as tests run; the plan comes at the end, or first when declared."""

    current = None   # the suite's Tap: the daemons it starts report their exit through it

    def __init__(self, plan=None):
        self.n = 0
        self.failed = 0
        self.plan = plan
        Tap.current = self
        if plan is not None:
            print("1..%d" % plan, flush=True)

    def ok(self, passed, name, diag=None):
        self.n += 1
        if not passed:
            self.failed += 1
        print("%s %d - %s" % ("ok" if passed else "not ok", self.n, name), flush=True)
        if diag and not passed:
            for line in str(diag).rstrip().splitlines():
                print("# " + line, flush=True)

    def skip(self, name, reason):
        self.n += 1
        print("ok %d - %s # SKIP %s" % (self.n, name, reason), flush=True)

    def skip_all(self, reason):
        """The suite cannot run here: each of its declared cases is reported skipped, saying why."""
        if self.plan is None:
            raise AssertionError("skip_all needs the suite's cases declared: Tap(plan=N)")
        while self.n < self.plan:
            self.skip("case %d of %d" % (self.n + 1, self.plan), reason)
        sys.exit(0)

    def test(self, name):
        """Decorator: runs the function now; an exception or failed assert fails it."""
        def run(fn):
            try:
                fn()
            except Exception:  # noqa: BLE001 - any failure is the test's failure
                self.ok(False, name, traceback.format_exc())
            else:
                self.ok(True, name)
            return fn
        return run

    def bail(self, reason):
        print("Bail out! %s" % reason, flush=True)
        sys.exit(1)

    def done(self):
        for d in list(Daemon.running):
            d.stop()
        if self.plan is None:
            print("1..%d" % self.n, flush=True)
        sys.exit(0)


class UnixHTTPConnection(http.client.HTTPConnection):
    """HTTP over a Unix socket."""

    def __init__(self, path, timeout=10):
        super().__init__("localhost", timeout=timeout)
        self.unix_path = path

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        s.connect(self.unix_path)
        self.sock = s


class Daemon:
    """The built daemon on an ephemeral loopback port with a private state dir."""

    running = []     # started and not yet stopped, in the order they started
    started = 0      # daemons this suite started, to name each in its exit case

    def __init__(self, args=(), db=None, workdir=None, socket_path=True, env=None, start_timeout=60):
        self.owns_workdir = workdir is None
        self.workdir = workdir or tempfile.mkdtemp(prefix="dlprof-test-")
        # Other uids (ownership tests, Slurm jobs) must reach the socket inside.
        os.chmod(self.workdir, 0o755)
        self.db = db or os.path.join(self.workdir, "dlprofd.db")
        if socket_path is True:
            socket_path = os.path.join(self.workdir, "dlprofd.sock")
        self.socket_path = socket_path or ""
        self.args = list(args)
        self.env = env
        self.start_timeout = start_timeout
        self.proc = None
        self.port = None
        self.number = 0
        self.log_path = os.path.join(self.workdir, "daemon-%d.log" % int(time.time() * 1000))

    # -- life cycle --
    def command(self):
        return [DAEMON, "--foreground", "--listen", "127.0.0.1:0", "--db", self.db,
                "--web-root", os.path.join(SRCDIR, "web"), "--socket", self.socket_path,
                "--config", os.path.join(self.workdir, "none.conf")] + self.args

    def start(self):
        conf = os.path.join(self.workdir, "none.conf")
        if not os.path.exists(conf):
            with open(conf, "w") as f:
                f.write("# empty: the test passes everything as flags\n")
        env = dict(os.environ)
        env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
        if self.env:
            env.update(self.env)
        self.logf = open(self.log_path, "w")
        self.proc = subprocess.Popen(self.command(), stdout=self.logf, stderr=subprocess.STDOUT, env=env)
        deadline = time.time() + self.start_timeout
        while time.time() < deadline:
            m = re.search(r"listening on 127\.0\.0\.1:(\d+)", self.log())
            if m and "started:" in self.log():
                self.port = int(m.group(1))
                Daemon.started += 1
                self.number = Daemon.started
                self.owner = os.getpid()
                Daemon.running.append(self)
                return self
            if self.proc.poll() is not None:
                self.logf.close()
                raise RuntimeError("dlprofd exited with %s:\n%s" % (self.proc.returncode, self.log()))
            time.sleep(0.05)
        self.proc.kill()
        self.proc.wait()
        self.logf.close()
        raise RuntimeError("dlprofd did not start in %ss:\n%s" % (self.start_timeout, self.log()))

    def stop(self, sig=signal.SIGTERM, timeout=30):
        """Stops the daemon; returns its exit code (None if it had to be killed).

        Stopped with SIGTERM (the clean way), the stop is judged as a test case
        of the suite: exit 0 within timeout and no sanitizer report, else it
        fails, saying what went wrong.  Any other signal ends it on purpose."""
        if self not in Daemon.running:
            return self.proc.returncode if self.proc else None
        Daemon.running.remove(self)
        exited_before = self.proc.poll() is not None
        hung = False
        if not exited_before:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                hung = True
                self.proc.kill()
                self.proc.wait()
        self.logf.close()
        rc = None if hung else self.proc.returncode
        if sig == signal.SIGTERM:
            self.judge_exit(rc, exited_before, timeout)
        return rc

    def judge_exit(self, rc, exited_before, timeout):
        """The exit case: what a person needs to see when it failed (why, the report or the log's end)."""
        why = None
        if exited_before:
            why = "it exited by itself (status %s) before the test stopped it" % rc
        elif rc is None:
            why = "it did not exit within %ss of SIGTERM (killed)" % timeout
        elif rc != 0:
            why = "it exited with status %s after SIGTERM" % rc
        log = self.log()
        report = sanitizer_report(log)
        if report and why is None:
            why = "its log has a sanitizer report"
        if Tap.current is None:
            return
        diag = None if why is None else "%s:\n%s" % (why, report or log[-3000:])
        Tap.current.ok(why is None, "dlprofd #%d of this suite stops cleanly on SIGTERM (exit 0, no sanitizer "
                                    "report)" % self.number, diag)

    def kill9(self):
        """Ends the daemon with SIGKILL, on purpose (a crash the test simulates)."""
        self.stop(signal.SIGKILL)

    def log(self):
        try:
            with open(self.log_path) as f:
                return f.read()
        except OSError:
            return ""

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        if self.owns_workdir and not os.environ.get("DLPROF_KEEP_TMP"):
            shutil.rmtree(self.workdir, ignore_errors=True)
        return False

    # -- HTTP --
    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def request(self, method, path, body=None, headers=None, unix=False, raw=None, timeout=10):
        """One request; body (not str/bytes) is sent as JSON.  Returns (status, headers, parsed body)."""
        conn = UnixHTTPConnection(self.socket_path, timeout) if unix else \
            http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        hdrs = dict(headers or {})
        data = raw
        if body is not None:
            data = json.dumps(body).encode()
            hdrs.setdefault("Content-Type", "application/json")
        try:
            conn.request(method, path, body=data, headers=hdrs)
            resp = conn.getresponse()
            payload = resp.read()
            rheaders = {k.lower(): v for k, v in resp.getheaders()}
            if rheaders.get("content-type", "").startswith("application/json") and payload:
                payload = json.loads(payload)
            return resp.status, rheaders, payload
        finally:
            conn.close()

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, body=None, **kw):
        return self.request("POST", path, body=body, **kw)

    def register(self, workload="test", **fields):
        fields["workload"] = workload
        status, _, body = self.post("/api/v1/jobs", fields)
        assert status == 201, (status, body)
        return body


@atexit.register
def _stop_left_running():
    """A suite that died before Tap.done leaves no daemon behind (each is still judged)."""
    for d in list(Daemon.running):
        if d.owner == os.getpid():     # not in a forked child: the daemon is its parent's
            d.stop()


def as_uid(uid, fn):
    """fn() in a forked child running as uid (no supplementary groups); returns what it
    returned (JSON-able).  Needs root."""
    if os.getuid() != 0:
        raise AssertionError("this check needs root to switch to another uid")
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            out = json.dumps(fn())
        except BaseException as e:  # noqa: BLE001 - handed back to the parent
            out = json.dumps({"exception": repr(e)})
        os.write(w, out.encode())
        os._exit(0)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    out = json.loads(data)
    assert not (isinstance(out, dict) and "exception" in out), out
    return out


def wait_for(what, check, timeout, interval=0.1):
    """Polls check() until it returns a true value; that value, or AssertionError saying what and the last value."""
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        last = check()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError("%s: not within %ss (last: %r)" % (what, timeout, last))


def wait_until(predicate, timeout=10.0, interval=0.1):
    """Polls predicate until it returns a true value; returns it or raises."""
    deadline = time.time() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.time() >= deadline:
            raise AssertionError("condition not met within %.1fs" % timeout)
        time.sleep(interval)
