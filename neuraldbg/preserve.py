"""Run a model outside the training loop and leave no trace: `preserved(model)` puts back every
buffer (BatchNorm running statistics, counters) and the CPU/CUDA random generators afterwards.
Used by the DAG fallback's real forward pass and by the float32 re-run on a failing step."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch import nn


@contextmanager
def preserved(model: nn.Module) -> Iterator[None]:
    """Snapshot `model`'s buffers and the RNG states; restore both on exit (also on error)."""
    snap = [(module, key, buf, buf.detach().clone())
            for module in model.modules()
            for key, buf in module._buffers.items() if buf is not None]
    cpu_rng = torch.get_rng_state()
    cuda_rng = (torch.cuda.get_rng_state_all()
                if torch.cuda.is_available() and torch.cuda.is_initialized() else None)
    try:
        yield
    finally:
        with torch.no_grad():
            for module, key, buf, saved in snap:
                buf.copy_(saved)
                module._buffers[key] = buf  # a forward that replaced the buffer object
        torch.set_rng_state(cpu_rng)
        if cuda_rng is not None:
            torch.cuda.set_rng_state_all(cuda_rng)
