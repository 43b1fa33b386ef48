"""Steps and phases of a PyTorch job that marks neither (the zero-touch path).

Found from what every PyTorch script does anyway:

- **the model**: while nothing is decided, torch's global module hooks
  (torch.nn.modules.module.register_module_forward_pre_hook) note the
  modules called at the top level (not from another module's forward) in
  the job's training thread.  The model is the top-level modules with
  parameters: those the stepping optimizer holds when one steps, else those
  called in one cycle (until the first such module is called again).  The
  global hooks are removed once decided; they cost every module call.
- **a step**: a training step ends when the optimizer steps (the first
  optimizer instance to step is the clock: a second optimizer of the same
  loop steps inside the same step); where none steps, an inference step
  ends with each call of the model (of its last top-level module).  A job
  that builds an optimizer waits for it while its model runs with
  gradients, up to INFER_AFTER top-level calls.  The time from the start to
  the first step's end is setup, not a step: it only starts the clock.
- **samples**: the leading dimension of the first tensor the model is
  called with (per step, summed over its calls; in training only the
  calls with gradients on, so a validation pass is not counted).
- **phases**: each top-level child of the model, by its attribute name (a
  DistributedDataParallel or DataParallel wrapper looked through), or with
  several top-level modules each of them, by its name in the script; and
  the data loader's next() as "data".  Over MEASURE_STEPS steps each is
  timed; those under FOLD_SHARE of the step are folded into the rest of the
  step (they stop being timed and run under the job-wide setting), and at
  most MAX_PHASES, the largest, stay: the daemon's plan space grows with
  every phase.  Then the kept ones are reported as the session's phases,
  whose per-phase settings the session applies on entering and leaving;
  while they are measured, a phase the config already has a setting for
  (the workload's earlier jobs kept it) is entered in the session too, so
  it runs with its setting from the first step.

Calls are seen through dlprof._probe (no hooks on the job's objects) and
dlprof._patch (Optimizer.step, the data loader's __next__); stop() puts
everything back.  All of it runs in the job's training thread: calls from
other threads are ignored.

The job's modules and optimizers are held only through weak references, so
each dies where the job drops it.  Were dlprof their last owner, a
DistributedDataParallel model would die in dlprof's exit path: its
Reducer's destructor joins the gloo process group's worker threads with the
GIL held, and a worker freeing a tensor a Python comm hook made waits for
the GIL (pytorch/pytorch#56297): the process hangs at exit.
"""

import functools
import itertools
import sys
import threading
import time
import weakref

from ._patch import Patches
from ._probe import Prober

MEASURE_STEPS = 3
FOLD_SHARE = 0.05
MAX_PHASES = 4
INFER_AFTER = 64
DATA_PHASE = "data"


def leading_dim(args, kwargs):
    """The leading dimension of the first array-like argument (looking into lists and dicts), or None."""
    for v in itertools.chain(args, kwargs.values()):
        for _ in range(4):
            shape = getattr(v, "shape", None)
            if shape is not None:
                if len(shape) >= 1:
                    return int(shape[0])
                break
            if isinstance(v, (list, tuple)) and v:
                v = v[0]
            elif isinstance(v, dict) and v:
                v = next(iter(v.values()))
            else:
                break
    return None


def _has_params(module):
    return next(iter(module.parameters()), None) is not None


def _unwrapped(module):
    """The model a DistributedDataParallel or DataParallel (or alike) wraps."""
    for _ in range(4):
        inner = getattr(module, "module", None)
        if inner is None or inner is module or not hasattr(inner, "named_children"):
            break
        if len(list(module.children())) != 1:
            break
        module = inner
    return module


def _alive(ref):
    """What the weak reference ref holds, or None (ref None or dead)."""
    return ref() if ref is not None else None


def _script_name(module):
    """module's name among the script's globals, else its class's name in lower case."""
    main = sys.modules.get("__main__")
    for name, value in (vars(main).items() if main is not None else ()):
        if value is module and not name.startswith("_"):
            return name
    return type(module).__name__.lower()


class Steps:
    """
    Finds a job's steps and phases and tells sink: sink.first_step() at the
    first step's end, sink.step(samples) at each later one,
    sink.enter_phase(name) / sink.leave_phase(name) around each kept
    phase's calls (and, while measuring, around those for which
    sink.has_setting(name)), and sink.discovered(kept, folded) once, each
    a dict of phase name -> share of the step.
    """

    def __init__(self, torch, sink):
        self._torch = torch
        self._sink = sink
        self._patches = Patches()
        self._prober = Prober()
        self._hooks = []               # the global module hooks, while discovering
        self._tid = None               # the training thread
        self._depth = 0                # module calls in progress (discovering)
        self._top = {}                 # id -> weakref of the top-level modules called, in order of first call
        self._top_calls = 0
        self._optimizers = 0           # optimizers built
        self._clock = None             # the optimizer whose steps end steps
        self._in_step = False
        self.mode = None               # None while discovering, then "train" or "infer"
        self.phases = {}               # name -> weakref to its module (DATA_PHASE -> None)
        self._roles = {}               # id(module) -> phase name or None, for probed modules
        self._entry = self._closer = None    # weakrefs: the model's first and last top-level modules
        self._samples = 0
        self._started = False          # the first step ended
        self._measured = 0             # steps measured for folding
        self._measure = {}             # phase -> seconds in those steps
        self._measure_t0 = None
        self._armed = False            # kept phases go to the sink
        self._kept = set()
        self._open = {}                # phase -> calls in progress
        self._early = set()            # phases entered in the session while measuring (they have a setting)
        self._t_open = {}              # phase -> when its outermost call began (measuring)
        self._data_on = True

    # ---- installing, removing ----

    def install(self):
        torch = self._torch
        self._tid = threading.main_thread().ident
        optimizer = torch.optim.Optimizer
        init = optimizer.__init__
        steps = self

        @functools.wraps(init)
        def __init__(opt, *args, **kwargs):
            init(opt, *args, **kwargs)
            steps._optimizers += 1
            steps._wrap_steps(type(opt))

        self._patches.set(optimizer, "__init__", __init__)
        pending = [optimizer]
        while pending:
            cls = pending.pop()
            self._wrap_steps(cls)
            pending.extend(cls.__subclasses__())
        self._patch_loader()
        module = torch.nn.modules.module
        self._hooks = [module.register_module_forward_pre_hook(self._global_pre),
                       module.register_module_forward_hook(self._global_post)]

    def stop(self):
        """Puts every class and instance back; nothing is timed from now on."""
        for h in self._hooks:
            h.remove()
        self._hooks = []
        self._prober.release()
        self._patches.restore()
        self._armed = False

    def _wrap_steps(self, cls):
        for klass in cls.__mro__:
            fn = vars(klass).get("step")
            if fn is None or getattr(fn, "_dlprof_step", False):
                continue
            self._patches.set(klass, "step", self._timed_step(fn))
            if klass is self._torch.optim.Optimizer:
                break

    def _timed_step(self, fn):
        steps = self

        @functools.wraps(fn)
        def step(opt, *args, **kwargs):
            if steps._in_step:
                return fn(opt, *args, **kwargs)
            steps._in_step = True
            try:
                out = fn(opt, *args, **kwargs)
            finally:
                steps._in_step = False
            steps._optimizer_stepped(opt)
            return out

        step._dlprof_step = True
        return step

    def _patch_loader(self):
        dataloader = sys.modules.get("torch.utils.data.dataloader")
        base = getattr(dataloader, "_BaseDataLoaderIter", None)
        if base is None or "__next__" not in vars(base):
            return
        nxt = vars(base)["__next__"]
        steps = self

        def __next__(it):
            if not steps._data_on or threading.get_ident() != steps._tid:
                return nxt(it)
            steps._phase_enter(DATA_PHASE)
            try:
                return nxt(it)
            finally:
                steps._phase_leave(DATA_PHASE)

        self._patches.set(base, "__next__", __next__)
        self.phases[DATA_PHASE] = None

    # ---- discovering: torch's global hooks ----

    def _global_pre(self, module, args):
        if threading.get_ident() != self._tid:
            return None
        if self._depth == 0:
            self._top_call(module)
        self._depth += 1
        return None

    def _global_post(self, module, args, out):
        if threading.get_ident() == self._tid and self._depth > 0:
            self._depth -= 1
        return None

    def _top_call(self, module):
        self._top_calls += 1
        known = self._top.get(id(module))
        if known is None or known() is not module:
            self._top.pop(id(module), None)     # a dead module's id, reused
            self._top[id(module)] = weakref.ref(module)
            return
        # A top-level module called again: one cycle of the job is behind.
        if self.mode is not None or (not _has_params(module) and any(_has_params(m) for m in self._top_modules())):
            return
        waiting = self._optimizers > 0 and self._torch.is_grad_enabled() and self._top_calls < INFER_AFTER
        if not waiting:
            self._decide("infer", None)

    def _optimizer_stepped(self, opt):
        if threading.get_ident() != self._tid:
            return
        clock = self._clock() if self._clock is not None else None
        if clock is None:
            self._clock = weakref.ref(opt)
        elif clock is not opt:
            return
        if self.mode != "train":
            self._depth = 0
            self._decide("train", opt)
        self._step_end()

    def _top_modules(self):
        """The top-level modules called that are still alive, in order of first call."""
        return [m for m in (ref() for ref in self._top.values()) if m is not None]

    # ---- deciding ----

    def _decide(self, mode, opt):
        if self.mode is not None:
            # Inference seen first, then an optimizer stepped: its steps end steps from now on.
            self.mode = mode
            self._closer = None
            return
        self.mode = mode
        for h in self._hooks:
            h.remove()
        self._hooks = []
        top = self._top_modules()
        model = [m for m in top if _has_params(m)] or top
        if opt is not None:
            held = {id(p) for g in opt.param_groups for p in g["params"]}
            mine = [m for m in model if any(id(p) in held for p in m.parameters())]
            model = mine or model
        self._top = {}
        if not model:
            return
        self._entry = weakref.ref(model[0])
        self._closer = weakref.ref(model[-1]) if mode == "infer" else None
        if len(model) == 1:
            named = list(_unwrapped(model[0]).named_children())
        else:
            named = [(_script_name(m), m) for m in model]
        for name, child in named:
            if name not in self.phases and id(child) not in self._roles:
                self.phases[name] = weakref.ref(child)
                self._roles[id(child)] = name
        for m in [model[0], model[-1] if mode == "infer" else None] + [_alive(c) for c in self.phases.values()]:
            if m is not None:
                self._roles.setdefault(id(m), None)
                self._prober.probe(m, self._call_enter, self._call_leave)

    # ---- probed calls ----

    def _call_enter(self, module, args, kwargs):
        if threading.get_ident() != self._tid:
            return
        if module is _alive(self._entry) and (self.mode == "infer" or self._torch.is_grad_enabled()):
            n = leading_dim(args, kwargs)
            if n is not None:
                self._samples += n
        name = self._roles.get(id(module))
        if name is not None:
            self._phase_enter(name)

    def _call_leave(self, module):
        if threading.get_ident() != self._tid:
            return
        name = self._roles.get(id(module))
        if name is not None:
            self._phase_leave(name)
        if module is _alive(self._closer) and self.mode == "infer":
            self._step_end()

    def _phase_enter(self, name):
        depth = self._open.get(name, 0)
        self._open[name] = depth + 1
        if depth:
            return
        if self._armed:
            if name in self._kept:
                self._sink.enter_phase(name)
            return
        if self._started:
            self._t_open[name] = time.perf_counter()
        if self._sink.has_setting(name):
            self._early.add(name)
            self._sink.enter_phase(name)

    def _phase_leave(self, name):
        depth = self._open.get(name, 0) - 1
        if depth < 0:
            return
        self._open[name] = depth
        if depth:
            return
        if self._armed:
            if name in self._kept:
                self._sink.leave_phase(name)
            return
        t0 = self._t_open.pop(name, None)
        if t0 is not None:
            self._measure[name] = self._measure.get(name, 0.0) + time.perf_counter() - t0
        if name in self._early:
            self._early.discard(name)
            self._sink.leave_phase(name)

    # ---- steps ----

    def _step_end(self):
        samples, self._samples = self._samples, 0
        if not self._started:
            self._started = True
            self._measure_t0 = time.perf_counter()
            self._sink.first_step()
            return
        self._sink.step(samples if samples > 0 else None)
        if not self._armed:
            self._measured += 1
            if self._measured >= MEASURE_STEPS:
                self._fold(time.perf_counter() - self._measure_t0)

    def _fold(self, total):
        shares = {name: secs / total for name, secs in self._measure.items() if total > 0 and secs > 0}
        ranked = sorted(shares, key=shares.get, reverse=True)
        kept = [n for n in ranked if shares[n] >= FOLD_SHARE][:MAX_PHASES]
        self._kept = set(kept)
        entry, closer = _alive(self._entry), _alive(self._closer)
        for name, ref in list(self.phases.items()):
            if name in self._kept:
                continue
            del self.phases[name]
            module = _alive(ref)
            if ref is None:
                self._data_on = False
            elif module is None:
                continue
            elif module is not entry and module is not closer:
                self._prober.unprobe(module)
                self._roles.pop(id(module), None)
            else:
                self._roles[id(module)] = None
        self._t_open.clear()
        self._armed = True
        self._sink.discovered({n: shares[n] for n in kept}, {n: shares[n] for n in ranked if n not in self._kept})
