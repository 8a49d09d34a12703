"""Seconds for diagnose(run) against run length and layer count (no torch needed).

Writes synthetic run files with the real writer (steps of per-step scalars, recorder windows of
every layer around a handful of events, as a failing run leaves them), loads them back, and
times: the one-time network build, and diagnose() on each run.

    .venv/bin/python benchmarks/diagnose_latency.py [--steps 1000,10000] [--layers 10,100]
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from causal.diagnose import builtin_registry, diagnose
from causal.registry import Registry
from causal.schema.run import (
    INPUT,
    LOSS,
    ActivationKind,
    Event,
    LayerGraph,
    LayerNode,
    LayerStat,
    Window,
)
from causal.schema.run_file import RunWriter, load_run

STATS = tuple(s.value for s in LayerStat)


def make_run(path: Path, steps: int, layers: int, seed: int = 0) -> None:
    """A failing run: loss falls, gradients explode near the end, the loss turns inf."""
    rnd = random.Random(seed)
    nodes = []
    for i in range(layers):
        kind = ActivationKind.SATURATING if i % 2 else ActivationKind.OTHER
        nodes.append(LayerNode(f"layers.{i}", f"layers.{i}", "Tanh" if i % 2 else "Linear",
                               0 if i % 2 else 4096, i, i, True, kind))
    names = [n.name for n in nodes]
    graph = LayerGraph("fx", tuple(nodes), tuple(itertools.pairwise(names)))
    w = RunWriter(path, {"model_class": "Synthetic"}, flush_seconds=3600)
    w.set_dag(graph)
    w.add_setting(0, "lr/0", "0.5")
    fail = int(steps * 0.9)
    for s in range(steps):
        loss = 2.0 * math.exp(-s / max(steps / 5, 1)) + 0.1 + 0.01 * rnd.random()
        if s >= fail - 20:
            loss *= 10 ** ((s - fail + 20) / 4)
        w.add_step(s, {"loss": loss if s < fail else math.inf, "input_max_abs": 3.0,
                       "input_mean": 0.0, "input_std": 1.0, "input_nonfinite": 0.0,
                       "grad_norm": 1.0, "optimizer_stepped": 1.0, "full_stats": 0.0})
    for end in (2, fail - 20, fail):
        win_steps = tuple(range(max(0, end - 31), end + 1))
        values = tuple(
            tuple(tuple(rnd.random() if k < 9 or name.endswith("0") else None
                        for k, _ in enumerate(STATS)) for name in names)
            for _ in win_steps)
        window = Window(end, win_steps, tuple(names), STATS, values)
        if end == 2:
            w.add_window(window)
            continue
        events = [Event(end, n, "grad", "grad_healthy", "grad_exploding", 5e3, {})
                  for n in names[::7]]
        if end == fail:
            events = [Event(end, LOSS, "nonfinite_origin", "finite", "inf", 1.0,
                            {"direction": "loss"})]
        w.add_events(events, window)
    w.add_events([Event(fail, INPUT, "loss", "loss_steady", "loss_diverging", 1e4, {})])
    w.close(status="finished")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", default="1000,10000")
    p.add_argument("--layers", default="10,100")
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()

    t = time.perf_counter()
    from causal.network import get_network

    registry = builtin_registry(Registry())
    get_network(registry)
    t_build = time.perf_counter() - t
    print(f"network build {t_build * 1e3:.0f} ms (once per registry version)\n")
    print("| steps | layers | file MB | load_run s | diagnose s (median) |")
    print("|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as td:
        for steps in (int(x) for x in args.steps.split(",")):
            for layers in (int(x) for x in args.layers.split(",")):
                path = Path(td) / f"r{steps}-{layers}.ndbg"
                make_run(path, steps, layers)
                t = time.perf_counter()
                run = load_run(path)
                t_load = time.perf_counter() - t
                times = []
                for _ in range(args.repeats):
                    t = time.perf_counter()
                    hyps = diagnose(run, registry=registry)
                    times.append(time.perf_counter() - t)
                assert hyps, "the synthetic run must be diagnosed"
                print(f"| {steps} | {layers} | {path.stat().st_size / 1e6:.2f} | {t_load:.3f} | "
                      f"{statistics.median(times):.3f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
