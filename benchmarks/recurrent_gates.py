"""What recomputing a fused recurrent module's gates costs on a full-statistics step, next to
the module's own forward and backward pass.

For each configuration: the median over repeats of (a) the module's forward + backward on a
batch, (b) `neuraldbg.capture.recurrent_gates.gate_row` on the same call (each layer and direction
run
again, then every gate in two batched matmuls, over the first MAX_SEQUENCES sequences). Quiet
steps never pay (b); the standard preset takes full statistics on steps 0-2, every 50th step,
and every step while something is abnormal.

    .venv/bin/python benchmarks/recurrent_gates.py [--threads 1] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch
from torch import nn

from neuraldbg.capture.recurrent_gates import MAX_SEQUENCES, gate_row

CONFIGS: tuple[tuple[str, Callable[[], nn.Module], tuple[int, int, int]], ...] = (
    ("LSTM(64, 128)", lambda: nn.LSTM(64, 128, batch_first=True), (32, 50, 64)),
    ("GRU(128, 256) x2 layers", lambda: nn.GRU(128, 256, num_layers=2, batch_first=True),
     (64, 100, 128)),
    ("LSTM(256, 512) x2 layers", lambda: nn.LSTM(256, 512, num_layers=2, batch_first=True),
     (64, 100, 256)),
    ("LSTM(128, 256) bidirectional", lambda: nn.LSTM(128, 256, batch_first=True,
                                                     bidirectional=True), (64, 100, 128)),
)


def _median_ms(fn: Callable[[], object], repeats: int) -> float:
    fn()  # warm up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, repeats "
          f"{args.repeats}, gates over the first {MAX_SEQUENCES} sequences\n")
    print("| module | batch x steps x features | forward+backward ms | gate recompute ms | ratio |")
    print("|---|---|---:|---:|---:|")
    torch.manual_seed(0)
    for name, build, (batch, steps, features) in CONFIGS:
        module = build()
        x = torch.randn(batch, steps, features)

        def train_pass(m: nn.Module = module, x: torch.Tensor = x) -> None:
            m.zero_grad(set_to_none=True)
            m(x)[0].square().mean().backward()

        fb = _median_ms(train_pass, args.repeats)
        gates = _median_ms(lambda m=module, x=x: gate_row(m, (x,)), args.repeats)
        print(f"| {name} | {batch} x {steps} x {features} | {fb:.1f} | {gates:.1f} | "
              f"{gates / fb:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
