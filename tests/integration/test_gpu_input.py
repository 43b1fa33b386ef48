"""A GPU job whose GPU waits on its input, with the NVML double.

The job is a dlprof session whose "data" phase takes 60 % of each step and
which declares the data-loader workers as a knob; the NVML double
(tests/nvml_double) shows its process on GPU 0 at 10 % SM.  The daemon must
diagnose both that the GPU idles and that the job is input-bound, point both
at the loader workers (DLPROF_DATALOADER_WORKERS), and price the fix with the
config the tuner recommends for the declared knob.  The session is started
first, waiting for the daemon's address, so its pid can be given to the
double, which reads it when NVML starts.
"""

import os
import subprocess
import sys

from harness import BUILDDIR, SRCDIR, Daemon, Tap, wait_until

# Its cases, its daemon's exit included; declared so a build without the double reports each skipped.
CASES = 4
tap = Tap(plan=CASES)
DOUBLE = os.path.join(BUILDDIR, "tests", "nvml_double", "libnvml-double.so")
JOB = """
import os, sys, time
os.environ["DLPROF_URL"] = sys.stdin.readline().strip()
import dlprof
with dlprof.session(workload="gpu-input", interval=0.25,
                    knobs={"dataloader_workers": {"values": [1, 2, 4]}}) as s:
    print("job %s workers %s" % (s.job_id, s.dataloader_workers), flush=True)
    until = time.monotonic() + 150   # past the wait below: the test kills it
    while time.monotonic() < until:
        with s.phase("data"):
            time.sleep(0.06)
        with s.phase("forward"):     # the GPU's part: the double shows it 10 % busy
            time.sleep(0.04)
        s.step(samples=32)
"""
NAMES = ("a GPU job waiting on input: gpus_idle says the GPU waits on input and names DLPROF_DATALOADER_WORKERS",
         "the same job is input_bound, with the GPU's utilisation and a fix setting DLPROF_DATALOADER_WORKERS",
         "the tuner assigned the job one of its declared data-loader worker counts")

if not os.path.exists(DOUBLE):
    tap.skip_all("the NVML double is not built")

env = dict(os.environ, PYTHONPATH=os.path.join(SRCDIR, "client", "python"))
job = subprocess.Popen([sys.executable, "-c", JOB], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                       env=env)
try:
    with Daemon(args=["--interval", "0.25", "--store-interval", "0.5", "--diag-sustain", "3"],
                env={"DLPROF_NVML_LIBRARY": DOUBLE, "NVML_DOUBLE_PID": str(job.pid),
                     "NVML_DOUBLE_PID_SM": "10"}) as d:
        job.stdin.write(d.url + "\n")
        job.stdin.flush()
        words = job.stdout.readline().split()
        assert words[:1] == ["job"], words
        job_id = int(words[1])

        last = {}

        def verdicts():
            _, _, body = d.get("/api/v1/jobs/%d/report" % job_id)
            last["report"] = body
            got = {v["kind"]: v for v in body.get("verdicts", [])}
            return got if {"gpus_idle", "input_bound"} <= set(got) else None
        try:
            seen = wait_until(verdicts, timeout=90, interval=0.5)
        except AssertionError:
            seen = {}
            print("# the last report: %s" % last.get("report"))
            for name in ("gpu.count", "gpu.util_percent"):
                print("# %s: %s" % (name, d.get("/api/v1/jobs/%d/series?name=%s" % (job_id, name))[2]))

        @tap.test(NAMES[0])
        def _():
            assert "gpus_idle" in seen, last
            v = seen["gpus_idle"]
            assert v["evidence"]["figures"]["gpus"] == 1, v
            assert v["evidence"]["figures"]["gpu_util_percent"] == 10, v
            assert "the GPUs wait on input" in v["hint"] and "DLPROF_DATALOADER_WORKERS" in v["hint"], v["hint"]

        @tap.test(NAMES[1])
        def _():
            assert "input_bound" in seen, last
            v = seen["input_bound"]
            assert "GPUs busy 10%" in v["hint"] and "DLPROF_DATALOADER_WORKERS" in v["hint"], v["hint"]
            assert set(v["fix"]["env"]) == {"DLPROF_DATALOADER_WORKERS"}, v["fix"]
            assert v["fix"]["config"]["dataloader_workers"] in (1, 2, 4), v["fix"]

        @tap.test(NAMES[2])
        def _():
            assert words[2:3] == ["workers"] and int(words[3]) in (1, 2, 4), words
finally:
    job.kill()
    job.wait()
    job.stdin.close()
    job.stdout.close()
tap.done()
