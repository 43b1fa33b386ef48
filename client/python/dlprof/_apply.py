"""Applying a config to the running process, and saying what it ran with.

The daemon assigns a config (knob -> value, with per-phase overrides); this
module turns it into process settings and reports back the config actually
in force, observed where it can be observed:

- the environment: the variables the daemon maps the config to (the "env"
  of its registration answer, the mapping /api/v1/recommend and the Slurm
  hooks use too), set at start: OMP_*/MKL_* only while torch is not loaded
  (OpenMP and BLAS read them when they load), OMP_PROC_BIND/OMP_PLACES only
  when the job did not set OMP_PROC_BIND itself, LD_PRELOAD,
  CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER never (fixed before the
  process started: observed, never changed).  A job a prologue registered got them from the prologue.
- intra_threads: torch.set_num_threads, at start and whenever the session
  asks (the session only asks at step and phase boundaries).
- interop_threads: torch.set_num_interop_threads, once, and only after a
  forked child showed the call succeeds (see _interop_settable); without a
  value from the daemon, DLPROF_INTEROP_THREADS from a prologue.
- dataloader_workers: DLPROF_DATALOADER_WORKERS for the script to read.

torch is never imported here: a job that has not imported it does not get
the cost of loading it, and a job without torch works unchanged.  It is
looked up in sys.modules at each use, so importing it after the session
started is fine.  All methods run in the job's own thread.
"""

import logging
import os
import resource
import sys
import warnings

log = logging.getLogger("dlprof")

# The variables this module reads back, named as the daemon's mapping
# (daemon/knobs_env.c) names them; tests/integration/test_env_paths.py
# checks them against what the daemon serves.
ENV = {
    "intra_threads": "OMP_NUM_THREADS",
    "interop_threads": "DLPROF_INTEROP_THREADS",
    "affinity": "OMP_PROC_BIND",
    "allocator": "LD_PRELOAD",
    "gpus": "CUDA_VISIBLE_DEVICES",
}
# CUDA reads its device order with its devices, when it starts: both are the process's from exec on.
_FIXED_AT_EXEC = (ENV["allocator"], ENV["gpus"], "CUDA_DEVICE_ORDER")
_READ_AT_LOAD = ("OMP_", "MKL_")
_BINDING = (ENV["affinity"], "OMP_PLACES")


def _torch():
    return sys.modules.get("torch")


def _positive_int(value):
    """value as an int >= 1, or None when it is not one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value >= 1:
        return value
    if isinstance(value, float) and value.is_integer() and value >= 1:
        return int(value)
    return None


def _env_int(name):
    try:
        value = int(os.environ.get(name, ""))
    except ValueError:
        return None
    return value if value >= 1 else None


def threads_for(config, phases):
    """The intra-op thread count config asks for inside the phase stack, or None."""
    overrides = config.get("phases")
    if isinstance(overrides, dict):
        for name in reversed(phases):
            override = overrides.get(name)
            if isinstance(override, dict):
                n = _positive_int(override.get("intra_threads"))
                if n is not None:
                    return n
    return _positive_int(config.get("intra_threads"))


def _interop_settable(torch, n):
    """
    Whether torch.set_num_interop_threads(n) would succeed, learned by trying
    it in a forked child.  PyTorch accepts the call once, before inter-op
    work starts; after that, builds such as Debian's 1.13.1 do not raise a
    RuntimeError but abort the whole process (an uncaught c10::Error), so
    the job must never make a call that could fail.  The child inherits the
    state that decides it and reports by its exit status; its stderr and
    core dump are suppressed.  Costs one fork, once per job.
    """
    if not hasattr(os, "fork"):
        return False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)   # fork with threads (3.12+)
            pid = os.fork()
    except OSError:
        return False
    if pid == 0:
        code = 1
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            torch.set_num_interop_threads(n)
            code = 0
        finally:
            os._exit(code)
    try:
        _, status = os.waitpid(pid, 0)
    except OSError:       # SIGCHLD ignored: the child was reaped for us
        return False
    return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


class Applier:
    """Process settings from configs; the job's thread only."""

    def __init__(self):
        self._interop_tried = False
        self._torch_at_start = _torch() is not None
        self._start_threads = None       # OMP_NUM_THREADS when torch is absent
        self._affinity = None            # what OpenMP started with, once known

    # ---- at start ----

    def start(self, config, env=None):
        """
        Applies everything a config sets at process start; env is what the
        daemon mapped it to (None: a prologue registered the job and set it).
        """
        n = _positive_int(config.get("intra_threads"))
        self._set_env(env if isinstance(env, dict) else {})
        self._start_threads = _env_int(ENV["intra_threads"])
        self._affinity = self._observed_affinity()
        self.set_threads(n)
        self.try_interop(config)

    def _set_env(self, env):
        """Sets the served variables this process can still act on (see the module comment)."""
        bound_by_job = ENV["affinity"] in os.environ
        for name, value in env.items():
            if not isinstance(value, str) or name in _FIXED_AT_EXEC:
                continue
            if name.startswith(_READ_AT_LOAD) and self._torch_at_start:
                continue
            if name in _BINDING and bound_by_job:
                continue
            os.environ[name] = value

    def try_interop(self, config):
        """
        Sets the inter-op threads the first time torch is there to take it:
        the config's, else DLPROF_INTEROP_THREADS (exported by a prologue
        from /api/v1/recommend?format=env for this client to apply).
        """
        if self._interop_tried:
            return
        torch = _torch()
        n = _positive_int(config.get("interop_threads"))
        if n is None:
            n = _env_int(ENV["interop_threads"])
        if n is None or torch is None:
            return
        self._interop_tried = True
        current = torch.get_num_interop_threads()
        if current == n:
            return
        if not _interop_settable(torch, n):
            log.warning("dlprof: cannot set inter-op threads to %d: torch already fixed them at %d "
                        "(set_num_interop_threads was called or inter-op work started); "
                        "open the session before either", n, current)
            return
        try:
            torch.set_num_interop_threads(n)
        except RuntimeError as exc:
            log.warning("dlprof: cannot set inter-op threads to %d (%s)", n, exc)

    # ---- at boundaries ----

    def set_threads(self, n):
        """torch.set_num_threads(n) unless it already runs n (or n is None)."""
        torch = _torch()
        if n is None or torch is None:
            return
        if torch.get_num_threads() != n:
            torch.set_num_threads(n)

    @staticmethod
    def torch_threads():
        """torch's intra-op thread count, or None without torch."""
        torch = _torch()
        return torch.get_num_threads() if torch is not None else None

    def current_threads(self):
        """The intra-op threads in force: torch's, else OMP_NUM_THREADS at start."""
        n = self.torch_threads()
        return self._start_threads if n is None else n

    # ---- what it ran with ----

    def ran_with(self, config, threads, phase_threads):
        """
        The config in force: the assigned one, with every knob this process
        can observe replaced by what it observes.  threads is the intra-op
        count outside phases; phase_threads maps each phase with an override
        to the count it ran with.
        """
        out = {k: v for k, v in config.items() if k != "phases"}
        torch = _torch()
        if threads is not None:
            out["intra_threads"] = threads
        if torch is not None:
            out["interop_threads"] = torch.get_num_interop_threads()
        if self._affinity is not None:
            out["affinity"] = self._affinity
        out["allocator"] = "jemalloc" if "jemalloc" in os.environ.get(ENV["allocator"], "") else "default"
        visible = os.environ.get(ENV["gpus"])
        if visible is not None:
            out["gpus"] = len([d for d in visible.split(",") if d.strip() not in ("", "-1")])
        if phase_threads:
            out["phases"] = {name: {"intra_threads": n} for name, n in phase_threads.items()}
        return out

    @staticmethod
    def _observed_affinity():
        bind = os.environ.get(ENV["affinity"], "").strip().lower()
        if not bind or bind == "false":
            return "none"
        first = bind.split(",")[0]
        if first in ("close", "spread"):
            return first
        # true/master/primary bind threads near the primary one.
        return "close"
