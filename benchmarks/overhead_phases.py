"""Where the monitor's per-step time goes: each phase of a training step, plain and monitored.

One model is trained throughout (same weights carry on), in segments: each segment is either
plain or under a fresh `NeuralDbg` (standard preset), in a shuffled order per round. Within a
segment the first W steps are not kept (the monitor learns the layer DAG and takes full
statistics on its first steps); the phases of the next S steps are timed with
time.perf_counter():

    zero_grad   optimizer.zero_grad(set_to_none=True)
    forward     model(x) (the monitor's root pre-hook: input moments, the replay record)
    loss        loss_fn(out, y)
    backward    loss.backward() (gradient hooks, and the norms at the end of the pass)
    record_loss dbg.record_loss(loss) (monitored only)
    optimizer   optimizer.step() (the monitor closes the step in its step hook)

Reported per phase: the median over rounds of each segment's median, plain and monitored, and
the difference. Training the same model in both modes (rather than a fresh model per mode, as
overhead.py does) takes memory-layout luck out of the comparison, so small differences are
resolved; the ratio to report against the target is still overhead.py's.

    .venv/bin/python benchmarks/overhead_phases.py [--models tanh_mlp] [--rounds 25]
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

PHASES = ("zero_grad", "forward", "loss", "backward", "record_loss", "optimizer", "step")


def segment(model: torch.nn.Module, opt: torch.optim.Optimizer, spec: Any,
            batches: list[Any], monitored: bool, warmup: int, steps: int,
            tmpdir: Path) -> list[float]:
    """The median time of each phase over one segment's kept steps."""
    pc = time.perf_counter
    dbg = None
    if monitored:
        dbg = NeuralDbg(model, path=Path(tempfile.mktemp(suffix=".ndbg", dir=tmpdir)))
        dbg.start()
    rows = []
    try:
        for i in range(warmup + steps):
            x, y = batches[i % len(batches)]
            t0 = pc()
            opt.zero_grad(set_to_none=True)
            t1 = pc()
            out = model(x)
            t2 = pc()
            loss = spec.loss_fn(out, y)
            t3 = pc()
            loss.backward()
            t4 = pc()
            if dbg is not None:
                dbg.record_loss(loss)
            t5 = pc()
            opt.step()
            t6 = pc()
            if i >= warmup:
                rows.append((t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5, t6 - t0))
    finally:
        if dbg is not None:
            dbg.close()
    return [statistics.median(col) for col in zip(*rows, strict=True)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--rounds", type=int, default=25)
    p.add_argument("--steps", type=int, default=40, help="timed steps per segment")
    p.add_argument("--warmup", type=int, default=20, help="untimed steps per segment")
    p.add_argument("--models", default="tanh_mlp")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    malloc = ov.pin_malloc()  # as overhead.py does
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, rounds {args.rounds}, "
          f"warmup {args.warmup}, steps {args.steps}, malloc {malloc}")
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            spec = ov.SPECS[name]
            g = torch.Generator().manual_seed(0)
            batches = [spec.make_batch(g) for _ in range(ov.N_BATCHES)]
            torch.manual_seed(0)
            model = spec.build()
            opt = torch.optim.SGD(model.parameters(), lr=spec.lr, momentum=0.9)
            runs: dict[bool, list[list[float]]] = {False: [], True: []}
            for _ in range(args.rounds):
                order = [False, True]
                rng.shuffle(order)
                for monitored in order:
                    runs[monitored].append(segment(model, opt, spec, batches, monitored,
                                                   args.warmup, args.steps, Path(tmp)))
            print(f"\n{name}: {spec.desc}\n")
            print("| phase | plain us | monitored us | extra us |")
            print("|---|---:|---:|---:|")
            for k, phase in enumerate(PHASES):
                a = statistics.median(r[k] for r in runs[False]) * 1e6
                b = statistics.median(r[k] for r in runs[True]) * 1e6
                label = f"**{phase}**" if phase == "step" else phase
                print(f"| {label} | {a:.1f} | {b:.1f} | {b - a:+.1f} |")
            ratio = statistics.median(b[-1] / a[-1]
                                      for a, b in zip(runs[False], runs[True], strict=True))
            print(f"\nstep ratio (median over rounds): {ratio:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
