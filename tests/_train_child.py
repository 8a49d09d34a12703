"""Child process for the crash-safety test: train under NeuralDbg until killed.

Usage: python tests/_train_child.py RUN_PATH [NONFINITE_STEP]

A small MLP trains on fixed batches; at step NONFINITE_STEP (default 30) the input batch is
multiplied by inf, so the run turns non-finite there (an input-born non-finite value). After each
optimizer step the script prints "STEP n" (flushed). It never leaves the `with` block on its own:
the test kills it with SIGKILL. As a safety net against orphans it hard-exits (os._exit, without
closing the monitor) after MAX_SECONDS.
"""

from __future__ import annotations

import os
import sys
import time

import torch
from torch import nn

from neuraldbg import NeuralDbg

MAX_SECONDS = 120.0


def main() -> None:
    torch.set_num_threads(1)
    path = sys.argv[1]
    bad_step = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    batches = []
    for _ in range(8):
        x = torch.randn(32, 8, generator=g)
        batches.append((x, x[:, :1] * 0.5))
    deadline = time.monotonic() + MAX_SECONDS
    print("READY", flush=True)
    with NeuralDbg(model, path=path) as dbg:
        step = 0
        while True:
            x, y = batches[step % len(batches)]
            if step == bad_step:
                x = x * float("inf")
            dbg.step = step
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            dbg.record_loss(loss)
            opt.step()
            print(f"STEP {step}", flush=True)
            step += 1
            time.sleep(0.002)  # keep the pipe and the CPU calm; ~hundreds of steps a second
            if time.monotonic() > deadline:
                os._exit(3)  # never "finish" the run: a finished run would fail the test


if __name__ == "__main__":
    main()
