"""Helpers shared by the client's test files (not a test itself).

Puts the harness (tests/integration) and the client's source tree on
sys.path, and adds what the client tests need on top of the harness: the
samples a job has in the daemon's database, the dlprof log records of a
block, the daemon's /metrics counters, and a runner for job scripts under
/usr/bin/python3 with torch.
"""

import contextlib
import json
import logging
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.environ.get("DLPROF_SRCDIR") or os.path.abspath(os.path.join(HERE, "..", ".."))
CLIENT = os.path.join(SRCDIR, "client", "python")
sys.path.insert(0, os.path.join(SRCDIR, "tests", "integration"))
sys.path.insert(0, CLIENT)

from harness import Daemon, Tap, staged_samples, wait_until  # noqa: E402,F401

SYSTEM_PYTHON = "/usr/bin/python3"

# The tests choose the daemon explicitly; nothing from the caller's
# environment may point the client elsewhere.
for _var in ("DLPROF_URL", "DLPROF_SOCKET", "DLPROF_JOB", "DLPROF_WORKLOAD", "DLPROF_TOKEN",
             "DLPROF_DATALOADER_WORKERS"):
    os.environ.pop(_var, None)


def samples(d, job_id, name=None):
    """
    The samples the daemon committed for a job, as dicts, read from its
    database (read-only).  A 2xx answer means committed, so this is the
    ground truth of what was stored.
    """
    db = sqlite3.connect("file:%s?mode=ro" % d.db, uri=True, timeout=10)
    try:
        rows = staged_samples(db, job_id, name)
    finally:
        db.close()
    return [{"t": r["t"], "name": r["name"], "value": r["value"], "phase": r["phase"]} for r in rows]


def job(d, job_id):
    status, _, body = d.get("/api/v1/jobs/%d" % job_id)
    assert status == 200, (status, body)
    return body


def jobs(d, state="all"):
    status, _, body = d.get("/api/v1/jobs?state=" + state)
    assert status == 200, (status, body)
    return body["jobs"]


def prometheus(d, name):
    """The value of an unlabelled metric on /metrics, or None when absent."""
    status, _, body = d.get("/metrics")
    if status != 200:
        return None
    text = body.decode() if isinstance(body, bytes) else str(body)
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


class _Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []

    def emit(self, record):
        self.records.append(record)


@contextlib.contextmanager
def dlprof_log():
    """Collects the dlprof logger's records; yields the list."""
    log = logging.getLogger("dlprof")
    handler = _Collect()
    old = log.propagate
    log.addHandler(handler)
    log.propagate = False
    try:
        yield handler.records
    finally:
        log.removeHandler(handler)
        log.propagate = old


def warnings_in(records):
    return [r.getMessage() for r in records if r.levelno >= logging.WARNING]


def has_torch():
    return subprocess.call([SYSTEM_PYTHON, "-c", "import torch"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL) == 0


@contextlib.contextmanager
def client_for_any_uid():
    """
    A copy of the client's package that any uid can import, for a child
    run as another user: the checkout may sit under a directory only its
    owner can enter (mktemp -d, a home directory), so the child must need
    nothing from it.  Yields the directory to put on PYTHONPATH.
    """
    top = tempfile.mkdtemp(prefix="dlprof-client-")
    try:
        shutil.copytree(os.path.join(CLIENT, "dlprof"), os.path.join(top, "dlprof"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        # Modes, not the checkout's (a clone under umask 077 has 0600 files).
        for d, _, files in os.walk(top):
            os.chmod(d, 0o755)
            for f in files:
                os.chmod(os.path.join(d, f), 0o644)
        yield top
    finally:
        shutil.rmtree(top, ignore_errors=True)


def run_script(args, env=None, timeout=120):
    """Runs /usr/bin/python3 with args; returns (rc, stdout, stderr)."""
    full = dict(os.environ)
    full.update(env or {})
    full["PYTHONPATH"] = CLIENT
    p = subprocess.run([SYSTEM_PYTHON] + list(args), env=full, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=timeout)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def run_torch_job(kind, env, *extra, timeout=120):
    """Runs torch_job.py; returns (rc, report or None, stderr)."""
    fd, out = tempfile.mkstemp(prefix="dlprof-job-", suffix=".json")
    os.close(fd)
    try:
        rc, _, err = run_script([os.path.join(HERE, "torch_job.py"), kind, "--out", out] + list(extra),
                                env=env, timeout=timeout)
        report = None
        if rc == 0:
            with open(out) as f:
                report = json.load(f)
        return rc, report, err
    finally:
        os.unlink(out)


def dlprof_lines(stderr):
    """The lines the client logged (they all start with "dlprof:")."""
    return [line for line in stderr.splitlines() if line.startswith("dlprof:")]
