"""The session a job opens: measures steps and phases, applies the config.

Everything here runs in the job's own thread (the one that calls step() and
enters phases), except on_config, which the reporter thread calls to hand in
a config the daemon assigned.  That config waits in _pending until the next
step boundary, where the session adopts it, so a step always runs under one
config (its phases under that config's per-phase overrides, applied on
entering and leaving each phase) and the samples of that step are attributed
to exactly that config.

A session never raises into the job because of the daemon: unreachable or
refusing, the job runs on with the settings it has.  In a forked child (a
DataLoader worker) a parent's session does nothing.
"""

import json
import logging
import os
import sys
import threading
import time
import weakref

from ._apply import Applier, threads_for
from ._buffer import RESERVED, Buffer, as_value, resolved, valid_label, valid_name
from ._dist import CommTimer, detect, external_id, from_torch
from ._noise import MicroBatchNorms, RankNorms
from ._reporter import Reporter
from ._transport import Transport, resolve_endpoint

log = logging.getLogger("dlprof")

# The resolution of a step's or phase's duration, in seconds: the
# interpreter spends a microsecond or more between a step's end and the
# clock read that marks it, so the digits below are not the job's.
STEP_CLOCK_S = 1e-6


def _default_workload():
    script = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if script == "-m":
        # python -m pkg.mod, seen before runpy set argv[0] (the zero-touch path opens the session then).
        argv = getattr(sys, "orig_argv", [])
        script = argv[argv.index("-m") + 1] if "-m" in argv[:-1] else ""
    name = os.path.splitext(script)[0] if script.endswith(".py") else script
    return name if name and name != "-c" else "python"


def _env_knobs():
    """The knobs DLPROF_KNOBS declares (JSON), for jobs that declare none themselves; None without."""
    text = os.environ.get("DLPROF_KNOBS", "").strip()
    if not text:
        return None
    try:
        knobs = json.loads(text)
    except ValueError as exc:
        log.warning("dlprof: ignoring DLPROF_KNOBS: not JSON (%s)", exc)
        return None
    if not isinstance(knobs, dict):
        log.warning("dlprof: ignoring DLPROF_KNOBS: not a JSON object")
        return None
    return knobs


def _command():
    """The command line, as the daemon accepts it (printable, at most 4096 bytes)."""
    text = " ".join([sys.executable or "python"] + sys.argv)
    text = "".join(c if 0x20 <= ord(c) != 0x7F else " " for c in text)
    return text.encode("utf-8", "replace")[:4096].decode("utf-8", "ignore") or "python"


def _exit_status(exc_type, exc):
    if exc_type is None:
        return 0
    if exc_type is SystemExit:
        code = exc.code if exc is not None else 0
        return code if isinstance(code, int) else (0 if code is None else 1)
    if exc_type is KeyboardInterrupt:
        return 130
    return 1


_open_sessions = weakref.WeakSet()    # sessions a forked child must disown


def _after_fork_in_child():
    for s in list(_open_sessions):
        s._forked()


os.register_at_fork(after_in_child=_after_fork_in_child)


def _forget_in_children(session):
    _open_sessions.add(session)


class _Phase:
    """The context manager s.phase(name) returns."""

    __slots__ = ("_session", "_name")

    def __init__(self, session, name):
        self._session = session
        self._name = name

    def __enter__(self):
        self._session._enter_phase(self._name)
        return self

    def __exit__(self, exc_type, exc, tb):
        self._session._leave_phase(self._name)
        return False


class Session:
    """A job's connection to dlprofd; use it through dlprof.session()."""

    def __init__(self, workload=None, params=None, url=None, socket=None, knobs=None,
                 objective=None, interval=1.0, timeout=2.0, end_job=None, token=None,
                 rank=None, world_size=None, local_rank=None):
        self.workload = workload or os.environ.get("DLPROF_WORKLOAD") or _default_workload()
        self.params = dict(params) if params else {}
        self._url = url
        self._socket = socket
        self._knobs = knobs if knobs is not None else _env_knobs()
        self._objective = objective
        self._interval = interval
        self._timeout = timeout
        self._end_job = end_job
        self._token = token if token is not None else os.environ.get("DLPROF_TOKEN")
        self._lock = threading.Lock()     # guards _pending (the reporter writes it)
        self._pending = None
        self._assigned = {}                # the config adopted at the last boundary
        self._snapshot = None              # what the job runs with, for samples
        self._applier = None
        self._buffer = Buffer()
        self._reporter = None
        self._live = False                 # open, and in the process that opened it
        self._torch_seen = False           # torch was loaded at the last boundary
        self._overrides = {}               # phase -> override dict of _assigned
        self._good_phases = set()          # phase names already checked
        self._stack = []                   # [[name, entered_or_last_cut]]
        self._names = []                   # names of _stack, for threads_for
        self._phase_time = {}              # phase -> seconds this step
        self._phase_threads = {}           # phase -> threads it ran with, overrides only
        self._base_threads = None          # torch's own count, when the daemon sets none
        self._bad_names = set()
        self._last_step = None
        self._place = (rank, world_size, local_rank)   # as the job said it, or Nones
        self.dist = None                   # {rank, world_size, ...} in a distributed job
        self._comm = CommTimer()
        self._rank_norms = None            # RankNorms once the DDP hook measures them
        self._micro_norms = None           # MicroBatchNorms once micro_batch() is called

    # ---- public ----

    @property
    def job_id(self):
        """The daemon's id for this job, or None while it is not registered."""
        return self._reporter.job_id if self._reporter is not None else None

    @property
    def config(self):
        """A copy of the config the job runs with since the last step boundary."""
        return dict(self._assigned)

    @property
    def dataloader_workers(self):
        """The DataLoader worker count the daemon assigned, or None."""
        n = self._assigned.get("dataloader_workers")
        return n if isinstance(n, int) and not isinstance(n, bool) and n >= 0 else None

    @property
    def rank(self):
        """This process's rank in a distributed job, or None."""
        return self.dist["rank"] if self.dist else None

    def ddp_comm_hook(self, noise_scale=False):
        """
        A hook for DistributedDataParallel.register_comm_hook(None, hook): the
        default all-reduce, timed, so each step reports how long the rank
        waited for the others (comm_wait_s).  With noise_scale=True it also
        measures the gradient noise figures of objective=goodput (the
        rank's local gradient norm and the all-reduced one; see
        dlprof._noise), for step(samples=...) to report.
        """
        if noise_scale and self._rank_norms is None:
            self._rank_norms = RankNorms()
        return self._comm.ddp_comm_hook(norms=self._rank_norms if noise_scale else None)

    def micro_batch(self, params, samples):
        """
        One process with gradient accumulation: call after each micro-batch's
        backward (before the optimizer steps and zeroes the gradients) with
        the model's parameters (or the model) and the micro-batch's sample
        count.  The next step() reports the gradient noise figures of
        objective=goodput from the step's micro-batches (at least two, of
        equal size; see dlprof._noise).  Keeps one copy of the gradients.
        """
        if not self._active():
            return
        if self.dist is not None:
            # The last micro-batch's backward all-reduces: its .grad is no longer the rank's own.
            self._bad("micro_batch", "micro_batch() is for one process; in a distributed job use "
                      "ddp_comm_hook(noise_scale=True)")
            return
        n = as_value(samples)
        if n is None or n <= 0:
            self._bad("micro_batch", "micro_batch samples=%r is not a positive count" % (samples,))
            return
        if self._micro_norms is None:
            self._micro_norms = MicroBatchNorms()
        params = params.parameters() if hasattr(params, "parameters") else params
        self._micro_norms.add(list(params), n)

    def phase(self, name):
        """A context manager timing a named part of the step (phase_time_s)."""
        return _Phase(self, name)

    def step(self, samples=None, loss=None, global_batch=None, **metrics):
        """
        Ends a step: records step_time_s (since the previous step or the
        session's start), samples_per_s when samples is given, loss when
        given, the time in each phase, the gradient noise figures and the
        global batch where measured (ddp_comm_hook(noise_scale=True) or
        micro_batch()), global_batch when given (samples per optimizer step
        over all ranks; wins over the measured one), and metrics (names
        [a-z0-9_.]{1,64}, finite numbers).  Then adopts a config the daemon
        assigned since.
        """
        if not self._active():
            return
        now = time.monotonic()
        # Durations to the microsecond (STEP_CLOCK_S): what timing from
        # Python can tell, and what the daemon's block codec stores as small
        # integers.  The report's time stays as the clock gives it: a step's
        # samples share it, and readers tell one step's phases from the
        # next one's by it, so two steps within one millisecond must not
        # share a rounded time.
        t = time.time()
        dt = resolved(now - self._last_step, STEP_CLOCK_S)
        self._last_step = now
        out = [{"t": t, "name": "step_time_s", "value": dt}]
        if samples is not None:
            n = as_value(samples)
            if n is None or n < 0:
                self._bad("samples", "samples=%r is not a count" % (samples,))
            elif dt > 0:
                # A rate over a duration known to STEP_CLOCK_S: n / dt moves by n x that / dt^2.
                out.append({"t": t, "name": "samples_per_s", "value": resolved(n / dt, n * STEP_CLOCK_S / (dt * dt))})
        if loss is not None:
            v = as_value(loss)
            if v is None:
                self._bad("loss", "loss=%r is not a finite number" % (loss,))
            else:
                out.append({"t": t, "name": "loss", "value": v})
        for entry in self._stack:
            self._phase_time[entry[0]] = self._phase_time.get(entry[0], 0.0) + now - entry[1]
            entry[1] = now
        for name, secs in self._phase_time.items():
            out.append({"t": t, "name": "phase_time_s", "value": resolved(secs, STEP_CLOCK_S), "phase": name})
        self._phase_time.clear()
        if self.dist is not None:
            out.append({"t": t, "name": "comm_wait_s", "value": self._comm.take()})
        out.extend(self._noise_samples(t, samples, global_batch))
        for name, value in metrics.items():
            out.append(self._user_metric(t, name, value))
        self._buffer.add(self._ran_with(), [s for s in out if s is not None])
        self._reporter.stepped()
        self._boundary()

    def flush(self, timeout=None):
        """Sends what is buffered now; True when the buffer emptied in time."""
        if not self._active():
            return False
        self._reporter.flush(self._timeout * 2 + 1 if timeout is None else timeout)
        return len(self._buffer) == 0

    # ---- context manager ----

    def __enter__(self):
        from . import _auto
        _auto.session_opening(self)       # a session the job opens takes over from the zero-touch one
        self._live = True
        _forget_in_children(self)
        self._applier = Applier()          # notes whether torch is loaded yet
        self._last_step = time.monotonic()
        self._reporter = self._make_reporter()
        if self._reporter.disabled:
            pass
        elif self._reporter.job_id is not None:
            self._reporter.fetch_config()
        else:
            self._reporter.register()
        self._adopt()
        self._applier.start(self._assigned, self._reporter.env)
        self._torch_seen = "torch" in sys.modules
        self._apply_threads()
        if self.dist is not None:
            self._comm.wrap()
        self._reporter.start()
        return self

    def __exit__(self, exc_type, exc, tb):
        self._close(_exit_status(exc_type, exc), end=None)
        return False

    # ---- the zero-touch path's (dlprof._auto) ----

    def _close(self, status, end):
        """Sends what is left and closes; end False leaves the job running for a session taking over."""
        if self._live:
            self._live = False
            _open_sessions.discard(self)
            self._comm.unwrap()
            if end is False:
                self._reporter.end_job = False
            self._reporter.close(status, 2 * self._timeout + 1)

    def _torch_imported(self):
        """torch was just imported: its thread counts now, before the job's first use."""
        if self._live and not self._torch_seen:
            self._torch_seen = True
            self._applier.try_interop(self._assigned)
            self._apply_threads()
            if self.dist is not None:
                self._comm.wrap()

    def _restart_clock(self):
        """The time until now was setup, not a step."""
        self._last_step = time.monotonic()
        self._phase_time.clear()

    def _has_phase_setting(self, name):
        """Whether the config in force has a setting of its own for phase name."""
        return name in self._overrides

    def _note(self, name, value, phase=None):
        """One sample outside a step (the phases the zero-touch path found), sent with the next batch."""
        if self._active():
            sample = {"t": time.time(), "name": name, "value": value}
            if phase is not None:
                sample["phase"] = phase
            self._buffer.add(self._ran_with(), [sample])

    # ---- internals ----

    def _where(self):
        """This process's place in a distributed job (see _dist.detect), or None."""
        rank, world, local = self._place
        if rank is None and world is None:
            rank, world = from_torch()
        return detect(rank=rank, world_size=world, local_rank=local)

    def _make_reporter(self):
        registration = {"workload": self.workload, "params": self.params, "pid": os.getpid(),
                        "command": _command()}
        self.dist = self._where()
        if self.dist is not None:
            registration["rank"] = {k: v for k, v in self.dist.items() if k != "external_id"}
        shared = self.dist["external_id"] if self.dist is not None else external_id()
        for key, value in (("external_id", shared), ("knobs", self._knobs),
                           ("objective", self._objective)):
            if value is not None:
                registration[key] = value
        job_id = None
        env_job = os.environ.get("DLPROF_JOB", "").strip()
        if self.dist is not None:
            # A rank joins the job of its shared id, which a launcher's DLPROF_JOB is.
            env_job = ""
        if env_job:
            try:
                job_id = int(env_job)
            except ValueError:
                log.warning("dlprof: ignoring DLPROF_JOB=%r: not a job id", env_job)
        # A rank ends its rank; the daemon ends the job with its last rank.
        end_job = self._end_job if self._end_job is not None else job_id is None
        try:
            endpoint = resolve_endpoint(self._url, self._socket)
        except ValueError as exc:
            log.warning("dlprof: %s; the job runs without dlprofd", exc)
            endpoint = None
        transport = Transport(endpoint, timeout=self._timeout, token=self._token)
        reporter = Reporter(transport, self._buffer, self._on_config,
                            registration=None if job_id is not None else registration,
                            job_id=job_id, end_job=end_job, interval=self._interval,
                            rank=self.rank)
        if endpoint is None:
            reporter.disabled = True
        return reporter

    def _active(self):
        return self._live and not self._reporter.disabled

    def _forked(self):
        """In a forked child (a DataLoader worker): the parent's session is not ours."""
        self._live = False

    def _on_config(self, config):
        """The reporter's thread (or __enter__): the daemon assigned config."""
        with self._lock:
            self._pending = config

    def _adopt(self):
        """Takes a config the daemon assigned; True when it differs."""
        if self._pending is None:       # a plain read: the lock is for the swap
            return False
        with self._lock:
            pending, self._pending = self._pending, None
        if pending is None or pending == self._assigned:
            return False
        self._assigned = pending
        overrides = pending.get("phases")
        self._overrides = {k: v for k, v in overrides.items() if isinstance(v, dict)} \
            if isinstance(overrides, dict) else {}
        self._snapshot = None
        self._phase_threads.clear()
        n = self.dataloader_workers
        if n is not None:
            os.environ["DLPROF_DATALOADER_WORKERS"] = str(n)
        return True

    def _boundary(self):
        changed = self._adopt()
        if not self._torch_seen and "torch" in sys.modules:
            self._torch_seen = changed = True     # imported after the session opened
        if changed:
            self._applier.try_interop(self._assigned)
            self._apply_threads()
        if self.dist is not None:
            self._comm.wrap()       # torch.distributed imported after the session opened

    def _apply_threads(self):
        n = threads_for(self._assigned, self._names)
        if n is None or threads_for(self._assigned, ()) is None:
            # The daemon sets no job-wide count: the job's own count is the
            # one to return to after a phase override.
            if self._base_threads is None:
                self._base_threads = self._applier.torch_threads()
            if n is None:
                n = self._base_threads
        self._applier.set_threads(n)

    def _ran_with(self):
        """The config of the step that just ended, recomputed when it changed."""
        top = self._applier.current_threads() if not self._stack else None
        snap = self._snapshot
        if snap is None or (top is not None and snap.get("intra_threads") != top):
            if top is None:
                top = threads_for(self._assigned, ()) or self._base_threads
            snap = self._applier.ran_with(self._assigned, top, self._phase_threads)
            self._snapshot = snap
        return snap

    def _enter_phase(self, name):
        if not self._active():
            return
        if name not in self._good_phases:
            if valid_label(name):
                self._good_phases.add(name)
            else:
                self._bad("phase " + repr(name),
                          "phase name %r is not 1..64 bytes of printable text; not reported" % (name,))
                name = None
        self._stack.append([name, time.monotonic()])
        self._names.append(name)
        if name in self._overrides:
            self._enter_threads(name)

    def _enter_threads(self, name):
        self._apply_threads()
        n = self._applier.torch_threads()
        if n is not None and self._phase_threads.get(name) != n:
            self._phase_threads[name] = n
            self._snapshot = None

    def _leave_phase(self, name):
        if not self._active() or not self._stack:
            return
        entry = self._stack.pop()
        self._names.pop()
        if entry[0] is not None:
            now = time.monotonic()
            self._phase_time[entry[0]] = self._phase_time.get(entry[0], 0.0) + now - entry[1]
            if entry[0] in self._overrides:
                self._apply_threads()

    def _noise_samples(self, t, samples, global_batch):
        """The step's gradient noise figures and global batch, as samples (see dlprof._noise)."""
        figures = None
        if self._micro_norms is not None:
            figures = self._micro_norms.take()
        if figures is None and self._rank_norms is not None:
            figures = self._rank_norms.take(as_value(samples) if samples is not None else None)
        if self.dist is not None and self.dist["rank"] != 0:
            return []       # the same on every rank (summed over them): rank 0's are the job's
        out = []
        if figures is not None:
            b, sq_small, big, sq_large = figures
            out += [{"t": t, "name": "grad_batch_small", "value": b},
                    {"t": t, "name": "grad_sqnorm_small", "value": sq_small},
                    {"t": t, "name": "grad_batch_large", "value": big},
                    {"t": t, "name": "grad_sqnorm_large", "value": sq_large}]
        m = as_value(global_batch) if global_batch is not None else (big if figures is not None else None)
        if global_batch is not None and (m is None or m <= 0):
            self._bad("global_batch", "global_batch=%r is not a positive count" % (global_batch,))
        elif m is not None:
            out.append({"t": t, "name": "global_batch", "value": m})
        return [s for s in out if s["value"] == s["value"] and abs(s["value"]) != float("inf")]

    def _user_metric(self, t, name, value):
        if not valid_name(name) or name in RESERVED:
            self._bad("name " + repr(name), "metric name %r is reserved or does not match [a-z0-9_.]{1,64}; "
                      "not reported" % (name,))
            return None
        v = as_value(value)
        if v is None:
            self._bad("value " + name, "metric %s=%r is not a finite number; not reported" % (name, value))
            return None
        return {"t": t, "name": name, "value": v}

    def _bad(self, key, message):
        if key not in self._bad_names:
            self._bad_names.add(key)
            log.warning("dlprof: %s", message)
