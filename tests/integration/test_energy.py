"""A job's energy and samples per joule through the built daemon.

The daemon runs with a sys_root whose class/powercap is a copy of the RAPL
fixture (tests/fixtures/sys-rapl; the rest links to the real /sys), whose
energy_uj counters this test advances while it runs (written to a new file
and renamed over the old, as a counter changes at once), and with the NVML
double, which shows the job's process on GPU 0 with a counter that advances
100 J a read.  The job is a busy process; it reports its throughput.  The job
view, its report and /metrics must carry the CPU and GPU joules attributed
to it, their sum, and samples per joule consistent with the samples it
reported; a daemon whose sys_root has no powercap must say why instead of
showing 0.  TAP output.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import BUILDDIR, SRCDIR, Daemon, Tap, wait_until  # noqa: E402

tap = Tap()
ZONES = {"intel-rapl:0": 40000, "intel-rapl:0:0": 30000, "intel-rapl:0:2": 5000, "intel-rapl:1": 40000,
         "intel-rapl:1:0": 5000, "intel-rapl:2": 100000}  # uJ added every 10 ms


def make_sys_root(with_rapl):
    root = tempfile.mkdtemp(prefix="dlprof-energy-sys-")
    os.chmod(root, 0o755)
    for part in ("devices", "bus", "fs", "kernel"):
        if os.path.exists("/sys/" + part):
            os.symlink("/sys/" + part, os.path.join(root, part))
    if with_rapl:
        os.makedirs(os.path.join(root, "class"))
        shutil.copytree(os.path.join(SRCDIR, "tests", "fixtures", "sys-rapl", "class", "powercap"),
                        os.path.join(root, "class", "powercap"))
    return root


class Counters(threading.Thread):
    """Advances the fixture's energy_uj files until stopped."""

    def __init__(self, root):
        super().__init__(daemon=True)
        self.root, self.stop = os.path.join(root, "class", "powercap"), threading.Event()

    def run(self):
        while not self.stop.is_set():
            for zone, step in ZONES.items():
                path = os.path.join(self.root, zone, "energy_uj")
                with open(path) as f:
                    value = int(f.read()) + step
                with open(path + ".new", "w") as f:
                    f.write("%d\n" % value)
                os.rename(path + ".new", path)
            time.sleep(0.01)


def daemon_for(root, pid, workdir):
    with open(os.path.join(workdir, "none.conf"), "w") as f:
        f.write("[dlprofd]\nsys_root = %s\n" % root)
    env = {"NVML_DOUBLE_PID": str(pid)}
    double = os.path.join(BUILDDIR, "tests", "nvml_double", "libnvml-double.so")
    if os.path.exists(double):
        env["DLPROF_NVML_LIBRARY"] = double
    return Daemon(args=["--interval", "0.2", "--store-interval", "0.4"], workdir=workdir, env=env)


def metric_lines(text, name):
    return [line for line in text.splitlines() if line.startswith(name + "{") or line.startswith(name + " ")]


def metric_value(text, name, labels):
    for line in metric_lines(text, name):
        if all('%s="%s"' % kv in line for kv in labels.items()):
            return float(line.rsplit(" ", 1)[1])
    return None


def report_throughput(d, job):
    """Four reports of 100 samples/s a second apart in the job's life: 300 samples over the three seconds between."""
    jid = job["id"]
    status, _, view = d.get("/api/v1/jobs/%d" % jid)
    assert status == 200, (status, view)
    t0 = round(view["started"], 3) + 0.5
    while time.time() < t0 + 3.5:
        time.sleep(0.1)
    samples = [{"t": t0 + i, "name": "samples_per_s", "value": 100.0} for i in range(4)]
    status, _, body = d.post("/api/v1/jobs/%d/metrics" % jid, {"samples": samples})
    assert status == 200, (status, body)


busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
counters = None
roots, workdirs = [], []
try:
    root = make_sys_root(True)
    roots.append(root)
    counters = Counters(root)
    counters.start()
    workdirs.append(tempfile.mkdtemp(prefix="dlprof-energy-"))
    with daemon_for(root, busy.pid, workdirs[-1]) as d:
        job = d.register("energy-busy", pid=busy.pid)
        jid = job["id"]
        report_throughput(d, job)

        def job_energy():
            status, _, job = d.get("/api/v1/jobs/%d" % jid)
            assert status == 200, (status, job)
            e = job["energy"]
            return job if e["cpu_joules"] and e["samples_per_joule"] else None
        job = wait_until(job_energy, timeout=30)

        @tap.test("the job view carries its CPU joules, their sum, kWh and samples per joule")
        def _():
            e = job["energy"]
            assert e["cpu_joules"] > 0, e
            gpu = e["gpu_joules"] or 0
            assert abs(e["joules"] - (e["cpu_joules"] + gpu)) < 1e-9 * e["joules"], e
            assert abs(e["kwh"] - e["joules"] / 3.6e6) < 1e-15, e
            assert abs(e["samples"] - 300.0) < 1e-6, e
            assert abs(e["samples_per_joule"] - 300.0 / e["joules"]) < 1e-9 * e["samples_per_joule"], e
            # The figure is the job's energy.cpu_joules series, which its charts show.
            assert job["latest"]["energy.cpu_joules"] == e["cpu_joules"], job["latest"]
            assert "unavailable" not in e or "cpu" not in e["unavailable"], e

        @tap.test("with the NVML double the job's GPU joules come from GPU 0's counter")
        def _():
            if "DLPROF_NVML_LIBRARY" not in d.env:
                raise AssertionError("the NVML double was not built")
            e = job["energy"]
            assert e["gpu_joules"] is not None and e["gpu_joules"] > 0, e

        @tap.test("the job's report carries the same energy figures")
        def _():
            status, _, report = d.get("/api/v1/jobs/%d/report" % jid)
            assert status == 200, (status, report)
            e = report["energy"]
            assert e["cpu_joules"] > 0 and abs(e["samples"] - 300.0) < 1e-6, e
            assert e["samples_per_joule"] > 0, e

        @tap.test("dlprofctl report JOB prints the job's joules and samples per joule")
        def _():
            p = subprocess.run([os.path.join(BUILDDIR, "tools", "dlprofctl"), "-u", d.url, "report", str(jid)],
                               capture_output=True, text=True, timeout=30)
            assert p.returncode == 0, (p.returncode, p.stdout, p.stderr)
            m = re.search(r"^  energy: joules=(\S+) \((\S+) kWh\) cpu_joules=(\S+) gpu_joules=(\S+) "
                          r"samples_per_joule=(\S+)$", p.stdout, re.M)
            assert m, p.stdout
            joules, spj = float(m.group(1)), float(m.group(5))
            assert joules > 0 and abs(spj * joules - 300.0) < 300.0 * 1e-5, p.stdout

        @tap.test("/metrics: zones, the node's CPU energy, the job's energy by source and samples per joule")
        def _():
            def scraped():
                _, _, text = d.get("/metrics")
                text = text.decode() if isinstance(text, bytes) else text
                return text if metric_lines(text, "dlprofd_job_samples_per_joule") else None
            text = wait_until(scraped, timeout=15)
            labels = {"jobid": jid}
            assert metric_value(text, "dlprofd_node_energy_joules_total", {"zone": "package_0"}) > 0, text
            assert metric_value(text, "dlprofd_node_energy_joules_total", {"zone": "package_0.core"}) > 0, text
            assert metric_value(text, "dlprofd_node_power_watts", {"zone": "psys"}) is not None, text
            node = float(metric_lines(text, "dlprofd_node_cpu_energy_joules_total")[0].rsplit(" ", 1)[1])
            cpu = metric_value(text, "dlprofd_job_energy_joules_total", dict(labels, source="cpu"))
            assert 0 < cpu <= node, (cpu, node)
            gpu = metric_value(text, "dlprofd_job_energy_joules_total", dict(labels, source="gpu")) or 0
            assert "# TYPE dlprofd_job_energy_joules_total counter" in text, text
            spj = metric_value(text, "dlprofd_job_samples_per_joule", labels)
            # The scrape reads the joules of one tick; the samples are fixed: 300 / joules.
            assert spj > 0 and abs(spj * (cpu + gpu) - 300.0) < 1e-6, (spj, cpu, gpu)
            promtool = shutil.which("promtool")
            if promtool:
                # Lint problems (naming advice) are not format errors: only exit status 1 with an error line fails.
                p = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True)
                errors = [line for line in (p.stdout + p.stderr).splitlines() if "error" in line.lower()]
                assert not errors, errors
        busy_pid = busy.pid
    counters.stop.set()

    root = make_sys_root(False)
    roots.append(root)
    workdirs.append(tempfile.mkdtemp(prefix="dlprof-energy-"))
    with daemon_for(root, busy_pid, workdirs[-1]) as d:
        job = d.register("energy-busy", pid=busy.pid)
        jid = job["id"]
        report_throughput(d, job)

        @tap.test("without powercap the job says why it has no CPU energy, not 0")
        def _():
            def probed():
                _, _, job = d.get("/api/v1/jobs/%d" % jid)
                why = job["energy"].get("unavailable", {}).get("cpu", "")
                return job if "rapl unavailable" in why else None
            job = wait_until(probed, timeout=30)
            e = job["energy"]
            assert e["cpu_joules"] is None, e
            assert "no powercap interface" in e["unavailable"]["cpu"], e
            assert "energy.cpu_joules" not in job["latest"], job["latest"]
            p = subprocess.run([os.path.join(BUILDDIR, "tools", "dlprofctl"), "-u", d.url, "report", str(jid)],
                               capture_output=True, text=True, timeout=30)
            assert "    cpu_joules not measured: rapl unavailable: no powercap interface" in p.stdout, p.stdout
finally:
    if counters is not None:
        counters.stop.set()
    busy.kill()
    busy.wait()
    for path in roots + workdirs:
        shutil.rmtree(path, ignore_errors=True)
tap.done()
