"""Find where a quiet step turned non-finite by running its forward passes again.

On a quiet step no hook runs inside the model (that is most of the monitor's cost on small
models), so no module output is kept. When such a step turns non-finite before the optimizer
has applied it, the model still has the weights its forward passes used: each of them is run
again from the random state it began with, under the same autocast, with every module output
kept, and the non-finite hunt reads those. Buffers, the RNG and the modules' own attributes are
put back afterwards (`capture.state_preservation.preserved`), so the run itself is unchanged.
A pass made with other weights (LBFGS updates between the passes of one step), or whose inputs
were changed in place since, is not repeated.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from neuraldbg.capture.forward_calls import ForwardCall, weights_version
from neuraldbg.capture.forward_state import restore

_cpu_generator = torch.default_generator  # what torch.get_rng_state() reads


def repeatable_calls(calls: Sequence[ForwardCall], params: Sequence[torch.Tensor]
                     ) -> list[ForwardCall]:
    """The passes of a step made with the current weights (an optimizer that runs a closure
    updates them between passes), or none when one of those cannot run again (an input
    changed in place since)."""
    weights = weights_version(params)
    now = [c for c in calls if c.weights == weights]
    return now if all(c.repeatable(weights) for c in now) else []


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
