"""What the reliability suites share, on top of tests/integration/harness.py.

* ``tmpfs``: a small tmpfs mounted for the test (root only);
* ``NetPair``: two network namespaces joined by a veth pair, so a test can
  reach the daemon from a non-loopback address without touching the host's
  own network;
* ``raw``: one HTTP exchange over a plain socket, for malformed requests.

A daemon's clean exit (status 0 after SIGTERM, no ASan, UBSan, LSan or
TSan report in its log) is judged by the harness for every daemon it
stops, as a case of its own.
"""

import ctypes
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from harness import DAEMON, SRCDIR, Daemon, Tap, sanitizer_report, staged_samples, wait_until  # noqa: E402,F401


def is_root():
    return os.geteuid() == 0


class tmpfs:
    """A tmpfs of size bytes at a fresh directory: ``with tmpfs(4 << 20) as fs``, at ``fs.path``."""

    def __init__(self, size):
        self.size = size
        self.path = tempfile.mkdtemp(prefix="dlprof-tmpfs-")

    def __enter__(self):
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%d,mode=0755" % self.size, "tmpfs", self.path],
                           capture_output=True, text=True)
        if r.returncode != 0:
            os.rmdir(self.path)
            raise OSError("mount tmpfs: " + r.stderr.strip())
        return self

    def resize(self, size):
        subprocess.run(["mount", "-o", "remount,size=%d" % size, self.path], check=True)

    def remount(self, opts):
        subprocess.run(["mount", "-o", "remount," + opts, self.path], check=True, capture_output=True)

    def __exit__(self, *exc):
        subprocess.run(["umount", "-l", self.path], capture_output=True)
        shutil.rmtree(self.path, ignore_errors=True)
        return False


def fill(path):
    """Writes zeros into path until the file system is full, down to its last block; returns the bytes written."""
    written = 0
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        for chunk in (1 << 20, 1 << 16, 4096, 512):
            while True:
                try:
                    n = os.write(fd, b"\0" * chunk)
                except OSError:
                    break
                written += n
                if n < chunk:
                    break
    finally:
        os.close(fd)
    return written


_CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


class NetPair:
    """Namespaces <tag>-srv (192.0.2.1) and <tag>-cli (192.0.2.2) on a veth pair.

    192.0.2.0/24 is TEST-NET-1, never routed; the traffic stays on the pair.
    ``server_cmd`` prefixes a command to run inside the server's namespace;
    ``in_client(fn)`` runs fn in a thread that entered the client's one
    (network namespaces are per thread), returning its result.
    """

    SERVER = "192.0.2.1"
    CLIENT = "192.0.2.2"

    def __init__(self, tag):
        self.srv = "%s-srv" % tag
        self.cli = "%s-cli" % tag

    def _ip(self, *args):
        subprocess.run(["ip"] + list(args), check=True, capture_output=True)

    def __enter__(self):
        try:
            self._ip("netns", "add", self.srv)
            self._ip("netns", "add", self.cli)
            self._ip("link", "add", "dlpv-s", "netns", self.srv, "type", "veth", "peer", "name", "dlpv-c",
                     "netns", self.cli)
            self._ip("-n", self.srv, "addr", "add", self.SERVER + "/30", "dev", "dlpv-s")
            self._ip("-n", self.cli, "addr", "add", self.CLIENT + "/30", "dev", "dlpv-c")
            for ns, dev in ((self.srv, "dlpv-s"), (self.cli, "dlpv-c")):
                self._ip("-n", ns, "link", "set", dev, "up")
                self._ip("-n", ns, "link", "set", "lo", "up")
        except (subprocess.CalledProcessError, FileNotFoundError) as e:
            self.__exit__()
            raise OSError("network namespaces: %s" % getattr(e, "stderr", e))
        return self

    def __exit__(self, *exc):
        for ns in (self.srv, self.cli):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        return False

    def server_cmd(self):
        return ["ip", "netns", "exec", self.srv]

    def in_ns(self, ns, fn):
        out = {}

        def run():
            try:
                fd = os.open("/run/netns/" + ns, os.O_RDONLY)
                try:
                    if _libc.setns(fd, _CLONE_NEWNET) != 0:
                        raise OSError(ctypes.get_errno(), "setns")
                finally:
                    os.close(fd)
                out["value"] = fn()
            except BaseException as e:  # noqa: BLE001 - handed back to the caller
                out["error"] = e
        t = threading.Thread(target=run)
        t.start()
        t.join()
        if "error" in out:
            raise out["error"]
        return out["value"]

    def in_client(self, fn):
        return self.in_ns(self.cli, fn)

    def in_server(self, fn):
        return self.in_ns(self.srv, fn)


def raw(port, data, host="127.0.0.1", timeout=10, shut=True):
    """Sends bytes, returns everything the server answers until it closes (or times out)."""
    s = socket.create_connection((host, port), timeout=timeout)
    try:
        s.sendall(data)
        if shut:
            s.shutdown(socket.SHUT_WR)
        out = b""
        while True:
            try:
                chunk = s.recv(65536)
            except (socket.timeout, ConnectionResetError):
                break
            if not chunk:
                break
            out += chunk
        return out
    finally:
        s.close()


def status_of(answer):
    """The status code of a raw HTTP answer, or None."""
    line = answer.split(b"\r\n", 1)[0].split()
    return int(line[1]) if len(line) >= 2 and line[1].isdigit() else None
