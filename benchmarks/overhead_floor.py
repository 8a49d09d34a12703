"""What the cheap every-step signals cost by themselves, without neuraldbg: the floor under the
monitor's overhead on a model.

Each mode trains a fresh plain model (same seed, same batches, shuffled order per round, as in
overhead.py) and adds, inside the timed step, only raw torch work written out here:

    norms      the exact gradient norm of every parameter after backward: one
               torch._foreach_norm, values read to the host (what the gradient signals need)
    +moments   and the input batch's min, max, sum and L2 norm (what the input signals need)
    +hooks     and a forward pre-hook and forward hook on the root module and a
               post-accumulate-grad hook per parameter, all empty (the places to do it from)
    monitor    neuraldbg's standard preset, for comparison

Reported per model: the median over rounds of (mode median step / plain median step).

    .venv/bin/python benchmarks/overhead_floor.py [--models tanh_mlp] [--rounds 9]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import overhead as ov  # benchmarks/overhead.py: this script's folder is on sys.path
import torch

from neuraldbg import NeuralDbg

MODES = ("plain", "norms", "+moments", "+hooks", "monitor")


def run_mode(spec: Any, mode: str, batches: list[Any], warmup: int, steps: int,
             tmpdir: Path, tag: str) -> list[float]:
    torch.manual_seed(0)
    model = spec.build()
    opt = torch.optim.SGD(model.parameters(), lr=spec.lr, momentum=0.9)
    params = [p for p in model.parameters() if p.requires_grad]
    level = MODES.index(mode)
    handles = []
    if mode == "+hooks":
        handles.append(model.register_forward_pre_hook(lambda m, a: None))
        handles.append(model.register_forward_hook(lambda m, a, o: None))
        handles += [p.register_post_accumulate_grad_hook(lambda p: None) for p in params]
    dbg = NeuralDbg(model, path=tmpdir / f"{tag}.ndbg") if mode == "monitor" else None
    if dbg is not None:
        dbg.start()
    times = []
    try:
        for i in range(warmup + steps):
            x, y = batches[i % len(batches)]
            t0 = time.perf_counter()
            opt.zero_grad(set_to_none=True)
            if level >= 2 and mode != "monitor":
                lo, hi = torch.aminmax(x)
                moments = [lo, hi, x.sum(), torch.linalg.vector_norm(x)]
            loss = spec.loss_fn(model(x), y)
            loss.backward()
            if dbg is not None:
                dbg.record_loss(loss)
            if level >= 1 and mode != "monitor":
                norms = torch._foreach_norm([p.grad for p in params], 2)
                values = [float(n) for n in norms]
                if level >= 2:
                    values += [float(m) for m in moments]
            opt.step()
            if i >= warmup:
                times.append(time.perf_counter() - t0)
    finally:
        for h in handles:
            h.remove()
        if dbg is not None:
            dbg.close()
    return times


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--steps", type=int, default=64)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--models", default="tanh_mlp")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    malloc = ov.pin_malloc()  # as overhead.py does
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, rounds {args.rounds}, "
          f"warmup {args.warmup}, steps {args.steps}, malloc {malloc}")
    print("\n| model | plain ms/step | " + " | ".join(f"{m} x" for m in MODES[1:]) + " |")
    print("|---|---:|" + "---:|" * (len(MODES) - 1))
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            spec = ov.SPECS[name]
            g = torch.Generator().manual_seed(0)
            batches = [spec.make_batch(g) for _ in range(ov.N_BATCHES)]
            med: dict[str, list[float]] = {m: [] for m in MODES}
            for r in range(args.rounds):
                order = list(MODES)
                rng.shuffle(order)
                for mode in order:
                    t = run_mode(spec, mode, batches, args.warmup, args.steps, Path(tmp),
                                 f"{name}-{r}-{mode}")
                    med[mode].append(statistics.median(t))
            ratios = [statistics.median(a / b for a, b in zip(med[m], med["plain"], strict=True))
                      for m in MODES[1:]]
            print(f"| {name} | {statistics.median(med['plain']) * 1e3:.2f} | "
                  + " | ".join(f"{x:.3f}" for x in ratios) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
