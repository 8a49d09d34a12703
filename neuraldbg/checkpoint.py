"""With `NeuralDbg(checkpoint_every=N)`, what it takes to replay the steps before a failure: the
weights, the optimizer's state and the RNG state copied every N steps (before that step's update),
and references to each step's batch since. The failing step's scene carries them
(`neuraldbg.scene`), and `neuraldbg.replay` re-runs those steps at the lr and at a tenth of it
to confirm a too high lr. Off by default: a copy of the weights every N steps is a real cost."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from neuraldbg.scene import copied


class StepLog:
    """The last checkpoint and the batches since (references until exported)."""

    def __init__(self, every: int) -> None:
        self.every = every
        self.state: dict[str, Any] | None = None
        self.steps: list[dict[str, Any]] = []

    def before_update(self, step: int, model: torch.nn.Module, opt: torch.optim.Optimizer,
                      model_calls: Sequence[tuple[Any, Any]],
                      targets: Sequence[torch.Tensor]) -> None:
        """Called before each update: a checkpoint every `every` steps, the batch every step."""
        if self.state is None or step % self.every == 0:
            self.state = {"step": step, "model_state": copied(model.state_dict()),
                          "optimizer_state": copied(opt.state_dict()),
                          "optimizer_class": f"{type(opt).__module__}.{type(opt).__qualname__}",
                          "rng": torch.get_rng_state()}
            self.steps = []
        self.steps.append({"step": step, "calls": list(model_calls), "targets": list(targets)})

    def export(self) -> dict[str, Any] | None:
        """The checkpoint and the batches since it, copied (None before the first step)."""
        if self.state is None:
            return None
        return {**self.state, "steps": [
            {"step": s["step"], "inputs": [{"args": copied(a), "kwargs": copied(k)}
                                           for a, k in s["calls"]],
             "targets": [copied(t) for t in s["targets"]]} for s in self.steps]}
