#!/usr/bin/python3
"""A real PyTorch training job for the history recording (record.py).

    train_job.py MODEL SECONDS [--workers N] [--batch B]

Trains MODEL (mlp, cnn, rnn) on random data through a DataLoader for
SECONDS of wall time, reporting to dlprofd through the dlprof client
(DLPROF_URL) with data, forward, backward and optimizer phases and the
intra-op threads as a knob the daemon may tune, and pauses now and then
(an evaluation, a checkpoint) as training jobs do.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "client", "python"))

import dlprof  # noqa: E402
import torch  # noqa: E402


def build(name):
    if name == "mlp":
        model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 1024),
                                    torch.nn.ReLU(), torch.nn.Linear(1024, 10))
        return model, (512,)
    if name == "cnn":
        model = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                                    torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                                    torch.nn.Flatten(), torch.nn.Linear(32 * 8 * 8, 10))
        return model, (3, 32, 32)

    class RNN(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTM(64, 128, batch_first=True)
            self.out = torch.nn.Linear(128, 10)

        def forward(self, x):
            return self.out(self.lstm(x)[0][:, -1])
    return RNN(), (20, 64)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model", choices=["mlp", "cnn", "rnn"])
    ap.add_argument("seconds", type=float)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--batch", type=int, default=64)
    a = ap.parse_args()
    torch.manual_seed(0)
    model, shape = build(a.model)
    data = torch.utils.data.TensorDataset(torch.randn(4096, *shape), torch.randint(0, 10, (4096,)))
    loader = torch.utils.data.DataLoader(data, batch_size=a.batch, shuffle=True, num_workers=a.workers,
                                         persistent_workers=a.workers > 0)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = torch.nn.CrossEntropyLoss()
    end = time.monotonic() + a.seconds
    step = 0
    with dlprof.session(workload="history-%s-w%d" % (a.model, a.workers), params={"batch": a.batch},
                        knobs={"intra_threads": {"min": 1, "max": 2}}) as s:
        while time.monotonic() < end:
            it = iter(loader)
            while time.monotonic() < end:
                with s.phase("data"):
                    try:
                        x, y = next(it)
                    except StopIteration:
                        break
                with s.phase("forward"):
                    loss = loss_fn(model(x), y)
                with s.phase("backward"):
                    opt.zero_grad()
                    loss.backward()
                with s.phase("optimizer"):
                    opt.step()
                step += 1
                s.step(samples=len(x), loss=loss.item())
                if step % 400 == 0:
                    with s.phase("checkpoint"):
                        torch.save(model.state_dict(), os.devnull)
                        time.sleep(2)


if __name__ == "__main__":
    main()
