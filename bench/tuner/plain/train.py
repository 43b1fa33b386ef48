#!/usr/bin/python3
"""train, written as a user writes it: not one dlprof line.

The same work as e2e_job.py's `train` (bench/tuner/README.md): an MLP's
training loop with SGD.  The zero-touch path ends a step at each
optimizer step and finds the model's top-level modules as phases.
Prints {"steps_per_s": ...} over the steps after 3 warm-up steps.

  train.py STEPS
"""
import json
import sys
import time

import torch
import torch.nn.functional as F

WARMUP = 3


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(),
                                          torch.nn.Linear(1024, 1024), torch.nn.ReLU())
        self.out = torch.nn.Linear(1024, 10)

    def forward(self, x):
        return self.out(self.hidden(x))


def main():
    steps = int(sys.argv[1])
    torch.manual_seed(0)
    net = MLP()
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    x = torch.randn(256, 512)
    y = torch.randint(0, 10, (256,))
    for i in range(steps + WARMUP):
        if i == WARMUP:
            t0 = time.perf_counter()
        opt.zero_grad()
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
    print(json.dumps({"steps_per_s": steps / (time.perf_counter() - t0), "loss": float(loss),
                      "interop": torch.get_num_interop_threads()}))


if __name__ == "__main__":
    main()
