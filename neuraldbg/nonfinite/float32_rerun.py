"""An intervention on the failing step: re-run the module where the first non-finite value was
born, on the same inputs, in float32.

Under float16 autocast a forward-born inf or NaN has two stories: the op overflowed the half
format (65504), or the op is unsafe in any precision (log of 0, 0/0, sqrt of a negative). The
module's output often hides which (an overflow inside softmax or a normalisation comes out as NaN,
not inf). Re-running the module once in float32 answers it: finite there means the half format
was the cause. Only on the step where the run first turns non-finite, so it costs nothing on a
healthy run; the module's buffers and the RNG are restored so the run itself is unchanged.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import torch
from torch import nn

from neuraldbg.capture.sharded import local
from neuraldbg.capture.state_preservation import preserved, runs_collectives
from neuraldbg.capture.tensor_stats import iter_tensors


class Rerun(NamedTuple):
    """The module's output re-computed in float32: all finite?, and its largest |value|."""

    finite: bool
    max_abs: float


def _float32(a: Any) -> Any:
    if isinstance(a, torch.Tensor) and a.is_floating_point():
        return a.detach().float()
    if isinstance(a, tuple):
        return tuple(_float32(x) for x in a)
    if isinstance(a, list):
        return [_float32(x) for x in a]
    return a


def rerun_in_float32(module: nn.Module, args: Any) -> Rerun | None:
    """`module(*args)` in float32 (floating inputs upcast, autocast off, no grad), with the
    module's buffers (BatchNorm statistics) and the RNG state put back afterwards. None when it
    cannot be re-run: no inputs were kept, the module needs keyword arguments or takes part in
    collectives (`runs_collectives`), its weights are not float32 themselves, or they are no
    longer the forward's (non-finite: the optimizer already applied the failing gradient).
    """
    if not args or runs_collectives(module):
        return None
    params = list(module.parameters())
    if any(p.dtype != torch.float32 for p in params if p.is_floating_point()):
        return None  # a model cast to half: its own weights are half, nothing to compare with
    if params and not all(bool(torch.isfinite(local(p.detach())).all()) for p in params):
        return None  # the optimizer already stepped with the non-finite gradient (no scaler)
    device = next((a.device for a in iter_tensors(args)), torch.device("cpu"))
    try:
        with preserved(module), torch.no_grad(), torch.autocast(device.type, enabled=False):
            out = module(*_float32(args))
    except Exception:  # a module that cannot run detached from its call site: no answer
        return None
    outs = [t for t in iter_tensors(out) if t.is_floating_point()]
    if not outs:
        return None
    finite = all(bool(torch.isfinite(t).all()) for t in outs)
    max_abs = max(float(t.detach().abs().nan_to_num(nan=math.inf).max()) if t.numel() else 0.0
                  for t in outs)
    return Rerun(finite, max_abs)
