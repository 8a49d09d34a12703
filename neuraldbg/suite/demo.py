"""The bundled failing run: a deep tanh MLP trained with plain SGD until it goes non-finite."""

from __future__ import annotations

import math
from pathlib import Path

import torch
from torch import nn

from causal.schema.run import Run


def build_demo(seed: int = 0, depth: int = 8, width: int = 128, lr: float = 0.03) -> tuple[
        nn.Module, torch.optim.Optimizer, list[tuple[torch.Tensor, torch.Tensor]]]:
    """Model, optimizer and 1000 mini-batches of a regression whose SGD step is too large
    for the tanh stack: activations saturate, updates overshoot, the loss overflows."""
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    layers: list[nn.Module] = []
    d_in = 16
    for _ in range(depth):
        layers += [nn.Linear(d_in, width), nn.Tanh()]
        d_in = width
    model = nn.Sequential(*layers, nn.Linear(d_in, 1))
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    x = torch.randn(512, 16, generator=g)
    w = torch.randn(16, 1, generator=g)
    y = (x @ w).sign() * 10 + 0.1 * torch.randn(512, 1, generator=g)
    batches = []
    for _ in range(1000):
        i = torch.randint(0, 512, (64,), generator=g)
        batches.append((x[i], y[i]))
    return model, opt, batches


def run_demo(path: str | Path | None = None, seed: int = 0, extra_steps: int = 3) -> Run:
    """Train the demo under the monitor until the loss is non-finite (plus a few steps)."""
    from neuraldbg.monitor import NeuralDbg

    torch.set_num_threads(1)
    model, opt, batches = build_demo(seed)
    left = None
    with NeuralDbg(model, path=path) as dbg:
        for step, (x, y) in enumerate(batches):
            dbg.step = step
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            dbg.record_loss(loss)
            opt.step()
            if left is None and not math.isfinite(loss.item()):
                left = extra_steps
            if left is not None:
                left -= 1
                if left < 0:
                    break
    return dbg.run
