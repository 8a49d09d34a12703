"""Per-parameter gradient norms of a step, exact, at the end of each backward pass.

A post-accumulate hook per parameter only keeps the gradient it was given (and says which
parameters got one: a parameter whose gradient was merely zeroed in place is not observed);
the first of them in a backward pass queues `flush` on the autograd engine, which runs once
that pass has finished, before the training loop can clip or release the gradients, and takes
every norm in one `torch._foreach_norm` call. Computing each norm inside its hook instead
costs one Python-level torch call per parameter, about twice as much on small models.

Each parameter's norm is the one of its gradient as accumulated so far in the step (several
backward passes in one step: the latest wins), as a 0-d float32 tensor on its device.
Gradients are referenced until their pass ends (not copied).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable
from typing import Any, Protocol

import torch

from neuraldbg.capture.step_buffer import StepBuffer
from neuraldbg.capture.tensor_stats import NormGrouper
from neuraldbg.capture.watched_units import norm32
from neuraldbg.reporting import Reporter

#: Runs a function once the current backward pass (graph task) has finished.
_queue_callback = torch.autograd.Variable._execution_engine.queue_callback
_graph_task_id = torch._C._current_graph_task_id


class NormSite(Protocol):
    """What the gradient hooks need of the capture: the open step, the parameters, whether it
    is recording and in host memory, and the three moments a backward pass tells it about."""

    active: bool
    cpu: bool
    buf: StepBuffer
    grouper: NormGrouper
    reporter: Reporter

    def backward_begins(self) -> None: ...

    def forward_may_close_step(self) -> bool: ...

    def hunt_now(self, b: StepBuffer) -> None: ...


class GradNorms:
    """The hooks' side of the gradient norms; the norms land in the step buffer."""

    def __init__(self, cap: NormSite) -> None:
        self.cap = cap
        self.pend_k: list[int] = []  # parameter indices, in accumulation order
        self.pend_g: list[torch.Tensor] = []  # their gradients (values of sparse ones)
        self.task: int | None = None  # the backward pass a flush is queued on
        # one gradient as the last backward pass left it: (its parameter, the gradient, its
        # version), to tell a new micro-batch of the same step from a new step
        self.mark: tuple[torch.Tensor, weakref.ReferenceType[torch.Tensor], int] | None = None
        # parameters whose gradients `_foreach_norm(..., dtype=float32)` refuses: complex ones
        # (spectral weights; their norms are real without a dtype) and float64 ones (no
        # narrowing dtype): their norms are taken in their own precision, then made float32
        self.own_dtype = {k for k, p in enumerate(cap.grouper.params)
                          if p.is_complex() or p.dtype == torch.float64}

    @property
    def pending(self) -> bool:
        return bool(self.pend_k)

    def hook(self, k: int) -> Callable[[torch.Tensor], None]:
        """The post-accumulate hook of parameter k."""
        cap, pend_k, pend_g = self.cap, self.pend_k, self.pend_g

        def hook(p: torch.Tensor) -> Any:
            g = p.grad
            if g is None or not cap.active:
                return
            try:
                pend_k.append(k)
                pend_g.append(g if not g.is_sparse else g.coalesce()._values())
                task = _graph_task_id()
                if task != self.task:  # the first gradient of this backward pass
                    self.task = task
                    cap.backward_begins()
                    _queue_callback(self.flush)
            except Exception as e:
                cap.reporter.internal_error("gradient hook", e)

        return hook

    def flush(self, b: StepBuffer | None = None) -> None:
        """The norms of the gradients kept so far, into the open step (or `b`, a step being
        closed after a backward pass that raised before its end).

        In host memory the norms are read at once: a non-finite one, while the weights are
        still those of the step's forward passes, starts the non-finite hunt
        (`StepCapture.hunt_now`)."""
        self.task = None
        if not self.pend_k:
            return
        ks, gs = self.pend_k[:], self.pend_g[:]
        self.pend_k.clear()
        self.pend_g.clear()
        cap = self.cap
        p = cap.grouper.params[ks[0]]
        # read by a forward pass that may close the step (`StepCapture._accumulating`)
        if p.grad is not None:
            self.mark = (p, weakref.ref(p.grad), p.grad._version)
        if b is None:
            b = cap.buf
        if not b.open or not cap.active:
            return
        try:
            b.norm_max = b.norm_vals = None  # until read again, below
            norms = (torch._foreach_norm(gs, 2, dtype=torch.float32) if not self.own_dtype
                     else _mixed_norms(ks, gs, self.own_dtype))
            if not b.norm_k:
                b.norm_k, b.norm_t = ks, list(norms)
            else:  # another backward pass in the same step: the latest norm of each wins
                merged = dict(zip(b.norm_k, b.norm_t, strict=True))
                merged.update(zip(ks, norms, strict=True))
                b.norm_k, b.norm_t = list(merged), list(merged.values())
            if cap.cpu:  # reading them costs nothing here: the step's triage uses the values
                b.norm_vals = vals = list(map(float, b.norm_t))
                b.norm_max = max(vals) if math.isfinite(sum(vals)) else math.nan
                if math.isnan(b.norm_max):
                    cap.hunt_now(b)
        except Exception as e:
            cap.reporter.internal_error("gradient norms", e)

    def unscaled_by(self, b: StepBuffer) -> float | None:
        """The factor the gradients shrank by since step `b`'s backward pass ended, when it is
        an exact power of two of at least 2^8: a GradScaler unscaled them in place (clipping
        scales by max_norm / total norm, never exactly so). Reads one gradient's norm (a sync
        on an accelerator: asked on a few steps only)."""
        for k, t in zip(b.norm_k, b.norm_t, strict=True):
            g = self.cap.grouper.params[k].grad
            before = float(t)
            if g is None or g.is_sparse or g.is_complex() or not (0 < before < math.inf):
                continue
            now = float(norm32(g.detach()))
            if not 0 < now < before:
                return None
            ratio = math.log2(before / now)
            return 2.0 ** round(ratio) if ratio > 7.99 and abs(ratio - round(ratio)) < 1e-3 \
                else None
        return None

    def untouched(self) -> bool:
        """Whether the gradients are still as the last backward pass left them (not zeroed,
        released or replaced since): the next forward pass is another micro-batch of the
        same step (gradient accumulation), not a new step."""
        if self.mark is None:
            return False
        p, ref, version = self.mark
        g = p.grad
        return g is not None and g is ref() and g._version == version

    def release(self) -> None:
        """Drop the references (the monitor is closing)."""
        self.pend_k.clear()
        self.pend_g.clear()
        self.task = None
        self.mark = None


def _mixed_norms(ks: list[int], gs: list[torch.Tensor], own_dtype: set[int]
                 ) -> list[torch.Tensor]:
    """Float32 norms of gradients (parameter indices `ks`) some of which take their norm in
    their own dtype (complex, float64) and are made float32 after."""
    rest = [g for k, g in zip(ks, gs, strict=True) if k not in own_dtype]
    own = [g for k, g in zip(ks, gs, strict=True) if k in own_dtype]
    rn = iter(torch._foreach_norm(rest, 2, dtype=torch.float32) if rest else ())
    on = iter(torch._foreach_norm(own, 2) if own else ())
    return [next(on).float() if k in own_dtype else next(rn) for k in ks]
