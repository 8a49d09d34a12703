"""What the monitor reads off the model's own call: the input batch among its arguments, and a
loss the model returns itself.

The input batch is the first floating-point tensor of at least one dimension among the
arguments (positional first, then keyword; inside tuples, lists and dicts), leaving out those
passed for a mask or for labels (a parameter or dict key named like `attention_mask`, `src_mask`
or `labels`): an additive attention mask holds -inf by design, and labels are the loss's
targets, not the model's input. A 0-d tensor is a setting, not a batch: Hugging Face's Trainer
passes `num_items_in_batch`, a token count, to every forward; a diffusion model may take its
timestep or noise level. Token ids and class labels are categories with no scale, so a model
called with only those has no input batch to measure.

A model that computes its own loss (a Hugging Face model given `labels`) returns it as `loss` in
its output; `model_loss` finds it, and `model_targets` takes floating-point `labels` for the
targets, so that `with NeuralDbg(model): trainer.train()` records the loss and the targets of a
loop the user does not write.
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Iterator, Mapping
from typing import Any

import torch
from torch import nn


class ArgNames:
    """The names of the model's positional forward parameters, in order (none when its
    signature cannot be read), and which of them are left out of the input batch (read once:
    `batch_input` runs at every step)."""

    def __init__(self, names: tuple[str, ...] = ()) -> None:
        self.names = names
        self.first_left_out = bool(names) and _left_out(names[0])

    @classmethod
    def of(cls, model: nn.Module) -> ArgNames:
        try:
            params = inspect.signature(model.forward).parameters.values()
        except (TypeError, ValueError):
            return cls()
        kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        return cls(tuple(p.name for p in params if p.kind in kinds))

    def __getitem__(self, i: int) -> str | None:
        return self.names[i] if i < len(self.names) else None


def _left_out(name: str | None) -> bool:
    """An argument named for a mask (`mask`, `attention_mask`, `src_key_padding_mask`; not
    `masked_images`) or for the labels."""
    if not name:
        return False
    words = name.lower().split("_")
    return "mask" in words or "masks" in words or words in (["labels"], ["label"])


def _named(obj: Any, name: str | None, depth: int = 0) -> Iterator[tuple[str | None, torch.Tensor]]:
    """(name, tensor) inside an argument: a dict's key names what it holds, a tuple's or list's
    items keep the name of the argument they were passed for."""
    if isinstance(obj, torch.Tensor):
        yield name, obj
    elif depth < 4 and isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _named(o, name, depth + 1)
    elif depth < 4 and isinstance(obj, Mapping):
        for k, o in obj.items():
            yield from _named(o, str(k), depth + 1)


def _is_batch(t: torch.Tensor) -> bool:
    return t.is_floating_point() and t.dim() > 0 and t.numel() > 0


def batch_input(args: tuple[Any, ...], kwargs: Mapping[str, Any], names: ArgNames
                ) -> torch.Tensor | None:
    """The input batch of one call of the model (see the module docstring), or None."""
    if args and type(x := args[0]) is torch.Tensor and _is_batch(x) and not names.first_left_out:
        return x  # the common call: model(x)
    return next((t for _, t in call_tensors(args, kwargs, names) if t.dim() > 0), None)


def call_tensors(args: tuple[Any, ...], kwargs: Mapping[str, Any], names: ArgNames
                 ) -> Iterator[tuple[str | None, torch.Tensor]]:
    """(argument name, tensor) of every non-empty floating-point tensor a call of the model
    was given, in order (positional first), masks and labels left out (see the module
    docstring)."""
    named = itertools.chain(
        (item for i, a in enumerate(args) for item in _named(a, names[i])),
        (item for key, a in kwargs.items() for item in _named(a, key)))
    for name, t in named:
        if t.is_floating_point() and t.numel() and not _left_out(name):
            yield name, t


def model_targets(kwargs: Mapping[str, Any]) -> torch.Tensor | None:
    """The targets of a model that computes its own loss: floating-point `labels` passed by
    keyword (a regression's values; class labels and token ids are categories, no scale)."""
    y = kwargs.get("labels")
    return y if isinstance(y, torch.Tensor) and _is_batch(y) else None


def is_class_labels(t: object) -> bool:
    """Whether `t` looks like a batch of class labels: an integer (not boolean) tensor with a
    batch dimension."""
    return (isinstance(t, torch.Tensor) and not t.is_floating_point() and not t.is_complex()
            and t.dtype != torch.bool and t.dim() > 0 and t.numel() > 1)


def model_labels(kwargs: Mapping[str, Any]) -> torch.Tensor | None:
    """The class labels (token ids) of a model that computes its own loss: integer `labels`
    passed by keyword (`is_class_labels`)."""
    y = kwargs.get("labels")
    return y if is_class_labels(y) else None


def loss_is_share(kwargs: Mapping[str, Any]) -> bool:
    """Whether the loss the model returns is its micro-batch's share of the step's summed loss:
    Hugging Face's Trainer passes `num_items_in_batch`, the step's item count, to divide by."""
    return "num_items_in_batch" in kwargs


def model_loss(output: Any) -> torch.Tensor | None:
    """The loss a model returned itself: a one-element floating-point tensor with a gradient,
    under `loss` in its output (a Hugging Face `ModelOutput` or a dict); else None."""
    if type(output) is torch.Tensor or not isinstance(output, Mapping):
        return None
    loss = output.get("loss")
    if (isinstance(loss, torch.Tensor) and loss.numel() == 1 and loss.is_floating_point()
            and loss.grad_fn is not None):
        return loss
    return None


#: How many autograd nodes `records_model_loss` looks through from the recorded loss.
LOSS_NODES_LOOKED = 8


def records_model_loss(loss: Any, model_node: Any) -> bool:
    """Whether the loss the loop records is (made from) the loss the model returned: its graph
    reaches `model_node` within a few nodes (`out.loss`, `out.loss / accumulation`,
    `out.loss.mean()` over replicas, `out.loss + aux`)."""
    if model_node is None or not isinstance(loss, torch.Tensor) or loss.grad_fn is None:
        return False
    todo, seen = [loss.grad_fn], 0
    while todo and seen < LOSS_NODES_LOOKED:
        node = todo.pop(0)
        seen += 1
        if node is model_node:
            return True
        todo += [n for n, _ in node.next_functions if n is not None]
    return False
