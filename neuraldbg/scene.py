"""The crime scene: what produced a run's first non-finite step, saved beside the run file
(`RUN.scene.pt`) before the update is applied, so the step can be re-run and the cause tested.

It holds the step's model inputs and targets as the monitor saw them, the model's state_dict and
the optimizer's state before the update, the RNG states, the autocast dtype, the GradScaler's
state and the learning rates. Quiet steps pay nothing: the monitor keeps references only, and
copies when a step is known to fail, before its update. The file is bounded by `max_mb`: past
it, the parts that do not fit are left out (largest last: inputs and targets first, then the
optimizer's state... see `PRIORITY`), and `left_out` says which. Read it with
`torch.load(path, weights_only=True)`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import torch

from neuraldbg.capture.sharded import is_sharded, local

#: The parts kept first when the scene does not fit in `max_mb`.
PRIORITY = ("inputs", "targets", "learning_rates", "rng", "scaler", "model_state",
            "optimizer_state", "checkpoint")


def scene_path(run_path: str | Path) -> Path:
    """Where the scene of a run file goes: beside it, `RUN.scene.pt`."""
    p = Path(run_path)
    return p.with_name(p.stem + ".scene.pt")


def copied(obj: Any) -> Any:
    """Tensors detached and cloned to the CPU, containers rebuilt, other values as they are
    when torch.load's safe loader takes them (else their repr). A sharded DTensor (FSDP2,
    tensor parallelism) is copied as this rank's shard: no collective (`capture.sharded`)."""
    if isinstance(obj, torch.Tensor):
        return local(obj).detach().to("cpu", copy=True)
    if isinstance(obj, dict):
        return {str(k) if not isinstance(k, int) else k: copied(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [copied(v) for v in obj]
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    return repr(obj)


def _nbytes(obj: Any) -> int:
    if isinstance(obj, torch.Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, dict):
        return sum(_nbytes(v) for v in obj.values())
    if isinstance(obj, list):
        return sum(_nbytes(v) for v in obj)
    return 64


def save_scene(path: str | Path, *, step: int, model: torch.nn.Module,
               optimizer: torch.optim.Optimizer | None, model_calls: Iterable[tuple[Any, Any]],
               targets: Iterable[torch.Tensor], amp: str, scaler: Any,
               max_mb: float, checkpoint: dict[str, Any] | None = None) -> Path:
    """Write the scene of `step` to `path` (before the update); the path. `checkpoint`: the
    steps before it (`neuraldbg.checkpoint.StepLog.export`), when kept."""
    parts: dict[str, Any] = {
        "inputs": [{"args": copied(args), "kwargs": copied(kwargs)}
                   for args, kwargs in model_calls],
        "targets": [copied(t) for t in targets],
        "learning_rates": [float(g["lr"]) for g in optimizer.param_groups]
        if optimizer is not None else [],
        "rng": {"cpu": torch.get_rng_state(),
                "cuda": list(torch.cuda.get_rng_state_all())
                if torch.cuda.is_available() and torch.cuda.is_initialized() else []},
        "scaler": copied(scaler.state_dict()) if scaler is not None else None,
        "model_state": copied(model.state_dict()),
        "optimizer_state": copied(optimizer.state_dict()) if optimizer is not None else None,
        "checkpoint": checkpoint,  # `neuraldbg.checkpoint`: the steps before, to replay
    }
    budget = max_mb * 2**20
    scene: dict[str, Any] = {"step": step, "autocast_dtype": amp, "left_out": [],
                             # the weights are this rank's shards (FSDP2 / tensor parallel)
                             "sharded": any(is_sharded(t) for t in model.state_dict().values())}
    for name in PRIORITY:
        size = _nbytes(parts[name])
        if size <= budget:
            scene[name] = parts[name]
            budget -= size
        else:
            scene["left_out"].append(f"{name} ({size / 2**20:.1f} MB)")
    out = Path(path)
    torch.save(scene, out)
    return out
