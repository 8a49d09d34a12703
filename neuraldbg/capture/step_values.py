"""A closed step's values as a `RawStep`: packed in one host-device transfer (`collect`), or,
for a model in host memory, built from the values its triage already read (`raw_step`, used by
`StepCapture.queue_quiet`), so that a quiet step pays for no packing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

import torch

from neuraldbg.capture.host_transfer import Gather
from neuraldbg.capture.step_buffer import StepBuffer, loss_tensor, reduce_act
from neuraldbg.capture.tensor_stats import LabelPool, NormGrouper


class ValuesSite(Protocol):
    """What packing a step needs of the capture."""

    cpu: bool
    grouper: NormGrouper
    weight_buffers: list[torch.Tensor] | None
    scaler: object
    label_pool: LabelPool


@dataclass(frozen=True)
class FetchedValues:
    """What one closed step's transfer brought to the host. `inputs` / `targets`: each batch's
    moments as `tensor_stats.moments` packs them; `act`: `len(ACT_COLUMNS)` values per unit of
    `RawStep.act_units`; `grads`, `weight_norms`, `update_norms`: one norm per parameter of
    `RawStep.grads_index` / `weights_index`."""

    loss: float | None = None
    inputs: tuple[list[float], ...] = ()
    targets: tuple[list[float], ...] = ()
    grads: list[float] | None = None
    scale: float | None = None  # the GradScaler's scale the backward pass used
    act: list[float] = field(default_factory=list)
    weight_norms: list[float] | None = None
    update_norms: list[float] | None = None
    # the entropy of the class labels pooled over the full steps so far (`LabelPool`)
    label_entropy: float | None = None


class BatchStats(NamedTuple):
    """An input (or target) batch of one step, over all its tensors."""

    max_abs: float
    mean: float
    std: float
    nonfinite: float  # how many values are non-finite (1.0 when only known to be some)
    has_nan: float  # 1.0 when one of them is NaN
    # the smallest value: a batch leaving the sign its data always had (a -1 sentinel among
    # positive readings) shows here, where max|x| may not move
    min: float = math.nan


@dataclass
class RawStep:
    """A closed step as fetched from the device, before any host-side analysis."""

    step: int
    values: FetchedValues
    finite: bool  # every value fetched (all but act, weight and update norms) is finite
    grads_index: list[int] | None  # the parameter of each of values.grads
    weights_index: tuple[list[int], list[int]] | None  # the same for weight and update norms
    act_units: list[int]
    input_sizes: list[int]
    target_sizes: list[int]
    float_losses: list[float]
    optimizer_stepped: bool
    full: bool
    scaler: bool
    settings: dict[str, str]




def raw_step(cap: ValuesSite, step: int, b: StepBuffer, settings: dict[str, str],
             values: FetchedValues, finite: bool, grads_index: list[int] | None,
             weights_index: tuple[list[int], list[int]] | None = None,
             act_units: list[int] | None = None) -> RawStep:
    """Step `b` as fetched (`values`, with what they are) and as its buffer says."""
    return RawStep(
        step=step, values=values, finite=finite, grads_index=grads_index,
        weights_index=weights_index, act_units=act_units or [],
        input_sizes=[n for _, n, _ in b.inputs], target_sizes=[n for _, n, _ in b.targets],
        float_losses=b.float_losses, optimizer_stepped=b.optimizer_stepped, full=b.full,
        scaler=cap.scaler is not None, settings=settings)


def step_loss(b: StepBuffer) -> torch.Tensor | None:
    """Step `b`'s loss as one 0-d tensor: the recorded one (the mean of several), else the one
    the model returned (the sum of its micro-batches' shares under Hugging Face's Trainer, which
    divides each by the step's item count)."""
    if b.losses:
        return loss_tensor(b.losses)
    if len(b.model_losses) > 1 and b.model_loss_parts:
        return torch.stack([x.float() for x in b.model_losses]).sum()
    return loss_tensor(b.model_losses) if b.model_losses else None


def collect(cap: ValuesSite, step: int, b: StepBuffer, settings: dict[str, str],
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
    if b.full and b.labels:  # a vector: no valid label yet gives NaN, no failure
        g.add("labels", cap.label_pool.add(b.labels).reshape(1))
    weights_index = None
    if weights and cap.weight_buffers is not None:
        wnorm = cap.grouper.weight_norms()
        unorm = cap.grouper.update_norms(cap.weight_buffers)
        if wnorm is not None and unorm is not None:
            g.add("wnorm", wnorm.norms)
            g.add("unorm", unorm.norms)
            weights_index = (wnorm.index, unorm.index)
    host = g.fetch()  # the one host-device synchronisation of the step
    values = FetchedValues(
        loss=host["loss"][0] if "loss" in host else None,
        inputs=tuple(host[f"in{k}"] for k in range(len(b.inputs))),
        targets=tuple(host[f"tg{k}"] for k in range(len(b.targets))),
        grads=host.get("grads"), scale=host["scale"][0] if "scale" in host else None,
        act=host.get("act", []), weight_norms=host.get("wnorm"),
        update_norms=host.get("unorm"),
        label_entropy=host["labels"][0] if "labels" in host else None)
    raw = raw_step(cap, step, b, settings, values, g.finite, grads_index, weights_index,
                   act_units)
    return raw, g.finite and all(map(math.isfinite, b.float_losses))
