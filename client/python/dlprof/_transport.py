"""HTTP to dlprofd, over TCP or over its Unix socket.

One Transport talks to one daemon through one kept-alive connection, which
it reopens after any failure.  It is not thread-safe: the session hands it
from the job's thread (registration) to the reporter thread, which then owns
it.  Every failure becomes one of two exceptions, so callers decide what to
retry: Unreachable (no answer: connection refused, timeout, broken
connection, garbage) and ApiError (the daemon answered with an error status).
"""

import http.client
import json
import os
import socket
import urllib.parse

DEFAULT_SOCKET = "/run/dlprofd/dlprofd.sock"
DEFAULT_URL = "http://127.0.0.1:8080"


class Unreachable(Exception):
    """The daemon gave no usable answer."""


class ApiError(Exception):
    """The daemon answered with an error status."""

    def __init__(self, status, error, detail):
        super().__init__("%d %s: %s" % (status, error, detail))
        self.status = status
        self.error = error
        self.detail = detail


class UnixHTTPConnection(http.client.HTTPConnection):
    """An HTTPConnection whose socket is an AF_UNIX stream socket."""

    def __init__(self, path, timeout):
        # The Host header must name something; the daemon ignores it.
        super().__init__("localhost", timeout=timeout)
        self.unix_path = path

    def connect(self):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(self.timeout)
            sock.connect(self.unix_path)
        except BaseException:
            sock.close()
            raise
        self.sock = sock


class Endpoint:
    """Where the daemon listens: a Unix socket path or an http(s) URL."""

    def __init__(self, unix_path=None, scheme="http", host=None, port=None, prefix=""):
        self.unix_path = unix_path
        self.scheme = scheme
        self.host = host
        self.port = port
        self.prefix = prefix.rstrip("/")

    def __str__(self):
        if self.unix_path is not None:
            return "unix:" + self.unix_path
        host = "[%s]" % self.host if ":" in self.host else self.host
        return "%s://%s:%d%s" % (self.scheme, host, self.port, self.prefix)

    def connection(self, timeout):
        if self.unix_path is not None:
            return UnixHTTPConnection(self.unix_path, timeout)
        if self.scheme == "https":
            return http.client.HTTPSConnection(self.host, self.port, timeout=timeout)
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)


def parse_url(url):
    """An Endpoint from "http://host:port[/prefix]", "host:port" or "unix:/path"."""
    if url.startswith("unix:"):
        path = url[len("unix:"):]
        if path.startswith("//"):
            path = path[2:]
        if not path:
            raise ValueError("empty socket path in %r" % url)
        return Endpoint(unix_path=path)
    if "://" not in url:
        url = "http://" + url
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("not an http(s) URL: %r" % url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return Endpoint(scheme=parts.scheme, host=parts.hostname, port=port, prefix=parts.path)


def resolve_endpoint(url=None, socket_path=None, environ=None):
    """
    Picks the daemon's address.  Explicit arguments win over the environment
    (DLPROF_SOCKET, then DLPROF_URL); a socket wins over a URL because the
    daemon knows the uid of a socket peer.  With nothing given, the default
    socket when it exists, else http://127.0.0.1:8080.
    """
    env = os.environ if environ is None else environ
    if socket_path:
        return Endpoint(unix_path=socket_path)
    if url:
        return parse_url(url)
    if env.get("DLPROF_SOCKET"):
        return Endpoint(unix_path=env["DLPROF_SOCKET"])
    if env.get("DLPROF_URL"):
        return parse_url(env["DLPROF_URL"])
    if os.path.exists(DEFAULT_SOCKET):
        return Endpoint(unix_path=DEFAULT_SOCKET)
    return parse_url(DEFAULT_URL)


class Transport:
    """JSON requests to one daemon; see the module comment for errors."""

    def __init__(self, endpoint, timeout=2.0, token=None):
        self.endpoint = endpoint
        self.timeout = timeout
        self.token = token
        self._conn = None

    def close(self):
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def request(self, method, path, body=None):
        """Sends body as JSON; returns (status, decoded JSON or None) for a 2xx."""
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            try:
                data = json.dumps(body, separators=(",", ":"), allow_nan=False).encode()
            except (TypeError, ValueError) as exc:
                # The daemon would refuse it too; say so the same way.
                raise ApiError(0, "unencodable", "not JSON: %s" % exc) from None
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        status, raw = self._exchange(method, self.endpoint.prefix + path, data, headers)
        try:
            doc = json.loads(raw) if raw else None
        except ValueError:
            doc = None
        if 200 <= status < 300:
            return status, doc
        error, detail = "http_%d" % status, raw[:200].decode("utf-8", "replace")
        if isinstance(doc, dict):
            error = str(doc.get("error", error))
            detail = str(doc.get("detail", ""))
        raise ApiError(status, error, detail)

    def _exchange(self, method, path, data, headers):
        # A kept-alive connection the daemon closed in the meantime fails on
        # first use; one retry on a fresh connection tells that apart from a
        # daemon that is gone.  A metrics batch retried after its first
        # send went through is safe: it carries its (stream, seq), which
        # the daemon stores at most once; end is idempotent.
        for attempt in (0, 1):
            fresh = self._conn is None
            if fresh:
                self._conn = self.endpoint.connection(self.timeout)
            try:
                self._conn.request(method, path, body=data, headers=headers)
                resp = self._conn.getresponse()
                raw = resp.read()
                if resp.will_close:
                    self.close()
                return resp.status, raw
            except (OSError, http.client.HTTPException) as exc:
                self.close()
                if fresh or attempt == 1:
                    raise Unreachable("%s: %s" % (self.endpoint, exc or type(exc).__name__)) from None
        raise AssertionError("unreachable")
