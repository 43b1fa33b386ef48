"""A data-parallel training script as users write it (gloo on CPU, env://), for tests/client/auto_dist.py.

Not one dlprof line, unless --session: then it opens its own session and
reports its steps, but gives DistributedDataParallel no communication hook
(the job of a user who followed only the quick example).  With --spawn it
starts its two ranks itself, with torch.multiprocessing.spawn and an
explicit rank.  A rank exits with an error when its DistributedDataParallel
model outlives the function that made it: dlprof must never be its last
owner (its destruction joins the process group's threads; see
dlprof._steps).

  auto_ddp_job.py STEPS [--session | --spawn]
"""
import gc
import os
import socket
import sys
import weakref

import torch
import torch.distributed as dist

WIDTH = 1024
BATCH = 64


def train(steps, own_session):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(WIDTH, WIDTH), torch.nn.ReLU(), torch.nn.Linear(WIDTH, WIDTH),
                                torch.nn.ReLU(), torch.nn.Linear(WIDTH, WIDTH))
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.001)
    x = torch.randn(BATCH, WIDTH)

    def step():
        opt.zero_grad()
        ddp(x).pow(2).mean().backward()
        opt.step()

    if own_session:
        import dlprof
        with dlprof.session(workload="ddp-own-session", interval=0.5) as s:
            for _ in range(steps):
                step()
                s.step(samples=BATCH)
    else:
        for _ in range(steps):
            step()
    dist.barrier()
    dist.destroy_process_group()
    return weakref.ref(ddp)


def train_and_drop(steps, own_session):
    ddp = train(steps, own_session)
    gc.collect()
    if ddp() is not None:
        sys.exit("the DistributedDataParallel model outlived the script's last reference to it")


def spawned(rank, world, steps):
    dist.init_process_group("gloo", rank=rank, world_size=world)
    train_and_drop(steps, False)


def main():
    steps = int(sys.argv[1])
    if "--spawn" in sys.argv:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        torch.multiprocessing.spawn(spawned, args=(2, steps), nprocs=2, join=True)
        return
    dist.init_process_group("gloo")
    train_and_drop(steps, "--session" in sys.argv)


if __name__ == "__main__":
    main()
