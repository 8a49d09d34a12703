"""What stopping at the first non-finite step costs, and what its scene and replay cost.

    .venv/bin/python benchmarks/halt_cost.py [--steps 60] [--rounds 3] [--threads 1]

Prints three tables on the four overhead models (`overhead.py`'s): the median and the mean
quiet-step time under on_nonfinite "record", "warn" and "raise", and "warn" with
`checkpoint_every=10` (rounds interleaved, a fresh model each), as ratios to "record" (the mean
shows the checkpoint's copy every tenth step, which the median hides); the scene of a failing
step (`neuraldbg.scene.save_scene`: its size and write time); and `neuraldbg.replay` on a
failing step (seconds per intervention).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from overhead import SPECS, pin_malloc

from neuraldbg import NeuralDbg
from neuraldbg.replay import replay
from neuraldbg.scene import save_scene, scene_path

MODES = ("record", "warn", "raise", "checkpoint")  # checkpoint: "warn" + checkpoint_every=10


def step_times(spec, mode: str, steps: int, folder: Path, tag: str) -> list[float]:
    torch.manual_seed(0)
    model = spec.build()
    opt = torch.optim.SGD(model.parameters(), lr=spec.lr)
    g = torch.Generator().manual_seed(0)
    batches = [spec.make_batch(g) for _ in range(8)]
    times = []
    kwargs = {"on_nonfinite": "warn", "checkpoint_every": 10} if mode == "checkpoint" \
        else {"on_nonfinite": mode}
    with NeuralDbg(model, path=folder / f"{tag}.ndbg", **kwargs) as dbg:
        for step in range(steps):
            x, y = batches[step % len(batches)]
            start = time.perf_counter()
            opt.zero_grad()
            loss = spec.loss_fn(model(x), y)
            loss.backward()
            dbg.record_loss(loss)
            opt.step()
            times.append(time.perf_counter() - start)
    return times[steps // 4:]  # past the warm-up


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    pin_malloc()
    print(f"torch threads: {torch.get_num_threads()}")
    folder = Path(tempfile.mkdtemp())
    print("\nquiet steps: median (and mean) step time, ratio to 'record'")
    print(f"{'model':<12}" + "".join(f"{m:>16}" for m in MODES) + "    record ms")
    for name, spec in SPECS.items():
        times: dict[str, list[float]] = {m: [] for m in MODES}
        for r in range(args.rounds):
            for mode in (MODES if r % 2 == 0 else MODES[::-1]):
                times[mode] += step_times(spec, mode, args.steps, folder, f"{name}-{mode}-{r}")
        med = {m: statistics.median(t) for m, t in times.items()}
        mean = {m: statistics.fmean(t) for m, t in times.items()}
        print(f"{name:<12}" + "".join(
            f"{med[m] / med['record']:>9.3f} ({mean[m] / mean['record']:.2f})" for m in MODES)
            + f"{med['record'] * 1e3:>13.2f}")
    print("\nscene of a failing step (model, optimizer state, batch, RNG)")
    print(f"{'model':<12}{'MB':>8}{'write s':>10}")
    for name, spec in SPECS.items():
        torch.manual_seed(0)
        model = spec.build()
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        x, y = spec.make_batch(torch.Generator().manual_seed(0))
        spec.loss_fn(model(x), y).backward()
        opt.step()
        start = time.perf_counter()
        out = save_scene(folder / f"{name}.scene.pt", step=0, model=model, optimizer=opt,
                         model_calls=[((x,), {})], targets=[y], amp="none", scaler=None,
                         max_mb=512)
        took = time.perf_counter() - start
        print(f"{name:<12}{out.stat().st_size / 2**20:>8.2f}{took:>10.3f}")
    print("\nreplay of a failing step (tanh_mlp, one corrupt row): seconds per intervention")
    spec = SPECS["tanh_mlp"]
    torch.manual_seed(0)
    model = spec.build()
    opt = torch.optim.SGD(model.parameters(), lr=spec.lr)
    g = torch.Generator().manual_seed(0)
    path = folder / "replay.ndbg"
    with NeuralDbg(model, path=path) as dbg:
        for step in range(10):
            x, y = spec.make_batch(g)
            if step == 6:
                x[3] = float("inf")
            opt.zero_grad()
            loss = spec.loss_fn(model(x), y)
            loss.backward()
            dbg.record_loss(loss, target=y)
            opt.step()
    for f in replay(scene_path(path), spec.build, spec.loss_fn):
        print(f"  {f.seconds:8.3f} s  {f.name}: {f.detail}"
              + (f" -> {f.confirms}" if f.confirms else ""))


if __name__ == "__main__":
    main()
