"""A data-parallel training job of N ranks (gloo on CPU) under the client.

The parent starts the ranks as the env:// launchers do (RANK, WORLD_SIZE,
LOCAL_RANK, MASTER_ADDR, MASTER_PORT set per process, as srun or
`dlprofctl run` set them), or with torch.multiprocessing.spawn and an
explicit rank (--spawn), and waits for them.  Each rank trains a small MLP
on data it makes, averaging gradients with dist.all_reduce (or through
DistributedDataParallel and the session's timed comm hook: --ddp), and
reports every step through dlprof.

A rank can be made slow by a cause a real job meets (--slow R --cause):
  neighbour  every rank is bound to a CPU of its own and three busy
             processes share rank R's CPU (one alone barely slows a rank
             that sleeps in every all_reduce: the scheduler runs a task that
             wakes before one that kept spinning, and rank R's work took
             1.05x to 1.25x rank 0's in a third of quiet runs);
  data       rank R decodes its batches from text in its data phase, the
             others take them ready.

Writes {"ranks": [{"rank", "job_id", "steps", "pid", "own_s", "comm_s"}], ...}
to --out: own_s and comm_s are each rank's seconds outside and inside its
all_reduce calls by its own clock, so a test can tell a run the scheduler
left unbalanced without asking the code under test.  With
--launched it is one rank a launcher started (`dlprofctl run`), writing
rank<N>.json beside --out.
"""

import argparse
import json
import os
import socket
import subprocess
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpus():
    return sorted(os.sched_getaffinity(0))


def rank_main(rank, world, args, out_dir):
    import torch
    import torch.distributed as dist
    import dlprof

    torch.set_num_threads(args.threads or int(os.environ.get("OMP_NUM_THREADS") or 1))
    if args.pin:
        all_cpus = cpus()
        os.sched_setaffinity(0, {all_cpus[rank % len(all_cpus)]})
    dist.init_process_group("gloo", rank=rank, world_size=world) if args.spawn else \
        dist.init_process_group("gloo")
    torch.manual_seed(rank)
    model = torch.nn.Sequential(*[m for _ in range(args.layers) for m in
                                  (torch.nn.Linear(args.width, args.width), torch.nn.ReLU())])
    # --threads fixes the layout: the daemon may not change the threads per rank.
    knobs = {"intra_threads": {"values": [args.threads]}} if args.threads else None
    with dlprof.session(workload=args.workload, params={"width": args.width, "batch": args.batch},
                        interval=0.3, knobs=knobs, objective="goodput" if args.noise else None) as s:
        if args.ddp:
            model = torch.nn.parallel.DistributedDataParallel(model)
            model.register_comm_hook(None, s.ddp_comm_hook(noise_scale=args.noise))
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        slow_data = args.cause == "data" and rank == args.slow
        text = json.dumps([[0.5] * args.width] * args.batch) if slow_data else None
        # The rank's own clock, apart from dlprof and the daemon: its time outside the
        # all_reduce calls (with --ddp the hook's collectives fall inside backward).
        own_s = comm_s = 0.0
        for _ in range(args.steps):
            t0 = time.monotonic()
            with s.phase("data"):
                if slow_data:
                    for _ in range(args.decode):
                        x = torch.tensor(json.loads(text))
                else:
                    x = torch.randn(args.batch, args.width)
            with s.phase("compute"):
                loss = model(x).pow(2).mean()
                opt.zero_grad()
                loss.backward()
            t1 = time.monotonic()
            if not args.ddp:
                for p in model.parameters():
                    dist.all_reduce(p.grad)
                    p.grad.div_(world)
            t2 = time.monotonic()
            opt.step()
            own_s += (t1 - t0) + (time.monotonic() - t2)
            comm_s += t2 - t1
            s.step(samples=args.batch, loss=loss.item())
        job_id = s.job_id
        s.flush()
    dist.barrier()
    dist.destroy_process_group()
    with open(os.path.join(out_dir, "rank%d.json" % rank), "w") as f:
        json.dump({"rank": rank, "job_id": job_id, "steps": args.steps, "pid": os.getpid(),
                   "own_s": own_s, "comm_s": comm_s}, f)


def spawned(rank, world, args, out_dir):
    rank_main(rank, world, args, out_dir)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--width", type=int, default=384)
    ap.add_argument("--layers", type=int, default=3)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--workload", default="dist-mlp")
    ap.add_argument("--threads", type=int, default=0, help="threads per rank (default OMP_NUM_THREADS, else 1)")
    ap.add_argument("--slow", type=int, default=-1)
    ap.add_argument("--cause", choices=("neighbour", "data"), default=None)
    ap.add_argument("--decode", type=int, default=6, help="times the slow rank decodes its batch (data)")
    ap.add_argument("--pin", action="store_true", help="bind rank r to CPU r mod the CPUs")
    ap.add_argument("--ddp", action="store_true")
    ap.add_argument("--noise", action="store_true",
                    help="with --ddp: objective goodput, the hook measures the gradient noise figures")
    ap.add_argument("--spawn", action="store_true")
    ap.add_argument("--launched", action="store_true",
                    help="this process is one rank a launcher started (RANK, WORLD_SIZE set): run it")
    ap.add_argument("--out", required=True)
    ap.add_argument("--rank-of-child", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--out-dir", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.cause == "neighbour":
        args.pin = True
    if args.rank_of_child is not None:
        rank_main(args.rank_of_child, int(os.environ["WORLD_SIZE"]), args, args.out_dir)
        return
    if args.launched:
        # Started by `dlprofctl run` or srun: the ranks' files are gathered by whoever reads --out's folder.
        rank_main(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), args,
                  os.path.dirname(os.path.abspath(args.out)))
        return
    out_dir = os.path.dirname(os.path.abspath(args.out))
    port = free_port()
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    neighbours = []
    if args.cause == "neighbour":
        cpu = cpus()[args.slow % len(cpus())]
        neighbours = [subprocess.Popen([sys.executable, "-c", "import os\nos.sched_setaffinity(0, {%d})\n"
                                        "while True:\n    pass\n" % cpu]) for _ in range(3)]
    t0 = time.time()
    try:
        if args.spawn:
            import torch.multiprocessing as mp
            mp.spawn(spawned, args=(args.ranks, args, out_dir), nprocs=args.ranks, join=True)
        else:
            procs = []
            for r in range(args.ranks):
                env = dict(os.environ, RANK=str(r), WORLD_SIZE=str(args.ranks), LOCAL_RANK=str(r),
                           LOCAL_WORLD_SIZE=str(args.ranks))
                procs.append(subprocess.Popen([sys.executable] + sys.argv + ["--rank-of-child", str(r),
                                                                            "--out-dir", out_dir], env=env))
            rcs = [p.wait() for p in procs]
            if any(rcs):
                sys.exit("ranks failed: %r" % rcs)
    finally:
        for n in neighbours:
            n.kill()
            n.wait()
    ranks = []
    for r in range(args.ranks):
        path = os.path.join(out_dir, "rank%d.json" % r)
        with open(path) as f:
            ranks.append(json.load(f))
        os.unlink(path)
    with open(args.out, "w") as f:
        json.dump({"ranks": ranks, "seconds": time.time() - t0}, f)


if __name__ == "__main__":
    main()
