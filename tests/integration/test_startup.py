"""A newcomer's first commands with the built daemon.

1. The development command (``dlprofd --foreground --listen ADDR --db
   var/dlprofd.db``, no --socket) on a machine without /run/dlprofd: the
   default Unix socket cannot be made, the daemon says so once, names the
   --socket flag and serves TCP.  Run in a private mount namespace with an
   empty /run when root; directly when /run/dlprofd cannot be written.
2. A socket the configuration names (flag or file) is still required: the
   daemon refuses to start without it and says which path failed.
3. ``dlprofd -n`` on a terminal prints its messages without the syslog
   "<3>" prefixes journald wants; through a pipe they stay.

TAP output.
"""

import os
import pty
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import DAEMON, Daemon, Tap  # noqa: E402

DEFAULT_SOCKET = "/run/dlprofd/dlprofd.sock"

tap = Tap()


def private_run_prefix():
    """A command prefix that gives the daemon an empty /run; None when impossible."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return None
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs tmpfs /run"],
                           capture_output=True)
    if probe.returncode != 0:
        return None
    return ["unshare", "-m", "sh", "-c", 'mount -t tmpfs tmpfs /run && exec "$@"', "sh"]


def run_dir_unusable():
    """True where this user cannot make the default socket without help."""
    d = os.path.dirname(DEFAULT_SOCKET)
    return not os.path.isdir(d) or not os.access(d, os.W_OK | os.X_OK)


class DevDaemon(Daemon):
    """The design's development command: no --socket, the database under var/."""

    def __init__(self, prefix, config_text=None):
        super().__init__()
        self.prefix = prefix
        self.config_text = config_text

    def command(self):
        cmd = [DAEMON, "--foreground", "--listen", "127.0.0.1:0", "--db",
               os.path.join(self.workdir, "var", "dlprofd.db"),
               "--config", os.path.join(self.workdir, "dev.conf")]
        return self.prefix + cmd

    def start(self):
        with open(os.path.join(self.workdir, "dev.conf"), "w") as f:
            f.write(self.config_text or "# nothing: the built-in defaults\n")
        return super().start()


prefix = private_run_prefix()
if prefix is None and not run_dir_unusable():
    for name in ("the development command serves TCP without /run/dlprofd, naming --socket",
                 "a socket named in the configuration is still required"):
        tap.skip(name, "needs root (a private /run) or a machine where %s cannot be made"
                 % DEFAULT_SOCKET)
else:
    prefix = prefix or []

    @tap.test("the development command serves TCP without /run/dlprofd, naming --socket")
    def _():
        with DevDaemon(prefix) as d:
            status, _, body = d.get("/api/v1/node")
            assert status == 200, (status, body)
            log = d.log()
            warned = [line for line in log.splitlines() if DEFAULT_SOCKET in line and "--socket" in line]
            assert len(warned) == 1, log
            assert "cannot start" not in log, log
            assert not os.path.exists(os.path.join(d.workdir, "dlprofd.sock"))

    @tap.test("a socket named in the configuration is still required")
    def _():
        d = DevDaemon(prefix, config_text="socket = %s\n" % DEFAULT_SOCKET)
        try:
            d.start()
        except RuntimeError as exc:
            text = str(exc)
            assert DEFAULT_SOCKET in text and "cannot start" in text, text
        else:
            d.stop()
            raise AssertionError("started without the socket its configuration names:\n" + d.log())
        finally:
            shutil.rmtree(d.workdir, ignore_errors=True)


@tap.test("a --socket flag in a missing directory: the daemon refuses, naming the path")
def _():
    missing = os.path.join(tempfile.mkdtemp(prefix="dlprof-nosock-"), "absent", "d.sock")
    try:
        with Daemon(socket_path=missing):
            raise AssertionError("started without the socket --socket names")
    except RuntimeError as exc:
        assert missing in str(exc) and "cannot start" in str(exc), str(exc)
    finally:
        shutil.rmtree(os.path.dirname(os.path.dirname(missing)), ignore_errors=True)


def check_config_output(on_tty):
    """dlprofd -n with two bad values; its stderr as text."""
    cmd = [DAEMON, "-n", "--config", "/dev/null", "--interval", "never", "--log-level", "loud"]
    if not on_tty:
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=30)
        return p.returncode, p.stderr.decode()
    master, slave = pty.openpty()
    try:
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=slave)
        os.close(slave)
        chunks = []
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:   # EIO: the terminal's other side closed
                break
            if not chunk:
                break
            chunks.append(chunk)
        return p.wait(timeout=30), b"".join(chunks).decode().replace("\r\n", "\n")
    finally:
        os.close(master)


@tap.test("dlprofd -n on a terminal: the errors without syslog <N> prefixes")
def _():
    rc, err = check_config_output(on_tty=True)
    assert rc == 2, (rc, err)
    lines = [x for x in err.splitlines() if x]
    assert any("--interval" in x and "never" in x for x in lines), err
    assert any("log_level" in x or "log-level" in x for x in lines), err
    assert not [x for x in lines if x[:1] == "<" and x[2:3] == ">"], err


@tap.test("dlprofd -n through a pipe (journald): each line keeps its <3> prefix")
def _():
    rc, err = check_config_output(on_tty=False)
    assert rc == 2, (rc, err)
    lines = [x for x in err.splitlines() if x]
    assert lines and all(x.startswith("<3>") for x in lines), err


tap.done()
