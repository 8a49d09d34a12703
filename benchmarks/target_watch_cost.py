"""What finding the targets costs per step: one linear forward and an MSE loss, with and without
the monitor's target watch (`neuraldbg/capture/target_watch.py`), timed in turns.

    .venv/bin/python benchmarks/target_watch_cost.py [--steps 2000] [--rounds 2]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn.functional as F

from neuraldbg.capture.target_watch import TargetWatch
from neuraldbg.capture.tensor_stats import moments


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    found: list[object] = []
    watch = TargetWatch(lambda t: found.append(moments(t)))
    model = torch.nn.Linear(256, 10)
    x, y = torch.randn(64, 256), torch.randn(64, 10)

    def step(watched: bool) -> None:
        out = model(x)
        if watched:
            watch.begin(out)
        F.mse_loss(out, y)
        if watched:
            watch.end()
        found.clear()

    print("| round | plain (us) | with the watch (us) | extra (us) |")
    print("|---:|---:|---:|---:|")
    for r in range(args.rounds):
        medians = []
        for watched in (False, True):
            times = []
            for _ in range(args.steps):
                t0 = time.perf_counter()
                step(watched)
                times.append(time.perf_counter() - t0)
            medians.append(statistics.median(times) * 1e6)
        print(f"| {r + 1} | {medians[0]:.1f} | {medians[1]:.1f} | {medians[1] - medians[0]:+.1f} |")


if __name__ == "__main__":
    main()
