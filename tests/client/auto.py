"""The zero-touch path: unmodified scripts under `python3 -m dlprof` and `dlprofctl run`.

auto_job.py holds the scripts.  A training job of a nested model is one job
whose steps are its optimizer steps (the first, setup, left out), whose
samples are the leading dimension of the model's input summed over the
step's micro-batches with gradients on (a validation forward is not
counted), and whose phases are the model's top-level children (not the
inner model's) and the data loader, those under a few percent of a step
folded, all reported as found; the model saves and copies as its own class,
and it and its optimizer die where the script drops them.
An inference job steps at each forward.  A script that opens its own session
keeps its own marks, in the one job.  A script that never imports torch
runs as it would, with its exit status, and the site's own sitecustomize
still runs under the launcher.  DLPROF_AUTO=0 finds nothing.
"""

import json
import os
import subprocess
import tempfile

import clientlib
from clientlib import CLIENT, SYSTEM_PYTHON, Daemon, Tap, job, jobs, samples
from harness import BUILDDIR

tap = Tap()
HERE = os.path.dirname(os.path.abspath(__file__))
JOB = os.path.join(HERE, "auto_job.py")
CTL = os.path.join(BUILDDIR, "tools", "dlprofctl")
STEPS = 12


def launch(d, mode, how, env=None, site=None):
    """Runs auto_job.py MODE under `python3 -m dlprof` (how "-m") or `dlprofctl run` ("ctl"): (rc, out, stderr)."""
    work = tempfile.mkdtemp(prefix="dlprof-auto-")
    out = os.path.join(work, "out.json")
    full = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "DLPROF_"))}
    path = [CLIENT]
    if site is not None:
        # The site's own sitecustomize, which the bootstrap must not hide.
        os.makedirs(os.path.join(work, "site"))
        with open(os.path.join(work, "site", "sitecustomize.py"), "w") as f:
            f.write("MARK = %r\n" % site)
        path.append(os.path.join(work, "site"))
    full.update(PYTHONPATH=os.pathsep.join(path), DLPROF_URL=d.url, **(env or {}))
    args = [JOB, mode, str(STEPS), out]
    argv = [SYSTEM_PYTHON, "-m", "dlprof"] + args if how == "-m" else \
        [CTL, "--url", d.url, "run", "--", SYSTEM_PYTHON] + args
    p = subprocess.run(argv, env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=180)
    result = None
    if os.path.exists(out):
        with open(out) as f:
            result = json.load(f)
        result["out"] = out
    subprocess.run(["rm", "-rf", work])
    return p.returncode, result, p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace")


def job_of(d, result):
    """The one job of the run that wrote result (its command names the run's own file)."""
    found = [j for j in jobs(d) if result["out"] in (j.get("command") or "")]
    assert len(found) == 1, (result, found)
    return job(d, found[0]["id"])


def phases_of(d, jid, name):
    return {s["phase"]: s["value"] for s in samples(d, jid, name)}


def check_training(d, result, err):
    j = job_of(d, result)
    assert j["state"] == "ended" and j["workload"] == "auto_job", j
    steps = samples(d, j["id"], "step_time_s")
    # Optimizer steps, the first (setup) left out.
    assert len(steps) == STEPS - 1, (len(steps), err)
    rates = {s["t"]: s["value"] for s in samples(d, j["id"], "samples_per_s")}
    for s in steps:
        # Two micro-batches of 16 with gradients on; the validation batch of 7 is not counted.
        assert abs(rates[s["t"]] * s["value"] - result["batch"]) < 0.01 * result["batch"], (rates[s["t"]], s)
    kept = phases_of(d, j["id"], "auto.phase_share")
    folded = phases_of(d, j["id"], "auto.folded_share")
    assert "backbone" in kept, (kept, folded, err)
    assert set(kept) | set(folded) <= {"backbone", "head", "dropout", "data"}, (kept, folded)
    assert not set(kept) & set(folded) and 0 < sum(kept.values()) <= 1.0, (kept, folded)
    assert all(v >= 0.05 for v in kept.values()) and all(v < 0.05 for v in folded.values()), (kept, folded)
    timed = {s["phase"] for s in samples(d, j["id"], "phase_time_s")}
    assert timed == set(kept), (timed, kept)
    assert result["class"] == result["copy_class"] == "Outer" and result["saved_bytes"] > 0, result
    # The model and optimizer die where the script drops them: dlprof's hooks hold neither.
    assert result["freed"] == [True, True], result
    return j


# The cases below that run torch: a machine without it reports each of them skipped.
TORCH_CASES = 5

with Daemon() as d:
    if not clientlib.has_torch():
        for k in range(TORCH_CASES):
            tap.skip("unmodified torch script, case %d of %d" % (k + 1, TORCH_CASES),
                     "no torch for /usr/bin/python3 (Debian python3-torch)")
    else:
        @tap.test("python3 -m dlprof, training: optimizer steps, summed micro-batches, top-level phases")
        def _():
            rc, result, err = launch(d, "train", "-m")
            assert rc == 0, err[-3000:]
            j = check_training(d, result, err)
            assert j["exit_status"] == 0 and j["external_id"].startswith("run:"), j

        @tap.test("python3 -m dlprof, inference: a step at each forward of the model")
        def _():
            rc, result, err = launch(d, "infer", "-m")
            assert rc == 0, err[-3000:]
            j = job_of(d, result)
            steps = samples(d, j["id"], "step_time_s")
            # The model is known at its second call and timed from its third: steps from the fourth on.
            assert len(steps) == STEPS - 3, (len(steps), err)
            rates = {s["t"]: s["value"] for s in samples(d, j["id"], "samples_per_s")}
            assert all(abs(rates[s["t"]] * s["value"] - 32) < 0.32 for s in steps), (rates, steps)
            assert "backbone" in phases_of(d, j["id"], "auto.phase_share"), err

        @tap.test("a script that marks its own steps keeps its marks, in the one job")
        def _():
            rc, result, err = launch(d, "marks", "-m")
            assert rc == 0, err[-3000:]
            j = job_of(d, result)
            assert j["id"] == result["job_id"] and j["workload"] == "marked", (j, result)
            assert len(samples(d, j["id"], "step_time_s")) == STEPS, err
            assert {s["phase"] for s in samples(d, j["id"], "phase_time_s")} == {"fwd", "bwd"}, err
            assert not samples(d, j["id"], "auto.phase_share"), err
            assert j["state"] == "ended" and j["exit_status"] == 0, j

        @tap.test("dlprofctl run, training: the bootstrap finds the same, and the site's sitecustomize runs")
        def _():
            rc, result, err = launch(d, "train", "ctl", site="site-train")
            assert rc == 0, err[-3000:]
            assert result["site"] == "site-train", (result, err)
            check_training(d, result, err)

        @tap.test("DLPROF_AUTO=0: the session opens, nothing is hooked")
        def _():
            rc, result, err = launch(d, "train", "-m", env={"DLPROF_AUTO": "0"})
            assert rc == 0, err[-3000:]
            j = job_of(d, result)
            assert samples(d, j["id"]) == [] and j["state"] == "ended", (j, err)
            assert result["class"] == "Outer", result

    @tap.test("a script that never imports torch: its output and exit status, under both launchers")
    def _():
        for how in ("-m", "ctl"):
            rc, result, err = launch(d, "notorch", how, site="site-%s" % how)
            assert rc == 3 and "no torch here" in err, (how, rc, err)
            assert result["site"] == "site-%s" % how and result["torch_loaded"] is False, (how, result)
            j = job_of(d, result)
            assert j["state"] == "ended" and j["exit_status"] == 3 and samples(d, j["id"]) == [], (how, j)
tap.done()
