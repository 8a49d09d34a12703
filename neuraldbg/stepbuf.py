"""What one step captures before it is closed: the step buffer and the kept module outputs.

The hooks write here as little as they can (references, versions, device-side reductions);
`StashEntry` objects for the non-finite hunt are only built on the rare step that needs them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

import torch
from torch import nn

from causal.run import Event, LayerStat
from neuraldbg.replay import ForwardCall
from neuraldbg.stats import ACT_COLUMNS, Moments

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
#: (slot index, output or None, output version, positional inputs, one-element sum or None).
RawEntry = tuple[int, torch.Tensor | None, int, Any, torch.Tensor | None]


def raw_entry(slot: int, t: torch.Tensor, args: Any) -> RawEntry:
    if t.numel() <= STASH_MAX_ELEMS:
        return (slot, t, t._version, args, None)
    return (slot, None, 0, (), t.detach().sum(dtype=torch.float32))


class StashEntry(NamedTuple):
    """A module output of the current step, kept for the non-finite hunt: by reference when
    small, else as a one-element sum that is non-finite exactly when the output is."""

    name: str
    unit: int  # index into units, -1 for containers and the root
    output: torch.Tensor | None
    version: int  # the output's version counter when the hook saw it (in-place ops bump it)
    args: Any  # the module's positional inputs (only kept with the output)
    module: nn.Module
    flag: torch.Tensor | None = None

    @property
    def module_type(self) -> str:
        return type(self.module).__name__

    @property
    def first_input(self) -> torch.Tensor | None:
        a = self.args
        return a[0] if a and isinstance(a[0], torch.Tensor) else None


def stash_entries(slots: list[Slot], raw: list[RawEntry]) -> list[StashEntry]:
    """The kept outputs of a step, in hook (completion) order, as `StashEntry` objects."""
    out = []
    for slot, t, version, args, flag in raw:
        s = slots[slot]
        out.append(StashEntry(s.name, s.unit, t, version, args, s.module, flag))
    return out


@dataclass(slots=True)
class StepBuffer:
    """Everything captured during one step, before it is closed."""

    open: bool = False
    full: bool = False
    stash_on: bool = False
    forwards: int = 0
    backward_seen: bool = False
    optimizer_stepped: bool = False
    losses: list[Any] = field(default_factory=list)  # tensors (detached, 0-d) and floats
    float_losses: list[float] = field(default_factory=list)  # the floats among them
    # (moments, element count, the batch: dropped once a quiet step is queued)
    inputs: list[tuple[Moments, int, torch.Tensor | None]] = field(default_factory=list)
    targets: list[tuple[Moments, int, torch.Tensor | None]] = field(default_factory=list)
    # gradient norms of the parameters accumulated during the step (each at most once): the
    # parameter indices and the 0-d norms, in the order the backward passes produced them
    norm_k: list[int] = field(default_factory=list)
    norm_t: list[torch.Tensor] = field(default_factory=list)
    norm_max: float | None = None  # their largest value (NaN if any is), read in host memory
    scale: torch.Tensor | None = None  # 0-d
    act: dict[int, list[torch.Tensor]] = field(default_factory=dict)
    stash: list[RawEntry] = field(default_factory=list)
    # the step's forward passes, kept to run them again when no outputs were kept (replay.py)
    calls: list[ForwardCall] = field(default_factory=list)
    replayed: bool = False  # the stash comes from running the forward passes again
    hunted: bool = False  # the forward-born origin was looked for while the weights were intact
    forward_origin: Event | None = None  # what that found
    amp: str = "none"


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
