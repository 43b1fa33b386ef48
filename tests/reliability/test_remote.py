"""Access control and per-address limits seen from a real non-loopback
client.  The daemon runs in a network namespace of its own (192.0.2.1 and
its own loopback), the client in another (192.0.2.2), joined by a veth
pair; nothing touches the host's network.  Needs root (ip netns); skipped
with the reason otherwise.

Paths: mutations from the remote address without a token, with a wrong
one and with the right one; the same from loopback and the Unix socket;
reads under read_access any, local and token, switched by SIGHUP, and a
token replaced by SIGHUP; a daemon with no token refusing every remote
mutation; connections per remote address capped while loopback is not."""

import http.client
import json
import os
import re
import signal
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Daemon, NetPair, Tap, is_root, wait_until  # noqa: E402

tap = Tap()
TOKEN = "remote-test-token-0123456789abcdef"


class NsDaemon(Daemon):
    """The daemon inside the server namespace, also listening on its veth address."""

    def __init__(self, net, conf, args=()):
        super().__init__(args=["--listen", NetPair.SERVER + ":0"] + list(args))
        self.net = net
        with open(os.path.join(self.workdir, "none.conf"), "w") as f:
            f.write(conf)

    def command(self):
        return self.net.server_cmd() + super().command()

    def reconfigure(self, conf):
        with open(os.path.join(self.workdir, "none.conf"), "w") as f:
            f.write(conf)
        before = self.log().count("reload: configuration")
        self.proc.send_signal(signal.SIGHUP)
        wait_until(lambda: self.log().count("reload: configuration") > before)

    @property
    def remote_port(self):
        return int(re.search(r"listening on 192\.0\.2\.1:(\d+)", self.log()).group(1))


def http_call(host, port, method, path, body=None, token=None):
    conn = http.client.HTTPConnection(host, port, timeout=10)
    headers = {}
    if token is not None:
        headers["Authorization"] = "Bearer " + token
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    try:
        conn.request(method, path, body=data, headers=headers)
        r = conn.getresponse()
        payload = r.read()
        if r.getheader("Content-Type", "").startswith("application/json") and payload:
            payload = json.loads(payload)
        return r.status, payload
    finally:
        conn.close()


def main(net):
    d = NsDaemon(net, "token = %s\nread_access = any\n" % TOKEN)
    d.start()
    rport = d.remote_port

    def remote(method, path, body=None, token=None):
        return net.in_client(lambda: http_call(NetPair.SERVER, rport, method, path, body, token))

    def loopback(method, path, body=None):
        return net.in_server(lambda: http_call("127.0.0.1", d.port, method, path, body))

    @tap.test("remote mutation without a token: 403 forbidden")
    def _():
        status, body = remote("POST", "/api/v1/jobs", {"workload": "remote"})
        assert status == 403 and body["error"] == "forbidden", (status, body)

    @tap.test("remote mutation with a wrong token (and with a prefix of the right one): 403")
    def _():
        for wrong in ("nope", TOKEN[:-1], TOKEN + "x", TOKEN.upper()):
            status, body = remote("POST", "/api/v1/jobs", {"workload": "remote"}, token=wrong)
            assert status == 403, (wrong, status, body)

    job = {}

    @tap.test("remote mutation with the token: registered, then its metrics accepted")
    def _():
        status, body = remote("POST", "/api/v1/jobs", {"workload": "remote"}, token=TOKEN)
        assert status == 201, (status, body)
        job["id"] = body["id"]
        status, body = remote("POST", "/api/v1/jobs/%d/metrics" % job["id"], {"samples": []}, token=TOKEN)
        assert status == 200, (status, body)

    @tap.test("mutations from loopback and the Unix socket need no token")
    def _():
        assert loopback("POST", "/api/v1/jobs", {"workload": "local"})[0] == 201
        assert d.post("/api/v1/jobs", {"workload": "unix"}, unix=True)[0] == 201

    @tap.test("read_access = any: remote reads without a token")
    def _():
        assert remote("GET", "/api/v1/jobs")[0] == 200 and remote("GET", "/")[0] == 200

    d.reconfigure("token = %s\nread_access = local\n" % TOKEN)

    @tap.test("read_access = local (by SIGHUP): remote reads 403, even with the token")
    def _():
        for path in ("/api/v1/jobs", "/healthz", "/", "/metrics"):
            status, body = remote("GET", path)
            assert status == 403 and body["error"] == "forbidden", (path, status, body)
        assert remote("GET", "/api/v1/jobs", token=TOKEN)[0] == 403

    @tap.test("read_access = local: loopback and Unix socket reads still 200")
    def _():
        assert loopback("GET", "/api/v1/jobs")[0] == 200
        assert d.get("/api/v1/jobs", unix=True)[0] == 200

    d.reconfigure("token = %s\nread_access = token\n" % TOKEN)

    @tap.test("read_access = token: remote reads 403 without, 200 with the token")
    def _():
        assert remote("GET", "/api/v1/jobs")[0] == 403
        assert remote("GET", "/api/v1/jobs", token="wrong")[0] == 403
        assert remote("GET", "/api/v1/jobs", token=TOKEN)[0] == 200
        assert loopback("GET", "/api/v1/jobs")[0] == 200

    d.reconfigure("token = another-token\nread_access = any\n")

    @tap.test("a token replaced by SIGHUP: the old one is refused, the new one accepted")
    def _():
        assert remote("POST", "/api/v1/jobs", {"workload": "r"}, token=TOKEN)[0] == 403
        assert remote("POST", "/api/v1/jobs", {"workload": "r"}, token="another-token")[0] == 201

    d.reconfigure("read_access = any\n")

    @tap.test("no token configured: every remote mutation is refused, whatever it presents")
    def _():
        for t in (None, "", "another-token"):
            status, body = remote("POST", "/api/v1/jobs", {"workload": "r"}, token=t)
            assert status == 403, (t, status, body)

    d.stop()   # the harness judges its exit, as a case of its own


def per_address_limit(net):
    d = NsDaemon(net, "", args=["--max-connections-per-ip", "5"])
    d.start()
    rport = d.remote_port

    def open_remote(n):
        return net.in_client(lambda: [socket.create_connection((NetPair.SERVER, rport), timeout=10)
                                      for _ in range(n)])

    held = open_remote(5)

    @tap.test("a remote address holding max_connections_per_ip cannot open one more")
    def _():
        try:
            status, _ = net.in_client(lambda: http_call(NetPair.SERVER, rport, "GET", "/healthz"))
        except (OSError, http.client.HTTPException):
            return
        raise AssertionError("a sixth connection was served: %s" % status)

    @tap.test("loopback is not capped: 20 connections and /healthz on a 21st")
    def _():
        local = net.in_server(lambda: [socket.create_connection(("127.0.0.1", d.port), timeout=10)
                                       for _ in range(20)])
        try:
            assert net.in_server(lambda: http_call("127.0.0.1", d.port, "GET", "/healthz"))[0] == 200
        finally:
            for s in local:
                s.close()

    for s in held:
        s.close()

    @tap.test("once its connections close the remote address is served again")
    def _():
        def served():
            try:
                return net.in_client(lambda: http_call(NetPair.SERVER, rport, "GET", "/healthz"))[0] == 200
            except (OSError, http.client.HTTPException):
                return False   # refused until the daemon has seen the closes
        wait_until(served, timeout=10, interval=0.2)

    d.stop()   # the harness judges its exit, as a case of its own


if not is_root():
    tap.skip("access control from a remote address", "needs root to create network namespaces")
else:
    try:
        with NetPair("dlp%d" % os.getpid()) as net:
            main(net)
            per_address_limit(net)
    except OSError as e:
        tap.skip("access control from a remote address", "no network namespaces here: %s" % e)
tap.done()
