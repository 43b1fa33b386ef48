"""A batch the daemon committed but whose answer was lost is stored once.

Between the client and the daemon sits a proxy (in this test, on loopback)
that forwards each request and reads the daemon's answer, and for chosen
metrics requests then resets the client's connection instead of passing
the answer on: the batch is committed, the client saw a reset.  The client
sends it again (the transport at once on a fresh connection; the reporter
at its next cycle when that fails too), and the daemon must store and
count it once: no (t, name) twice in the database, and the ingest counter
moved by the rows stored.
"""

import socket
import struct
import threading
import time

from clientlib import Daemon, Tap, dlprof_log, prometheus, samples, wait_until, warnings_in

import dlprof

tap = Tap()


def read_message(sock, buf):
    """One HTTP message (head and Content-Length body) from sock; (bytes, rest) or (None, buf) at EOF."""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            return None, buf
        buf += chunk
    head, _, rest = buf.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        key, _, value = line.partition(b":")
        if key.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            return None, buf
        rest += chunk
    return head + b"\r\n\r\n" + rest[:length], rest[length:]


class ResettingProxy:
    """Forwards HTTP/1.1 to the daemon; resets after the commit of the next `resets` metrics posts."""

    def __init__(self, port):
        self.port = port
        self.resets = 0
        self.reset_done = 0
        self.lock = threading.Lock()
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.url = "http://127.0.0.1:%d" % self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def arm(self, n):
        with self.lock:
            self.resets = n

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _take_reset(self, request):
        if b"/metrics" not in request.split(b"\r\n", 1)[0]:
            return False
        with self.lock:
            if self.resets == 0:
                return False
            self.resets -= 1
            self.reset_done += 1
            return True

    def _serve(self, client):
        upstream = socket.create_connection(("127.0.0.1", self.port))
        cbuf = ubuf = b""
        try:
            while True:
                request, cbuf = read_message(client, cbuf)
                if request is None:
                    return
                upstream.sendall(request)
                answer, ubuf = read_message(upstream, ubuf)
                if answer is None:
                    return
                if self._take_reset(request):
                    # The daemon answered (so it committed); the client gets an RST.
                    client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    return
                client.sendall(answer)
        except OSError:
            return
        finally:
            client.close()
            upstream.close()

    def close(self):
        self.listener.close()


def steps(s, n):
    for _ in range(n):
        time.sleep(0.002)
        s.step(samples=8)


def rows_once(d, job_id):
    """The job's client samples; asserts none is stored twice."""
    rows = [(r["t"], r["name"], r["phase"]) for r in samples(d, job_id)
            if r["name"] in ("step_time_s", "samples_per_s")]
    assert len(rows) == len(set(rows)), "stored twice: %d rows, %d distinct" % (len(rows), len(set(rows)))
    return rows


with Daemon() as d:
    proxy = ResettingProxy(d.port)

    for resets, how in ((1, "the transport's immediate retry"), (2, "the reporter's next cycle")):
        @tap.test("a reset after the commit, resent by %s: stored and counted once" % how)
        def _():
            with dlprof_log() as records:
                with dlprof.session(workload="once-%d" % resets, url=proxy.url, interval=3600) as s:
                    jid = s.job_id
                    assert jid is not None
                    steps(s, 5)
                    assert s.flush(timeout=10)       # the batch before the resets
                    before = prometheus(d, "dlprofd_ingest_samples_total")
                    done = proxy.reset_done
                    proxy.arm(resets)
                    steps(s, 5)
                    s.flush(timeout=10)
                    assert proxy.reset_done == done + resets, (proxy.reset_done, done)
                    if resets == 2:
                        s.flush(timeout=10)          # the reporter's next cycle resends it
                    wait_until(lambda: len(rows_once(d, jid)) == 20, timeout=20)
                    after = prometheus(d, "dlprofd_ingest_samples_total")
                    steps(s, 1)
                    s.flush(timeout=10)
                rows = rows_once(d, jid)
                assert len(rows) == 22, len(rows)
                # The resent batch (10 samples) was counted when stored, not again.
                assert after - before == 10, (before, after)
            assert len(warnings_in(records)) <= 1, warnings_in(records)

    proxy.close()
tap.done()
