#!/usr/bin/python3
"""One real PyTorch job of the end-to-end tuning benchmark (see e2e.py).

Runs a workload of named phases for a number of steps through the dlprof
client, either under a fixed setting (the knobs declared with one value
each, so the daemon has no choice; per-phase intra-op overrides switched on
entering and leaving each phase the way the client does) or tuned by
dlprofd, and prints one JSON line: the steps/s measured after the warm-up
steps, and per step the config it ran.  Both pay the client's and the
daemon's overhead alike.

  e2e_job.py WORKLOAD STEPS URL fixed INTER INTRA [PHASE=INTRA ...]
  e2e_job.py WORKLOAD STEPS URL dlprof

The workloads are phase structures of our own design:
  branches     a forked ensemble of small layers (TorchScript, torch.jit.fork)
               next to dense sequential layers: per-phase settings matter
  datacompute  a data phase of many small tensor ops, then a dense compute phase
  single       one dominant phase (a CNN forward), per-phase settings cannot matter
  train        a training loop (forward with loss, backward with the optimizer step)
"""
import json
import os
import sys
import time

WARMUP = 3
KNOBS = {"intra_threads": {"values": [1, 2]}, "interop_threads": {"values": [1, 2]}}


def build(torch, name):
    """Returns (phases, run) where run(phase) does that phase's work; the last phase may return a loss."""
    torch.manual_seed(0)
    if name == "branches":
        class Branch(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = torch.nn.Linear(256, 256)
                self.b = torch.nn.Linear(256, 256)

            def forward(self, x):
                for _ in range(6):
                    x = torch.tanh(self.b(torch.relu(self.a(x))))
                return x

        class Ensemble(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.b1, self.b2, self.b3, self.b4 = Branch(), Branch(), Branch(), Branch()

            def forward(self, x):
                f1 = torch.jit.fork(self.b1, x)
                f2 = torch.jit.fork(self.b2, x)
                f3 = torch.jit.fork(self.b3, x)
                y4 = self.b4(x)
                return torch.jit.wait(f1) + torch.jit.wait(f2) + torch.jit.wait(f3) + y4

        # Many small ops in forked branches (one thread each does best), then dense layers (all threads).
        ens = torch.jit.script(Ensemble()).eval()
        mats = [torch.randn(1536, 1536) for _ in range(3)]
        xe = torch.randn(8, 256)
        xs = torch.randn(512, 1536)

        def run(phase):
            with torch.no_grad():
                if phase == "fork":
                    for _ in range(40):
                        ens(xe)
                else:
                    x = xs
                    for m in mats:
                        x = torch.relu(x @ m)
        return ["fork", "seq"], run

    if name == "datacompute":
        w = [torch.randn(768, 768) for _ in range(4)]
        raw = torch.randn(256, 3, 16, 16)

        def run(phase):
            if phase == "data":
                # Per-sample augmentation: many small ops, little to share between threads.
                out = []
                for i in range(96):
                    img = raw[i % 256]
                    if i % 2:
                        img = torch.flip(img, [2])
                    img = (img - img.mean()) / (img.std() + 1e-5)
                    out.append(torch.nn.functional.pad(img, (1, 1, 1, 1))[:, 1:17, 1:17])
                return torch.stack(out)
            x = torch.randn(512, 768)
            for m in w:
                x = torch.relu(x @ m)
            return x
        return ["data", "compute"], run

    if name == "single":
        net = torch.nn.Sequential(
            torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.ReLU(),
            torch.nn.Conv2d(32, 64, 3, padding=1), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(4), torch.nn.Flatten(), torch.nn.Linear(64 * 16, 10)).eval()
        x = torch.randn(16, 3, 48, 48)

        def run(phase):
            with torch.no_grad():
                return net(x)
        return ["forward"], run

    if name == "train":
        net = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 1024),
                                  torch.nn.ReLU(), torch.nn.Linear(1024, 10))
        opt = torch.optim.SGD(net.parameters(), lr=0.05)
        x = torch.randn(256, 512)
        y = torch.randint(0, 10, (256,))
        state = {}

        def run(phase):
            if phase == "forward":
                opt.zero_grad()
                state["loss"] = torch.nn.functional.cross_entropy(net(x), y)
                return None
            state["loss"].backward()
            opt.step()
            return float(state["loss"])
        return ["forward", "backward"], run

    raise SystemExit("unknown workload " + name)


def main():
    name, steps, url, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    import torch
    import dlprof
    over = {}
    if mode == "fixed":
        inter, intra = int(sys.argv[5]), int(sys.argv[6])
        over = {k: int(v) for k, v in (a.split("=") for a in sys.argv[7:])}
        workload = "e2e-fixed-" + name
        knobs = {"intra_threads": {"values": [intra]}, "interop_threads": {"values": [inter]}}
    else:
        workload = "e2e-" + name
        knobs = json.loads(json.dumps(KNOBS))
        if name == "branches":
            # It forks (torch.jit.fork) and says so, as such a job would: its inter-op pool's size.
            knobs["interop_threads"]["default"] = 2
    configs, loss = [], None
    with dlprof.session(workload=workload, url=url, knobs=knobs, interval=0.5) as s:
        phases, run = build(torch, name)
        t0 = None
        for i in range(steps + WARMUP):
            if i == WARMUP:
                t0 = time.perf_counter()
            for ph in phases:
                with s.phase(ph):
                    if ph in over:
                        torch.set_num_threads(over[ph])
                    r = run(ph)
                    if ph in over:
                        torch.set_num_threads(intra)
                    if isinstance(r, float):
                        loss = r
            configs.append(json.dumps(s.config, sort_keys=True))
            s.step(samples=1, loss=loss)
        dt = time.perf_counter() - t0
    print(json.dumps({"steps_per_s": steps / dt, "configs": configs[WARMUP:],
                      "interop": torch.get_num_interop_threads()}))


if __name__ == "__main__":
    main()
