"""Samples waiting to be sent, each tied to the config it was measured under.

The job's thread appends one step's samples at a time; the reporter thread
takes everything that is there and sends it grouped by config, so the daemon
attributes each sample to the settings that produced it.  A sample is a dict
in the daemon's ingest shape ({"t", "name", "value", optional "phase"}); the
config is a dict shared, by identity, by every sample of one config epoch.

The buffer is bounded: while the daemon is away the oldest samples are
dropped rather than letting a long job's memory grow.
"""

import collections
import math
import re
import threading

# The daemon's vocabulary for metric names: [a-z0-9_.]{1,64}.
NAME_RE = re.compile(r"[a-z0-9_.]{1,64}\Z")

# Names the session computes itself; a user metric may not take them.
RESERVED = frozenset(("samples_per_s", "step_time_s", "phase_time_s", "loss", "comm_wait_s", "global_batch",
                      "grad_batch_small", "grad_sqnorm_small", "grad_batch_large", "grad_sqnorm_large"))


def valid_name(name):
    return isinstance(name, str) and NAME_RE.match(name) is not None


def valid_label(text, max_bytes=64):
    """The daemon's rule for phases and other labels: 1..max bytes, no control characters."""
    if not isinstance(text, str) or not text:
        return False
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
        return False
    try:
        return len(text.encode("utf-8")) <= max_bytes
    except UnicodeEncodeError:      # lone surrogates
        return False


def resolved(value, quantum):
    """
    value rounded to the coarsest step of 1, 2 or 5 x 10^-d (d <= 6, never
    above 1) not above quantum, the smallest change its measurement can
    show, as the daemon's collectors keep theirs (collector_resolved): it
    moves by at most half of quantum; the digits below say nothing about
    what was timed, and made every point a full double the store could not
    compress.  value as it is when quantum is finer than 10^-6.
    """
    if not math.isfinite(value) or not quantum > 0:
        return value
    for d in range(7):
        for c in ((1,) if d == 0 else (5, 2, 1)):
            if c <= quantum * 10 ** d:
                # An integer over a power of ten: the double the codec decodes to.
                return round(value * 10 ** d / c) * c / 10 ** d
    return value


def as_value(value):
    """value as a finite float, or None when it is not a finite real number."""
    if type(value) is float:       # the common case, fast
        return value if math.isfinite(value) else None
    if isinstance(value, (bool, str, bytes)) or value is None:
        return None
    try:
        f = float(value)      # ints, floats, numpy scalars, 1-element tensors
    except (TypeError, ValueError, OverflowError, RuntimeError):
        return None
    return f if math.isfinite(f) else None


class Buffer:
    """Thread-safe queue of (config, sample) pairs; see the module comment."""

    def __init__(self, limit=20000):
        self._lock = threading.Lock()
        self._items = collections.deque(maxlen=limit)   # oldest first; full drops oldest
        self.dropped = 0          # samples lost to the bound

    def __len__(self):
        with self._lock:
            return len(self._items)

    def add(self, config, samples):
        with self._lock:
            items = self._items
            excess = len(items) + len(samples) - items.maxlen
            if excess > 0:
                self.dropped += excess
            items.extend((config, s) for s in samples)

    def take(self):
        """Removes and returns every pending pair, oldest first, as a list."""
        with self._lock:
            items = list(self._items)
            self._items.clear()
        return items

    def give_back(self, items):
        """Puts unsent pairs back in front of newer ones (still bounded)."""
        if not items:
            return
        with self._lock:
            merged = collections.deque(items, maxlen=self._items.maxlen)
            excess = len(items) + len(self._items) - merged.maxlen
            if excess > 0:
                self.dropped += excess
            merged.extend(self._items)
            self._items = merged


def batches(items, max_samples):
    """
    Splits pairs into request bodies' parts: runs of one config, each at most
    max_samples long.  Yields (config, [pairs]) in order.
    """
    run, config = [], None
    for pair in items:
        if run and (pair[0] is not config or len(run) >= max_samples):
            yield config, run
            run = []
        config = pair[0]
        run.append(pair)
    if run:
        yield config, run
