"""One training run for bench/goodput: a 2-rank gloo DDP job trained to a target loss.

The task is made here: 16-class sequences (a class's pattern of 4 channels
x 64, randomly shifted, plus noise; 5% of labels flipped), a small 1-D
convolutional net (few parameters, much compute per sample), Adam at
--lr (times sqrt(batch / 16) with --lr-scale sqrt, the square-root rule
AdaptDL applies to Adam, so a larger batch takes larger steps as Pollux's
efficiency model assumes), fresh data every step.  Every --eval-seconds of
training rank 0 measures the loss on 2048 held-out sequences (not counted
as training time) and decides for both ranks; the run ends once that loss
is at or below --target, or after --max-seconds of training.  Each step
goes through the dlprof client's DDP hook (CommTimer.ddp_comm_hook with
_noise.RankNorms), so the gradient noise figures are the client's, with
its overhead.

Writes to --out (rank 0): {"global_batch", "train_seconds", "steps",
"history": [[training seconds, steps, held-out loss]], "samples": [per
step: samples_per_s and the five goodput figures]}.
"""

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "client", "python"))

CHANNELS, LENGTH, CLASSES, WIDTH, FLIP = 4, 64, 16, 48, 0.05


def make_task(torch):
    """Sequences: a class's pattern (4 channels x 64), randomly shifted, plus noise; 5% labels flipped."""
    g = torch.Generator().manual_seed(1234)
    patterns = torch.randn(CLASSES, CHANNELS, LENGTH, generator=g)

    def draw(n, gen):
        y = torch.randint(0, CLASSES, (n,), generator=gen)
        shift = int(torch.randint(0, LENGTH, (1,), generator=gen))
        x = torch.roll(patterns[y], shift, dims=2) + 1.5 * torch.randn(n, CHANNELS, LENGTH, generator=gen)
        flip = torch.rand(n, generator=gen) < FLIP
        y = torch.where(flip, torch.randint(0, CLASSES, (n,), generator=gen), y)
        return x, y

    held_out = draw(2048, torch.Generator().manual_seed(99))
    return draw, held_out


def make_model(torch):
    """A small 1-D convolutional net: few parameters (a cheap all-reduce), much compute per sample."""
    nn = torch.nn
    return nn.Sequential(nn.Conv1d(CHANNELS, WIDTH, 5, padding=2), nn.ReLU(),
                         nn.Conv1d(WIDTH, WIDTH, 5, padding=2), nn.ReLU(),
                         nn.Conv1d(WIDTH, WIDTH, 5, padding=2), nn.ReLU(),
                         nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(WIDTH, CLASSES))


def rank_main(args):
    import torch
    import torch.distributed as dist
    from dlprof._dist import CommTimer
    from dlprof._noise import RankNorms

    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(7)                       # the same initial model on every rank
    model = make_model(torch)
    model = torch.nn.parallel.DistributedDataParallel(model)
    norms = RankNorms()
    model.register_comm_hook(None, CommTimer().ddp_comm_hook(norms=norms))
    m = args.batch
    local = m // world
    lr = args.lr * (m / 16.0) ** 0.5 if args.lr_scale == "sqrt" else args.lr
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    draw, (hx, hy) = make_task(torch)
    gen = torch.Generator().manual_seed(1000 + rank)
    loss_fn = torch.nn.functional.cross_entropy
    steps, trained, next_eval, history = 0, 0.0, 0.0, []
    rows = []
    flag = torch.zeros(1, dtype=torch.int64)
    while True:
        # Rank 0 decides for all, every step (one 1-element broadcast): 1 evaluate, 2 stop.
        if rank == 0:
            flag[0] = 2 if trained >= args.max_seconds else 1 if trained >= next_eval else 0
        dist.broadcast(flag, 0)
        if flag.item():
            if rank == 0:
                with torch.no_grad():
                    history.append([trained, steps, loss_fn(model.module(hx), hy).item()])
                next_eval = trained + args.eval_seconds
                if history[-1][2] <= args.target:
                    flag[0] = 2
            dist.broadcast(flag, 0)
            if flag.item() == 2:
                break
        t0 = time.perf_counter()
        x, y = draw(local, gen)
        loss = loss_fn(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        dt = time.perf_counter() - t0
        trained += dt
        steps += 1
        fig = norms.take(local)
        rows.append({"samples_per_s": m / dt, "global_batch": m, "grad_batch_small": fig[0],
                     "grad_sqnorm_small": fig[1], "grad_batch_large": fig[2], "grad_sqnorm_large": fig[3]})
    if rank == 0:
        with open(args.out, "w") as f:
            json.dump({"global_batch": m, "train_seconds": trained, "steps": steps, "history": history,
                       "samples": rows}, f)
    dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, required=True, help="global batch (2 ranks: half each)")
    ap.add_argument("--lr", type=float, default=1e-3, help="Adam's learning rate at batch 16")
    ap.add_argument("--lr-scale", choices=("none", "sqrt"), default="none",
                    help="none: --lr at every batch; sqrt: --lr x sqrt(batch / 16)")
    ap.add_argument("--target", type=float, default=0.0, help="stop once the held-out loss is at most this")
    ap.add_argument("--eval-seconds", type=float, default=0.5, help="training seconds between held-out losses")
    ap.add_argument("--max-seconds", type=float, default=30.0, help="training seconds at most")
    ap.add_argument("--out", required=True)
    ap.add_argument("--rank-of-child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.rank_of_child:
        rank_main(args)
        return
    import socket
    import subprocess
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = [subprocess.Popen([sys.executable] + sys.argv + ["--rank-of-child"],
                              env=dict(os.environ, RANK=str(r), WORLD_SIZE="2", LOCAL_RANK=str(r),
                                       MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), OMP_NUM_THREADS="1"))
             for r in range(2)]
    if any(p.wait() for p in procs):
        sys.exit("a rank failed")


if __name__ == "__main__":
    main()
