"""Which module's backward pass produced the first non-finite gradient.

When a step's forward pass was finite but its parameter gradients are not, the value was born in
the backward pass. The parameter gradients alone only name the latest layer with weights whose
gradient is non-finite; the op that produced it often sits downstream in a module without
weights: a sqrt "guarded" by `torch.where` in a distance head (the unselected branch still
differentiates to 0/0), acos of a cosine at exactly 1, the norm of a zero vector.

While the weights are still those of the step, its forward passes are run again
(`replay.run_again`, state put back by `preserve.preserved`) with every module's tensors kept,
and differentiated from the model's outputs (`torch.autograd.grad`, so no `.grad` changes). The
module whose output gradients are finite while a gradient it sends to its inputs or its own
parameters is not is where the value was born: the innermost such module (a container when it
was born in the container's own code between its submodules), latest in forward order (the
first to run in the backward pass).

The monitor does not hold the loss function, so a unit gradient stands in for the one the loss
sent to the outputs. A birth inside the model (0 * inf, 0 / 0) does not depend on it; the answer
is kept only when this backward makes exactly the same layers' parameter gradients non-finite
as the real one did. When it makes none non-finite while the real one did, on a step without
autocast, the model's own backward was not where it happened: the non-finite gradient came out
of the loss's backward (`sqrt` of a loss term that reached exactly 0), and the origin is the
loss. Otherwise (a float16 backward whose overflow needs the real gradient's size) the
parameter-gradient origin stands.
"""

from __future__ import annotations

import math
from contextlib import AbstractContextManager
from typing import Any, NamedTuple, Protocol

import torch

from causal.schema.run import LOSS, Direction, Event
from neuraldbg.capture.sharded import local
from neuraldbg.capture.state_preservation import preserved
from neuraldbg.capture.step_buffer import Slot, StepBuffer
from neuraldbg.capture.tensor_stats import NormGrouper, iter_tensors, nonfinite_count
from neuraldbg.capture.watched_units import Unit
from neuraldbg.nonfinite.origin import nonfinite_origin
from neuraldbg.nonfinite.replay import repeatable_calls, run_again


class ReplaySite(Protocol):
    """What the backward hunt reads off the capture: the model, its hooked modules (`slots`),
    its units and their parameters; and a way to run the model while the hooks look away."""

    model: Any
    slots: list[Slot]
    units: list[Unit]
    grouper: NormGrouper

    def looking_away(self) -> AbstractContextManager[None]: ...


class _Call(NamedTuple):
    """One module call of the replayed passes: its slot, the tensors it returned and took
    that carry gradients, and the version counters of its outputs then (an output modified in
    place later has another gradient than the one the module received)."""

    slot: int
    outputs: list[torch.Tensor]
    versions: list[int]
    inputs: list[torch.Tensor]


def _grad_tensors(obj: Any) -> list[torch.Tensor]:
    return [t for t in iter_tensors(obj) if t.is_floating_point() and t.requires_grad]


def nonfinite_units(site: ReplaySite, b: StepBuffer) -> set[int]:
    """The units whose parameter gradients hold a non-finite value, from step `b`'s gradient
    norms (a float32 norm that overflowed for finite values is recomputed first)."""
    if not b.norm_k:
        return set()
    values = site.grouper.refine([float(n) for n in b.norm_t], b.norm_k)
    per_unit, observed, _ = site.grouper.group(values, b.norm_k)
    return {i for i, (v, seen) in enumerate(zip(per_unit, observed, strict=True))
            if seen and not math.isfinite(v)}


def backward_birth(site: ReplaySite, step: int, b: StepBuffer) -> Event | None:
    """The `nonfinite_origin` event of a value born in the backward pass of step `b`, at the
    module whose backward produced it; None when the passes cannot run again or the answer
    does not reproduce the real gradients (see the module docstring)."""
    real_bad = nonfinite_units(site, b)
    calls = repeatable_calls(b.calls, site.grouper.params) if real_bad else []
    if not calls:
        return None
    return _replay_and_locate(site, step, calls, real_bad, b.amp == "none")


def _replay_and_locate(site: ReplaySite, step: int, calls: list[Any],
                       real_bad: set[int], full_precision: bool) -> Event | None:
    """Run `calls` again with every hooked module's gradient-carrying tensors kept, and
    differentiate them before the model's buffers are put back (a BatchNorm's running
    statistics are saved for its backward: restoring them first would break the graph)."""
    seen: list[_Call] = []

    def hook_for(slot: int) -> Any:
        def hook(module: Any, args: Any, output: Any) -> None:
            outs = _grad_tensors(output)
            if outs:
                seen.append(_Call(slot, outs, [t._version for t in outs], _grad_tensors(args)))
        return hook

    model = site.model
    roots: list[torch.Tensor] = []
    handles = [s.module.register_forward_hook(hook_for(k)) for k, s in enumerate(site.slots)]
    try:
        with site.looking_away(), preserved(model):
            for call in calls:
                roots += _grad_tensors(run_again(model, call))
            return _locate(site, step, seen, roots, real_bad, full_precision) if roots else None
    except Exception:  # a forward that cannot run away from its loop, or a graph autograd
        return None  # cannot differentiate again: no answer (the old origin stands)
    finally:
        for h in handles:
            h.remove()


def _locate(site: ReplaySite, step: int, seen: list[_Call], roots: list[torch.Tensor],
            real_bad: set[int], full_precision: bool) -> Event | None:
    tensors: dict[int, torch.Tensor] = {}
    for c in seen:
        for t in (*c.outputs, *c.inputs):
            tensors.setdefault(id(t), t)
    params = [p for p in site.grouper.params if p.requires_grad]
    targets = [*tensors.values(), *params]
    grads = torch.autograd.grad(roots, targets, [torch.ones_like(r) for r in roots],
                                allow_unused=True)
    present = [(t, g) for t, g in zip(targets, grads, strict=True) if g is not None]
    if not present:
        return None
    flags = torch.stack([torch.isfinite(g).all() for _, g in present]).tolist()
    finite = {id(t): bool(f) for (t, _), f in zip(present, flags, strict=True)}
    grad_of = {id(t): g for t, g in present}

    def ok(t: torch.Tensor) -> bool:
        return finite.get(id(t), True)  # no gradient reached it: nothing non-finite either

    replay_bad = {i for i, u in enumerate(site.units) if not all(ok(p) for p in u.params)}
    if not replay_bad and full_precision:  # the model's own backward is finite: the loss's
        return _born_in_loss(site, step, real_bad)
    if replay_bad != real_bad:  # the stand-in upstream gradient did not reproduce the step
        return None
    born: list[tuple[_Call, list[torch.Tensor]]] = []
    for c in seen:
        if any(t._version != v for t, v in zip(c.outputs, c.versions, strict=True)):
            continue  # an output changed in place afterwards: its gradient is not this module's
        if not all(ok(t) for t in c.outputs):
            continue
        unit = site.slots[c.slot].unit
        own = list(site.units[unit].params) if unit >= 0 else []
        sent = [t for t in (*c.inputs, *own) if not ok(t)]
        if sent:
            born.append((c, sent))
    names = [site.slots[c.slot].name for c, _ in born]
    inner = [(c, sent) for (c, sent), n in zip(born, names, strict=True)
             if not any(_encloses(n, other) for other in names)]
    if not inner:
        return None
    c, sent = inner[-1]  # the latest in forward order: the first to run backward
    slot = site.slots[c.slot]
    count, has_nan = nonfinite_count([grad_of[id(t)] for t in sent])
    return nonfinite_origin(step, slot.name, Direction.BACKWARD, count, has_nan,
                            module_type=type(slot.module).__name__,
                            has_params=any(True for _ in slot.module.parameters()),
                            layers_nonfinite=len(real_bad), exact=True, replayed=True)


def _born_in_loss(site: ReplaySite, step: int, real_bad: set[int]) -> Event:
    """The origin of a non-finite gradient that came out of the loss's backward, counted on
    the real gradients of the layers it reached."""
    count, has_nan = nonfinite_count([local(p.grad) for i in sorted(real_bad)
                                      for p in site.units[i].params
                                      if p.grad is not None and not p.grad.is_sparse])
    return nonfinite_origin(step, LOSS, Direction.BACKWARD, count, has_nan,
                            layers_nonfinite=len(real_bad), exact=True, replayed=True,
                            born_in="the loss's backward")


def _encloses(outer: str, inner: str) -> bool:
    """Whether module `outer` strictly contains module `inner` (the root, "", contains all)."""
    return outer != inner and (outer == "" or inner.startswith(outer + "."))
