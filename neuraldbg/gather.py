"""One host-device synchronisation per step: collect device tensors, copy them once."""

from __future__ import annotations

import torch


class Gather:
    """Named 1-D device tensors concatenated and copied to the host in a single transfer."""

    def __init__(self) -> None:
        self._parts: list[torch.Tensor] = []
        self._slices: dict[str, tuple[int, int]] = {}
        self._size = 0

    def add(self, name: str, t: torch.Tensor) -> None:
        t = t.detach().reshape(-1)
        n = t.numel()
        self._slices[name] = (self._size, self._size + n)
        self._parts.append(t)
        self._size += n

    def __bool__(self) -> bool:
        return bool(self._parts)

    def fetch(self) -> dict[str, list[float]]:
        """Copy everything to the host (the one sync) and split it back by name."""
        if not self._parts:
            return {}
        first = self._parts[0]
        device, dtype = first.device, first.dtype
        same = all(p.device == device and p.dtype == dtype for p in self._parts)
        if same and dtype in (torch.float32, torch.float64):
            flat = torch.cat(self._parts)
        else:
            flat = torch.cat([p.to(device=device, dtype=torch.float64) for p in self._parts])
        values = flat.tolist()
        return {name: values[a:b] for name, (a, b) in self._slices.items()}
