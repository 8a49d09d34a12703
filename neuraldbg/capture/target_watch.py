"""The step's targets when the loop does not pass them: found where the loss compares the model's
output with something.

Users write `dbg.record_loss(loss)` (the README's loop), mostly after `loss.backward()`, when the
loss's autograd graph has already freed what it saved: the targets can no longer be read from it.
So from the end of the model's forward pass until the loop records the loss (or the optimizer
steps), the monitor watches the torch functions the loop calls (`TargetWatch`, a function mode):
a call that combines a tensor carrying gradients (the output, or a value computed from it) with a
floating-point tensor that carries none, is not a parameter, has the output's batch size and was
not itself computed from the model's outputs (a detached prediction, weights made from one) is
the loss taking its target: `F.mse_loss(out, y)`, `F.binary_cross_entropy_with_logits`, a
Gaussian or Poisson NLL, a KL divergence, soft cross-entropy labels, and hand-written losses such
as `((out - y) ** 2).mean()` alike. Integer class labels have no scale and are left out, as they
are when passed. No host synchronisation: the targets' moments are device reductions, fetched with
the step's other values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from neuraldbg.capture.function_modes import call_as_user, remove
from neuraldbg.capture.tensor_stats import iter_tensors

#: Calls looked at per step: a loss region longer than this is not a loss (an evaluation loop).
MAX_CALLS = 256


class TargetWatch(TorchFunctionMode):
    """Reports each target-like tensor once per step to `found(tensor)`."""

    def __init__(self, found: Callable[[torch.Tensor], None]) -> None:
        super().__init__()
        self.found = found
        self.batch = -1  # the model output's batch size; -1: not watching
        self.calls = 0
        self.seen: set[int] = set()
        self.derived: set[int] = set()  # tensors computed from the model's outputs
        self.on = False

    def begin(self, output: Any) -> None:
        """The model's forward pass ended with `output`: watch until `end()`."""
        out = next((t for t in iter_tensors(output) if t.dim() >= 1 and t.requires_grad), None)
        if out is None or self.on:
            return
        self.batch, self.calls = int(out.shape[0]), 0
        self.seen.clear()
        self.derived.clear()
        self.__enter__()
        self.on = True

    def end(self) -> None:
        if not self.on:
            return
        self.on = False
        self.batch = -1
        self.seen.clear()
        self.derived.clear()
        remove(self)  # modes pushed after it (the user's, another monitor's) stay on

    def __torch_function__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if self.batch < 0 or self.calls >= MAX_CALLS:
            return call_as_user(func, args, kwargs)
        self.calls += 1
        model_side = False
        try:  # under no_grad too: a value computed there from the outputs is still theirs
            model_side = self._look(list(iter_tensors((args, kwargs))), torch.is_grad_enabled())
        except Exception:  # looking must never break the user's loss
            self.batch = -1
        result = call_as_user(func, args, kwargs)
        if model_side:  # what this call computed comes from the model's outputs
            self.derived.update(id(t) for t in iter_tensors(result))
        return result

    def _look(self, tensors: list[torch.Tensor], report: bool) -> bool:
        """Report the call's targets (when `report`); whether it takes a value of the model's
        side."""
        model = [t for t in tensors if t.requires_grad or id(t) in self.derived]
        if not model or not report:
            return bool(model)
        for t in tensors:
            if (not t.requires_grad and id(t) not in self.derived and t.is_floating_point()
                    and not isinstance(t, nn.Parameter) and t.dim() >= 1 and t.numel() > 1
                    and t.shape[0] == self.batch and id(t) not in self.seen):
                self.seen.add(id(t))
                self.found(t)
        return True

