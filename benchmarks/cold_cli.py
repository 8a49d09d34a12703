"""Wall time and peak memory of a cold `neuraldbg diagnose RUN` and `neuraldbg show RUN`.

Each run of the CLI is a fresh process (imports included, the OS file cache warm), timed here and
measured by its own rusage. The table gives, per command, the median wall time and the largest
maximum resident set size over the repeats. Without a RUN it writes a small failing run (a
12-layer graph, 300 steps, gradients that explode, a loss that turns inf) to a temporary folder.

    .venv/bin/python benchmarks/cold_cli.py [RUN] [--repeat 7] [--cli .venv/bin/neuraldbg]
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from causal.schema.run import Event, EventKind, LayerGraph, LayerNode, State, StepStat
from causal.schema.run_file import RunWriter

COMMANDS = ("diagnose", "show")


def make_run(path: Path, steps: int = 300, layers: int = 12) -> str:
    """A run whose gradients explode in its last layers before the loss turns inf."""
    nodes = tuple(LayerNode(f"layers.{i}", f"layers.{i}", "Linear", 4096, order=i, ran=True,
                            weight_gain=0.6) for i in range(layers))
    writer = RunWriter(path, {"model_class": "Synthetic"})
    writer.set_dag(LayerGraph("fx", nodes, tuple(itertools.pairwise(n.name for n in nodes))))
    for step in range(steps):
        writer.add_step(step, {StepStat.LOSS: 2.0 * math.exp(-step / 60) + 0.1})
    writer.add_events([Event(steps, f"layers.{i}", EventKind.GRAD, State.GRAD_HEALTHY,
                             State.GRAD_EXPLODING, 1e9) for i in range(layers - 3, layers)])
    writer.add_step(steps, {StepStat.LOSS: math.inf})
    writer.close(status="failed")
    return str(path)


def cold_run(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, maximum resident set size in MB) of one process running `argv`."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped by wait4: tell Popen
    if proc.returncode:
        raise SystemExit(f"{' '.join(argv)} exited with {proc.returncode}")
    return wall, usage.ru_maxrss / 1024  # kilobytes on Linux


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run", nargs="?", help="a run file (default: a small failing run, written)")
    p.add_argument("--repeat", type=int, default=7, help="processes per command (default 7)")
    p.add_argument("--cli", default=str(Path(sys.executable).parent / "neuraldbg"),
                   help="the neuraldbg executable (default: next to this Python)")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run = args.run or make_run(Path(tmp) / "cold.ndbg")
        print(f"{args.cli} COMMAND {run}, {args.repeat} cold processes each")
        print(f"{'command':<10} {'median wall s':>14} {'max RSS MB':>11}")
        for command in COMMANDS:
            walls, rss = zip(*(cold_run([args.cli, command, run]) for _ in range(args.repeat)),
                             strict=True)
            print(f"{command:<10} {statistics.median(walls):>14.2f} {max(rss):>11.0f}")


if __name__ == "__main__":
    main()
