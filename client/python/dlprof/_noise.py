"""Gradient noise figures for the daemon's goodput objective (Pollux).

The daemon estimates the gradient noise scale phi = tr(Sigma) / |G|^2
(McCandlish et al. 2018, appendix A) from, per optimizer step, the squared
norms of two mean gradients over b < B samples: grad_sqnorm_small over
grad_batch_small and grad_sqnorm_large over grad_batch_large.  This module
measures them two ways, both exact on PyTorch 1.13 (no sampling, no
approximation beyond floating point):

- RankNorms, fed by the session's DDP communication hook
  (dlprof._dist.CommTimer.ddp_comm_hook(noise_scale=True)): bucket by
  bucket, the rank's local gradient before the all-reduce (b = the rank's
  samples in the step) and the all-reduced mean (B = b x world size).  The
  local squared norms are all-reduced too (one extra 1-element all-reduce
  per bucket), so the figure sent is their mean over the ranks.
- MicroBatchNorms, for one process with gradient accumulation: the job
  calls Session.micro_batch(params, samples) after each micro-batch's
  backward.  A micro-batch's gradient is what its backward added to .grad
  (the difference from the previous call, so one copy of the gradients is
  kept); the step's is the mean of those.  A constant loss scale (a loss
  divided by the number of micro-batches, or not) scales both norms alike
  and leaves phi unchanged.  Micro-batches of a step are taken as equal in
  size: b is the step's samples over their count.

Both need torch; neither is used unless the job asks for it.
"""

import threading


def _sqnorm(torch, t):
    """|t|^2 as a 0-d float64 tensor on t's device (no host sync)."""
    return torch.linalg.vector_norm(t, dtype=torch.float64).square()


class RankNorms:
    """Per step: the ranks' mean local squared norm and the all-reduced one, summed over buckets."""

    def __init__(self):
        self._lock = threading.Lock()    # the hook's futures complete on torch's threads
        self._small = []                 # summed over ranks, per bucket (0-d tensors)
        self._large = []
        self._world = 1

    def add(self, small_summed, large, world):
        with self._lock:
            self._small.append(small_summed)
            self._large.append(large)
            self._world = world

    def take(self, samples):
        """(b, sq_small, B, sq_large) of the step that ended, or None; forgets them."""
        with self._lock:
            small, self._small = self._small, []
            large, self._large = self._large, []
            world = self._world
        if not small or not samples or world < 2:
            return None
        sq_small = sum(float(x) for x in small) / world
        sq_large = sum(float(x) for x in large)
        return float(samples), sq_small, float(samples) * world, sq_large


class MicroBatchNorms:
    """Per step: the mean squared norm of the micro-batches' gradients and that of their mean."""

    def __init__(self):
        self._prev = {}          # id(param) -> its .grad at the previous call: the step's sum so far
        self._sq_small = 0.0     # sum over micro-batches of |their gradient|^2
        self._k = 0
        self._samples = 0.0

    def add(self, params, samples):
        import torch

        sq = 0.0
        with torch.no_grad():
            for p in params:
                g = getattr(p, "grad", None)
                if g is None:
                    continue
                prev = self._prev.get(id(p))
                d = g if prev is None else g - prev
                sq += float(_sqnorm(torch, d))
                self._prev[id(p)] = g.detach().clone()
        self._sq_small += sq
        self._k += 1
        self._samples += samples

    def take(self):
        """(b, sq_small, B, sq_large) of the step that ended, or None (fewer than 2 micro-batches)."""
        import torch

        out = None
        if self._k >= 2 and self._samples > 0:
            k = self._k
            with torch.no_grad():
                sq_total = sum(float(_sqnorm(torch, g)) for g in self._prev.values())
            # The step's gradient as the mean of the micro-batches': same scale as each of theirs.
            out = self._samples / k, self._sq_small / k, self._samples, sq_total / (k * k)
        self._prev.clear()
        self._sq_small = 0.0
        self._k = 0
        self._samples = 0.0
        return out
