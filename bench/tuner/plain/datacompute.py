#!/usr/bin/python3
"""datacompute, written as a user writes it: not one dlprof line.

The same work as e2e_job.py's `datacompute` (bench/tuner/README.md): a
batch of 96 images augmented one by one (many small tensor ops), then
dense compute.  Here the augmentation is a Dataset read through a
DataLoader (its next() is the phase the zero-touch path calls `data`) and
the compute is the model's top-level module `body`.  Prints
{"steps_per_s": ...} over the steps after 3 warm-up steps.

  datacompute.py STEPS
"""
import json
import sys
import time

import torch

WARMUP = 3
BATCH = 96


class Augmented(torch.utils.data.Dataset):
    """Per-sample augmentation of a fixed set of images: flip every other one, normalise, pad and crop."""

    def __init__(self, images, length):
        self.images = images
        self.length = length

    def __len__(self):
        return self.length

    def __getitem__(self, i):
        img = self.images[i % BATCH % len(self.images)]
        if i % 2:
            img = torch.flip(img, [2])
        img = (img - img.mean()) / (img.std() + 1e-5)
        return torch.nn.functional.pad(img, (1, 1, 1, 1))[:, 1:17, 1:17]


class Body(torch.nn.Module):
    """Four dense layers of 768 over a 512-row activation (the work of e2e_job.py's compute phase)."""

    def __init__(self):
        super().__init__()
        self.weights = torch.nn.ParameterList(
            [torch.nn.Parameter(torch.randn(768, 768), requires_grad=False) for _ in range(4)])

    def forward(self, images):
        x = torch.randn(512, 768)
        for w in self.weights:
            x = torch.relu(x @ w)
        return x


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = Body()

    def forward(self, images):
        return self.body(images)


def main():
    steps = int(sys.argv[1])
    torch.manual_seed(0)
    net = Net()
    raw = torch.randn(256, 3, 16, 16)
    loader = torch.utils.data.DataLoader(Augmented(raw, (steps + WARMUP) * BATCH), batch_size=BATCH)
    for i, images in enumerate(loader):
        if i == WARMUP:
            t0 = time.perf_counter()
        net(images)
    print(json.dumps({"steps_per_s": steps / (time.perf_counter() - t0), "interop": torch.get_num_interop_threads()}))


if __name__ == "__main__":
    main()
