"""/metrics as a real Prometheus server sees it, not only promtool.

Starts the built daemon with one sampled job (a sleeping process), then
Debian's prometheus on an ephemeral loopback port with a scratch config and
TSDB that scrapes the daemon every second, and asks its HTTP API for what
it stored.  Prometheus sets `job` and `instance` on every scraped series and
renames a scraped label of the same name to `exported_job`: the per-job
series must arrive with `jobid` and `workload` intact, `job` being the
scrape job's own, and no series may carry an `exported_` label.  Skipped
where prometheus is not installed (scripts/deps.sh installs it).  TAP output.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Daemon, Tap, wait_until  # noqa: E402

SCRAPE_JOB = "dlprofd-under-test"

# The cases this file reports, its daemons' exits included; declared so a machine that cannot
# run it reports each of them skipped.
CASES = 5
tap = Tap(plan=CASES)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Prometheus:
    """prometheus scraping one target, in a scratch directory; stopped at exit."""

    def __init__(self, binary, target):
        self.binary = binary
        self.root = tempfile.mkdtemp(prefix="dlprof-prom-")
        self.config = os.path.join(self.root, "prometheus.yml")
        with open(self.config, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                    "scrape_configs:\n"
                    "  - job_name: %s\n"
                    "    static_configs:\n"
                    "      - targets: ['%s']\n" % (SCRAPE_JOB, target))
        self.proc = None
        self.port = None

    def start(self):
        # The port is picked free and handed over: prometheus does not report
        # the port of :0.  Another process may take it first: try again.
        for _ in range(5):
            self.port = free_port()
            self.logf = open(os.path.join(self.root, "prometheus.log"), "w")
            self.proc = subprocess.Popen(
                [self.binary, "--config.file=" + self.config,
                 "--storage.tsdb.path=" + os.path.join(self.root, "data"),
                 "--web.listen-address=127.0.0.1:%d" % self.port, "--log.level=warn"],
                stdout=self.logf, stderr=subprocess.STDOUT, cwd=self.root)
            deadline = time.time() + 60
            while time.time() < deadline and self.proc.poll() is None:
                try:
                    with urllib.request.urlopen(self.url("/-/ready"), timeout=2) as r:
                        if r.status == 200:
                            return self
                except OSError:
                    pass
                time.sleep(0.2)
            self.stop()
        raise RuntimeError("prometheus did not start:\n" + self.log())

    def url(self, path, **query):
        return "http://127.0.0.1:%d%s%s" % (self.port, path,
                                            "?" + urllib.parse.urlencode(query) if query else "")

    def api(self, path, **query):
        with urllib.request.urlopen(self.url(path, **query), timeout=10) as r:
            doc = json.load(r)
        assert doc.get("status") == "success", doc
        return doc["data"]

    def log(self):
        try:
            with open(os.path.join(self.root, "prometheus.log")) as f:
                return f.read()[-3000:]
        except OSError:
            return ""

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc:
            self.logf.close()

    def close(self):
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


binary = shutil.which("prometheus") or ("/usr/bin/prometheus" if os.access("/usr/bin/prometheus", os.X_OK) else None)
if not binary:
    tap.skip_all("prometheus is not installed (Debian package prometheus)")

sleeper = subprocess.Popen(["sleep", "600"])
try:
    with Daemon(args=["--interval", "0.2"]) as d:
        jid = d.register("prom-check", pid=sleeper.pid)["id"]
        prom = Prometheus(binary, "127.0.0.1:%d" % d.port)
        try:
            prom.start()
            series = []

            @tap.test("prometheus scrapes the daemon: target up")
            def _():
                def up():
                    result = prom.api("/api/v1/query", query='up{job="%s"}' % SCRAPE_JOB)["result"]
                    return result and result[0]["value"][1] == "1"
                try:
                    wait_until(up, timeout=60, interval=0.5)
                except Exception:
                    raise AssertionError("target never up:\n" + prom.log())

            @tap.test("the job's series arrive with jobid and workload; job is the scrape job's")
            def _():
                def stored():
                    result = prom.api("/api/v1/query", query="dlprofd_job_cpu_cores")["result"]
                    return [r["metric"] for r in result if r["metric"].get("workload") == "prom-check"]
                found = wait_until(stored, timeout=60, interval=0.5)
                assert len(found) == 1, found
                labels = found[0]
                assert labels.get("jobid") == str(jid), labels
                assert labels.get("job") == SCRAPE_JOB, labels

            @tap.test("no stored series carries an exported_ label (no collision)")
            def _():
                series.extend(prom.api("/api/v1/series", **{"match[]": '{job="%s"}' % SCRAPE_JOB}))
                assert any(s["__name__"].startswith("dlprofd_job_") for s in series), series[:5]
                clashes = sorted({k for s in series for k in s if k.startswith("exported_")})
                assert not clashes, (clashes, [s for s in series if clashes[0] in s][:3])

            @tap.test("every per-job family carries jobid")
            def _():
                per_job = [s for s in series if s["__name__"].startswith("dlprofd_job_")]
                assert per_job and all("jobid" in s for s in per_job), \
                    [s for s in per_job if "jobid" not in s][:3]
        finally:
            prom.close()
finally:
    sleeper.kill()
    sleeper.wait()

tap.done()
