"""Where a forward pass's values come from, for the parts of it that leave no autograd history.

The layer DAG is normally read off `grad_fn` chains (`graph/forward_recorder.py`). A forward that
runs
part of the model with gradients off leaves no chain there: reentrant activation checkpointing
(`torch.utils.checkpoint(..., use_reentrant=True)`, Hugging Face's
`gradient_checkpointing_enable()`) runs each checkpointed block under `no_grad` and hands back
its output with one `CheckpointFunctionBackward` that jumps from the block's inputs to its
output; a frozen teacher or a target network may run under `no_grad` inside `forward` too.

`Provenance` is a `TorchFunctionMode` that follows values instead: every torch call's outputs
carry the union of the layer calls its tensor arguments carry, and a layer call's outputs are
re-tagged with that call alone when its forward hook records it. What a layer's output carries
when it is recorded is then exactly the set of earlier layer calls that feed it, as a `grad_fn`
walk would find them, with or without gradients. Only passes that record the DAG run under it.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from neuraldbg.capture.function_modes import call_as_user, leave

_NONE: frozenset[int] = frozenset()
_SETITEM = torch.Tensor.__setitem__


def _tensors(obj: Any) -> Iterable[torch.Tensor]:
    """Tensors among a call's arguments or outputs, one level into lists, tuples and dicts."""
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            if isinstance(x, torch.Tensor):
                yield x
    elif isinstance(obj, dict):
        for x in obj.values():
            if isinstance(x, torch.Tensor):
                yield x


class Provenance(TorchFunctionMode):
    """Tags tensors with the layer calls (indices) their values come from."""

    def __init__(self) -> None:
        super().__init__()
        # id(tensor) -> (layer calls, the tensor, weakly: an id is reused once it is freed)
        self._tags: dict[int, tuple[frozenset[int], weakref.ref[torch.Tensor]]] = {}
        self.inert = False  # left on the mode stack under a mode pushed later: do nothing

    def __torch_function__(self, func: Any, types: Any, args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        kwargs = kwargs or {}
        out = call_as_user(func, args, kwargs)
        if self.inert:
            return out
        src = self.sources(args)
        if kwargs:
            src = src | self.sources(kwargs.values())
        if src:
            # `x[i] = y` returns nothing: what changed is its first argument
            targets = _tensors(out) if func is not _SETITEM else _tensors(args[:1])
            for t in targets:
                have = self.get(t)
                # an in-place call returns its own argument: it now holds both
                self._tags[id(t)] = (have | src, weakref.ref(t))
        return out

    def get(self, t: torch.Tensor) -> frozenset[int]:
        """The layer calls tensor `t` comes from (empty: none known)."""
        hit = self._tags.get(id(t))
        return hit[0] if hit is not None and hit[1]() is t else _NONE

    def sources(self, objs: Iterable[Any]) -> frozenset[int]:
        """The union of what the tensors among `objs` come from."""
        out = _NONE
        for obj in objs:
            for t in _tensors(obj):
                got = self.get(t)
                if got:
                    out = out | got
        return out

    def tag(self, t: torch.Tensor, call: int) -> None:
        """Tensor `t` is layer call `call`'s output."""
        self._tags[id(t)] = (frozenset((call,)), weakref.ref(t))

    def start(self) -> None:
        self.__enter__()

    def stop(self) -> None:
        """Leave the mode stack (also after a forward that raised); forget every tag."""
        if not leave(self):  # a mode pushed after this one is still on: this one stays, inert
            self.inert = True
        self._tags.clear()
