"""Run a model outside the training loop and leave no trace: `preserved(model)` puts back every
buffer (BatchNorm running statistics, counters) and the CPU/CUDA random generators afterwards.
Used by the DAG fallback's real forward pass, the replay of a quiet step and the float32 re-run
on a failing step. `runs_collectives` says when an extra forward must not run at all."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import torch
from torch import nn

_COLLECTIVE_MODULES = ("SyncBatchNorm", "FullyShardedDataParallel", "FSDPModule",
                       "DistributedDataParallel")


def runs_collectives(model: nn.Module) -> bool:
    """Whether a forward of `model` may take part in collective communication: one rank running
    an extra forward alone would wait forever for the others (SyncBatchNorm, FSDP, DDP's
    buffer broadcast), so in a multi-process group such forwards are not run again."""
    dist = torch.distributed
    if not (dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1):
        return False
    return any(c.__name__ in _COLLECTIVE_MODULES
               for m in model.modules() for c in type(m).__mro__)


_MISSING = object()


def module_generators(modules: Iterable[nn.Module]) -> list[torch.Generator]:
    """The random generators modules keep as attributes (`self.noise = torch.Generator()`,
    drawn from with `torch.randn(..., generator=self.noise)`), each once."""
    found: dict[int, torch.Generator] = {}
    for module in modules:
        for value in vars(module).values():
            if isinstance(value, torch.Generator):
                found.setdefault(id(value), value)
    return list(found.values())


def _same_items(now: Any, saved: Any) -> bool:
    """Same length and the same objects (by identity: tensors must not be compared by value)."""
    if len(now) != len(saved):
        return False
    if isinstance(now, list):
        return all(a is b for a, b in zip(now, saved, strict=True))
    return all(k in saved and now[k] is saved[k] for k in now)


@contextmanager
def preserved(model: nn.Module) -> Iterator[None]:
    """Snapshot `model`'s buffers, its modules' own attributes and the RNG states (the global
    generators and those the modules keep); restore all on exit (also on error). Attributes
    are put back as objects (a counter or flag that a forward rebinds, `self.calls += 1`,
    returns to its value; one it creates goes away), and the contents of a module's own public
    lists and dicts too (`self.history.append(...)`)."""
    modules = list(model.modules())
    snap = [(module, key, buf, buf.detach().clone())
            for module in modules
            for key, buf in module._buffers.items() if buf is not None]
    attrs = [(module, dict(vars(module))) for module in modules]
    contents = [(v, list(v) if isinstance(v, list) else dict(v))
                for _, saved in attrs for k, v in saved.items()
                if not k.startswith("_") and isinstance(v, (list, dict))]
    generators = [(g, g.get_state()) for g in module_generators(modules)]
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
        for module, saved_attrs in attrs:
            now = vars(module)
            for key in [k for k in now if k not in saved_attrs]:
                del now[key]  # set by the extra forward (a lazily built cache)
            for key, value in saved_attrs.items():
                if now.get(key, _MISSING) is not value:
                    now[key] = value
        for container, items in contents:
            if not _same_items(container, items):
                if isinstance(container, list):
                    container[:] = items
                else:
                    container.clear()
                    container.update(items)
        for g, state in generators:
            g.set_state(state)
        torch.set_rng_state(cpu_rng)
        if cuda_rng is not None:
            torch.cuda.set_rng_state_all(cuda_rng)
