"""One host-device synchronisation per step: collect device tensors, copy them once."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import torch


class Gather:
    """Named device tensors copied to the host in one transfer.

    `add_scalars` takes 0-d tensors (the common case: a quiet step is nothing else, and one
    `torch.stack` packs it); `add` takes tensors of any shape, flattened. Values of several
    dtypes are promoted; tensors on several devices are moved to the first one's. After
    `fetch`, `finite` says whether every scalar came back finite (vectors are not checked).

    `cpu=True` (every tensor is in host memory) reads the scalars one by one: there is nothing
    to synchronise on the CPU, and that is cheaper than stacking them first.
    """

    __slots__ = ("_cpu", "_scalar_slices", "_scalars", "_size", "_vector_slices", "_vectors",
                 "finite")

    def __init__(self, cpu: bool = False) -> None:
        self._cpu = cpu
        self._scalars: list[torch.Tensor] = []
        self._vectors: list[torch.Tensor] = []
        self._scalar_slices: dict[str, tuple[int, int]] = {}
        self._vector_slices: dict[str, tuple[int, int]] = {}
        self._size = 0  # of the vectors
        self.finite = True

    def add(self, name: str, t: torch.Tensor) -> None:
        if t.dim() != 1:
            t = t.reshape(-1)
        n = t.shape[0]
        self._vector_slices[name] = (self._size, self._size + n)
        self._vectors.append(t)
        self._size += n

    def add_scalars(self, name: str, ts: Sequence[torch.Tensor]) -> None:
        start = len(self._scalars)
        self._scalars.extend(ts)
        self._scalar_slices[name] = (start, len(self._scalars))

    def __bool__(self) -> bool:
        return bool(self._scalars or self._vectors)

    def fetch(self) -> dict[str, list[float]]:
        """Copy everything to the host (the one sync) and split it back by name."""
        if self._cpu:
            values = list(map(torch.Tensor.item, self._scalars))
            for v in self._vectors:
                values += v.tolist()
        else:
            parts = list(self._vectors)
            if self._scalars:
                parts.insert(0, _join(torch.stack, self._scalars))
            if not parts:
                return {}
            flat = _join(torch.cat, parts) if len(parts) > 1 else parts[0]
            values = flat.tolist()  # the copy to the host
        offset = len(self._scalars)
        # finite iff all are (a float64 sum of float32-range values cannot overflow)
        self.finite = math.isfinite(sum(values[:offset]))
        out = {name: values[a:b] for name, (a, b) in self._scalar_slices.items()}
        for name, (a, b) in self._vector_slices.items():
            out[name] = values[offset + a:offset + b]
        return out


def _join(op: Callable[[list[torch.Tensor]], torch.Tensor], ts: list[torch.Tensor]
          ) -> torch.Tensor:
    """stack/cat `ts`; tensors spread over devices are joined on the first one's, in float64."""
    try:
        return op(ts)
    except RuntimeError:
        device = ts[0].device
        return op([t.to(device=device, dtype=torch.float64) for t in ts])
