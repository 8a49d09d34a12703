"""What several test modules build the same way: a monitored training loop on random batches
(`train_monitored`) and tiny scenario files written into temporary suites (`write_suite`, the
contract in docs/scenarios.md)."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import nn

from causal.schema.run import Run
from neuraldbg import NeuralDbg

REPO = Path(__file__).resolve().parents[2]


def train_monitored(model: nn.Module, steps: int, path: str | None, *, lr: float = 0.01,
                    inputs: tuple[int, ...] = (16, 8), targets: tuple[int, ...] | None = (16, 1),
                    make_batch: Callable[[int, Any, Any], tuple[Any, Any]] | None = None,
                    loss_fn: Callable[..., torch.Tensor] | None = None,
                    preset: str = "standard", amp: torch.dtype | None = None,
                    scaler: bool = False, record_target: bool = False) -> Run | None:
    """SGD on random batches (`inputs` and `targets` shapes, drawn from one generator seeded
    0), the model's output and the loss under autocast when `amp` is set, through a GradScaler
    when `scaler`; `path=None` trains without the monitor. `loss_fn(out, y)`, default MSE
    (`loss_fn(out, None)` without targets); `make_batch(step, x, y)` may replace a batch."""
    torch.manual_seed(0)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    loss_fn = loss_fn or nn.functional.mse_loss
    grad_scaler = torch.amp.GradScaler("cpu", enabled=amp is not None) if scaler else None
    g = torch.Generator().manual_seed(0)
    dbg = None if path is None else NeuralDbg(model, path=path, preset=preset,
                                              scaler=grad_scaler)
    if dbg is not None:
        dbg.start()
    try:
        for step in range(steps):
            x = torch.randn(*inputs, generator=g)
            y = torch.randn(*targets, generator=g) if targets is not None else None
            if make_batch is not None:
                x, y = make_batch(step, x, y)
            opt.zero_grad()
            with torch.autocast("cpu", dtype=amp or torch.float16, enabled=amp is not None):
                out = model(x)
                loss = loss_fn(out.float() if amp is not None else out, y)
            if grad_scaler is not None:
                grad_scaler.scale(loss).backward()
            else:
                loss.backward()
            if dbg is not None:
                dbg.record_loss(loss, target=y if record_target else None)
            if grad_scaler is not None:
                grad_scaler.step(opt)
                grad_scaler.update()
            else:
                opt.step()
    finally:
        if dbg is not None:
            dbg.close()
    return dbg.run if dbg is not None else None

TEMPLATE = '''
import torch
from torch import nn

CAUSE = {cause!r}
ORIGIN = None
SOURCE = "tests: a tiny regression"


def build(seed, fixed=False):
    {raise_line}
    g = torch.Generator().manual_seed(seed + {offset})
    w = torch.randn(4, 1, generator=g)
    batches = []
    for step in range(30):
        x = torch.randn(16, 4, generator=g)
        y = x @ w
        if {nan!r} and step == 5 and not fixed:
            x = x.clone()
            x[0, 0] = float("nan")
        batches.append((x, y))
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    return {{"model": model, "optimizer": torch.optim.SGD(model.parameters(), lr=0.05),
            "loss_fn": nn.MSELoss(), "batches": batches, "steps": 30, "amp_dtype": None,
            "scaler": None}}
'''


def write_suite(directory: Path, files: dict[str, tuple[str, bool, str]],
                distinct_seeds: bool = False) -> Path:
    """Write {name: (cause, nan at step 5, a line run first in build)} as scenario files."""
    for i, (name, (cause, nan, raise_line)) in enumerate(files.items()):
        text = TEMPLATE.format(cause=cause, nan=nan, raise_line=raise_line or "pass",
                               offset=100 * i if distinct_seeds else 0)
        (directory / f"{name}.py").write_text(textwrap.dedent(text))
    return directory


# ---------------------------------------------------------------- tasks for worker processes
# (module-level, so that a spawned worker can import them by name)


def square_task(x: int) -> int:
    return x * x


def failing_task(x: int) -> int:
    if x == 2:
        raise ValueError(f"bad input {x}")
    return x


def hanging_task(x: int) -> int:
    import time

    if x == 1:
        time.sleep(60)
    return x


def dying_task(x: int) -> int:
    import os

    if x == 0:
        os._exit(3)  # the worker process dies mid-task
    return x
