#!/usr/bin/python3
"""The zero-touch path against the instrumented jobs, and what its hooks cost (bench/tuner/README.md).

For each workload of e2e_job.py, in one run on this machine:
  - tuning: on one fresh daemon, jobs 1..N of the instrumented job
    (e2e_job.py WORKLOAD STEPS URL dlprof: its phases named, its steps
    marked, workload e2e-NAME) and of the same work written without a
    dlprof line (plain/NAME.py STEPS) launched through `dlprofctl run`
    (workload NAME: its steps and phases found by the client), alternating
    which goes first; from job 6 on, each plain job's steps/s over the
    instrumented job's of the same number;
  - cost: the plain script under `python3 -m dlprof` with its config fixed
    (DLPROF_KNOBS: one intra-op and one inter-op thread, so the daemon has
    no choice), with the automatic hooks (DLPROF_AUTO=1) and without them
    (DLPROF_AUTO=0: the same session, nothing hooked), interleaved in a
    pairs run back to back (which first drawn at random), `--cost-reps`
    pairs; the cost is 1 - the median hooked steps/s over the median
    unhooked, and 1 - the median of the pairs' ratios.  That difference is within
    the run-to-run noise of this machine, so the hooks are also timed on
    their own: a model of two empty top-level modules stepped 20,000
    times in inference, hooked and unhooked, alternating; the difference
    per step, over each workload's unhooked step time, is the hooks' share
    of it.
Each figure is the job's own steps/s after 3 warm-up steps.  Prints a
markdown section (and writes it with --out); --json keeps the raw figures.

  e2e_zero_touch.py --daemon build/release/daemon/dlprofd --ctl build/release/tools/dlprofctl \\
      [--workloads a,b] [--jobs 10] [--cost-reps 5]
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from e2e import PYTHON, SRCDIR, WORKLOADS, Daemon, log, run_job  # noqa: E402

PLAIN = os.path.join(HERE, "plain")
# Two empty phases, the model, and a step: what the hooks do per step, and nothing else.
EMPTY = """
import json, sys, time, torch
class Empty(torch.nn.Module):
    def forward(self, x):
        return x
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b, self.w = Empty(), Empty(), torch.nn.Parameter(torch.zeros(1))
    def forward(self, x):
        return self.b(self.a(x))
net, x, n = Net(), torch.zeros(8, 4), int(sys.argv[1])
with torch.no_grad():
    for i in range(n + 200):
        if i == 200:
            t0 = time.perf_counter()
        net(x)
print(json.dumps({"us_per_step": (time.perf_counter() - t0) / n * 1e6}))
"""
FIXED = '{"intra_threads": {"values": [1]}, "interop_threads": {"values": [1]}}'


def run_plain(argv, env, timeout=300):
    out = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
    if out.returncode != 0:
        raise RuntimeError("plain job %s failed (%d):\n%s" % (argv, out.returncode, out.stderr[-3000:]))
    return json.loads(out.stdout.strip().splitlines()[-1])


def client_env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("DLPROF_")}
    env["PYTHONPATH"] = os.path.join(SRCDIR, "client", "python")
    env.update(extra)
    return env


def found_phases(url, workload):
    """The phases the client found in the workload's last job: {name: share}, folded ones marked."""
    with urllib.request.urlopen(url + "/api/v1/jobs?state=all", timeout=10) as resp:
        jid = max(j["id"] for j in json.load(resp)["jobs"] if j["workload"] == workload)
    out = {}
    for name, folded in (("auto.phase_share", False), ("auto.folded_share", True)):
        with urllib.request.urlopen("%s/api/v1/jobs/%d" % (url, jid), timeout=10) as resp:
            phases = json.load(resp).get("phases", [])
        for ph in phases:
            q = urllib.parse.urlencode({"name": name, "phase": ph, "from": 0, "to": 4e9})
            with urllib.request.urlopen("%s/api/v1/jobs/%d/series?%s" % (url, jid, q), timeout=10) as resp:
                pts = json.load(resp).get("points", [])
            if pts:
                out[ph] = (pts[-1][1], folded)
    return out


def tuning(daemon, ctl, name, steps, jobs):
    d = Daemon(daemon)
    out = []
    try:
        for k in range(jobs):
            pair = {}
            for kind in (("instrumented", "plain") if k % 2 == 0 else ("plain", "instrumented")):
                if kind == "instrumented":
                    r = run_job([name, steps, d.url, "dlprof"], env=client_env())
                else:
                    r = run_plain([ctl, "--url", d.url, "run", "--", PYTHON, os.path.join(PLAIN, name + ".py"),
                                   str(steps)], client_env())
                pair[kind] = r["steps_per_s"]
                pair[kind + "_interop"] = r["interop"]
            out.append(pair)
            log("%s job %d: instrumented %.2f, plain %.2f steps/s" % (name, k + 1, pair["instrumented"], pair["plain"]))
        phases = found_phases(d.url, name)
        views = {}
        for kind, workload in (("instrumented", "e2e-" + name), ("plain", name)):
            with urllib.request.urlopen(d.url + "/api/v1/workloads/" + workload, timeout=10) as resp:
                view = json.load(resp)
            views[kind] = {k: view.get(k) for k in ("best", "plans", "phase_settings")}
    finally:
        d.stop()
    return out, phases, views


def cost(daemon, name, steps, reps, rng):
    d = Daemon(daemon)
    runs = {"hooked": [], "unhooked": []}
    try:
        # Pairs run back to back, which first drawn at random: the machine's speed drifts between pairs.
        for _ in range(reps):
            for kind in rng.sample(sorted(runs), 2):
                env = client_env(DLPROF_URL=d.url, DLPROF_KNOBS=FIXED, DLPROF_AUTO="1" if kind == "hooked" else "0")
                r = run_plain([PYTHON, "-m", "dlprof", os.path.join(PLAIN, name + ".py"), str(steps)], env)
                runs[kind].append(r["steps_per_s"])
                log("%s cost: %s %.2f steps/s" % (name, kind, r["steps_per_s"]))
    finally:
        d.stop()
    return runs


def hooks_alone(daemon, reps, steps=20000):
    """Microseconds per step of the empty model, hooked and unhooked, alternating."""
    d = Daemon(daemon)
    path = os.path.join(d.dir, "empty.py")
    with open(path, "w") as f:
        f.write(EMPTY)
    runs = {"hooked": [], "unhooked": []}
    try:
        for _ in range(reps):
            for kind in runs:
                env = client_env(DLPROF_URL=d.url, DLPROF_KNOBS=FIXED, DLPROF_AUTO="1" if kind == "hooked" else "0")
                runs[kind].append(run_plain([PYTHON, "-m", "dlprof", path, str(steps)], env)["us_per_step"])
        log("hooks alone: %s" % runs)
    finally:
        d.stop()
    return runs


def section(results):
    lines = ["The four workloads of e2e.py (python3-torch %s, %d CPUs), each written twice: instrumented "
             "(e2e_job.py, its phases named and steps marked) and without a dlprof line (bench/tuner/plain/), "
             "launched through `dlprofctl run`.  Tuning: jobs 1..%d of each on one fresh daemon, alternating; "
             "each ratio is plain job k's steps/s over instrumented job k's, for k >= 6 (median, least).  Cost: "
             "the plain script under `python3 -m dlprof`, config fixed (1 intra-op, 1 inter-op thread), with the "
             "automatic hooks and with DLPROF_AUTO=0, %d pairs run back to back; cost = 1 - median hooked / "
             "median unhooked, and 1 - the median of the pairs' ratios (negative: within the noise); the hooks alone: a model of two empty top-level "
             "modules stepped 20,000 times in inference, %.1f us a step unhooked, %.1f us hooked (medians of %d "
             "runs each): %.1f us a step, given below as a share of each workload's unhooked step time."
             % (results["torch"], results["cpus"], results["jobs"], results["reps"], results["alone"]["unhooked"],
                results["alone"]["hooked"], results["reps"], results["alone"]["cost_us"]), "",
             "| workload | instrumented, jobs 6+ (median) | plain via dlprofctl run, jobs 6+ (median) | plain / "
             "instrumented, jobs 6+ (median, least) | phases found (share of a step; folded in brackets) | "
             "unhooked, hooked steps/s (median) | cost, end to end (medians; paired runs) | the hooks' time, "
             "share of a step |",
             "|---|---|---|---|---|---|---|---|"]
    for name, w in results["workloads"].items():
        late = w["tuning"][5:] or w["tuning"]
        ratios = [p["plain"] / p["instrumented"] for p in late]
        found = ", ".join(("[%s %.1f%%]" if folded else "%s %.0f%%") % (ph, 100 * share)
                          for ph, (share, folded) in sorted(w["phases"].items(), key=lambda kv: (kv[1][1], -kv[1][0])))
        un, hk = statistics.median(w["cost"]["unhooked"]), statistics.median(w["cost"]["hooked"])
        paired = statistics.median(h / u for h, u in zip(w["cost"]["hooked"], w["cost"]["unhooked"]))
        lines.append("| %s | %.2f | %.2f | %.3f, %.3f | %s | %.2f, %.2f | %.2f%%; %.2f%% | %.4f%% |" % (
            name, statistics.median(p["instrumented"] for p in late), statistics.median(p["plain"] for p in late),
            statistics.median(ratios), min(ratios), found or "none", un, hk, 100 * (1 - hk / un), 100 * (1 - paired),
            100 * results["alone"]["cost_us"] * 1e-6 * un))
    lines.append("")
    for name, w in results["workloads"].items():
        lines.append("**%s**, steps/s per job (instrumented / plain): %s; cost runs unhooked %s, hooked %s" % (
            name, ", ".join("%.2f / %.2f" % (p["instrumented"], p["plain"]) for p in w["tuning"]),
            ", ".join("%.2f" % v for v in w["cost"]["unhooked"]), ", ".join("%.2f" % v for v in w["cost"]["hooked"])))
        lines.append("")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--daemon", required=True)
    ap.add_argument("--ctl", required=True)
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--jobs", type=int, default=10)
    ap.add_argument("--cost-reps", type=int, default=5)
    ap.add_argument("--no-cost", action="store_true", help="tuning only (to look into one workload)")
    ap.add_argument("--out")
    ap.add_argument("--json")
    args = ap.parse_args()
    torch = subprocess.run([PYTHON, "-c", "import torch; print(torch.__version__)"], capture_output=True,
                           text=True).stdout.strip()
    results = {"torch": torch, "cpus": len(os.sched_getaffinity(0)), "jobs": args.jobs, "reps": args.cost_reps,
               "workloads": {}}
    rng = random.Random(11)
    alone = hooks_alone(os.path.abspath(args.daemon), args.cost_reps) if not args.no_cost else \
        {"hooked": [0.0], "unhooked": [0.0]}
    un, hk = statistics.median(alone["unhooked"]), statistics.median(alone["hooked"])
    results["alone"] = {"runs": alone, "unhooked": un, "hooked": hk, "cost_us": hk - un}
    for name in args.workloads.split(","):
        steps = WORKLOADS[name][1]
        log("%s: cost, %d runs hooked and unhooked" % (name, args.cost_reps))
        runs = cost(os.path.abspath(args.daemon), name, steps, args.cost_reps, rng) if not args.no_cost else \
            {"hooked": [1.0], "unhooked": [1.0]}
        log("%s: tuning, jobs 1..%d instrumented and plain" % (name, args.jobs))
        pairs, phases, views = tuning(os.path.abspath(args.daemon), os.path.abspath(args.ctl), name, steps, args.jobs)
        results["workloads"][name] = {"tuning": pairs, "phases": phases, "cost": runs, "views": views}
        if args.json:
            with open(args.json, "w") as f:
                json.dump(results, f, indent=1)
    text = section(results)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
