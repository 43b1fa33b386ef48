"""One config through every path that turns it into a job's environment.

A workload whose space holds one config gives every job of it that config,
so every path must give the job the same variables: the registration
answer's "env", /api/v1/recommend as JSON, as export lines (format=env)
and as bare lines (format=slurm), the Slurm TaskProlog, the SPANK plugin in
recommend and in tune mode (its job-step code run with stand-ins for SPANK,
tests/deploy/spank_harness.c), and the Python client (which leaves the
variables fixed at exec, LD_PRELOAD and CUDA_VISIBLE_DEVICES, alone).  The
daemon runs on one CPU, so the built-in knobs have one value each; one
workload declares single-valued knobs (registration, recommend, client:
the Slurm hooks declare none, and a registration without a declaration
would give the workload the built-in space again), another declares
nothing (every path).  The names the client reads back are names of the
daemon's one mapping, daemon/knobs_env.c.
"""

import json
import os
import subprocess
import sys
import tempfile
import urllib.parse

from harness import BUILDDIR, SRCDIR, Daemon, Tap

tap = Tap()

WORKLOAD = "env-paths"
KNOBS = {
    "intra_threads": {"values": [3]},
    "interop_threads": {"values": [2]},
    "dataloader_workers": {"values": [2]},
    "affinity": {"values": ["spread"]},
    "allocator": {"values": ["jemalloc"]},
    "micro_batch": {"values": [4]},
}
# What the mapping makes of that config: the contract of knobs_env.h.
EXPECTED = {
    "OMP_NUM_THREADS": "3",
    "MKL_NUM_THREADS": "3",
    "DLPROF_INTEROP_THREADS": "2",
    "DLPROF_DATALOADER_WORKERS": "2",
    "OMP_PROC_BIND": "spread",
    "OMP_PLACES": "cores",
    "LD_PRELOAD": "libjemalloc.so.2",
    "DLPROF_KNOB_MICRO_BATCH": "4",
}
# The paths' own variables, beside the config's.
OWN = ("DLPROF_WORKLOAD", "DLPROF_PARAMS", "DLPROF_JOB", "DLPROF_SLURM")
FIXED_AT_EXEC = ("LD_PRELOAD", "CUDA_VISIBLE_DEVICES")


def exports(text):
    """{NAME: value} of 'export NAME=value' lines, quotes of the shell form taken off."""
    out = {}
    for line in text.splitlines():
        if not line.startswith("export "):
            continue
        name, _, value = line[len("export "):].partition("=")
        if len(value) >= 2 and value[0] == value[-1] == "'":
            value = value[1:-1].replace("'\\''", "'")
        out[name] = value
    return out


def config_vars(env):
    return {k: v for k, v in env.items() if k not in OWN}


def assigns(lines):
    return dict(line.split("=", 1) for line in lines.splitlines() if "=" in line and not line.startswith("#"))


# What the mapping makes of each config: the contract of knobs_env.h.
EXPECTED_BUILTIN = {
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "DLPROF_INTEROP_THREADS": "1",
    "OMP_PROC_BIND": "false",
}


class OneCpuDaemon(Daemon):
    """The daemon on CPU 0 only: intra- and inter-op threads have one value."""

    def command(self):
        return ["taskset", "-c", "0"] + super().command()


def check_recommend(d, workload, served):
    @tap.test("%s: recommend as JSON gives the same env" % workload)
    def _():
        status, _, rec = d.get("/api/v1/recommend?workload=" + workload)
        assert status == 200, (status, rec)
        assert rec["env"] == served, (rec, served)

    for fmt in ("env", "slurm"):
        @tap.test("%s: recommend format=%s: the export lines are the env" % (workload, fmt))
        def _(fmt=fmt):
            status, _, text = d.get("/api/v1/recommend?workload=%s&format=%s&job=9" % (workload, fmt))
            assert status == 200, (status, text)
            got = exports(text.decode())
            assert config_vars(got) == served, (got, served)
            assert got["DLPROF_WORKLOAD"] == workload and got["DLPROF_JOB"] == "9", got


def check_client(d, workload, knobs, served):
    @tap.test("%s: the Python client sets the env but the variables fixed at exec" % workload)
    def _():
        program = ("import json, os, dlprof\n"
                   "with dlprof.session(workload=%r, knobs=%r, interval=3600) as s:\n"
                   "    print(json.dumps({'job': s.job_id, 'env': {k: os.environ.get(k) for k in %r}}))\n"
                   % (workload, knobs, sorted(served)))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DLPROF_", "OMP_", "MKL_"))
               and k not in FIXED_AT_EXEC}
        env.update(PYTHONPATH=os.path.join(SRCDIR, "client", "python"), DLPROF_URL=d.url)
        r = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r
        out = json.loads(r.stdout.strip().splitlines()[-1])
        assert out["job"], out
        want = {k: (None if k in FIXED_AT_EXEC else v) for k, v in served.items()}
        assert out["env"] == want, (out, want)


def check_slurm(d, workload, served):
    @tap.test("%s: the TaskProlog prints the env" % workload)
    def _():
        with tempfile.TemporaryDirectory(prefix="dlprof-env-") as tmp:
            conf = os.path.join(tmp, "slurm-hooks.conf")
            with open(conf, "w") as f:
                f.write("url=%s\ntimeout=5\n" % d.url)
            script = os.path.join(tmp, "taskprolog")
            with open(os.path.join(BUILDDIR, "contrib", "slurm", "dlprof-taskprolog")) as src, \
                    open(script, "w") as dst:
                for line in src:
                    dst.write("conf=%s\n" % conf if line.startswith("conf=") else line)
            env = {"PATH": os.environ["PATH"], "SLURM_JOB_ID": "4243", "SLURM_LOCALID": "0",
                   "DLPROF_WORKLOAD": workload}
            r = subprocess.run(["sh", script], env=env, capture_output=True, text=True, timeout=60)
            assert r.returncode == 0, r
            got = exports(r.stdout)
            assert config_vars(got) == served, (got, served, r.stderr)

    harness = os.path.join(BUILDDIR, "tests", "deploy", "spank_harness")
    for mode in ("recommend", "tune"):
        if not os.path.exists(harness):
            tap.skip("%s: the SPANK plugin (%s) sets the env" % (workload, mode), "built without Slurm's spank.h")
            continue

        @tap.test("%s: the SPANK plugin (%s) sets the env" % (workload, mode))
        def _(mode=mode):
            r = subprocess.run([harness, d.url, mode, workload], capture_output=True, text=True, timeout=60)
            assert r.returncode == 0, r
            got = assigns(r.stdout)
            assert config_vars(got) == served, (got, served, r.stderr)
            assert got.get("DLPROF_WORKLOAD") == workload and got.get("DLPROF_JOB"), got


with OneCpuDaemon() as d:
    declared = d.register(workload=WORKLOAD, knobs=KNOBS)
    builtin = d.register(workload=WORKLOAD + "-builtin")

    @tap.test("the registration answer carries the config's variables beside the config")
    def _():
        assert declared["config"].get("intra_threads") == 3, declared
        assert declared.get("env") == EXPECTED, declared
        assert builtin["config"].get("intra_threads") == 1, builtin
        assert builtin.get("env") == EXPECTED_BUILTIN, builtin

    for workload, knobs, want in ((WORKLOAD, KNOBS, EXPECTED), (WORKLOAD + "-builtin", None, EXPECTED_BUILTIN)):
        check_recommend(d, workload, want)
        check_client(d, workload, knobs, want)
    check_slurm(d, WORKLOAD + "-builtin", EXPECTED_BUILTIN)

    @tap.test("the names the client reads back are the daemon's mapping's")
    def _():
        sys.path.insert(0, os.path.join(SRCDIR, "client", "python"))
        from dlprof import _apply
        with open(os.path.join(SRCDIR, "daemon", "knobs_env.c")) as f:
            table = f.read()
        missing = [n for n in _apply.ENV.values() if '"%s"' % n not in table]
        assert not missing, missing
        assert set(_apply.ENV.values()) >= {"OMP_NUM_THREADS", "OMP_PROC_BIND", "LD_PRELOAD"}, _apply.ENV

tap.done()
