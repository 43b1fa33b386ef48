"""A private PostgreSQL server for the cluster store's tests.

``PgServer`` runs Debian's server binaries (/usr/lib/postgresql/*/bin):
``initdb`` in a fresh temporary directory and ``postgres`` listening only
on a Unix socket in that directory, both as an unprivileged user when the
tests run as root (PostgreSQL refuses root).  Nothing in the checkout is
read by that user.  ``kill()`` SIGKILLs the server and all its processes
(a crash), ``start()`` starts it again on the same data (crash recovery),
``stop()`` shuts it down, and leaving the ``with`` block removes it all.
"""

import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time

PORT = 5432  # only names the socket file: the socket lives in the private directory


def bindir():
    """The newest installed server's bin directory, or None."""
    dirs = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"),
                  key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    return os.path.dirname(dirs[-1]) if dirs else None


def cluster_args(pg, node):
    """dlprofd's arguments for a node named node sharing through pg."""
    return ["--cluster-store", pg.conninfo, "--cluster-node", node]


class PgServer:
    def __init__(self, user="nobody", settings=None):
        self.settings = dict(settings or {})
        self.bin = bindir()
        if not self.bin:
            raise RuntimeError("no PostgreSQL server under /usr/lib/postgresql (apt-get install postgresql)")
        self.dir = tempfile.mkdtemp(prefix="dlprof-pg-")
        self.data = os.path.join(self.dir, "data")
        self.log_path = os.path.join(self.dir, "postgres.log")
        self.as_user = os.geteuid() == 0
        if self.as_user:
            pw = pwd.getpwnam(user)
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
            self.prefix = ["runuser", "-u", user, "--"]
        else:
            self.prefix = []
        os.chmod(self.dir, 0o711)  # the daemon (root or us) reaches the socket; nobody else lists it
        self.proc = None
        self.logf = None
        subprocess.run(self.prefix + [os.path.join(self.bin, "initdb"), "-D", self.data, "-A", "trust",
                                      "-U", "dlprof", "--no-sync", "-E", "UTF8", "--locale", "C"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd="/")

    @property
    def conninfo(self):
        return "host=%s port=%d user=dlprof dbname=postgres" % (self.dir, PORT)

    def start(self, timeout=30):
        self.logf = open(self.log_path, "a")
        self.proc = subprocess.Popen(
            self.prefix + [os.path.join(self.bin, "postgres"), "-D", self.data, "-k", self.dir,
                           "-p", str(PORT), "-c", "listen_addresses=", "-c", "fsync=off",
                           "-c", "max_connections=200"]
            + [a for k, v in self.settings.items() for a in ("-c", "%s=%s" % (k, v))],
            stdout=self.logf, stderr=subprocess.STDOUT, cwd="/", start_new_session=True)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("postgres exited:\n" + self.log())
            if subprocess.run([os.path.join(self.bin, "pg_isready"), "-q", "-h", self.dir, "-p", str(PORT)]
                              ).returncode == 0:
                return self
            time.sleep(0.1)
        raise RuntimeError("postgres did not start:\n" + self.log())

    def kill(self):
        """A crash: SIGKILL to the postmaster and every backend (its process group)."""
        pid = self.postmaster_pid()
        children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split() \
            if pid else []
        os.killpg(self.proc.pid, signal.SIGKILL)
        # Backends are session leaders of their own (setsid): kill them by parent.
        for c in children:
            try:
                os.kill(int(c), signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()
        # Wait until no backend holds the data directory's shared memory.
        deadline = time.time() + 10
        while time.time() < deadline and any(os.path.exists("/proc/%s" % c) for c in children):
            time.sleep(0.05)
        self.logf.close()

    def postmaster_pid(self):
        """The server's own pid (runuser in between does not pass signals on reliably), or None."""
        try:
            with open(os.path.join(self.data, "postmaster.pid")) as f:
                return int(f.readline())
        except (OSError, ValueError):
            return None

    def stop(self):
        if self.proc and self.proc.poll() is None:
            pid = self.postmaster_pid()
            try:
                os.kill(pid, signal.SIGINT) if pid else self.proc.send_signal(signal.SIGINT)  # fast shutdown
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()
        if self.logf and not self.logf.closed:
            self.logf.close()

    def sql(self, query):
        """Runs query with psql; its rows as lists of strings."""
        out = subprocess.run([os.path.join(self.bin, "psql"), "-X", "-q", "-A", "-t", "-F", "\t",
                              "-v", "ON_ERROR_STOP=1", "-h", self.dir, "-p", str(PORT), "-U", "dlprof",
                              "-d", "postgres", "-c", query],
                             check=True, capture_output=True, text=True).stdout
        return [line.split("\t") for line in out.splitlines() if line]

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
        if not os.environ.get("DLPROF_KEEP_TMP"):
            shutil.rmtree(self.dir, ignore_errors=True)
        return False


def serve():
    """For tests in other languages: starts a server, prints {"conninfo", "psql"} as one JSON
    line, and runs until stdin closes; then stops it and removes it."""
    import json
    import sys
    with PgServer() as pg:
        print(json.dumps({"conninfo": pg.conninfo, "psql": os.path.join(pg.bin, "psql"), "host": pg.dir,
                          "port": PORT, "user": "dlprof"}), flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    serve()
