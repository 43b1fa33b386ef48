"""The zero-touch path: an unmodified script reported, tuned and diagnosed.

`dlprofctl run -- python3 train.py` and `python3 -m dlprof train.py` put
dlprof's bootstrap folder (dlprof/_boot, holding a sitecustomize that
chains to the site's own) first on PYTHONPATH, so every Python process of
the job calls boot() as it starts.  Which processes report:

- **the job's process** (the first Python process of the launch: no
  DLPROF_AUTO_OWNER in its environment, or its own pid there) opens the
  session at once, before the script runs: it registers (or, under
  `dlprofctl run`, takes the launcher's job or joins as its rank), and the
  config is applied before torch is loaded (its thread variables) and as
  torch finishes importing (its thread counts, the inter-op pool before
  anything starts it: dlprof._imports).  It marks DLPROF_AUTO_OWNER with
  its pid, and, when it is not a rank of a distributed launch and no id is
  shared yet, exports a fresh DLPROF_RUN_ID, its job's external id;
- **its descendants** (torch.multiprocessing.spawn ranks, data loader
  workers, helpers) report only once they become a rank of a distributed
  job: when torch.distributed.init_process_group returns, they open a
  session that joins the job by the shared id.  The others cost an import
  and report nothing.

Once torch is imported, dlprof._steps finds the steps and phases and
reports them through the session, and the session times
DistributedDataParallel (dlprof._ddp).  A session the script opens itself
(dlprof.session) takes over: the automatic one stops its hooks and hands
its job on without ending it (the new session registers with the same
external id, or DLPROF_JOB, or as the same rank), so a script that marks
its own steps keeps its own marks.  DLPROF_AUTO=0 keeps the session (the
config is still applied) and installs no hook.

Under `dlprofctl run` (DLPROF_LAUNCHER is set) the launcher ends the job
with the exit status it waited for; otherwise the session ends it: with
the status python -m dlprof saw, or in atexit with what sys.exit and
sys.excepthook saw (a bare `raise SystemExit(n)` reads as 0 there).
"""

import atexit
import os
import sys
import time

from ._imports import after_import
from ._patch import Patches, enabled


def _log():
    # Not imported at start-up: every Python process of a job loads this module.
    import logging
    return logging.getLogger("dlprof")

BOOT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_boot")

_auto = None        # the process's Auto, from boot() on


def _prepend_path(env, name, path):
    parts = [p for p in env.get(name, "").split(os.pathsep) if p]
    if not parts or os.path.abspath(parts[0]) != path:
        env[name] = os.pathsep.join([path] + [p for p in parts if os.path.abspath(p) != path])


class Auto:
    """The process's zero-touch state: its session, the hooks, the exit status."""

    def __init__(self, hooks):
        self.session = None
        self._hooks_on = hooks
        self._steps = None
        self._torch = None
        self._patches = Patches()      # sys.exit, sys.excepthook, init_process_group
        self._status = None            # the exit status, once known
        self._exit_watched = False
        self._done = False

    # ---- the session ----

    def open(self):
        """Opens the process's session (never raises into the job)."""
        from ._session import Session

        launched = bool(os.environ.get("DLPROF_LAUNCHER"))
        session = Session(end_job=False if launched else None)
        session._zero_touch = True
        self._watch_exit()
        try:
            session.__enter__()
        except Exception as exc:      # noqa: BLE001 - the job runs without dlprof
            _log().warning("dlprof: cannot open the zero-touch session; the job runs without dlprofd: %r", exc)
            return
        self.session = session
        if self._torch is not None:
            self._hooks(self._torch)

    def yield_to(self, other):
        """A session the job opened takes over: the hooks stop, the job is handed on unended."""
        self._stop_hooks()
        session, self.session = self.session, None
        session._close(0, end=False)
        _log().info("dlprof: the job opened its own session; it reports from now on")

    def finish(self, status=None):
        """The process ends: the session closes with the job's exit status."""
        if self._done:
            return
        self._done = True
        self._stop_hooks()
        self._patches.restore()
        if status is None:
            status = self._status if self._status is not None else 0
        if self.session is not None:
            session, self.session = self.session, None
            session._close(status, end=None)

    # ---- torch ----

    def torch_imported(self, torch):
        self._torch = torch
        if self.session is not None:
            self.session._torch_imported()
            self._hooks(torch)
        elif self._hooks_on:
            self._join_as_rank(torch)

    def _hooks(self, torch):
        if not self._hooks_on or self._steps is not None or self.session is None:
            return
        from ._steps import Steps

        self._steps = Steps(torch, self)
        try:
            self._steps.install()
        except Exception as exc:      # noqa: BLE001 - a torch this code does not know
            _log().warning("dlprof: cannot find this job's steps by itself (%r); mark them with dlprof.session", exc)
            self._stop_hooks()

    def _stop_hooks(self):
        if self._steps is not None:
            self._steps.stop()
            self._steps = None

    def _join_as_rank(self, torch):
        """A descendant process: reports once it becomes a rank (init_process_group returned)."""
        dist = getattr(torch, "distributed", None)
        init = getattr(dist, "init_process_group", None)
        if init is None:
            return
        auto = self

        def init_process_group(*args, **kwargs):
            out = init(*args, **kwargs)
            from . import _session

            if auto.session is None and not auto._done and not _session._open_sessions:
                auto.open()
            return out

        init_process_group.__wrapped__ = init
        self._patches.set(dist, "init_process_group", init_process_group)

    # ---- the exit status, where no runner sees it ----

    def _watch_exit(self):
        if self._exit_watched:
            return
        self._exit_watched = True
        auto = self
        real_exit, real_hook = sys.exit, sys.excepthook

        def exit(status=None):
            auto._status = 0 if status is None else status if isinstance(status, int) else 1
            real_exit(status)

        def excepthook(kind, value, tb):
            auto._status = 130 if issubclass(kind, KeyboardInterrupt) else 1
            real_hook(kind, value, tb)

        self._patches.set(sys, "exit", exit)
        self._patches.set(sys, "excepthook", excepthook)
        atexit.register(self.finish)

    # ---- what dlprof._steps finds ----

    def first_step(self):
        if self.session is not None:
            self.session._restart_clock()

    def step(self, samples):
        if self.session is not None:
            self.session.step(samples=samples)

    def has_setting(self, name):
        return self.session is not None and self.session._has_phase_setting(name)

    def enter_phase(self, name):
        if self.session is not None:
            self.session._enter_phase(name)

    def leave_phase(self, name):
        if self.session is not None:
            self.session._leave_phase(name)

    def discovered(self, kept, folded):
        """Sends the phases found (kept: reported from now on; folded: left to the rest of the step)."""
        if self.session is None:
            return
        for name, share in kept.items():
            self.session._note("auto.phase_share", round(share, 4), name)
        for name, share in folded.items():
            self.session._note("auto.folded_share", round(share, 4), name)
        _log().info("dlprof: phases found: %s; folded into the rest of the step: %s",
                 ", ".join("%s %.0f%%" % (n, 100 * v) for n, v in kept.items()) or "none",
                 ", ".join("%s %.1f%%" % (n, 100 * v) for n, v in folded.items()) or "none")


def boot(eager=None):
    """
    Starts the zero-touch path in this process (once; see the module
    comment).  eager: open the session now (None: when this is the job's
    process).  Returns the Auto.
    """
    global _auto
    if _auto is not None:
        return _auto
    env = os.environ
    owner = env.get("DLPROF_AUTO_OWNER", "")
    if eager is None:
        eager = owner in ("", str(os.getpid()))
    _auto = Auto(hooks=enabled())
    _prepend_path(env, "PYTHONPATH", BOOT_DIR)     # descendants load the bootstrap too
    if eager:
        env["DLPROF_AUTO_OWNER"] = str(os.getpid())
        from ._dist import detect, external_id

        if detect() is None and external_id() is None:
            env["DLPROF_RUN_ID"] = "%x-%x-%x" % (int(time.time()), os.getpid(), int.from_bytes(os.urandom(3), "big"))
        _auto.open()
    elif not _auto._hooks_on:
        return _auto
    after_import("torch", _auto.torch_imported)
    return _auto


def session_opening(session):
    """Session.__enter__: a session the job opens takes over from the automatic one."""
    auto = _auto
    if auto is not None and auto.session is not None and session is not auto.session \
            and not getattr(session, "_zero_touch", False):
        auto.yield_to(session)
