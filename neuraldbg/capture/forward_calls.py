"""What it takes to run one forward pass of a step again: recorded as the pass begins (the
arguments by reference, the random state, autocast, the inputs' and weights' version counters and
the module state the forward changes). `neuraldbg.nonfinite.replay` runs such a pass again."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import torch

from neuraldbg.capture.forward_state import EMPTY, Snapshot
from neuraldbg.capture.tensor_stats import iter_tensors

_cpu_generator = torch.default_generator  # what torch.get_rng_state() reads


class ForwardCall(NamedTuple):
    """One forward pass of a step, with what it takes to run it again."""

    args: Any
    kwargs: Any
    rng: torch.Tensor  # the CPU generator's state when the pass began
    cuda_rng: torch.Tensor | None  # the current CUDA device's, for a pass on CUDA
    device: str  # device type of its first tensor input
    amp: torch.dtype | None  # the autocast dtype in force, None when autocast was off
    versions: tuple[int, ...]  # version counters of its tensor inputs
    weights: int  # the sum of the parameters' version counters (an in-place update bumps it)
    state: Snapshot = EMPTY  # module state the forward changes, as the pass began

    def repeatable(self, weights: int) -> bool:
        """The weights are still the ones this pass used (an optimizer that runs a closure,
        such as LBFGS, updates them between the passes of one step) and no input was modified
        in place since."""
        return weights == self.weights and _versions(self.args, self.kwargs) == self.versions


def forward_call(args: Any, kwargs: Any, device: str, weights: int,
                 state: Snapshot = EMPTY) -> ForwardCall:
    """What it takes to run this forward pass again; `state`: the module state the forward
    changes, the generators its modules keep included (`ForwardState.snapshot`), as the pass
    begins."""
    amp = torch.get_autocast_dtype(device) if torch.is_autocast_enabled(device) else None
    cuda_rng = torch.cuda.get_rng_state() if device == "cuda" else None  # no sync: host state
    return ForwardCall(args, kwargs, _cpu_generator.get_state(), cuda_rng, device, amp,
                       _versions(args, kwargs), weights, state)


def weights_version(params: Sequence[torch.Tensor]) -> int:
    """Changes whenever any of `params` is modified in place (`.data` writes excepted)."""
    return sum([p._version for p in params])


def _versions(args: Any, kwargs: Any) -> tuple[int, ...]:
    if not kwargs and all(type(a) is torch.Tensor for a in args):  # the common call: model(x)
        return tuple([a._version for a in args])
    return tuple(t._version for t in iter_tensors((args, kwargs)))
