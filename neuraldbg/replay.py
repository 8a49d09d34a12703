"""Find where a quiet step turned non-finite by running its forward passes again.

On a quiet step no hook runs inside the model (that is most of the monitor's cost on small
models), so no module output is kept. When such a step turns non-finite before the optimizer
has applied it, the model still has the weights its forward passes used: each of them is run
again from the random state it began with, under the same autocast, with every module output
kept, and the non-finite hunt reads those. Buffers, the RNG and the modules' own attributes are
put back afterwards (`preserve.preserved`), so the run itself is unchanged. A pass made with
other weights (LBFGS updates between the passes of one step), or whose inputs were changed in
place since, is not repeated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import torch

from neuraldbg.forward_state import EMPTY, Snapshot, restore
from neuraldbg.stats import iter_tensors

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


def repeatable_calls(calls: Sequence[ForwardCall], params: Sequence[torch.Tensor]
                     ) -> list[ForwardCall]:
    """The passes of a step made with the current weights (an optimizer that runs a closure
    updates them between passes), or none when one of those cannot run again (an input
    changed in place since)."""
    weights = weights_version(params)
    now = [c for c in calls if c.weights == weights]
    return now if all(c.repeatable(weights) for c in now) else []


def weights_version(params: Sequence[torch.Tensor]) -> int:
    """Changes whenever any of `params` is modified in place (`.data` writes excepted)."""
    return sum([p._version for p in params])


def _versions(args: Any, kwargs: Any) -> tuple[int, ...]:
    if not kwargs and all(type(a) is torch.Tensor for a in args):  # the common call: model(x)
        return tuple([a._version for a in args])
    return tuple(t._version for t in iter_tensors((args, kwargs)))


def run_again(model: torch.nn.Module, call: ForwardCall) -> Any:
    """`model(*args, **kwargs)` as the original pass ran it (the caller keeps the outputs and
    puts buffers and RNG back)."""
    _cpu_generator.set_state(call.rng)
    if call.cuda_rng is not None:
        torch.cuda.set_rng_state(call.cuda_rng)
    restore(call.state)
    with torch.enable_grad(), torch.autocast(call.device, dtype=call.amp,
                                             enabled=call.amp is not None):
        return model(*call.args, **call.kwargs)
