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
as `((out - y) ** 2).mean()` alike. No host synchronisation: the targets' moments are device
reductions, fetched with the step's other values.

A target the loss reshapes beside a reshaped output (`F.mse_loss(out.reshape(-1),
y.reshape(-1))`, a sequence model's targets flattened over time) is no longer batch-sized; it
is traced back to the batch's `y` as well.

Integer class labels have no scale; they are reported too (`F.cross_entropy(out, y)`, `nll_loss`,
`out.gather(1, y[:, None])`, a flattened `y.view(-1)` traced back to `y`), for their entropy: the
loss of a model that predicts only the labels' frequencies. Indices the loss makes itself
(`torch.arange(n)` to pick each row's logit) are not labels.

A target the loss computed itself from batch data before comparing (`(y - y.mean()) / y.std()`,
a MASE's scale from the history) is traced back: what is reported is the data it was computed
from, as the loop would have passed it, so a value the loss's own op made non-finite is born in
the loss, not in the data. A computed target with no such data behind it (one-hot floats of
integer labels, weights indexed from a table) is reported itself.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from neuraldbg.capture.function_modes import call_as_user, remove
from neuraldbg.capture.model_io import is_class_labels
from neuraldbg.capture.tensor_stats import iter_tensors


class TensorTable:
    """Values kept for tensors by identity, for as long as each tensor lives. A bare `id()`
    would not do: the loss's intermediates are freed while the watch runs, and a tensor made
    after one of them is often given its id (a target then taken for a value of the model's
    side, found on some runs and not on others)."""

    def __init__(self) -> None:
        self._rows: dict[int, tuple[weakref.ref[torch.Tensor], Any]] = {}

    def put(self, t: torch.Tensor, value: Any = True) -> None:
        self._rows[id(t)] = (weakref.ref(t), value)

    def get(self, t: torch.Tensor, default: Any = None) -> Any:
        row = self._rows.get(id(t))
        return row[1] if row is not None and row[0]() is t else default

    def __contains__(self, t: object) -> bool:
        row = self._rows.get(id(t))
        return row is not None and row[0]() is t

    def clear(self) -> None:
        self._rows.clear()


#: Calls looked at per step: a loss region longer than this is not a loss (an evaluation loop).
MAX_CALLS = 256


class TargetWatch(TorchFunctionMode):
    """Reports each target-like tensor (floating-point targets, integer class labels) once per
    step to `found(tensor)`."""

    def __init__(self, found: Callable[[torch.Tensor], None]) -> None:
        super().__init__()
        self.found = found
        self.batch = -1  # the model output's batch size; -1: not watching
        self.calls = 0
        self.seen = TensorTable()
        self.derived = TensorTable()  # tensors computed from the model's outputs
        # tensors computed while watching from data alone: (the batch data, the batch's class
        # labels) behind each
        self.behind = TensorTable()
        # every tensor made while watching (an index the loss makes, `torch.arange(n)`, is no
        # label)
        self.made = TensorTable()
        self.on = False

    def begin(self, output: Any) -> None:
        """The model's forward pass ended with `output`: watch until `end()`."""
        out = next((t for t in iter_tensors(output) if t.dim() >= 1 and t.requires_grad), None)
        if out is None or self.on:
            return
        self.batch, self.calls = int(out.shape[0]), 0
        self._forget()
        self.__enter__()
        self.on = True

    def end(self) -> None:
        if not self.on:
            return
        self.on = False
        self.batch = -1
        self._forget()
        remove(self)  # modes pushed after it (the user's, another monitor's) stay on

    def _forget(self) -> None:
        self.seen.clear()
        self.derived.clear()
        self.behind.clear()
        self.made.clear()

    def __torch_function__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if self.batch < 0 or self.calls >= MAX_CALLS:
            return call_as_user(func, args, kwargs)
        self.calls += 1
        model_side = False
        tensors: list[torch.Tensor] = []
        try:  # under no_grad too: a value computed there from the outputs is still theirs
            tensors = list(iter_tensors((args, kwargs)))
            model_side = self._look(tensors, torch.is_grad_enabled())
        except Exception:  # looking must never break the user's loss
            self.batch = -1
        result = call_as_user(func, args, kwargs)
        if self.batch < 0:
            return result
        results = list(iter_tensors(result))
        if model_side:  # what this call computed comes from the model's outputs
            for t in results:
                self.derived.put(t)
        elif tensors:  # computed from data alone: keep the batch data behind it
            row = (self._behind(tensors), self._labels_behind(tensors))
            for t in results:
                self.behind.put(t, row)
        given = {id(t) for t in tensors}  # `y.to(device)` may return `y` itself: not made
        for t in results:
            if id(t) not in given:
                self.made.put(t)
        return result

    def _behind(self, tensors: list[torch.Tensor]) -> tuple[torch.Tensor, ...]:
        """The batch data the values `tensors` come from: each one's own sources when it was
        computed while watching, else itself when it looks like a target."""
        out: dict[int, torch.Tensor] = {}
        for t in tensors:
            data = self._data_behind(t)
            for s in data if data is not None else (t,):
                if self._target_like(s):
                    out.setdefault(id(s), s)
        return tuple(out.values())

    def _labels_behind(self, tensors: list[torch.Tensor]) -> tuple[torch.Tensor, ...]:
        """The batch's class labels the values `tensors` come from (`_behind` for labels): a
        tensor made while watching stands only for the labels it was computed from, one alive
        before it for itself."""
        out: dict[int, torch.Tensor] = {}
        for t in tensors:
            row = self.behind.get(t)
            labels = row[1] if row is not None else (() if t in self.made else (t,))
            for s in labels:
                if self._label_like(s):
                    out.setdefault(id(s), s)
        return tuple(out.values())

    def _data_behind(self, t: torch.Tensor) -> tuple[torch.Tensor, ...] | None:
        """The batch data `t` was computed from while watching; None when it was not."""
        row = self.behind.get(t)
        return row[0] if row is not None else None

    def _label_like(self, t: torch.Tensor) -> bool:
        return is_class_labels(t) and t not in self.derived and t.shape[0] == self.batch

    def _target_like(self, t: torch.Tensor) -> bool:
        return (not t.requires_grad and t not in self.derived and t.is_floating_point()
                and not isinstance(t, nn.Parameter) and t.dim() >= 1 and t.numel() > 1
                and t.shape[0] == self.batch)

    def _look(self, tensors: list[torch.Tensor], report: bool) -> bool:
        """Report the call's targets (when `report`); whether it takes a value of the model's
        side. A target computed while watching is reported as the data behind it."""
        model = [t for t in tensors if t.requires_grad or t in self.derived]
        if not model or not report:
            return bool(model)
        for t in tensors:
            if not t.is_floating_point():
                data = self._labels_behind([t])
            elif t.requires_grad or t in self.derived:
                continue  # the model's side
            else:  # the data behind a value computed while watching (a target the loss
                # reshaped beside a reshaped output too), else the value when it looks like one
                data = self._data_behind(t) or ((t,) if self._target_like(t) else ())
            for s in data:
                if s not in self.seen:
                    self.seen.put(s)
                    self.found(s)
        return True

