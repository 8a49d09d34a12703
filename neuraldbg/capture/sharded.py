"""Sharded parameters (FSDP2's `fully_shard`, tensor parallelism): each rank reads its own shard.

A DTensor parameter stands for the whole tensor spread over the ranks of a device mesh, and torch
answers an op on it (a norm, a copy, `.tolist()`) with collectives across those ranks. The
monitor must never start a collective of its own: the ranks would wait on each other at points
their training loop does not share (one rank halting on a non-finite value, another still
training). So every statistic of a sharded weight or gradient is of this rank's shard
(`DTensor.to_local()`, no communication): its norms are the shard's, and a non-finite value is
found on the rank whose shard holds it. `neuraldbg diagnose` over the ranks' files
(`causal/ranks.py`) puts the shards' stories together.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch

__all__ = ["is_sharded", "local", "local_all"]


def is_sharded(t: object) -> bool:
    """Whether `t` is a DTensor (it has a device mesh and a local shard)."""
    return hasattr(t, "device_mesh") and hasattr(t, "to_local")


def local(t: torch.Tensor) -> torch.Tensor:
    """This rank's shard of a DTensor (no communication); any other tensor as it is."""
    return t.to_local() if is_sharded(t) else t  # type: ignore[attr-defined]


def local_all(ts: Iterable[torch.Tensor | None]) -> list[torch.Tensor | None]:
    """`local` of each tensor, None kept."""
    return [None if t is None else local(t) for t in ts]
