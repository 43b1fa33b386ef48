#!/usr/bin/python3
"""single, written as a user writes it: not one dlprof line.

The same work as e2e_job.py's `single` (bench/tuner/README.md): one
dominant phase, a small CNN's forward in inference.  Here the CNN has the
usual `features` and `classifier`; the zero-touch path folds the
classifier (a few per mille of the step) into the rest of the step.
Prints {"steps_per_s": ...} over the steps after 3 warm-up steps.

  single.py STEPS
"""
import json
import sys
import time

import torch

WARMUP = 3


class CNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 32, 3, padding=1), torch.nn.ReLU(),
            torch.nn.Conv2d(32, 64, 3, padding=1), torch.nn.ReLU())
        self.classifier = torch.nn.Sequential(
            torch.nn.AdaptiveAvgPool2d(4), torch.nn.Flatten(), torch.nn.Linear(64 * 16, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


def main():
    steps = int(sys.argv[1])
    torch.manual_seed(0)
    net = CNN().eval()
    x = torch.randn(16, 3, 48, 48)
    with torch.no_grad():
        for i in range(steps + WARMUP):
            if i == WARMUP:
                t0 = time.perf_counter()
            net(x)
    print(json.dumps({"steps_per_s": steps / (time.perf_counter() - t0), "interop": torch.get_num_interop_threads()}))


if __name__ == "__main__":
    main()
