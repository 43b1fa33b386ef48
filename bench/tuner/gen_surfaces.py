#!/usr/bin/python3
"""Seeded response surfaces in families nobody tuned for (bench/tuner/README.md).

Each surface is a closed-form model of how a CPU job's throughput depends on
its knobs on a drawn node, built from the mechanisms that shape such curves
on real machines -- serial fractions, contention and coherence costs
(Gunther's Universal Scalability Law), SMT yielding a fraction of a core,
NUMA remote-memory penalties, oversubscription once threads in flight exceed
the CPUs, memory-bandwidth saturation, cache-sized sweet spots, input
pipelines that cap throughput -- with every coefficient drawn from a range.
Nothing here reads or imitates the tuner's model (its prior shape, kernel or
lengthscales): the families are chosen by mechanism, the draws are uniform
over physical ranges, and none was redrawn after seeing a result.

Families:
  usl       threads (and sometimes inter-op threads): USL with drawn
            contention sigma and coherence kappa, SMT, NUMA, oversubscription.
  cliff     threads (and sometimes inter-op): Amdahl scaling to the cores,
            then a cliff once threads in flight exceed the CPUs (OpenMP teams
            spinning on busy CPUs), the declared range reaching past it.
  flat      threads (and sometimes data-loader workers): bandwidth saturation,
            a wide top within a percent or two, a small drawn slope on it.
  peak      threads (and sometimes batch size): a single sharp peak at a drawn
            point (a working set that fits a cache level), a floor around it.
  interact  threads x inter-op x data-loader workers x batch, a drawn subset
            of the last three declared: compute of serial, parallel and
            branch-parallel work, a loader that caps throughput, batch size
            amortising per-batch overhead until it spills the cache, and
            oversubscription by intra x inter-op plus busy workers.

Every surface draws its node (2 to 64 cores, SMT or not, one or two NUMA
domains), its declared thread range (2 to 128), its step noise (2% to 15%)
and run-to-run noise, and how many steps a report carries.

  gen_surfaces.py --write DIR [--per-family N] [--seed S] [--families a,b]
  gen_surfaces.py --gate DIR      # the suite's gate subset (tests/unit/test_tuner_gate.c)

As a module: surfaces(per_family, seed) yields dicts (see surface()).
"""
import argparse
import math
import os
import random

FAMILIES = ["usl", "cliff", "flat", "peak", "interact"]
LADDER = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128]
STEPS_PER_JOB = 60
JOBS = 12


def thread_values(hi):
    """The daemon's values for a declared range 1..hi (knobs.c: dense up to 16, else a ladder)."""
    if hi <= 16:
        return list(range(1, hi + 1))
    return sorted(set([v for v in LADDER if v <= hi] + [hi]))


def draw_node(rng):
    cores = rng.choice([2, 4, 8, 12, 16, 24, 32, 48, 64])
    smt = rng.choice([1, 2])
    cpus = min(cores * smt, 128)
    domains = rng.choice([1, 2]) if cores >= 16 else 1
    return {"cores": cores, "cpus": cpus, "numa_cores": cores // domains, "gpus": 0}


def draw_range(rng, node, past=(1.0, 2.0)):
    """The declared thread range: up to the CPUs or past them, 2..128."""
    hi = int(round(node["cpus"] * rng.choice(past)))
    return max(2, min(128, hi))


def noise(rng):
    step = rng.uniform(0.02, 0.15)
    return {"step": step, "run": rng.uniform(0.005, 0.03)}


class Machine:
    """What a node does to threads in flight: SMT, NUMA, oversubscription."""

    def __init__(self, rng, node, cliff=None):
        self.node = node
        self.smt_yield = rng.uniform(0.0, 0.35)
        self.numa_pen = rng.uniform(0.0, 0.25) if node["numa_cores"] < node["cores"] else 0.0
        self.oversub = rng.uniform(0.3, 2.0)
        self.cliff = cliff   # None, or the factor left once past the CPUs

    def effective(self, n):
        """Cores' worth of compute from n busy threads."""
        c, cpus = self.node["cores"], self.node["cpus"]
        eff = min(n, c) + self.smt_yield * max(0.0, min(n, cpus) - c)
        return max(eff, 1e-9)

    def factor(self, n):
        """Losses of n threads in flight: remote memory, time-slicing past the CPUs."""
        f = 1.0
        nc, c, cpus = self.node["numa_cores"], self.node["cores"], self.node["cpus"]
        if self.numa_pen and n > nc:
            f *= 1.0 - self.numa_pen * (min(n, c) - nc) / float(c)
        if n > cpus:
            if self.cliff is not None:
                f *= self.cliff * (cpus / float(n)) ** 0.5
            else:
                f /= 1.0 + self.oversub * (n - cpus) / float(cpus)
        return f


def usl(n, sigma, kappa):
    return n / (1.0 + sigma * (n - 1.0) + kappa * n * (n - 1.0))


def amdahl(n, p):
    return 1.0 / ((1.0 - p) + p / n)


def inter_values(rng):
    return rng.choice([[1, 2], [1, 2, 4], [1, 2, 3, 4]])


def fam_usl(rng, node):
    m = Machine(rng, node)
    sigma = math.exp(rng.uniform(math.log(0.003), math.log(0.3)))
    kappa = math.exp(rng.uniform(math.log(1e-5), math.log(0.03)))
    knobs = {"intra_threads": thread_values(draw_range(rng, node))}
    branch = 0.0
    if rng.random() < 0.5:
        knobs["interop_threads"] = inter_values(rng)
        branch = rng.uniform(0.0, 0.5)     # share of the work in forked branches
    def f(c):
        intra, inter = c["intra_threads"], c.get("interop_threads", 1)
        flight = intra * inter
        seq = (1.0 - branch) / usl(m.effective(intra), sigma, kappa)
        par = branch / (min(inter, 4) * usl(m.effective(flight) / inter, sigma, kappa)) if branch else 0.0
        return m.factor(flight) / (seq + par)
    return knobs, f, "sigma=%.3g kappa=%.3g branch=%.2f" % (sigma, kappa, branch)


def fam_cliff(rng, node):
    m = Machine(rng, node, cliff=rng.uniform(0.08, 0.5))
    p = rng.uniform(0.8, 0.995)
    knobs = {"intra_threads": thread_values(draw_range(rng, node, past=(1.5, 2.0, 4.0)))}
    if rng.random() < 0.5:
        knobs["interop_threads"] = inter_values(rng)
    gain = rng.uniform(0.0, 0.12)          # what an inter-op pool overlaps
    def f(c):
        intra, inter = c["intra_threads"], c.get("interop_threads", 1)
        flight = intra * inter
        return amdahl(m.effective(intra), p) * (1.0 + gain * math.log2(inter)) * m.factor(flight)
    return knobs, f, "p=%.3f cliff=%.2f" % (p, m.cliff)


def fam_flat(rng, node):
    m = Machine(rng, node)
    knobs = {"intra_threads": thread_values(draw_range(rng, node))}
    sat = rng.uniform(1.5, max(2.0, node["cpus"] * 0.75))
    sharp = rng.uniform(2.0, 6.0)
    slope = rng.uniform(-0.02, 0.02)        # per doubling past saturation
    workers = None
    if rng.random() < 0.5:
        knobs["dataloader_workers"] = rng.choice([[0, 1, 2, 4], [0, 2, 4, 8], [1, 2, 3, 4, 6]])
        workers = rng.uniform(0.3, 3.0)     # workers the loader needs to keep up
    def f(c):
        n = m.effective(c["intra_threads"])
        v = n / (1.0 + (n / sat) ** sharp) ** (1.0 / sharp)
        v *= 1.0 + slope * max(0.0, math.log2(max(n, 1e-9) / sat))
        busy = c["intra_threads"]
        if workers is not None:
            w = c["dataloader_workers"]
            v *= min(1.0, (w + 0.3) / workers) ** 0.7
            busy += min(w, workers)
        return v * m.factor(busy)
    return knobs, f, "sat=%.1f sharp=%.1f slope=%.3f" % (sat, sharp, slope)


def fam_peak(rng, node):
    m = Machine(rng, node)
    vals = thread_values(draw_range(rng, node))
    knobs = {"intra_threads": vals}
    centre = math.exp(rng.uniform(0.0, math.log(max(vals))))
    width = rng.uniform(0.25, 0.6)          # doublings
    floor = rng.uniform(0.15, 0.6)
    batch = None
    if rng.random() < 0.5:
        knobs["batch_size"] = rng.choice([[8, 16, 32, 64, 128], [16, 32, 64, 128, 256], [4, 8, 16, 32]])
        batch = (math.exp(rng.uniform(math.log(min(knobs["batch_size"])), math.log(max(knobs["batch_size"])))),
                 rng.uniform(0.5, 1.5))
    def f(c):
        d = (math.log2(c["intra_threads"]) - math.log2(centre)) / width
        v = floor + (1.0 - floor) * math.exp(-0.5 * d * d)
        if batch is not None:
            e = (math.log2(c["batch_size"]) - math.log2(batch[0])) / batch[1]
            v *= 0.5 + 0.5 * math.exp(-0.5 * e * e)
        return v * m.factor(c["intra_threads"])
    return knobs, f, "centre=%.1f width=%.2f floor=%.2f" % (centre, width, floor)


def fam_interact(rng, node):
    m = Machine(rng, node)
    knobs = {"intra_threads": thread_values(draw_range(rng, node))}
    extra = rng.sample(["interop_threads", "dataloader_workers", "batch_size"], rng.choice([1, 2, 2, 3]))
    if "interop_threads" in extra:
        knobs["interop_threads"] = inter_values(rng)
    if "dataloader_workers" in extra:
        knobs["dataloader_workers"] = rng.choice([[0, 1, 2, 4, 8], [0, 2, 4, 6], [1, 2, 4]])
    if "batch_size" in extra:
        knobs["batch_size"] = rng.choice([[16, 32, 64, 128], [8, 32, 128], [32, 64, 128, 256]])
    p = rng.uniform(0.7, 0.99)
    branches = rng.choice([2, 3, 4, 8])
    branch_share = rng.uniform(0.1, 0.8)
    sigma = math.exp(rng.uniform(math.log(0.005), math.log(0.15)))
    per_batch = rng.uniform(0.05, 1.0)       # per-batch overhead, in per-sample units
    spill = math.exp(rng.uniform(math.log(32), math.log(512)))
    loader_rate = rng.uniform(0.05, 1.0)     # one worker's samples/s relative to one core's compute
    def f(c):
        intra, inter = c["intra_threads"], c.get("interop_threads", 1)
        workers = c.get("dataloader_workers", 0)
        batch = c.get("batch_size", 64)
        flight = intra * min(inter, branches) + workers
        s = usl(m.effective(intra), sigma, 0.0)
        serial = (1.0 - p)
        seq = p * (1.0 - branch_share) / s
        par = p * branch_share / (min(inter, branches) * usl(m.effective(intra * min(inter, branches)) /
                                                            min(inter, branches), sigma, 0.0))
        per_sample = (serial + seq + par) * (1.0 + per_batch / batch) * (1.0 + max(0.0, batch / spill - 1.0) * 0.3)
        compute = m.factor(flight) / per_sample
        if "dataloader_workers" not in knobs:
            return compute
        if workers == 0:
            return 1.0 / (1.0 / compute + 1.0 / (loader_rate * 1.5))
        return min(compute, workers * loader_rate * m.factor(flight))
    return knobs, f, "p=%.2f branches=%d share=%.2f loader=%.2f" % (p, branches, branch_share, loader_rate)


BUILDERS = {"usl": fam_usl, "cliff": fam_cliff, "flat": fam_flat, "peak": fam_peak, "interact": fam_interact}


def surface(family, index, seed=29):
    """One drawn surface: name, family, node, noise, job shape, knob names and rows (values..., objective)."""
    rng = random.Random("%s:%s:%d" % (seed, family, index))
    node = draw_node(rng)
    knobs, f, what = BUILDERS[family](rng, node)
    scale = math.exp(rng.uniform(math.log(5.0), math.log(5000.0)))
    names = list(knobs)
    rows = []

    def walk(i, config):
        if i == len(names):
            rows.append([config[n] for n in names] + [scale * f(config)])
            return
        for v in knobs[names[i]]:
            config[names[i]] = v
            walk(i + 1, config)
    walk(0, {})
    top = max(r[-1] for r in rows)
    for r in rows:
        r[-1] = max(r[-1], top * 1e-3)
    return {"name": "gen-%s-%03d" % (family, index), "family": family, "node": node, "noise": noise(rng),
            "steps": STEPS_PER_JOB, "report": rng.choice([1, 2, 3]), "knobs": names, "rows": rows,
            "what": what, "source": "generated: bench/tuner/gen_surfaces.py seed %s" % seed}


def surfaces(per_family, seed=29, families=FAMILIES):
    for fam in families:
        for i in range(per_family):
            yield surface(fam, i, seed)


def write_csv(s, path):
    n = s["node"]
    with open(path, "w") as f:
        f.write("# surface: %s: %s family, %s\n" % (s["name"], s["family"], s["what"]))
        f.write("# source: %s\n" % s["source"])
        f.write("# topology: cores=%d cpus=%d numa_cores=%d gpus=%d\n" % (n["cores"], n["cpus"], n["numa_cores"],
                                                                     n["gpus"]))
        f.write("# noise: step=%.4f run=%.4f\n" % (s["noise"]["step"], s["noise"]["run"]))
        f.write("# job: steps=%d report=%d\n" % (s["steps"], s["report"]))
        f.write("# family: %s\n" % s["family"])
        f.write(",".join(s["knobs"] + ["objective"]) + "\n")
        for r in s["rows"]:
            f.write(",".join(str(v) for v in r[:-1]) + ",%.6g\n" % r[-1])


# The suite's gate (tests/unit/test_tuner_gate.c): the first surfaces of each family.
GATE_PER_FAMILY = 4


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", metavar="DIR", help="write every surface as CSV into DIR")
    ap.add_argument("--gate", metavar="DIR", help="write the suite's gate subset into DIR")
    ap.add_argument("--per-family", type=int, default=42)
    ap.add_argument("--seed", default="29")
    ap.add_argument("--families", default=",".join(FAMILIES))
    args = ap.parse_args()
    out, per = (args.gate, GATE_PER_FAMILY) if args.gate else (args.write, args.per_family)
    if not out:
        ap.error("--write DIR or --gate DIR")
    os.makedirs(out, exist_ok=True)
    for s in surfaces(per, args.seed, args.families.split(",")):
        write_csv(s, os.path.join(out, s["name"] + ".csv"))


if __name__ == "__main__":
    main()
