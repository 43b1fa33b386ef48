"""Distributed jobs: which rank this process is, and the time it waits in collectives.

A job of many processes (torch.distributed, srun, mpirun) is one job to
dlprofd: every rank registers with the id the ranks share (the Slurm job,
the launcher's run id, the rendezvous address) and its rank, and the daemon
joins them into one job.  detect() reads that from the variables the
launchers set, in this order: the ones torch's env:// reads (RANK,
WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT, which `dlprofctl run` and
srun-based scripts export), Slurm's (SLURM_PROCID, SLURM_NTASKS,
SLURM_LOCALID, SLURM_JOB_ID, SLURM_STEP_ID) and Open MPI's
(OMPI_COMM_WORLD_*).  A job that initialises torch.distributed itself with
an explicit rank (torch.multiprocessing.spawn) is read from torch once the
process group exists.

CommTimer accumulates the time the job's thread spends inside blocking
collective calls of torch.distributed (wrapped in the module, so calls
written `dist.all_reduce(...)` are timed; an async_op=True call is timed at
its wait()), and, through ddp_comm_hook, the time a DistributedDataParallel
step waits for its last gradient bucket after its own backward ended (a
DistributedDataParallel built while the session is open gets that hook, or
has its own timed: dlprof._ddp).  The session reports the sum per step as
comm_wait_s.
"""

import functools
import os
import socket
import sys
import threading
import time

from ._ddp import DdpTimer, timed_future_hook
from ._patch import enabled as auto_enabled

# The collectives of torch.distributed that block their caller until all ranks took part.
COLLECTIVES = ("all_reduce", "all_gather", "all_gather_into_tensor", "all_gather_object", "all_to_all",
               "all_to_all_single", "barrier", "broadcast", "broadcast_object_list", "gather", "reduce",
               "reduce_scatter", "reduce_scatter_tensor", "scatter", "monitored_barrier")


def _int(env, name):
    try:
        v = int(env.get(name, ""))
    except ValueError:
        return None
    return v if v >= 0 else None


def _shared_id(env):
    """The id every rank of this run shares, or None."""
    if env.get("DLPROF_RUN_ID"):
        return "run:" + env["DLPROF_RUN_ID"]
    if env.get("SLURM_JOB_ID"):
        # The job, as discovery and the Slurm hooks name it: its steps are its parts.
        return "slurm:" + env["SLURM_JOB_ID"]
    if env.get("TORCHELASTIC_RUN_ID") and env["TORCHELASTIC_RUN_ID"] != "none":
        return "run:" + env["TORCHELASTIC_RUN_ID"]
    for name in ("PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid", "OMPI_MCA_orte_ess_jobid"):
        if env.get(name):
            return "mpi:" + env[name]
    if env.get("MASTER_ADDR") and env.get("MASTER_PORT"):
        # The rendezvous: one job holds it at a time.
        return "dist:%s:%s" % (env["MASTER_ADDR"], env["MASTER_PORT"])
    return None


def external_id(environ=None):
    """
    The external id of a job of one process: the run a launcher or the
    zero-touch path started (DLPROF_RUN_ID), else the Slurm job, else None.
    A session the job opens itself under the zero-touch path registers with
    the same id, so the daemon hands it the job already registered.
    """
    env = os.environ if environ is None else environ
    if env.get("DLPROF_RUN_ID"):
        return "run:" + env["DLPROF_RUN_ID"]
    return "slurm:" + env["SLURM_JOB_ID"] if env.get("SLURM_JOB_ID") else None


def _nodes(env, world, local_size):
    for name in ("DLPROF_NODES", "SLURM_STEP_NUM_NODES", "SLURM_JOB_NUM_NODES", "SLURM_NNODES"):
        n = _int(env, name)
        if n:
            return n
    if local_size and world and local_size >= world:
        return 1
    return None


def detect(environ=None, rank=None, world_size=None, local_rank=None):
    """
    This process's place in a distributed job: a dict {rank, world_size,
    local_rank, nodes, node, external_id}, or None when it is not one
    (one process, or no id the ranks share).  Explicit arguments win.
    """
    env = os.environ if environ is None else environ
    sources = (("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"),
               ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE"),
               ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
                "OMPI_COMM_WORLD_LOCAL_SIZE"))
    local_size = None
    for r_name, w_name, l_name, ls_name in sources:
        if _int(env, r_name) is None or not _int(env, w_name):
            continue
        if rank is None and world_size is None:
            rank, world_size = _int(env, r_name), _int(env, w_name)
        if (rank, world_size) == (_int(env, r_name), _int(env, w_name)):
            # The launcher's variables describe this process: its place on the node too.
            local_rank = _int(env, l_name) if local_rank is None else local_rank
            local_size = _int(env, ls_name)
            break
    if rank is None or not world_size or world_size < 2 or rank >= world_size:
        return None
    shared = _shared_id(env)
    if shared is None:
        return None
    out = {"rank": rank, "world_size": world_size, "node": socket.gethostname()[:127] or "localhost",
           "external_id": shared}
    if local_rank is not None:
        out["local_rank"] = local_rank
    nodes = _nodes(env, world_size, local_size)
    if nodes:
        out["nodes"] = nodes
    return out


def from_torch():
    """rank and world size of an initialised default process group, or (None, None)."""
    dist = sys.modules.get("torch.distributed")
    try:
        if dist is not None and dist.is_available() and dist.is_initialized():
            return dist.get_rank(), dist.get_world_size()
    except Exception:      # noqa: BLE001 - a torch without distributed support
        pass
    return None, None


class CommTimer:
    """Seconds spent waiting in collectives since the last take(); thread-safe."""

    def __init__(self):
        self._lock = threading.Lock()
        self._waited = 0.0
        self._wrapped = {}                 # name -> original function
        self._module = None
        self._buckets = []                 # DDP: [(called, done)] of this step
        self._local = threading.local()    # nesting: a collective calling another counts once
        self._ddp = DdpTimer(self)

    def add(self, seconds):
        with self._lock:
            self._waited += seconds

    def take(self):
        """The time waited since the last call (DDP buckets of the step included)."""
        with self._lock:
            waited, self._waited = self._waited, 0.0
            buckets, self._buckets = self._buckets, []
        done = [d for _, d in buckets if d is not None]
        if buckets and len(done) == len(buckets):
            # The step's backward ended at its last bucket; it then waited for the last to finish.
            waited += max(0.0, max(done) - max(c for c, _ in buckets))
        return waited

    # ---- torch.distributed's functions ----

    def wrap(self):
        """
        Times torch.distributed's collectives, and DistributedDataParallel
        models built from now on (unless DLPROF_AUTO=0); False when
        torch.distributed is not loaded.
        """
        dist = sys.modules.get("torch.distributed")
        if dist is None or self._module is not None:
            return self._module is not None
        self._module = dist
        for name in COLLECTIVES:
            fn = getattr(dist, name, None)
            if callable(fn) and not getattr(fn, "_dlprof_timed", False):
                self._wrapped[name] = fn
                setattr(dist, name, self._timed(fn))
        parallel = sys.modules.get("torch.nn.parallel")
        ddp = getattr(parallel, "DistributedDataParallel", None)
        if ddp is not None and auto_enabled():
            self._ddp.install(ddp)
        return True

    def unwrap(self):
        if self._module is not None:
            for name, fn in self._wrapped.items():
                setattr(self._module, name, fn)
        self._wrapped.clear()
        self._module = None
        self._ddp.remove()

    def _add_bucket(self, entry):
        with self._lock:
            self._buckets.append(entry)

    def timed_hook(self, hook):
        """A job's own DDP communication hook, its buckets timed as ddp_comm_hook's are."""
        return timed_future_hook(hook, self._add_bucket)

    def _timed(self, fn):
        timer = self

        @functools.wraps(fn)
        def timed(*args, **kwargs):
            if getattr(timer._local, "depth", 0) > 0:
                return fn(*args, **kwargs)
            timer._local.depth = 1
            t0 = time.perf_counter()
            try:
                work = fn(*args, **kwargs)
            finally:
                timer._local.depth = 0
                timer.add(time.perf_counter() - t0)
            if kwargs.get("async_op") and work is not None:
                return _TimedWork(work, timer)
            return work

        timed._dlprof_timed = True
        return timed

    # ---- DistributedDataParallel ----

    def ddp_comm_hook(self, process_group=None, norms=None):
        """
        A communication hook for model.register_comm_hook(None, hook): the
        default all-reduce (sum, divided by the world size), with the time
        from the step's last bucket handed over to the completion of the
        last one taken as the step's wait.  With norms (a _noise.RankNorms),
        each bucket also gives its squared norm before the all-reduce,
        summed over the ranks by a 1-element all-reduce issued beside the
        bucket's, and its squared norm after.
        """
        timer = self
        dist = sys.modules["torch.distributed"]
        torch = sys.modules["torch"]
        original = timer._wrapped.get("all_reduce", dist.all_reduce)

        def hook(state, bucket):
            group = process_group or dist.group.WORLD
            world = dist.get_world_size(group)
            tensor = bucket.buffer()
            entry = [time.perf_counter(), None]
            timer._add_bucket(entry)
            if norms is None:
                fut = original(tensor, group=group, async_op=True).get_future()

                def finish(f):
                    entry[1] = time.perf_counter()
                    return f.value()[0].div_(world)

                return fut.then(finish)
            local = torch.linalg.vector_norm(tensor, dtype=torch.float64).square().reshape(1)
            both = torch.futures.collect_all([original(local, group=group, async_op=True).get_future(),
                                              original(tensor, group=group, async_op=True).get_future()])

            def finish_with_norms(f):
                entry[1] = time.perf_counter()
                local_summed, reduced = (x.value()[0] for x in f.value())
                reduced.div_(world)
                norms.add(local_summed[0], torch.linalg.vector_norm(reduced, dtype=torch.float64).square(), world)
                return reduced

            return both.then(finish_with_norms)

        hook._dlprof_timed = True
        return hook


class _TimedWork:
    """The Work of an async collective, whose wait() the timer counts."""

    def __init__(self, work, timer):
        self._work = work
        self._timer = timer

    def wait(self, *args, **kwargs):
        t0 = time.perf_counter()
        try:
            return self._work.wait(*args, **kwargs)
        finally:
            self._timer.add(time.perf_counter() - t0)

    def __getattr__(self, name):
        return getattr(self._work, name)
