#!/usr/bin/env python3
"""Writes the synthetic response surfaces of the tuner benchmark.

Each surface is a closed-form model of a shape seen on real machines, on a
hypothetical node described in its "# topology:" line (the tuner's topology
prior reads it).  Deterministic: rerunning rewrites the same files.

  syn-cliff        threads x inter-op on 16 cores / 32 CPUs (2 NUMA domains
                   of 8 cores): Amdahl scaling, a small SMT gain, and an
                   oversubscription cliff once threads x inter-op exceed the
                   CPUs (the job declared threads up to 64).
  syn-plateau      threads x data-loader workers: compute saturates at the
                   memory bandwidth (a plateau), the loader caps throughput
                   until enough workers run, and workers compete for cores.
  syn-interact     threads x inter-op on 16 cores for a branchy model: the
                   best split of the cores between the two pools is interior.
  syn-noisy        threads x allocator, memory-bound peak at 6 threads, with
                   20% step noise and 5% run-to-run noise.
  syn-affinity     threads x binding: close wins inside one NUMA domain,
                   spread across domains, none pays migrations.
Usage: python3 bench/tuner/make_synthetic.py
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "surfaces")
LADDER64 = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64]
LADDER32 = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32]


def amdahl(p, n):
    return 1.0 / ((1.0 - p) + p / n)


def write(name, doc, topo, noise, knobs, rows):
    path = os.path.join(OUT, name + ".csv")
    with open(path, "w") as f:
        f.write("# surface: %s: %s\n" % (name, doc))
        f.write("# source: synthetic, bench/tuner/make_synthetic.py\n")
        f.write("# topology: %s\n" % topo)
        if noise:
            f.write("# noise: %s\n" % noise)
        f.write(",".join(knobs + ["objective"]) + "\n")
        for r in rows:
            f.write(",".join(str(v) for v in r[:-1]) + ",%.4f\n" % r[-1])


def cliff():
    rows = []
    for t in LADDER64:
        for i in [1, 2, 4]:
            neff = min(t, 16) + 0.2 * min(max(t - 16, 0), 16)
            v = 100.0 * amdahl(0.95, neff)
            if t > 8:
                v *= 0.96                      # crosses a NUMA domain
            if i == 2 and t <= 16:
                v *= 1.06
            if i == 4 and t <= 8:
                v *= 1.08
            if t * i > 32:
                v *= (32.0 / (t * i)) ** 2.5   # oversubscription
            rows.append((t, i, v))
    write("syn-cliff", "unimodal with an oversubscription cliff",
          "cores=16 cpus=32 numa_cores=8 gpus=0 declared_threads=1", "", ["intra_threads", "interop_threads"], rows)


def plateau():
    rows = []
    for t in LADDER32:
        for w in [0, 1, 2, 4, 8]:
            compute = min(50.0 * amdahl(0.9, min(t, 16)), 190.0)   # bandwidth plateau
            loader = 120.0 if w == 0 else 75.0 * w
            v = 1.0 / (1.0 / compute + 1.0 / loader) if w == 0 else min(compute, loader)
            if t + w > 16:
                v *= (16.0 / (t + w)) ** 0.7
            rows.append((t, w, v))
    write("syn-plateau", "bandwidth plateau and a loader bottleneck",
          "cores=16 cpus=32 numa_cores=16 gpus=0", "", ["intra_threads", "dataloader_workers"], rows)


def interact():
    rows = []
    for t in [1, 2, 3, 4, 6, 8, 12, 16]:
        for i in [1, 2, 3, 4]:
            v = 40.0 * amdahl(0.75, min(i, 4)) * amdahl(0.85, t)
            if t * i > 16:
                v *= (16.0 / (t * i)) ** 1.5
            rows.append((t, i, v))
    write("syn-interact", "interacting intra-op and inter-op pools",
          "cores=16 cpus=16 numa_cores=16 gpus=0", "", ["intra_threads", "interop_threads"], rows)


def noisy():
    rows = []
    for t in LADDER32:
        for a in ["default", "jemalloc"]:
            v = 30.0 * t / (1.0 + (t / 6.0) ** 2) ** 0.8
            if t > 16:
                v *= 0.9
            if a == "jemalloc":
                v *= 1.05
            rows.append((t, a, v))
    write("syn-noisy", "memory-bound peak under heavy noise",
          "cores=16 cpus=32 numa_cores=16 gpus=0", "step=0.20 run=0.05", ["intra_threads", "allocator"], rows)


def affinity():
    rows = []
    for t in LADDER32:
        for a in ["none", "close", "spread"]:
            v = 10.0 * amdahl(0.93, min(t, 16) + 0.15 * max(0, min(t, 32) - 16))
            if a == "none":
                v *= 0.92
            elif a == "close":
                v *= 1.0 if t <= 8 else 0.9
            else:
                v *= 0.95 if t <= 8 else 1.04
            rows.append((t, a, v))
    write("syn-affinity", "binding interacts with the thread count",
          "cores=16 cpus=32 numa_cores=8 gpus=0", "", ["intra_threads", "affinity"], rows)


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    cliff()
    plateau()
    interact()
    noisy()
    affinity()
