#!/usr/bin/python3
"""dlprofd's tuner against a real optimizer on every class of surface (bench/tuner/README.md).

On the same surfaces, job shapes, noise draws and seeds:
  dlprofd      a release daemon on loopback, through its HTTP API as jobs
               report: each job registers with its knobs declared, reports
               its steps (samples_per_s, step_time_s) with the config it ran,
               runs from the next step on whatever config the answer gives,
               and ends; after the last job, GET /api/v1/recommend is its pick.
               One fresh daemon per surface and seed, on a simulated node
               (sysfs and procfs trees of the surface's topology).
  tpe          Optuna's TPE sampler (python3-optuna), in two schedules:
               tpe/job, one trial per job (the whole job on one config);
               tpe/trial, a new trial every TRIAL_STEPS steps within a job,
               the static knobs fixed for the job from its first trial on
               (PartialFixedSampler), as dlprofd is held to them.
  random       random search without repeats, in the same two schedules.
  default      the best of a few fixed rules (the topology default, all CPUs,
               PyTorch's defaults, one thread), chosen per family in hindsight.

The budget: every method runs JOBS jobs of the surface's steps, step for step
on the same simulated job; what differs is only which config each step runs.
A trial-based optimizer sees the mean of a trial's steps after the warm-up
steps (3 at a job's start, 2 after a switch: the daemon drops the same), and
picks, at the end, the config of best pooled mean.  Noise: each step's value
is the surface's value x (1 + run offset + step noise), drawn per (seed, job,
step) and per (seed, job, config), so every method meets the same draws on the
same config at the same step; a job's first two steps run slower (x0.6,
x0.85) and a switch's first step too (x0.9), for every method alike.

Metrics per family (over surfaces x seeds):
  final        the true value of the final pick over the surface's best:
               worst 5% (5th percentile) and median;
  regret       steps lost over the JOBS jobs against always running the best:
               the best's steps/s x (the time the method's steps took - the
               time the best's would have), summed; the family's mean;
  tried        distinct configs run (median);
  first        the first config's share of the surface's configs it beats.

  compare.py --daemon build/release/daemon/dlprofd [--per-family 42] [--csv-seeds 3]
             [--families ...] [--methods ...] [--out FILE] [--json FILE]
"""
import argparse
import glob
import http.client
import json
import math
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import gen_surfaces  # noqa: E402

JOBS = 12
TRIAL_STEPS = 10
WARM_START, WARM_SWITCH = 3, 2
START_SLOW = (0.6, 0.85)
SWITCH_SLOW = 0.9
STATIC = {"interop_threads", "gpus", "affinity", "allocator", "dataloader_workers", "batch_size"}
METHODS = ["dlprofd", "tpe/job", "tpe/trial", "random/job", "random/trial", "default"]


def log(msg):
    print("compare: " + msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- surfaces

def parse_value(text):
    try:
        return int(text)
    except ValueError:
        return text


def load_csv(path):
    s = {"name": os.path.splitext(os.path.basename(path))[0], "noise": {"step": 0.05, "run": 0.02},
         "steps": gen_surfaces.STEPS_PER_JOB, "report": 1, "objective": "throughput", "rows": [],
         "node": {"cores": 1, "cpus": 0, "numa_cores": 0, "gpus": 0}, "family": None}
    header = None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("# topology:"):
                for k, v in re.findall(r"(\w+)=(\d+)", line):
                    if k in s["node"]:
                        s["node"][k] = int(v)
            elif line.startswith("# noise:"):
                s["noise"] = {k: float(v) for k, v in re.findall(r"(step|run)=([\d.]+)", line)}
            elif line.startswith("# objective: efficiency"):
                s["objective"] = "efficiency"
            elif line.startswith("# job:"):
                d = dict(re.findall(r"(\w+)=(\d+)", line))
                s["steps"], s["report"] = int(d["steps"]), int(d["report"])
            elif line.startswith("# family:"):
                s["family"] = line.split(":", 1)[1].strip()
            elif line.startswith("# declared:"):
                s["declared_extra"] = json.loads(line.split(":", 1)[1])
            elif not line or line.startswith("#"):
                continue
            elif header is None:
                header = line.split(",")
                nk = header.index("objective")
                s["knobs"] = header[:nk]
            else:
                f_ = line.split(",")
                s["rows"].append([parse_value(x) for x in f_[:nk]] + [float(f_[nk])])
    n = s["node"]
    n["cpus"] = n["cpus"] or n["cores"]
    n["numa_cores"] = n["numa_cores"] or n["cores"]
    if not s["family"]:
        s["family"] = {"torch": "csv-torch", "gpu": "csv-gpu", "syn": "csv-synthetic"}[s["name"].split("-")[0]]
    return s


class Surface:
    """Values by config, the best, and the knob declaration a job sends."""

    def __init__(self, d):
        self.__dict__.update(d)
        self.objective = d.get("objective", "throughput")
        self.declared_extra = d.get("declared_extra", {})
        self.values = {tuple(r[:-1]): r[-1] for r in self.rows}
        self.configs = sorted(self.values, key=lambda c: tuple(str(x) for x in c))
        self.best = max(self.values.values())
        self.domain = {k: sorted(set(c[i] for c in self.configs), key=lambda v: (isinstance(v, str), v))
                       for i, k in enumerate(self.knobs)}

    def key(self, config):
        """The surface's config of a (daemon's or optimizer's) config dict; None when not on the surface."""
        try:
            k = tuple(config[n] for n in self.knobs)
        except KeyError:
            return None
        return k if k in self.values else None

    def declared(self):
        """What a job of this surface declares: the values, and what its "# declared:" line adds."""
        knobs = {k: dict({"values": v}, **self.declared_extra.get(k, {})) for k, v in self.domain.items()}
        for name, one in (("intra_threads", 1), ("interop_threads", 1), ("gpus", 0)):
            knobs.setdefault(name, {"values": [one]})
        return knobs

    def resources(self, key):
        c = dict(zip(self.knobs, key))
        g = c.get("gpus", 0)
        return float(g) if isinstance(g, int) and g > 0 else float(c.get("intra_threads", 1))

    def beats(self, key):
        """The share of the other configs that are worse than key."""
        v = self.values[key]
        return sum(1 for x in self.values.values() if x < v) / float(max(1, len(self.values) - 1))


def all_surfaces(args):
    out = []
    if "csv" in args.families:
        for path in sorted(glob.glob(os.path.join(HERE, "surfaces", "*.csv"))):
            for seed in range(args.csv_seeds):
                out.append((Surface(load_csv(path)), seed))
    fams = [f for f in args.families if f in gen_surfaces.FAMILIES]
    for d in gen_surfaces.surfaces(args.per_family, args.seed, fams):
        out.append((Surface(d), 0))
    return out


# ---------------------------------------------------------------- the simulated job

class Noise:
    """Common random numbers: the same draw for the same (job, step) and (job, config)."""

    def __init__(self, surface, seed):
        self.tag = "%s:%d" % (surface.name, seed)
        rng = random.Random(self.tag)
        self.step_z = [[rng.gauss(0.0, 1.0) for _ in range(surface.steps)] for _ in range(JOBS)]
        self.run = {}

    def run_z(self, job, key):
        k = (job, key)
        if k not in self.run:
            self.run[k] = random.Random("%s:%d:%r" % (self.tag, job, key)).gauss(0.0, 1.0)
        return self.run[k]


class Ledger:
    """What a method's steps cost: time against the best's, configs run, the first config."""

    def __init__(self, surface):
        self.s = surface
        self.lost = 0.0
        self.tried = set()
        self.first = None
        self.job_lost = []

    def step(self, key, slow, start_slow):
        s = self.s
        self.tried.add(key)
        if self.first is None:
            self.first = key
        # Lost steps: the best's rate x (this step's time - the best's time for one step).
        self.lost += s.best * (1.0 / (s.values[key] * slow) - 1.0 / (s.best * start_slow))


class Job:
    """One simulated job: steps run a config; each step's observed value, with its warm-up."""

    def __init__(self, surface, noise, ledger, index):
        self.s, self.noise, self.ledger, self.index = surface, noise, ledger, index
        self.n = 0
        self.prev = None
        self.since_switch = 0

    def step(self, key):
        s = self.s
        start = START_SLOW[self.n] if self.n < len(START_SLOW) else 1.0
        if self.prev is not None and key != self.prev:
            self.since_switch = 0
        slow = start * (SWITCH_SLOW if self.prev is not None and self.since_switch == 0 else 1.0)
        self.ledger.step(key, slow, start)
        z = s.noise["run"] * self.noise.run_z(self.index, key) + s.noise["step"] * self.noise.step_z[self.index][self.n]
        v = s.values[key] * slow * max(0.05, 1.0 + z)
        self.n += 1
        self.since_switch += 1
        self.prev = key
        return v


# ---------------------------------------------------------------- dlprofd through HTTP

def fake_roots(base, node):
    """sysfs and procfs trees of a node: CPUs, cores (SMT siblings), NUMA domains, GPUs."""
    sysr, procr = os.path.join(base, "sys"), os.path.join(base, "proc")
    cpus, cores, numa = node["cpus"], node["cores"], node["numa_cores"]

    def put(path, text):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text + "\n")
    put(os.path.join(sysr, "devices/system/cpu/online"), "0-%d" % (cpus - 1))
    domains = {}
    for cpu in range(cpus):
        core = cpu % cores
        t = os.path.join(sysr, "devices/system/cpu/cpu%d/topology" % cpu)
        put(os.path.join(t, "core_id"), str(core))
        put(os.path.join(t, "physical_package_id"), str(core // numa))
        domains.setdefault(core // numa, []).append(cpu)
    for d, members in domains.items():
        put(os.path.join(sysr, "devices/system/node/node%d/cpulist" % d), ",".join(map(str, members)))
    put(os.path.join(procr, "cpuinfo"), "processor\t: 0\nmodel name\t: Simulated CPU")
    put(os.path.join(procr, "meminfo"), "MemTotal:       67108864 kB")
    put(os.path.join(procr, "self/status"), "Name:\tdlprofd\nCpus_allowed_list:\t0-%d" % (cpus - 1))
    for g in range(node["gpus"]):
        os.makedirs(os.path.join(procr, "driver/nvidia/gpus/%d" % g), exist_ok=True)
    return sysr, procr


class Daemon:
    def __init__(self, binary, node, workdir):
        self.dir = tempfile.mkdtemp(prefix="cmp-", dir=workdir)
        sysr, procr = fake_roots(self.dir, node)
        conf = os.path.join(self.dir, "dlprofd.conf")
        with open(conf, "w") as f:
            f.write("sys_root = %s\nproc_root = %s\n" % (sysr, procr))
        self.logpath = os.path.join(self.dir, "log")
        self.logf = open(self.logpath, "w")
        self.proc = subprocess.Popen([binary, "--foreground", "--listen", "127.0.0.1:0", "--db",
                                      os.path.join(self.dir, "d.db"), "--socket", "", "--config", conf,
                                      "--web-root", os.path.join(SRCDIR, "web")],
                                     stdout=self.logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.time() + 20
        while True:
            with open(self.logpath) as f:
                text = f.read()
            m = re.search(r"listening on 127\.0\.0\.1:(\d+)", text)
            if m and "started:" in text:
                self.port = int(m.group(1))
                break
            if self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError("dlprofd did not start:\n" + text[-2000:])
            time.sleep(0.02)
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)

    def call(self, method, path, body=None):
        data = json.dumps(body) if body is not None else None
        self.conn.request(method, path, data, {"Content-Type": "application/json"} if data else {})
        r = self.conn.getresponse()
        text = r.read()
        if r.status >= 300:
            raise RuntimeError("%s %s: %d %s" % (method, path, r.status, text[:300]))
        return json.loads(text) if text else None

    def stop(self):
        self.conn.close()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.logf.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def run_dlprofd(s, seed, args):
    noise, ledger = Noise(s, seed), Ledger(s)
    d = Daemon(args.daemon, s.node, args.workdir)
    clock = [time.time()]
    try:
        for j in range(JOBS):
            job = Job(s, noise, ledger, j)
            reg = d.call("POST", "/api/v1/jobs", {"workload": s.name, "knobs": s.declared(),
                                                 "objective": s.objective})
            jid, config = reg["id"], reg["config"]
            done = 0
            while done < s.steps:
                key = s.key(config)
                if key is None:
                    raise RuntimeError("%s: dlprofd answered %s, not on the surface" % (s.name, config))
                samples = []
                for _ in range(min(s.report, s.steps - done)):
                    v = job.step(key)
                    clock[0] += 1e-3
                    sps = v * (s.resources(key) if s.objective == "efficiency" else 1.0)
                    samples += [{"t": clock[0], "name": "samples_per_s", "value": sps},
                                {"t": clock[0], "name": "step_time_s", "value": 1.0 / v}]
                    done += 1
                ans = d.call("POST", "/api/v1/jobs/%d/metrics" % jid, {"samples": samples, "config": config})
                config = ans["config"]
            d.call("POST", "/api/v1/jobs/%d/end" % jid, {"exit_status": 0})
            ledger.job_lost.append(ledger.lost)
        rec = d.call("GET", "/api/v1/recommend?workload=%s&objective=%s" % (s.name, s.objective))
        pick = s.key(rec["config"])
    finally:
        d.stop()
    return ledger, pick


# ---------------------------------------------------------------- trial-based optimizers

class Pool:
    """Trials pooled per config; the pick is the best pooled mean."""

    def __init__(self):
        self.sum, self.n = {}, {}

    def add(self, key, mean):
        self.sum[key] = self.sum.get(key, 0.0) + mean
        self.n[key] = self.n.get(key, 0) + 1

    def best(self):
        return max(self.sum, key=lambda k: self.sum[k] / self.n[k])


def measure(job, key, steps, first_in_job):
    warm = WARM_START if first_in_job else WARM_SWITCH
    vals = [job.step(key) for _ in range(steps)]
    kept = vals[warm:] or vals[-1:]
    return sum(kept) / len(kept)


class TpeAsk:
    """Optuna's TPE: the knobs as integer indices into their ordered values (strings: categorical)."""

    def __init__(self, s, seed, trials):
        import optuna
        optuna.logging.set_verbosity(optuna.logging.ERROR)
        warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
        self.optuna, self.s = optuna, s
        self.base = optuna.samplers.TPESampler(seed=seed, multivariate=True,
                                               n_startup_trials=max(3, min(10, trials // 4)))
        self.study = optuna.create_study(direction="maximize", sampler=self.base)
        self.pending = None

    def _suggest(self, trial):
        c = {}
        for k, vals in self.s.domain.items():
            if isinstance(vals[0], str):
                c[k] = trial.suggest_categorical(k, vals)
            else:
                c[k] = vals[trial.suggest_int(k, 0, len(vals) - 1)] if len(vals) > 1 else vals[0]
        return c

    def ask(self, fixed):
        s = self.s
        fx = {}
        for k, v in fixed.items():
            if len(s.domain[k]) > 1:
                fx[k] = v if isinstance(v, str) else s.domain[k].index(v)
        self.study.sampler = self.optuna.samplers.PartialFixedSampler(fx, self.base) if fx else self.base
        self.pending = self.study.ask()
        return s.key(self._suggest(self.pending))

    def tell(self, key, value):
        self.study.tell(self.pending, value)


class RandomAsk:
    """Random search: configs not run yet first, uniformly, within the fixed static knobs."""

    def __init__(self, s, seed, trials):
        self.s, self.rng, self.seen = s, random.Random("random:%s:%d" % (s.name, seed)), set()

    def ask(self, fixed):
        ok = [c for c in self.s.configs if all(c[self.s.knobs.index(k)] == v for k, v in fixed.items())]
        fresh = [c for c in ok if c not in self.seen] or ok
        return self.rng.choice(fresh)

    def tell(self, key, value):
        self.seen.add(key)


def run_trials(s, seed, asker_cls, per_trial):
    noise, ledger, pool = Noise(s, seed), Ledger(s), Pool()
    trials = JOBS * (s.steps // TRIAL_STEPS if per_trial else 1)
    asker = asker_cls(s, seed, trials)
    statics = [k for k in s.knobs if k in STATIC]
    for j in range(JOBS):
        job = Job(s, noise, ledger, j)
        fixed, done = {}, 0
        while done < s.steps:
            n = min(TRIAL_STEPS if per_trial else s.steps, s.steps - done)
            key = asker.ask(fixed)
            fixed = {k: key[s.knobs.index(k)] for k in statics}
            mean = measure(job, key, n, done == 0)
            asker.tell(key, mean)
            pool.add(key, mean)
            done += n
        ledger.job_lost.append(ledger.lost)
    return ledger, pool.best()


# ---------------------------------------------------------------- fixed defaults

def nearest_below(vals, want):
    below = [v for v in vals if not isinstance(v, str) and v <= want]
    return max(below) if below else vals[0]


def default_rules(s):
    """The fixed configs a user runs without tuning, by rule."""
    n = s.node
    phys = min(n["cores"], n["numa_cores"])
    rules = {"topology": {"intra_threads": phys, "interop_threads": 1, "gpus": n["gpus"]},
             "all cpus": {"intra_threads": n["cpus"], "interop_threads": 1, "gpus": n["gpus"]},
             "pytorch": {"intra_threads": n["cores"], "interop_threads": n["cores"], "gpus": n["gpus"]},
             "one thread": {"intra_threads": 1, "interop_threads": 1, "gpus": n["gpus"]}}
    out = {}
    for name, want in rules.items():
        key = tuple(nearest_below(s.domain[k], want[k]) if k in want else s.domain[k][0] for k in s.knobs)
        out[name] = key
    return out


def run_default(s, seed, rule):
    noise, ledger = Noise(s, seed), Ledger(s)
    key = default_rules(s)[rule]
    for j in range(JOBS):
        job = Job(s, noise, ledger, j)
        for _ in range(s.steps):
            job.step(key)
        ledger.job_lost.append(ledger.lost)
    return ledger, key


# ---------------------------------------------------------------- the report

def pct(values, q):
    v = sorted(values)
    if not v:
        return float("nan")
    i = (len(v) - 1) * q
    lo, hi = int(math.floor(i)), int(math.ceil(i))
    return v[lo] + (v[hi] - v[lo]) * (i - lo)


def summarize(results, families):
    """Per family and method: final worst 5% and median, mean regret, median tried, first config."""
    rows = {}
    for fam in families:
        for m in METHODS:
            rs = [r for r in results if r["family"] == fam and r["method"] == m]
            if not rs:
                continue
            rows[(fam, m)] = {
                "runs": len(rs),
                "final5": pct([r["final"] for r in rs], 0.05), "final50": pct([r["final"] for r in rs], 0.5),
                "regret": statistics.mean(r["lost"] for r in rs),
                "regret_jobs": statistics.mean(r["lost"] / r["steps"] for r in rs),
                "tried": statistics.median(r["tried"] for r in rs),
                "first_beats": statistics.median(r["first_beats"] for r in rs),
                "first_min": min(r["first_beats"] for r in rs),
            }
    return rows


def best_default(results, fam):
    """The default rule of best median final pick on a family (hindsight)."""
    rules = {}
    for r in results:
        if r["family"] == fam and r["method"].startswith("default:"):
            rules.setdefault(r["method"], []).append(r)
    return max(rules, key=lambda m: (statistics.median(x["final"] for x in rules[m]),
                                     -statistics.mean(x["lost"] for x in rules[m]))) if rules else None


def report(results, families, elapsed, args):
    for fam in families:
        pick = best_default(results, fam)
        for r in results:
            if r["family"] == fam and r["method"] == pick:
                r2 = dict(r, method="default", rule=pick.split(":", 1)[1])
                results.append(r2)
    rows = summarize(results, families)
    lines = ["| family | runs | method | final pick, worst 5%% | median | regret over %d jobs (steps lost, mean) "
             "| in jobs | configs tried (median) | first config beats (median, least) |" % JOBS,
             "|---|---:|---|---:|---:|---:|---:|---:|---|"]
    verdicts = []
    for fam in families:
        rule = next((r["rule"] for r in results if r["family"] == fam and r["method"] == "default"), "")
        for m in METHODS:
            x = rows.get((fam, m))
            if not x:
                continue
            name = m + (" (%s)" % rule if m == "default" else "")
            lines.append("| %s | %d | %s | %.3f | %.3f | %.0f | %.2f | %.0f | %.0f%%, %.0f%% |" % (
                fam, x["runs"], name, x["final5"], x["final50"], x["regret"], x["regret_jobs"], x["tried"],
                100 * x["first_beats"], 100 * x["first_min"]))
        d = rows.get((fam, "dlprofd"))
        if not d:
            continue
        tpe = min((rows[(fam, m)]["regret"] for m in ("tpe/job", "tpe/trial") if (fam, m) in rows), default=None)
        rnd = min((rows[(fam, m)]["regret"] for m in ("random/job", "random/trial") if (fam, m) in rows),
                  default=None)
        verdicts.append((fam, d, tpe, rnd))
    out = ["Families: %s.  %d runs in %.0f s (%s)." % (", ".join(families), len([r for r in results if r["method"] == "dlprofd"]),
                                                     elapsed, args.describe), ""] + lines
    out += ["", "| family | dlprofd final worst 5% (≥ 0.95) | median (≥ 0.99) | regret / TPE's best schedule (≤ 0.5) "
            "| regret / random's best schedule (≤ 0.3) |", "|---|---|---|---|---|"]
    ok = True
    for fam, d, tpe, rnd in verdicts:
        a = d["final5"] >= 0.95
        b = d["final50"] >= 0.99
        c = tpe is not None and d["regret"] <= 0.5 * tpe
        e = rnd is not None and d["regret"] <= 0.3 * rnd
        ok = ok and a and b and c and e
        out.append("| %s | %.3f %s | %.3f %s | %s %s | %s %s |" % (
            fam, d["final5"], "met" if a else "**missed**", d["final50"], "met" if b else "**missed**",
            "%.2f" % (d["regret"] / tpe) if tpe else "n/a", "met" if c else "**missed**",
            "%.2f" % (d["regret"] / rnd) if rnd else "n/a", "met" if e else "**missed**"))
    csv = [r for r in results if r["method"] == "dlprofd" and r["family"].startswith("csv")]
    if csv:
        names = sorted(set(r["surface"] for r in csv))
        share = {n: min(r["first_beats"] for r in csv if r["surface"] == n) for n in names}
        measured = [n for n in names if n.split("-")[0] in ("torch", "gpu")]
        good = sum(1 for n in measured if share[n] >= 0.8)
        ok = ok and good == len(measured)
        out += ["", "First config (dlprofd's first job) on the %d measured surfaces (PyTorch here, published GPU "
                "tables): beats ≥ 80%% of its surface's other configs on %d of them (target: all).  Per surface, "
                "the share it beats: %s." % (len(measured), good,
                                             ", ".join("%s %.0f%%" % (n, 100 * share[n]) for n in names))]
    return "\n".join(out), ok


def run_one(s, seed, method, args):
    t0 = time.time()
    if method == "dlprofd":
        ledger, pick = run_dlprofd(s, seed, args)
    elif method.startswith("default:"):
        ledger, pick = run_default(s, seed, method.split(":", 1)[1])
    else:
        opt, sched = method.split("/")
        ledger, pick = run_trials(s, seed, TpeAsk if opt == "tpe" else RandomAsk, sched == "trial")
    return {"surface": s.name, "family": s.family, "seed": seed, "method": method,
            "final": s.values[pick] / s.best if pick else 0.0, "pick": list(pick) if pick else None,
            "lost": ledger.lost, "job_lost": ledger.job_lost, "steps": s.steps, "tried": len(ledger.tried),
            "first_beats": s.beats(ledger.first), "first_value": s.values[ledger.first] / s.best,
            "seconds": time.time() - t0}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--daemon", default=os.path.join(SRCDIR, "build", "release", "daemon", "dlprofd"))
    ap.add_argument("--per-family", type=int, default=42)
    ap.add_argument("--csv-seeds", type=int, default=3)
    ap.add_argument("--seed", default="29")
    ap.add_argument("--families", default="csv," + ",".join(gen_surfaces.FAMILIES))
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--only", default="", help="comma-separated surface names (debugging)")
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--out")
    ap.add_argument("--json")
    args = ap.parse_args()
    args.families = args.families.split(",")
    methods = [m for m in args.methods.split(",") if m]
    if "default" in methods:
        methods = [m for m in methods if m != "default"] + ["default:" + r for r in
                                                             ("topology", "all cpus", "pytorch", "one thread")]
    args.workdir = args.workdir or ("/dev/shm" if os.path.isdir("/dev/shm") else None)
    args.describe = "%d generated per family, CSV surfaces x %d seeds, %d jobs each, seed %s" % (
        args.per_family, args.csv_seeds, JOBS, args.seed)
    surfaces = all_surfaces(args)
    if args.only:
        surfaces = [(s, k) for s, k in surfaces if s.name in args.only.split(",")]
    families = []
    for s, _ in surfaces:
        if s.family not in families:
            families.append(s.family)
    started = time.time()
    results = []
    for i, (s, seed) in enumerate(surfaces):
        for m in methods:
            results.append(run_one(s, seed, m, args))
        d = [r for r in results[-len(methods):] if r["method"] == "dlprofd"]
        if d:
            log("%d/%d %s seed %d: dlprofd %.3f of best, %.0f steps lost, %d configs, %.1f s" % (
                i + 1, len(surfaces), s.name, seed, d[0]["final"], d[0]["lost"], d[0]["tried"], d[0]["seconds"]))
    text, ok = report(results, families, time.time() - started, args)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
