#!/usr/bin/python3
"""branches, written as a user writes it: not one dlprof line.

The same work as e2e_job.py's `branches` (bench/tuner/README.md): a forked
ensemble of small layers (TorchScript, torch.jit.fork), then dense
sequential layers, in inference.  Here they are the model's two top-level
modules, `fork` and `seq`, which the zero-touch path finds as phases.
Prints {"steps_per_s": ...} over the steps after 3 warm-up steps.

  branches.py STEPS
"""
import json
import sys
import time

import torch

WARMUP = 3


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


class Fork(torch.nn.Module):
    """The ensemble run over 40 small batches."""

    def __init__(self):
        super().__init__()
        self.ensemble = torch.jit.script(Ensemble())

    def forward(self, x):
        for _ in range(40):
            y = self.ensemble(x)
        return y


class Seq(torch.nn.Module):
    """Three dense layers of 1536."""

    def __init__(self):
        super().__init__()
        self.weights = torch.nn.ParameterList(
            [torch.nn.Parameter(torch.randn(1536, 1536), requires_grad=False) for _ in range(3)])

    def forward(self, x):
        for w in self.weights:
            x = torch.relu(x @ w)
        return x


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fork = Fork()
        self.seq = Seq()

    def forward(self, small, wide):
        self.fork(small)
        return self.seq(wide)


def main():
    steps = int(sys.argv[1])
    torch.manual_seed(0)
    net = Net().eval()
    small, wide = torch.randn(8, 256), torch.randn(512, 1536)
    with torch.no_grad():
        for i in range(steps + WARMUP):
            if i == WARMUP:
                t0 = time.perf_counter()
            net(small, wide)
    print(json.dumps({"steps_per_s": steps / (time.perf_counter() - t0), "interop": torch.get_num_interop_threads()}))


if __name__ == "__main__":
    main()
