#!/usr/bin/python3
"""Measures real response surfaces for the tuner benchmark on this machine.

For each model (an LSTM training step, a CNN with parallel branches run as
TorchScript so that inter-op threads matter) and batch size, it times the
throughput (samples/s) of every (intra_threads, inter_threads) pair and
writes one CSV per surface under bench/tuner/surfaces/.  Inter-op threads can
be set only once per process, so each inter-op value runs in its own child
process; intra-op threads are switched inside it with torch.set_num_threads,
as the dlprof client does.  The whole sweep is repeated in several rounds,
the inter-op values in a new random order each round and the intra-op
values shuffled inside each child, so that load from other processes on a
shared machine spreads over all points instead of biasing one inter-op
column; the CSV keeps the median over rounds (robust to a round disturbed
by other load) and the standard deviation.

Run with Debian's python3-torch, at a raised priority on a shared machine so that
other processes disturb the timings less:
  nice -n -10 /usr/bin/python3 bench/tuner/measure_torch.py
"""
import json
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "surfaces")
INTRA = list(range(1, 9))
INTER = [1, 2, 3, 4]
ROUNDS = 3
SECONDS = 0.4          # measured time per point and round

SURFACES = [
    ("torch-lstm-train-b8", "lstm", 8),
    ("torch-lstm-train-b64", "lstm", 64),
    ("torch-cnn-infer-b4", "cnn", 4),
    ("torch-cnn-infer-b32", "cnn", 32),
]


def child(model, batch, inter, seed):
    import torch
    torch.set_num_interop_threads(inter)
    torch.manual_seed(0)
    if model == "lstm":
        net = torch.nn.LSTM(128, 256, num_layers=2, batch_first=True)
        head = torch.nn.Linear(256, 10)
        opt = torch.optim.SGD(list(net.parameters()) + list(head.parameters()), lr=0.01)
        x = torch.randn(batch, 24, 128)
        y = torch.randint(0, 10, (batch,))

        def step():
            opt.zero_grad()
            out, _ = net(x)
            loss = torch.nn.functional.cross_entropy(head(out[:, -1]), y)
            loss.backward()
            opt.step()
    else:
        net = torch.jit.script(Branchy()).eval()
        x = torch.randn(batch, 3, 48, 48)

        def step():
            with torch.no_grad():
                net(x)
    results = {}
    order = list(INTRA)
    random.Random(seed).shuffle(order)
    for intra in order:
        torch.set_num_threads(intra)
        step()                            # warm-up after a switch
        n, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < SECONDS:
            step()
            n += 1
        dt = time.perf_counter() - t0
        results.setdefault(intra, []).append(n * batch / dt)
    print(json.dumps(results))


def make_branchy():
    import torch

    class Branch(torch.nn.Module):
        def __init__(self, k):
            super().__init__()
            self.conv = torch.nn.Conv2d(32, 32, k, padding=k // 2)
            self.conv2 = torch.nn.Conv2d(32, 32, 3, padding=1)

        def forward(self, x):
            return torch.relu(self.conv2(torch.relu(self.conv(x))))

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = torch.nn.Conv2d(3, 32, 3, padding=1)
            self.b1 = Branch(1)
            self.b3 = Branch(3)
            self.b5 = Branch(5)
            self.b7 = Branch(3)
            self.fc = torch.nn.Linear(32 * 4, 10)

        def forward(self, x):
            x = torch.relu(self.stem(x))
            f1 = torch.jit.fork(self.b1, x)
            f3 = torch.jit.fork(self.b3, x)
            f5 = torch.jit.fork(self.b5, x)
            y7 = self.b7(x)
            y = torch.cat([torch.jit.wait(f1), torch.jit.wait(f3), torch.jit.wait(f5), y7], 1)
            y = torch.nn.functional.adaptive_avg_pool2d(y, 1).flatten(1)
            return self.fc(y)

    return Net


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "--child":
        global Branchy
        Branchy = make_branchy()
        child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
        return
    os.makedirs(OUT, exist_ok=True)
    ncpu = len(os.sched_getaffinity(0))
    rng = random.Random(1)
    for name, model, batch in SURFACES:
        vals = {}
        for rnd in range(ROUNDS):
            inters = list(INTER)
            rng.shuffle(inters)
            for inter in inters:
                env = dict(os.environ, OMP_NUM_THREADS="1")
                out = subprocess.run([sys.executable, __file__, "--child", model, str(batch), str(inter),
                                      str(rng.randrange(1 << 30))],
                                     check=True, capture_output=True, text=True, env=env).stdout
                for intra, v in json.loads(out.strip().splitlines()[-1]).items():
                    vals.setdefault((int(intra), inter), []).extend(v)
        rows = []
        for (intra, inter), v in vals.items():
            v.sort()
            med = v[len(v) // 2] if len(v) % 2 else 0.5 * (v[len(v) // 2 - 1] + v[len(v) // 2])
            mean = sum(v) / len(v)
            sd = (sum((x - mean) ** 2 for x in v) / max(1, len(v) - 1)) ** 0.5
            rows.append((intra, inter, med, sd, len(v)))
        rows.sort()
        path = os.path.join(OUT, name + ".csv")
        with open(path, "w") as f:
            f.write("# surface: %s (%s, batch %d), throughput in samples/s\n" % (name, model, batch))
            f.write("# source: measured by bench/tuner/measure_torch.py, python3-torch 1.13.1, "
                    "%d CPUs (shared machine), median of %d rounds x %.1f s per point\n" % (ncpu, ROUNDS, SECONDS))
            f.write("# topology: cores=%d numa_cores=%d gpus=0\n" % (ncpu, ncpu))
            if model == "cnn":
                # The job forks (torch.jit.fork): it declares its inter-op pool, as a job of it would.
                f.write('# declared: {"interop_threads": {"default": 2}}\n')
            f.write("intra_threads,interop_threads,objective,std,n\n")
            for r in rows:
                f.write("%d,%d,%.3f,%.3f,%d\n" % r)
        print("wrote", path, flush=True)


if __name__ == "__main__":
    main()
