"""What one step captures before it is closed: the step buffer and the kept module outputs.

The hooks write here as little as they can (references, versions, device-side reductions);
`StashEntry` objects for the non-finite hunt are only built on the rare step that needs them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

import torch
from torch import nn

from causal.schema.run import Event, LayerStat
from neuraldbg.capture.forward_calls import ForwardCall
from neuraldbg.capture.tensor_stats import ACT_COLUMNS, Moments, iter_tensors

_ACT_COL = {c: k for k, c in enumerate(ACT_COLUMNS)}

#: Outputs up to this many elements are kept by reference for the non-finite hunt; larger ones
#: (conv feature maps) would stay alive past their use and cost memory traffic, so only a
#: device-side sum (NaN/inf propagate through it) is kept for them.
STASH_MAX_ELEMS = 1 << 18


class Slot(NamedTuple):
    """A hooked module: its name, its unit index (-1 for containers and the root), itself."""

    name: str
    unit: int
    module: nn.Module


#: A kept module output, as the forward hook stores it (no object built per call):
#: (slot index, output or None, output version, positional inputs, one-element sum or None,
#: the output's other floating-point tensors: a module that returns several, such as an
#: auxiliary loss next to its result, can turn non-finite in any of them).
RawEntry = tuple[int, torch.Tensor | None, int, Any, torch.Tensor | None, tuple[torch.Tensor, ...]]


def raw_entry(slot: int, t: torch.Tensor, args: Any,
              rest: tuple[torch.Tensor, ...] = ()) -> RawEntry:
    if t.numel() <= STASH_MAX_ELEMS:
        return (slot, t, t._version, args, None, rest)
    return (slot, None, 0, (), t.detach().sum(dtype=torch.float32), rest)


def output_entry(slot: int, output: Any, args: Any) -> RawEntry | None:
    """What to keep of a module output: a floating-point tensor as it is; of several, the
    first as the output and the others (as one-element sums when large) to be checked too.
    None when it holds no floating-point values."""
    if type(output) is torch.Tensor:
        return raw_entry(slot, output, args) if output.is_floating_point() else None
    floats = [x for x in iter_tensors(output) if x.is_floating_point() and x.numel()]
    if not floats:
        return None
    rest = tuple(x if x.numel() <= STASH_MAX_ELEMS else x.detach().sum(dtype=torch.float32)
                 for x in floats[1:])
    return raw_entry(slot, floats[0], args, rest)


class StashEntry(NamedTuple):
    """A module output of the current step, kept for the non-finite hunt: by reference when
    small, else as a one-element sum that is non-finite exactly when the output is; `rest`
    holds its other floating-point tensors (or their sums) when it returned several."""

    name: str
    unit: int  # index into units, -1 for containers and the root
    output: torch.Tensor | None
    version: int  # the output's version counter when the hook saw it (in-place ops bump it)
    args: Any  # the module's positional inputs (only kept with the output)
    module: nn.Module
    flag: torch.Tensor | None = None
    rest: tuple[torch.Tensor, ...] = ()

    @property
    def module_type(self) -> str:
        return type(self.module).__name__

    @property
    def float_inputs(self) -> list[torch.Tensor]:
        """Its floating-point tensor inputs (positional)."""
        return [a for a in iter_tensors(self.args) if a.is_floating_point()]


def stash_entries(slots: list[Slot], raw: list[RawEntry]) -> list[StashEntry]:
    """The kept outputs of a step, in hook (completion) order, as `StashEntry` objects."""
    out = []
    for slot, t, version, args, flag, rest in raw:
        s = slots[slot]
        out.append(StashEntry(s.name, s.unit, t, version, args, s.module, flag, rest))
    return out


@dataclass(slots=True)
class StepBuffer:
    """Everything captured during one step, before it is closed."""

    open: bool = False
    full: bool = False
    stash_on: bool = False
    forwards: int = 0
    backward_seen: bool = False
    weights_at_backward: int = -1  # `forward_calls.weights_version` when it was first seen
    optimizer_stepped: bool = False
    losses: list[Any] = field(default_factory=list)  # tensors (detached, 0-d) and floats
    float_losses: list[float] = field(default_factory=list)  # the floats among them
    # losses the model returned itself (`model_io.model_loss`), while the user records none
    model_losses: list[torch.Tensor] = field(default_factory=list)
    model_loss_parts: bool = False  # they are shares of the step's loss (summed, not averaged)
    # the autograd node of the loss the model returned this step (also once the user records
    # losses: the loss they record may be this one, `out.loss`)
    model_loss_node: Any = None
    # `targets` / `labels` hold the model's own (its `labels=` argument), not the loop's
    model_targets: bool = False
    # (moments, element count, the batch: dropped once a quiet step is queued)
    inputs: list[tuple[Moments, int, torch.Tensor | None]] = field(default_factory=list)
    targets: list[tuple[Moments, int, torch.Tensor | None]] = field(default_factory=list)
    # targets the loss took that the loop did not pass (`target_watch`): the step's targets
    # when it has no others
    found_targets: list[tuple[Moments, int, torch.Tensor | None]] = field(default_factory=list)
    # integer class labels the loss took (given, the model's own `labels`, or found), for the
    # trivial predictor's loss (`tensor_stats.LabelPool`, on steps with full statistics)
    labels: list[torch.Tensor] = field(default_factory=list)
    found_labels: list[torch.Tensor] = field(default_factory=list)
    # gradient norms of the parameters accumulated during the step (each at most once): the
    # parameter indices and the 0-d norms, in the order the backward passes produced them
    norm_k: list[int] = field(default_factory=list)
    norm_t: list[torch.Tensor] = field(default_factory=list)
    norm_max: float | None = None  # their largest value (NaN if any is), read in host memory
    norm_vals: list[float] | None = None  # their values, when read in host memory
    scale: torch.Tensor | None = None  # 0-d
    scale_version: int = -1  # the scale tensor's version then (GradScaler.update bumps it)
    act: dict[int, list[torch.Tensor]] = field(default_factory=dict)
    stash: list[RawEntry] = field(default_factory=list)
    # the step's forward passes, kept to run them again when no outputs were kept (replay.py)
    calls: list[ForwardCall] = field(default_factory=list)
    # the arguments of each call of the model (references), to tell a non-finite value that
    # came in with any of them (not only the measured batch) from one born inside
    model_args: list[tuple[Any, Any]] = field(default_factory=list)
    # the targets record_loss was given, whatever their dtype (class indices too): the scene's
    given_targets: list[torch.Tensor] = field(default_factory=list)
    replayed: bool = False  # the stash comes from running the forward passes again
    hunted: bool = False  # the forward-born origin was looked for while the weights were intact
    forward_origin: Event | None = None  # what that found
    backward_origin: Event | None = None  # the module whose backward did it (backward_birth)
    amp: str = "none"
    # autograd nodes, kept to read what the loss computed after the model
    # (`nonfinite/loss_half_ops.py`)
    # if the step turns non-finite in the loss: the recorded loss's grad_fn, and the grad_fn
    # of each model output of the step
    loss_node: Any = None
    output_nodes: list[Any] = field(default_factory=list)


def reduce_act(rows: list[torch.Tensor]) -> torch.Tensor:
    """Combine the statistics of a module called several times in one forward."""
    if len(rows) == 1:
        return rows[0]
    m = torch.stack(rows)
    mx, mean = m.amax(0), m.mean(0)
    out = mean.clone()
    for c in (LayerStat.ACT_MAX_ABS, LayerStat.ACT_STD, LayerStat.ACT_NONFINITE, "act_has_nan"):
        out[_ACT_COL[c]] = mx[_ACT_COL[c]]
    out[_ACT_COL[LayerStat.ACT_NONFINITE]] = m[:, _ACT_COL[LayerStat.ACT_NONFINITE]].sum()
    out[_ACT_COL[LayerStat.ACT_HEADROOM]] = m[:, _ACT_COL[LayerStat.ACT_HEADROOM]].amin()
    return out


def loss_tensor(losses: list[Any]) -> torch.Tensor | None:
    """The step's loss as one 0-d device tensor (the mean when several were recorded)."""
    if len(losses) == 1:
        x = losses[0]
        if not isinstance(x, torch.Tensor):
            return None
        return x if x.dim() == 0 else x.reshape(())
    tensors = [x for x in losses if isinstance(x, torch.Tensor)]
    if not tensors:
        return None
    dev = tensors[0].device
    vals = [x.float().reshape(()).to(dev) if isinstance(x, torch.Tensor)
            else torch.tensor(float(x), device=dev) for x in losses]
    return torch.stack(vals).mean()
