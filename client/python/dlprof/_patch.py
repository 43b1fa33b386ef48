"""Attributes of torch's classes and modules replaced for a while, and put back.

The zero-touch hooks wrap a few of torch's functions (Optimizer.step,
DistributedDataParallel's, the data loader iterator's __next__,
torch.distributed.init_process_group).  Each replacement is recorded with
what it replaced, so that restore() leaves the classes as they were, in
reverse order, and a class that had inherited the attribute inherits it
again.  DLPROF_AUTO=0 in the environment turns every automatic hook off.
"""

import os

_ABSENT = object()


def enabled(environ=None):
    """Whether the automatic hooks may be installed (DLPROF_AUTO is not 0)."""
    env = os.environ if environ is None else environ
    return env.get("DLPROF_AUTO", "1").strip() not in ("0", "no", "off", "false")


class Patches:
    """Replacements made through set(); restore() undoes them all."""

    def __init__(self):
        self._undo = []       # (owner, name, what owner itself held, or _ABSENT)

    def set(self, owner, name, value):
        own = vars(owner).get(name, _ABSENT) if isinstance(owner, type) else getattr(owner, name, _ABSENT)
        setattr(owner, name, value)
        self._undo.append((owner, name, own))

    def restore(self):
        while self._undo:
            owner, name, own = self._undo.pop()
            if own is _ABSENT:
                try:
                    delattr(owner, name)
                except AttributeError:
                    pass
            else:
                setattr(owner, name, own)
