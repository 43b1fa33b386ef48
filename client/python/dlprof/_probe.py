"""Timing the calls of chosen module instances, without hooks or instance state.

The zero-touch instrumentation (dlprof._auto) must see every call of a few
torch.nn.Module instances (the model, its top-level children), with their
arguments, and leave the job's objects as the job made them:

- forward hooks are stored on the instance, so torch.save(model) of a
  hooked model fails (a closure cannot be pickled) and copy.deepcopy(model)
  copies them; ScriptModules refuse hooks; a forward pre-hook of torch 1.13
  does not see keyword arguments;
- so a probed instance gets its class swapped for a subclass made once per
  class, whose __call__ times the call around the class's own.  For
  everything but type() it is still of its own class: m.__class__ answers
  the original (as unittest.mock's specs do), and __reduce_ex__ names it,
  so pickling, torch.save and deepcopy produce the job's own class and a
  copy is not probed; the subclass carries the original's name; isinstance
  holds.  type(m) is the subclass until release() puts every class back.

What a probe does on a call is looked up by the instance's id in the
Prober's table, so nothing about the probe lives on the instance.  The
table holds the instance through a weak reference: the job's model dies
where the job drops it, never in dlprof (a DistributedDataParallel's
destruction joins its process group's threads; dlprof's exit path, with
the GIL held, must not be where that happens), and its entry goes with it.
"""

import weakref

# object's own __class__ setter: the probing subclass's __class__ property defers to it.
_SET_CLASS = vars(object)["__class__"].__set__


class Prober:
    """Probes module instances; enter(module, args, kwargs) and leave(module) run around each call."""

    def __init__(self):
        self._probes = {}          # id(module) -> (weakref to module, enter, leave)
        self._classes = {}         # original class -> its probing subclass

    def __contains__(self, module):
        return id(module) in self._probes

    def probe(self, module, enter, leave):
        """Times module's calls from now on; False when its class cannot be swapped."""
        key = id(module)
        entry = self._probes.get(key)
        if entry is not None and entry[0]() is module:
            self._probes[key] = (entry[0], enter, leave)
            return True
        probes = self._probes

        def dead(ref):
            if probes.get(key, (None,))[0] is ref:
                del probes[key]

        try:
            ref = weakref.ref(module, dead)
        except TypeError:
            return False
        cls = type(module)
        sub = self._classes.get(cls) or self._subclass(cls)
        try:
            _SET_CLASS(module, sub)
        except TypeError:
            return False
        self._classes[cls] = sub
        self._probes[key] = (ref, enter, leave)
        return True

    def unprobe(self, module):
        entry = self._probes.get(id(module))
        if entry is not None and entry[0]() is module:
            del self._probes[id(module)]
            _SET_CLASS(module, type(module).__bases__[0])

    def release(self):
        """Every probed instance still alive gets its own class back."""
        for ref, _, _ in list(self._probes.values()):
            module = ref()
            if module is not None:
                self.unprobe(module)
        self._probes.clear()

    def _subclass(self, cls):
        probes = self._probes
        call = cls.__call__

        def __call__(self, *args, **kwargs):
            entry = probes.get(id(self))
            if entry is None or entry[0]() is not self:
                return call(self, *args, **kwargs)
            entry[1](self, args, kwargs)
            try:
                return call(self, *args, **kwargs)
            finally:
                entry[2](self)

        def __reduce_ex__(self, protocol):
            # What object.__reduce_ex__ gives, with the job's own class in place of this one.
            # (copyreg.__newobj__, __newobj_ex__ and _reconstructor all take the class first.)
            rv = cls.__reduce_ex__(self, protocol)
            if isinstance(rv, tuple) and len(rv) >= 2 and isinstance(rv[1], tuple) and rv[1] \
                    and rv[1][0] is type(self):
                rv = (rv[0], (cls,) + rv[1][1:]) + rv[2:]
            return rv

        attrs = {"__call__": __call__, "__reduce_ex__": __reduce_ex__,
                 "__class__": property(lambda self: cls, _SET_CLASS), "__module__": cls.__module__,
                 "__qualname__": cls.__qualname__, "__doc__": cls.__doc__, "_dlprof_probed": True}
        return type(cls.__name__, (cls,), attrs)
