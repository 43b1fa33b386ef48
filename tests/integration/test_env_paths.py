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

A config with GPUs (a declared gpus knob) goes through the same paths on a
daemon whose NVML is the test double with two busy and six idle GPUs: two
recommendations at once get two different idle GPUs; one Slurm job's
registration, recommend, TaskProlog and SPANK plugin get the same GPU
(its external id holds the lease); inside an allocation the GPU is one of
the job's, a busy one when they all are, and the answer says so.  Without
NVML the first device is kept and the answer says it was not verified.
"""

import json
import os
import subprocess
import sys
import tempfile
import threading
import urllib.parse

from harness import BUILDDIR, SRCDIR, Daemon, Tap, wait_until

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


def taskprolog(d, workload, job="4243", extra=None):
    """The exports the TaskProlog prints for Slurm job `job` (extra: more of the task's environment)."""
    with tempfile.TemporaryDirectory(prefix="dlprof-env-") as tmp:
        conf = os.path.join(tmp, "slurm-hooks.conf")
        with open(conf, "w") as f:
            f.write("url=%s\ntimeout=5\n" % d.url)
        script = os.path.join(tmp, "taskprolog")
        with open(os.path.join(BUILDDIR, "contrib", "slurm", "dlprof-taskprolog")) as src, \
                open(script, "w") as dst:
            for line in src:
                dst.write("conf=%s\n" % conf if line.startswith("conf=") else line)
        env = {"PATH": os.environ["PATH"], "SLURM_JOB_ID": job, "SLURM_LOCALID": "0",
               "DLPROF_WORKLOAD": workload}
        env.update(extra or {})
        r = subprocess.run(["sh", script], env=env, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r
        return exports(r.stdout)


SPANK_HARNESS = os.path.join(BUILDDIR, "tests", "deploy", "spank_harness")


def spank(d, mode, workload, extra=None):
    """The variables the SPANK plugin sets in Slurm job 4242 (extra: more of the step's environment)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    env.update(extra or {})
    r = subprocess.run([SPANK_HARNESS, d.url, mode, workload], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r
    got = assigns(r.stdout)
    assert got.get("DLPROF_WORKLOAD") == workload and got.get("DLPROF_JOB"), (got, r.stderr)
    return got


def check_slurm(d, workload, served):
    @tap.test("%s: the TaskProlog prints the env" % workload)
    def _():
        got = taskprolog(d, workload)
        assert config_vars(got) == served, (got, served)

    for mode in ("recommend", "tune"):
        if not os.path.exists(SPANK_HARNESS):
            tap.skip("%s: the SPANK plugin (%s) sets the env" % (workload, mode), "built without Slurm's spank.h")
            continue

        @tap.test("%s: the SPANK plugin (%s) sets the env" % (workload, mode))
        def _(mode=mode):
            got = spank(d, mode, workload)
            assert config_vars(got) == served, (got, served)


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

# A config with GPUs: each path hands the job GPUs the daemon saw idle.
GPU_WORKLOAD = "env-paths-gpu"
GPU_KNOBS = {"gpus": {"values": [1]}, "intra_threads": {"values": [2]}}
# The NVML double (tests/nvml_double): GPU 0 runs a process at 42 %, GPU 1
# is 7 % busy with 2 of 16 GiB used, and NVML_DOUBLE_IDLE_GPUS=6 adds
# GPUs 2..7, idle.
BUSY = {"GPU-double-0", "GPU-double-1"}
IDLE = {"GPU-double-%d" % i for i in range(2, 8)}
GPU_TESTS = ("gpus=1: two recommendations at once get two different idle GPUs, never a busy one",
             "one Slurm job: registration, recommend (JSON, format=env) and the TaskProlog give the same GPU",
             "one Slurm job: registration and the SPANK plugin (recommend) give the same GPU",
             "inside a Slurm allocation: the GPU is one of the job's, busy ones said so")


def gpu_ready(d):
    """The first samples of every GPU are in: NVML is available and its process counts are out."""
    _, _, node = d.get("/api/v1/node")
    cols = {c["name"]: c for c in node["collectors"]}
    if cols["nvml"]["status"] != "available":
        return False
    _, _, text = d.get("/metrics")
    text = text.decode() if isinstance(text, bytes) else text
    return 'dlprofd_gpu_processes{gpu="7"}' in text


def recommend_gpu(d, query=""):
    status, _, rec = d.get("/api/v1/recommend?workload=%s%s" % (GPU_WORKLOAD, query))
    assert status == 200, (status, rec)
    return rec


def declare(d, external_id, **fields):
    """Registers a job of the GPU workload under external_id; its knobs declare the space again.

    A registration without knobs (the Slurm hooks') gives the workload the
    built-in space, whose gpus knob needs GPUs in /proc/driver/nvidia: each
    test declares first, and the job's external id holds the GPU it is
    handed, as a Slurm job's does across its hooks."""
    status, _, body = d.post("/api/v1/jobs", dict(workload=GPU_WORKLOAD, knobs=GPU_KNOBS, external_id=external_id,
                                                  **fields))
    assert status in (200, 201) and body["gpu_pick"]["verified"] is True, (status, body)
    return body


def check_gpus(d):
    # First, while every idle GPU is free: a pick outside the allocation would take GPU 2.
    @tap.test(GPU_TESTS[3])
    def _():
        registered = declare(d, "slurm:4244", gpus_allowed="7")
        assert registered["env"]["CUDA_VISIBLE_DEVICES"] == "GPU-double-7", registered
        got = taskprolog(d, GPU_WORKLOAD, job="4244", extra={"SLURM_JOB_GPUS": "7"})
        assert got.get("CUDA_VISIBLE_DEVICES") == "GPU-double-7", got
        registered = declare(d, "slurm:4245", gpus_allowed="0,1")
        assert registered["env"]["CUDA_VISIBLE_DEVICES"] in BUSY, registered
        assert "only 0 of the 1 GPUs asked are idle in the job's allocation" in registered["gpu_pick"]["reason"], \
            registered
        got = taskprolog(d, GPU_WORKLOAD, job="4245", extra={"SLURM_STEP_GPUS": "0,1"})
        assert got.get("CUDA_VISIBLE_DEVICES") == registered["env"]["CUDA_VISIBLE_DEVICES"], (got, registered)

    @tap.test(GPU_TESTS[0])
    def _():
        declare(d, "declare:0")
        barrier = threading.Barrier(2)
        got = [None, None]

        def ask(i):
            barrier.wait()
            got[i] = recommend_gpu(d)
        threads = [threading.Thread(target=ask, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        picked = [r["env"]["CUDA_VISIBLE_DEVICES"] for r in got]
        assert picked[0] != picked[1], picked
        assert set(picked) <= IDLE, picked
        for r in got:
            assert r["gpu_pick"]["verified"] is True and "idle GPU" in r["gpu_pick"]["reason"], r
            assert r["env"]["OMP_NUM_THREADS"] == "2", r

    @tap.test(GPU_TESTS[1])
    def _():
        registered = declare(d, "slurm:4243")
        assert registered["env"].get("CUDA_VISIBLE_DEVICES") in IDLE, registered
        rec = recommend_gpu(d, "&external_id=slurm:4243")
        assert rec["env"] == registered["env"], (rec, registered)
        status, _, text = d.get("/api/v1/recommend?workload=%s&format=env&external_id=slurm:4243" % GPU_WORKLOAD)
        assert status == 200 and config_vars(exports(text.decode())) == rec["env"], text
        assert "\n# the GPUs already leased to slurm:4243\n" in text.decode(), text
        got = taskprolog(d, GPU_WORKLOAD, job="4243")
        assert config_vars(got) == rec["env"], (got, rec)

    if not os.path.exists(SPANK_HARNESS):
        tap.skip(GPU_TESTS[2], "built without Slurm's spank.h")
    else:
        @tap.test(GPU_TESTS[2])
        def _():
            registered = declare(d, "slurm:4242")
            assert registered["env"].get("CUDA_VISIBLE_DEVICES") in IDLE, registered
            # (tune applies its own registration's config, which has the built-in space: no gpus knob here.)
            by_recommend = config_vars(spank(d, "recommend", GPU_WORKLOAD))
            assert by_recommend == registered["env"], (by_recommend, registered)


DOUBLE = os.path.join(BUILDDIR, "tests", "nvml_double", "libnvml-double.so")
with OneCpuDaemon() as d:
    @tap.test("without NVML: gpus=1 keeps the first device, saying GPUs could not be verified")
    def _():
        registered = d.register(workload=GPU_WORKLOAD, knobs=GPU_KNOBS)
        assert registered["env"]["CUDA_VISIBLE_DEVICES"] == "0", registered
        assert "CUDA_DEVICE_ORDER" not in registered["env"], registered
        assert registered["gpu_pick"]["verified"] is False, registered
        assert "could not be verified" in registered["gpu_pick"]["reason"], registered
        rec = recommend_gpu(d)
        assert rec["env"] == registered["env"] and rec["gpu_pick"]["verified"] is False, rec

if not os.path.exists(DOUBLE):
    for name in GPU_TESTS:
        tap.skip(name, "the NVML double is not built")
else:
    with OneCpuDaemon(args=["--interval", "0.2"],
                      env={"DLPROF_NVML_LIBRARY": DOUBLE, "NVML_DOUBLE_IDLE_GPUS": "6",
                           "NVML_DOUBLE_PID": str(os.getpid())}) as d:
        wait_until(lambda: gpu_ready(d), timeout=30)
        check_gpus(d)

tap.done()
