"""Per-step overhead of the neuraldbg monitor, next to torch's anomaly mode, on CPU (or a GPU).

For each model and round, each mode (plain, one per monitor preset, anomaly) trains a fresh model
(same seed, same batches) in a shuffled order: W warmup steps, then S timed steps. A step is
zero_grad + forward + loss + backward (+ record_loss) + optimizer.step, timed with
time.perf_counter(). The monitor is entered before warmup and exited after the timed steps, so
creating the run file and tracing the layer DAG are not timed; the closing of each step (which
runs in the optimizer-step hook) is. Per round: ratio = median step of the mode / median step of
plain in that round. Reported: the median over rounds of those ratios, and the median over rounds
of the plain median step time.

Note: medians hide periodic costs. The "standard" preset computes full activation statistics on
steps 0-2 and then every 50 steps, so with the default warmup/steps the timed window shows its
every-step cost; the mean ratio (in --json) includes any scheduled or escalated full step that
falls in the window.

    .venv/bin/python benchmarks/overhead.py [--threads 1] [--rounds 7] [--steps 30]
        [--presets light,standard,full] [--models tanh_mlp,cnn] [--device cuda] [--json out.json]

With --device cuda the model and batches live on the GPU and each timed step ends with
torch.cuda.synchronize(), so a step's time includes its kernels and any host sync the monitor
adds shows as the GPU work it waits for.

glibc's allocator thresholds are pinned for the whole process (all modes alike; see
`pin_malloc`), since otherwise page faults on re-allocated large gradients come and go between
runs; --default-malloc leaves them alone.

Warnings from the monitor (NeuralDbgWarning: it stopped recording after an internal error) are
raised as errors so a run that silently stopped recording is never reported as cheap; pass
--allow-warnings to only print them.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import random
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from neuraldbg import NeuralDbg

PRESETS = ("light", "standard", "full")
MODEL_NAMES = ("tanh_mlp", "wide_mlp", "cnn", "transformer")
N_BATCHES = 4  # distinct batches, cycled through


@dataclass
class Spec:
    name: str
    desc: str
    build: Callable[[], nn.Module]
    make_batch: Callable[[torch.Generator], tuple[torch.Tensor, torch.Tensor]]
    loss_fn: nn.Module
    lr: float


def _tanh_mlp() -> nn.Module:
    layers: list[nn.Module] = []
    for _ in range(7):
        layers += [nn.Linear(256, 256), nn.Tanh()]
    layers.append(nn.Linear(256, 10))
    return nn.Sequential(*layers)


def _wide_mlp() -> nn.Module:
    return nn.Sequential(
        nn.Linear(1024, 1024), nn.ReLU(),
        nn.Linear(1024, 1024), nn.ReLU(),
        nn.Linear(1024, 1024), nn.ReLU(),
        nn.Linear(1024, 10),
    )


def _cnn() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),  # pool after each conv
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),  # keeps a step ~50 ms
        nn.Conv2d(64, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),  # on one core
        nn.Flatten(),
        nn.Linear(64 * 4 * 4, 10),
    )


class _Encoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        layer = nn.TransformerEncoderLayer(d_model=128, nhead=4, dim_feedforward=256,
                                           dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.head = nn.Linear(128, 128)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(x))


def _cls_batch(shape: tuple[int, ...], n_classes: int) -> Callable[[torch.Generator], Any]:
    def make(g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.randn(shape, generator=g), torch.randint(0, n_classes, (shape[0],),
                                                              generator=g)
    return make


def _seq_batch(g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(32, 64, 128, generator=g), torch.randn(32, 64, 128, generator=g)


SPECS = {
    "tanh_mlp": Spec("tanh_mlp", "8 Linear 256 + tanh, batch 64", _tanh_mlp,
                     _cls_batch((64, 256), 10), nn.CrossEntropyLoss(), 1e-2),
    "wide_mlp": Spec("wide_mlp", "4 Linear 1024 + ReLU, batch 256", _wide_mlp,
                     _cls_batch((256, 1024), 10), nn.CrossEntropyLoss(), 1e-2),
    "cnn": Spec("cnn", "3x(conv+relu+pool) + linear, 3x32x32, batch 64", _cnn,
                _cls_batch((64, 3, 32, 32), 10), nn.CrossEntropyLoss(), 1e-2),
    "transformer": Spec("transformer", "2-layer encoder d128 h4 ff256, seq 64, batch 32",
                        _Encoder, _seq_batch, nn.MSELoss(), 1e-3),
}


def run_mode(spec: Spec, mode: str, batches: list[tuple[torch.Tensor, torch.Tensor]],
             warmup: int, steps: int, seed: int, tmpdir: Path, tag: str,
             info: dict[str, int]) -> list[float]:
    """Train a fresh model for warmup + steps steps in `mode`; return the timed step times (s)."""
    torch.manual_seed(seed)
    device = batches[0][0].device
    model = spec.build().to(device)
    model.train()
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    opt = torch.optim.SGD(model.parameters(), lr=spec.lr, momentum=0.9)
    loss_fn = spec.loss_fn
    times: list[float] = []
    gc.collect()

    if mode in PRESETS:
        dbg = NeuralDbg(model, path=tmpdir / f"{tag}.ndbg", preset=mode)
        with dbg:  # construction, run-file creation and DAG tracing stay outside the timing
            for i in range(warmup + steps):
                x, y = batches[i % len(batches)]
                sync()
                t0 = time.perf_counter()
                opt.zero_grad(set_to_none=True)
                loss = loss_fn(model(x), y)
                loss.backward()
                dbg.record_loss(loss)
                opt.step()
                sync()
                t1 = time.perf_counter()
                if i >= warmup:
                    times.append(t1 - t0)
        if not torch.isfinite(loss):
            raise RuntimeError(f"{spec.name}/{mode}: loss diverged ({loss.item()})")
        # after the timing: the monitor must have followed every step and recorded them all
        run = dbg.run
        problems = []
        if dbg.step != warmup + steps:
            problems.append(f"dbg.step is {dbg.step}, expected {warmup + steps}")
        if run.meta.get("status") != "finished" or run.meta.get("internal_error"):
            problems.append(f"run status {run.meta.get('status')!r}, internal_error "
                            f"{run.meta.get('internal_error')!r}")
        if len(run.series) != warmup + steps:
            problems.append(f"{len(run.series)} steps in the run file, expected {warmup + steps}")
        if problems:
            raise RuntimeError(f"{spec.name}/{mode}: " + "; ".join(problems))
        info[tag] = len(run.events)
        return times

    anomaly = mode == "anomaly"
    with torch.autograd.set_detect_anomaly(anomaly):
        for i in range(warmup + steps):
            x, y = batches[i % len(batches)]
            sync()
            t0 = time.perf_counter()
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            sync()
            t1 = time.perf_counter()
            if i >= warmup:
                times.append(t1 - t0)
    if not torch.isfinite(loss):
        raise RuntimeError(f"{spec.name}/{mode}: loss diverged ({loss.item()})")
    return times


def bench_model(spec: Spec, presets: list[str], args: argparse.Namespace,
                tmpdir: Path) -> dict[str, Any]:
    g = torch.Generator().manual_seed(args.seed)
    batches = [tuple(t.to(args.device) for t in spec.make_batch(g)) for _ in range(N_BATCHES)]
    modes = ["plain", *presets, "anomaly"]
    rng = random.Random(args.seed)
    medians: dict[str, list[float]] = {m: [] for m in modes}
    events: dict[str, int] = {}  # run tag -> number of events the monitor recorded
    means: dict[str, list[float]] = {m: [] for m in modes}
    for r in range(args.rounds):
        order = modes[:]
        rng.shuffle(order)
        for mode in order:
            t = run_mode(spec, mode, batches, args.warmup, args.steps, args.seed, tmpdir,
                         tag=f"{spec.name}-r{r}-{mode}", info=events)
            medians[mode].append(statistics.median(t))
            means[mode].append(statistics.fmean(t))
        plain = medians["plain"][-1]
        progress = " ".join(f"{m}={medians[m][-1] / plain:.2f}x" for m in modes if m != "plain")
        print(f"  {spec.name} round {r + 1}/{args.rounds}: plain {plain * 1e3:.2f} ms/step, "
              f"{progress}", file=sys.stderr, flush=True)

    out: dict[str, Any] = {
        "desc": spec.desc,
        "plain_ms": statistics.median(medians["plain"]) * 1e3,
        "ratio": {},
        "ratio_of_means": {},
        "ratio_per_round": {},
        "median_ms_per_round": {m: [v * 1e3 for v in medians[m]] for m in modes},
        "events_per_run": events,
    }
    for m in modes:
        if m == "plain":
            continue
        per_round = [a / b for a, b in zip(medians[m], medians["plain"], strict=True)]
        out["ratio_per_round"][m] = per_round
        out["ratio"][m] = statistics.median(per_round)
        out["ratio_of_means"][m] = statistics.median(
            a / b for a, b in zip(means[m], means["plain"], strict=True))
    return out


def pin_malloc() -> str:
    """Keep glibc from returning large freed blocks to the OS (and faulting them back in).

    By default glibc serves blocks above a moving threshold with mmap and unmaps them on free,
    so a step that frees and re-allocates its 4 MiB gradients may pay about a thousand page
    faults, or none, depending on the order of earlier allocations. That order differs between
    runs and modes: measured on wide_mlp, the plain loop took 1008 minor faults per step in one
    run and 0 in another, moving the ratio between 1.02x and 1.09x. Pinned thresholds (the same
    for every mode of this process) remove that noise. Returns what was done, for the header.
    """
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    if platform.system() != "Linux" or name is None:
        return "default"
    try:
        libc = ctypes.CDLL(name)
        m_trim_threshold, m_mmap_threshold = -1, -3
        ok = libc.mallopt(m_mmap_threshold, 64 << 20) and libc.mallopt(m_trim_threshold, 1 << 30)
    except (OSError, AttributeError):
        return "default"
    return "glibc thresholds pinned (mmap 64 MiB, trim 1 GiB)" if ok else "default"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (default 1)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--steps", type=int, default=64, help="timed steps per run")
    p.add_argument("--warmup", type=int, default=10, help="untimed steps per run")
    p.add_argument("--preset", default="standard", choices=PRESETS)
    p.add_argument("--presets", default=None,
                   help="comma-separated presets, one column each (overrides --preset)")
    p.add_argument("--models", default=",".join(MODEL_NAMES),
                   help=f"comma-separated subset of {','.join(MODEL_NAMES)}")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", metavar="OUT", default=None, help="write the numbers here")
    p.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    p.add_argument("--allow-warnings", action="store_true",
                   help="print monitor warnings instead of raising them")
    p.add_argument("--default-malloc", action="store_true",
                   help="leave glibc's allocator thresholds as they are (see pin_malloc)")
    args = p.parse_args(argv)

    presets = [s.strip() for s in (args.presets or args.preset).split(",") if s.strip()]
    models = [s.strip() for s in args.models.split(",") if s.strip()]
    for name, allowed, given in (("preset", PRESETS, presets), ("model", MODEL_NAMES, models)):
        bad = [x for x in given if x not in allowed]
        if bad or not given:
            p.error(f"unknown {name}(s) {bad}: choose from {', '.join(allowed)}")
    if args.rounds < 1 or args.steps < 1 or args.warmup < 0 or args.threads < 1:
        p.error("need --rounds >= 1, --steps >= 1, --warmup >= 0, --threads >= 1")
    if args.device not in ("cpu", "cuda") or (args.device == "cuda"
                                              and not torch.cuda.is_available()):
        p.error(f"--device {args.device}: choose cpu, or cuda on a machine with a CUDA GPU")

    from neuraldbg.errors import NeuralDbgWarning

    if not args.allow_warnings:
        warnings.filterwarnings("error", category=NeuralDbgWarning)

    torch.set_num_threads(args.threads)
    malloc = "default" if args.default_malloc else pin_malloc()
    where = torch.cuda.get_device_name(0) if args.device == "cuda" else "cpu"
    header = (f"torch {torch.__version__} on {where}, python {platform.python_version()}, "
              f"threads {torch.get_num_threads()}, rounds {args.rounds}, warmup {args.warmup}, "
              f"steps {args.steps}, seed {args.seed}, malloc {malloc}")
    print(f"torch.set_num_threads({args.threads})", file=sys.stderr, flush=True)

    results: dict[str, Any] = {}
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ndbg-bench-") as td:
        for name in models:
            print(f"{name}: {SPECS[name].desc}", file=sys.stderr, flush=True)
            results[name] = bench_model(SPECS[name], presets, args, Path(td))
    elapsed = time.perf_counter() - t_start

    print(header)
    print()
    cols = [*(f"{pr} x" for pr in presets), *(f"{pr} x (mean)" for pr in presets),
            "anomaly x"]
    print("| model | plain ms/step | " + " | ".join(cols) + " |")
    print("|---|---:|" + "---:|" * len(cols))
    for name, res in results.items():
        cells = [f"{res['ratio'][m]:.2f}" for m in presets]
        cells += [f"{res['ratio_of_means'][m]:.2f}" for m in presets]
        cells.append(f"{res['ratio']['anomaly']:.2f}")
        print(f"| {name} | {res['plain_ms']:.2f} | " + " | ".join(cells) + " |")
    print()
    print(f"x = median over rounds of (mode median step / plain median step); (mean) = the same "
          f"with mean step times, which counts periodic work (batched analysis, scheduled full "
          f"statistics); total {elapsed:.0f} s")

    if args.json:
        doc = {
            "torch": torch.__version__,
            "device": where,
            "python": platform.python_version(),
            "threads": torch.get_num_threads(),
            "rounds": args.rounds,
            "warmup": args.warmup,
            "steps": args.steps,
            "seed": args.seed,
            "presets": presets,
            "elapsed_s": elapsed,
            "models": results,
        }
        Path(args.json).write_text(json.dumps(doc, indent=2))
        print(f"wrote {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
