"""One process training a small MLP with gradient accumulation, reporting goodput's figures.

A regression on data it makes (y = a fixed random MLP of x, plus label
noise), each optimizer step over --micro micro-batches whose backward is
followed by session.micro_batch().  The global batch is the workload's
runtime knob "batch" (the daemon picks it; the job follows at each step),
so one job measures several.  Writes {"job_id", "steps"} to --out.
"""

import argparse
import json

import torch

import dlprof


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--hidden", type=int, default=512, help="the MLP's width: steps long enough for the "
                    "daemon to answer several times a job")
    ap.add_argument("--micro", type=int, default=8)
    ap.add_argument("--batches", default="32,512", help="the values of the batch knob; the first is the default")
    ap.add_argument("--workload", default="goodput-mlp")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(1)
    width = 64
    teacher = torch.nn.Sequential(torch.nn.Linear(width, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
    model = torch.nn.Sequential(torch.nn.Linear(width, args.hidden), torch.nn.ReLU(),
                                torch.nn.Linear(args.hidden, args.hidden), torch.nn.ReLU(),
                                torch.nn.Linear(args.hidden, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    batches = [int(b) for b in args.batches.split(",")]
    knobs = {"intra_threads": {"values": [1]}, "interop_threads": {"values": [1]},
             "batch": {"values": batches, "default": batches[0], "runtime": True}}
    with dlprof.session(workload=args.workload, knobs=knobs, objective="goodput", interval=0.2) as s:
        for _ in range(args.steps):
            batch = int(s.config.get("batch", batches[0]))
            micro = batch // args.micro
            opt.zero_grad()
            for _ in range(args.micro):
                x = torch.randn(micro, width)
                with torch.no_grad():
                    y = teacher(x) + 0.3 * torch.randn(micro, 1)
                loss = torch.nn.functional.mse_loss(model(x), y) / args.micro
                loss.backward()
                s.micro_batch(model, micro)
            opt.step()
            s.step(samples=batch, loss=loss.item() * args.micro)
        s.flush()
        job_id = s.job_id
    with open(args.out, "w") as f:
        json.dump({"job_id": job_id, "steps": args.steps}, f)


if __name__ == "__main__":
    main()
