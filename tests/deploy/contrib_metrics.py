"""The Prometheus scrape configuration and the Grafana dashboard under
contrib/ work against what /metrics serves: promtool accepts the
configuration, the dashboard is JSON Grafana can import (panels, targets,
the $instance variable), and every dlprofd_* series it queries is one the
daemon writes (named in the metric catalogue or the /metrics writers).
TAP output."""

import glob
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
from harness import SRCDIR, Tap  # noqa: E402

tap = Tap()
DASH = os.path.join(SRCDIR, "contrib", "grafana", "dlprofd-cluster.json")
PROM = os.path.join(SRCDIR, "contrib", "prometheus", "prometheus.yml")


def families():
    """Every family name the daemon can write, from its sources."""
    names = set()
    catalogue = open(os.path.join(SRCDIR, "collectors", "metrics.c")).read()
    prefix = {"J": "dlprofd_job_", "N": "dlprofd_node_", "METRIC_GPU": "dlprofd_gpu_", "METRIC_MIG": "dlprofd_gpu_",
              "METRIC_JOB": "dlprofd_job_", "METRIC_NODE": "dlprofd_node_"}
    for scope, prom in re.findall(r'\{"[^"]+", (\w+), "[^"]*", "(\w+)"', catalogue):
        names.add(prefix.get(scope, "dlprofd_node_") + prom)
    for path in glob.glob(os.path.join(SRCDIR, "daemon", "*.c")):
        text = open(path).read()
        names.update(re.findall(r'"(dlprofd_\w+)', text))
        for pre, name in re.findall(r'family_head\(out, "(dlprofd_\w*)", "(\w+)"', text):
            names.add(pre + name)
        if os.path.basename(path) == "cluster.c":
            names.update("dlprofd_cluster_" + n for n in re.findall(r'\{"(\w+)", "(?:gauge|counter)"', text))
    return names


@tap.test("promtool accepts contrib/prometheus/prometheus.yml")
def _():
    if not shutil.which("promtool"):
        raise AssertionError("promtool not found (apt-get install prometheus)")
    p = subprocess.run(["promtool", "check", "config", "--syntax-only", PROM], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr


@tap.test("the Grafana dashboard is importable JSON: panels with targets, a datasource and node variable")
def _():
    d = json.load(open(DASH))
    assert d["title"] and d["uid"] and d["schemaVersion"] >= 30, d.keys()
    names = [v["name"] for v in d["templating"]["list"]]
    assert names == ["datasource", "instance"], names
    assert len(d["panels"]) >= 8 and len({p["id"] for p in d["panels"]}) == len(d["panels"])
    for p in d["panels"]:
        assert p["targets"] and all(t["expr"] for t in p["targets"]), p


@tap.test("every dlprofd_* series the dashboard queries is one /metrics writes")
def _():
    d = json.load(open(DASH))
    known = families()
    used = {m for p in d["panels"] for t in p["targets"] for m in re.findall(r"\bdlprofd_\w+", t["expr"])}
    assert used and used <= known, sorted(used - known)
    assert "dlprofd_cluster_up" in used and "dlprofd_job_samples_per_second" in used, used


tap.done()
