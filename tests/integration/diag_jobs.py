"""Jobs built to have one problem each (or none), for test_diagnosis.py.

    python3 diag_jobs.py MODE [--seconds S]

CPU-bound modes fork one process per busy thread: Python threads would
queue on the GIL (most so on a loaded machine, where the holder is often
preempted), so they would not all be runnable at once.  The daemon counts
a job's threads over all its processes, so these are its threads.

  spin N        N threads that each keep a CPU busy (oversubscribed when N
                exceeds the CPUs the job may use; underusing when fewer)
  imbalanced    one thread busy all the time and three busy 40% of it
  memory MB     holds MB mebibytes resident and keeps touching them
  input         a dlprof session whose "data" phase is 60% of each step
  comm          a session whose "allreduce" phase is half of each step
  checkpoint    a session that checkpoints (0.3 s) every 8 steps of 0.05 s
  phases        a healthy session: compute phases only, CPU busy throughout

Session modes take the daemon from DLPROF_URL and register themselves (the
workload is "diag-MODE"); the others are registered by the test with their
pid.  Every mode ends after --seconds.
"""

import argparse
import hashlib
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "client", "python"))


BUF = b"x" * (256 * 1024)


def spin_for(seconds):
    """Busy for seconds of wall time (so phase shares hold on a loaded machine)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        hashlib.sha256(BUF).digest()


def duty(share, until):
    """Busy share of each 100 ms slice until the monotonic time until."""
    while time.monotonic() < until:
        spin_for(0.1 * share)
        if share < 1:
            time.sleep(0.1 * (1 - share))


def run_threads(shares, until):
    pids = []
    for share in shares:
        pid = os.fork()
        if pid == 0:
            try:
                duty(share, until)
            finally:
                os._exit(0)
        pids.append(pid)
    for pid in pids:
        os.waitpid(pid, 0)


def memory(mb, until):
    import ctypes
    block = bytearray(mb * 1024 * 1024)
    # Resident at once, in C: a Python loop's first pass over the pages took most of a loaded full
    # run's job (its resident size averaged 172 of 244 MiB), so the limit was never approached.
    ctypes.memset((ctypes.c_char * len(block)).from_buffer(block), 1, len(block))
    while time.monotonic() < until:
        for i in range(0, len(block), 4096):
            block[i] = (block[i] + 1) & 0xFF
        time.sleep(0.05)


def session_job(mode, until):
    import dlprof
    with dlprof.session(workload="diag-" + mode, interval=0.25) as s:
        print("job %s" % s.job_id, flush=True)
        n = 0
        while time.monotonic() < until:
            n += 1
            if mode == "input":
                with s.phase("data"):
                    time.sleep(0.06)
                with s.phase("forward"):
                    spin_for(0.04)
            elif mode == "comm":
                with s.phase("forward"):
                    spin_for(0.05)
                with s.phase("allreduce"):
                    time.sleep(0.05)
            elif mode == "checkpoint":
                with s.phase("forward"):
                    spin_for(0.05)
                if n % 8 == 0:
                    with s.phase("checkpoint"):
                        time.sleep(0.3)
            else:
                with s.phase("forward"):
                    spin_for(0.03)
                with s.phase("backward"):
                    spin_for(0.05)
            s.step(samples=32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode")
    ap.add_argument("arg", nargs="?", type=int)
    ap.add_argument("--seconds", type=float, default=30)
    a = ap.parse_args()
    until = time.monotonic() + a.seconds
    if a.mode == "spin":
        run_threads([1.0] * a.arg, until)
    elif a.mode == "imbalanced":
        run_threads([1.0, 0.4, 0.4, 0.4], until)
    elif a.mode == "memory":
        memory(a.arg, until)
    else:
        session_job(a.mode, until)


if __name__ == "__main__":
    main()
