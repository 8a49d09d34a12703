"""Scenario files (the contract in docs/scenarios.md): load one by path and train it, under the
monitor or not.

A scenario is a Python file with CAUSE, ORIGIN, SOURCE and build(seed, fixed=False) -> dict
(model, optimizer, loss_fn, batches, steps, amp_dtype, scaler). `datasets/` has no __init__.py,
so files are loaded by path.
"""

from __future__ import annotations

import importlib.util
import math
import os
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from causal.schema.run import Run
from neuraldbg.capture.tensor_stats import iter_tensors
from neuraldbg.errors import ScenarioError

_KEYS = ("model", "optimizer", "loss_fn", "batches")



@dataclass(frozen=True)
class Scenario:
    path: Path
    cause: str
    origin: str | None
    source: str
    module: ModuleType

    @property
    def name(self) -> str:
        return self.path.stem

    def build(self, seed: int, fixed: bool = False) -> dict[str, Any]:
        """The scenario's run for `seed`; the global random generators are seeded with it
        first, so that a run does not depend on what ran before it in the process."""
        seed_everything(seed)
        spec = self.module.build(seed, fixed=fixed)
        missing = [k for k in _KEYS if k not in spec]
        if missing:
            raise ScenarioError(f"{self.path.name}: build() returned no {missing}; it must "
                                f"return {list(_KEYS)} (+ steps, amp_dtype, scaler)")
        return spec


def load_scenario(path: str | os.PathLike[str]) -> Scenario:
    """Import a scenario file by path and check its contract."""
    p = Path(path)
    spec = importlib.util.spec_from_file_location(f"ndbg_scenario_{p.stem}", p)
    if spec is None or spec.loader is None:
        raise ScenarioError(f"{p}: not a loadable Python file")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for attr in ("CAUSE", "ORIGIN", "SOURCE", "build"):
        if not hasattr(module, attr):
            raise ScenarioError(f"{p.name}: missing {attr}; a scenario defines CAUSE, ORIGIN, "
                                "SOURCE and build(seed, fixed=False)")
    return Scenario(p, str(module.CAUSE), None if module.ORIGIN is None else str(module.ORIGIN),
                    str(module.SOURCE), module)


def scenario_files(directory: str | os.PathLike[str]) -> list[Path]:
    """The scenario files under `directory`, subfolders included (names starting with `_` are
    helpers, not scenarios). A family is a file stem, so two files may not share one."""
    files = sorted((p for p in Path(directory).rglob("*.py") if not p.name.startswith("_")),
                   key=lambda p: (p.stem, str(p)))
    seen: dict[str, Path] = {}
    for path in files:
        if path.stem in seen:
            raise ScenarioError(f"two scenario files share the family name {path.stem!r}: "
                                f"{seen[path.stem]} and {path}; rename one")
        seen[path.stem] = path
    return files


#: How the monitor is attached to the canonical loop: "readme", the README's three lines
#: (`record_loss(loss)`, the scaler only when the scenario has one), which is how users run it
#: and what accuracy is measured with; "full", the targets passed too (`record_loss(loss,
#: target=y)`), for comparison.
INSTRUMENTS = ("readme", "full")


def check_instrument(instrument: str) -> None:
    if instrument not in INSTRUMENTS:
        raise ScenarioError(f"unknown instrument {instrument!r}: use one of {INSTRUMENTS}")


def seed_everything(seed: int) -> None:
    """Seed Python's, numpy's and torch's global generators."""
    import random

    import numpy as np

    random.seed(seed)
    np.random.seed(seed % (2**32))
    torch.manual_seed(seed)


def _moved(obj: Any, device: torch.device) -> Any:
    """`obj` with every tensor in it (nested tuples, lists, dicts) on `device`."""
    if isinstance(obj, torch.Tensor):
        return obj.to(device)
    if isinstance(obj, tuple):
        return tuple(_moved(o, device) for o in obj)
    if isinstance(obj, list):
        return [_moved(o, device) for o in obj]
    if isinstance(obj, dict):
        return {k: _moved(v, device) for k, v in obj.items()}
    return obj


def on_device(spec: dict[str, Any], device: str | torch.device) -> dict[str, Any]:
    """A scenario's run moved to `device`: the model (its parameters move in place, so the
    optimizer keeps them) and any optimizer state, the batches, and a GradScaler for that
    device with the scenario scaler's state. Code of the scenario's own that makes tensors (a
    mask, a constant in its loss) stays where it makes them."""
    device = torch.device(device)
    spec = dict(spec)
    spec["model"].to(device)
    for state in spec["optimizer"].state.values():
        for k, v in list(state.items()):
            if isinstance(v, torch.Tensor):
                state[k] = v.to(device)
    spec["batches"] = _moved(spec["batches"], device)
    scaler = spec.get("scaler")
    if scaler is not None:
        moved = torch.amp.GradScaler(device.type, enabled=scaler.is_enabled())
        if scaler.is_enabled():
            moved.load_state_dict(scaler.state_dict())
        spec["scaler"] = moved
    return spec


def train(spec: dict[str, Any], monitor_path: str | os.PathLike[str] | None = None,
          instrument: str = "readme", device: str | torch.device = "cpu"
          ) -> tuple[list[float], Run | None]:
    """The canonical loop: zero_grad, forward (model(*x) for tuples), loss (under autocast when
    amp_dtype is set), backward and step (through the scaler when given). Returns the losses
    and, with `monitor_path`, the run recorded by NeuralDbg there, attached as `instrument`
    says (`INSTRUMENTS`). On another `device` than the CPU the run is moved there first
    (`on_device`) and autocast is that device's."""
    check_instrument(instrument)
    from neuraldbg.monitor import NeuralDbg

    device = torch.device(device)
    if device.type != "cpu":
        spec = on_device(spec, device)
    model, opt, loss_fn = spec["model"], spec["optimizer"], spec["loss_fn"]
    batches = spec["batches"]
    steps = int(spec.get("steps") or len(batches))
    amp, scaler = spec.get("amp_dtype"), spec.get("scaler")
    losses: list[float] = []
    # a suite's runs fail on purpose: no live alert, and no scene (nothing re-runs them)
    dbg = NeuralDbg(model, path=monitor_path, scaler=scaler, on_nonfinite="record",
                    scene_max_mb=0) if monitor_path else None
    if dbg is not None:
        dbg.start()
    try:
        for step in range(steps):
            x, y = batches[step % len(batches)]
            opt.zero_grad()
            with torch.autocast(device.type, dtype=amp, enabled=amp is not None):
                out = model(*x) if isinstance(x, tuple) else model(x)
                loss = loss_fn(out, y)
            if scaler is not None:
                scaler.scale(loss).backward()
            else:
                loss.backward()
            if dbg is not None and instrument == "full":
                dbg.record_loss(loss, target=y if next(iter_tensors(y), None) is not None else None)
            elif dbg is not None:
                dbg.record_loss(loss)
            if scaler is not None:
                scaler.step(opt)
                scaler.update()
            else:
                opt.step()
            value = float(loss.detach())
            losses.append(value)
            if not math.isfinite(value) and len(losses) > 3 and not all(
                    math.isfinite(v) for v in losses[-3:]):
                break  # a few steps past the failure is enough evidence
    finally:
        if dbg is not None:
            dbg.close()
    return losses, (dbg.run if dbg is not None else None)
