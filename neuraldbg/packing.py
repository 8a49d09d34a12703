"""A closed step's values: packed in one host-device transfer (`collect`), or, for a model in
host memory, triaged straight from its values and queued as they were read (`queue_quiet`), so
that a quiet step pays for no packing, and for its analysis only when the queue is analysed.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import torch

from neuraldbg.analyze import RawStep
from neuraldbg.gather import Gather
from neuraldbg.stepbuf import StepBuffer, loss_tensor, reduce_act

if TYPE_CHECKING:
    from neuraldbg.capture import StepCapture


def queue_quiet(cap: StepCapture, step: int, b: StepBuffer, settings: dict[str, str]) -> bool:
    """In host memory, triage step `b` from its values directly; a quiet one is queued as
    the values triage read (the median step then pays for no packing, and the step's
    tensors are released at once). False when the step needs the general path (non-finite,
    full statistics, ...)."""
    norms, norm_max = b.norm_vals, b.norm_max  # read by the gradient flush in host memory
    if b.full or b.act or b.stash or b.scale is not None or norms is None or norm_max is None:
        return False
    loss_t = step_loss(b)
    loss_read = float(loss_t) if loss_t is not None else None
    loss = loss_read if loss_read is not None else (
        b.float_losses[-1] if b.float_losses else None)
    moments = [list(map(float, m)) for m, _, _ in (*b.inputs, *b.targets)]
    # every value Gather.finite would check, and the float losses (a sum is finite iff all are)
    total = norm_max + (loss or 0.0) + sum(b.float_losses) + sum(map(sum, moments))
    if not math.isfinite(total):
        return False
    input_max_abs = max(abs(moments[0][0]), abs(moments[0][1])) if b.inputs else None
    settled = cap.settled(step)
    verdict = cap.analyzer.triage.verdict(False, input_max_abs, loss, norm_max,
                                          grad_limit=not settled)
    if cap.analyzer.at_once(verdict[0], settled):
        cap.analyzer.submit(collect(cap, step, b, settings, False)[0], b, verdict, settled)
        return True
    # the values `collect` would fetch, as read above (`Gather.fetch` reads each with .item())
    host: dict[str, list[float]] = {} if loss_read is None else {"loss": [loss_read]}
    n_in = len(b.inputs)
    for k, m in enumerate(moments):
        host[f"in{k}" if k < n_in else f"tg{k - n_in}"] = m
    host["grads"] = norms
    cap.analyzer.queue(_raw_step(cap, step, b, settings, host, True, b.norm_k))
    return True


def _raw_step(cap: StepCapture, step: int, b: StepBuffer, settings: dict[str, str],
              host: dict[str, list[float]], finite: bool, grads_index: list[int] | None,
              weights_index: tuple[list[int], list[int]] | None = None,
              act_units: list[int] | None = None) -> RawStep:
    """Step `b` as fetched (`host`, with what its values are) and as its buffer says."""
    return RawStep(
        step=step, host=host, finite=finite, grads_index=grads_index,
        weights_index=weights_index, act_units=act_units or [],
        input_sizes=[n for _, n, _ in b.inputs], target_sizes=[n for _, n, _ in b.targets],
        float_losses=b.float_losses, optimizer_stepped=b.optimizer_stepped, full=b.full,
        scaler=cap.dbg.scaler is not None, settings=settings)


def step_loss(b: StepBuffer) -> torch.Tensor | None:
    """Step `b`'s loss as one 0-d tensor: the recorded one (the mean of several), else the one
    the model returned (the sum of its micro-batches' shares under Hugging Face's Trainer, which
    divides each by the step's item count)."""
    if b.losses:
        return loss_tensor(b.losses)
    if len(b.model_losses) > 1 and b.model_loss_parts:
        return torch.stack([x.float() for x in b.model_losses]).sum()
    return loss_tensor(b.model_losses) if b.model_losses else None


def collect(cap: StepCapture, step: int, b: StepBuffer, settings: dict[str, str],
            weights: bool = False) -> tuple[RawStep, bool]:
    """Pack step `b`'s values in one host-device transfer; with `weights`, the weight and
    update norms too (only right after the step's update). Also: were all finite?"""
    g = Gather(cpu=cap.cpu)
    loss_t = step_loss(b)
    if loss_t is not None:
        g.add_scalars("loss", (loss_t,))
    for k, (m, _, _) in enumerate(b.inputs):
        g.add_scalars(f"in{k}", m)
    for k, (m, _, _) in enumerate(b.targets):
        g.add_scalars(f"tg{k}", m)
    grads_index: list[int] | None = b.norm_k
    if b.norm_k:
        g.add_scalars("grads", b.norm_t)
    else:  # gradients set without a backward pass through this model
        grads = cap.grouper.grad_norms()
        grads_index = grads.index if grads is not None else None
        if grads is not None:
            g.add_scalars("grads", grads.norms.unbind())
    if b.scale is not None:
        g.add_scalars("scale", (b.scale,))
    act_units = sorted(b.act) if b.act else []
    if act_units:
        g.add("act", torch.stack([reduce_act(b.act[i]).to(b.act[act_units[0]][0].device)
                                  for i in act_units]))
    weights_index = None
    if weights and cap.weight_buffers is not None:
        wnorm = cap.grouper.weight_norms()
        unorm = cap.grouper.update_norms(cap.weight_buffers)
        if wnorm is not None and unorm is not None:
            g.add("wnorm", wnorm.norms)
            g.add("unorm", unorm.norms)
            weights_index = (wnorm.index, unorm.index)
    host = g.fetch()  # the one host-device synchronisation of the step
    raw = _raw_step(cap, step, b, settings, host, g.finite, grads_index, weights_index,
                    act_units)
    return raw, g.finite and all(map(math.isfinite, b.float_losses))
