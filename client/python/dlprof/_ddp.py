"""DistributedDataParallel timed without the job registering a hook.

DDP all-reduces its gradient buckets from C++, out of reach of the wrapped
torch.distributed functions; only a communication hook sees them.  While a
session of a distributed job is open (and DLPROF_AUTO is not 0), every
DistributedDataParallel built gets one:

- a job that registers its own hook (register_comm_hook) keeps it, wrapped
  so that the time from a bucket's hand-over to its future's completion is
  timed as the session's own hook times its all-reduce; the session's hook
  (Session.ddp_comm_hook) is registered as it is;
- a job that registers a built-in hook (_register_builtin_comm_hook) keeps
  it untimed (it runs in C++);
- a model with neither by its first forward gets the session's timed
  default all-reduce (CommTimer.ddp_comm_hook, the same sum and division by
  the world size as DDP's own), registered on its process group.

Nothing is stored on the models: the models still waiting for a hook are in
a WeakSet here.  remove() puts DDP's methods back; models already given a
hook keep it.
"""

import functools
import time
import weakref

from ._patch import Patches


class DdpTimer:
    """Patches DistributedDataParallel for one CommTimer; see the module comment."""

    def __init__(self, comm):
        self._comm = comm
        self._patches = Patches()
        self._waiting = weakref.WeakSet()    # built here, no hook registered yet
        self.installed = False

    def install(self, ddp):
        """Patches the class ddp (torch.nn.parallel.DistributedDataParallel)."""
        if self.installed:
            return
        self.installed = True
        init = ddp.__init__
        register = ddp.register_comm_hook
        builtin = getattr(ddp, "_register_builtin_comm_hook", None)
        forward = ddp.forward
        waiting = self._waiting
        comm = self._comm

        @functools.wraps(init)
        def __init__(model, *args, **kwargs):
            init(model, *args, **kwargs)
            waiting.add(model)

        @functools.wraps(register)
        def register_comm_hook(model, state, hook):
            waiting.discard(model)
            if not getattr(hook, "_dlprof_timed", False):
                hook = comm.timed_hook(hook)
            return register(model, state, hook)

        @functools.wraps(forward)
        def forward_(model, *args, **kwargs):
            if waiting and model in waiting:
                waiting.discard(model)
                register(model, None, comm.ddp_comm_hook(process_group=getattr(model, "process_group", None)))
            return forward(model, *args, **kwargs)

        self._patches.set(ddp, "__init__", __init__)
        self._patches.set(ddp, "register_comm_hook", register_comm_hook)
        self._patches.set(ddp, "forward", forward_)
        if builtin is not None:
            @functools.wraps(builtin)
            def _register_builtin_comm_hook(model, comm_hook_type):
                waiting.discard(model)
                return builtin(model, comm_hook_type)

            self._patches.set(ddp, "_register_builtin_comm_hook", _register_builtin_comm_hook)

    def remove(self):
        self._patches.restore()
        self._waiting = weakref.WeakSet()
        self.installed = False


def timed_future_hook(hook, add_bucket):
    """hook, with each bucket's hand-over and its future's completion given to add_bucket([called, done])."""

    @functools.wraps(hook)
    def timed(state, bucket):
        entry = [time.perf_counter(), None]
        add_bucket(entry)
        fut = hook(state, bucket)

        def done(f):
            entry[1] = time.perf_counter()
            return f.value()

        return fut.then(done)

    timed._dlprof_timed = True
    return timed
