"""False alarms on real programs: what neuraldbg says about 14 healthy training programs modelled on
pytorch/examples.

Each program (`benchmarks/real_programs/<name>.py`, its docstring says which example it follows
and what was changed) builds its model(s) and optimizer(s) as the example does and trains on
synthetic data made in code (no downloads, no files, no torchvision), seeded, on CPU, under the
README's loop: `with NeuralDbg(model, path=...) as dbg:` around the training, and
`dbg.record_loss(loss)` once per optimizer step, nothing else (no `target=`). Programs with
several models or optimizers (DCGAN, forward-forward) monitor one, named in their docstring.
Then `diagnose(load_run(path))`.

Per program the table gives: the loss of the first and last step; whether it learned (the mean
of the last 10% of the steps below 0.9 x the lowest of the first 5); the verdict (failing when
`Diagnosis.healthy` is false, else stalled when `Diagnosis.stalled`, else healthy); the top
cause and its confidence (shown even below the report threshold); `Diagnosis.failing`; whether
it is a false alarm (expected healthy, the verdict not healthy); and whether
the monitor changes the losses: each program is trained a second time without NeuralDbg (same
seeds) and the two loss sequences compared ("no" when bit-identical, "no (rel ...)" within
1e-6 of the loss's scale, else "YES"). Each program runs in about 1-15 s on one thread.

Every program trains as its example does, so each one that is not called healthy is a false
alarm, including those whose loss does not fall (a GAN's generator loss rises as its
discriminator learns; an actor-critic's loss, summed over each episode, grows as the episodes
get longer; a policy-gradient loss has no trend): the loss is what the user's loop records, and
reading it as the run's health is the engine's job.

    .venv/bin/python benchmarks/real_programs.py [PROGRAM ...] [--steps N] [--threads 1]
        [--json PATH] [--keep DIR] [--reports]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import math
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

HERE = Path(__file__).resolve().parent

#: The programs, in the order they run (modules of benchmarks/real_programs/).
PROGRAMS = ("mnist_cnn", "mnist_rnn", "vae", "dcgan", "siamese", "word_lm_lstm",
            "word_lm_transformer", "reinforce", "actor_critic", "forward_forward", "resnet",
            "gat", "regression", "time_sequence")

#: Two loss sequences within this much of the loss's scale count as float noise.
NOISE = 1e-6


def load(name: str) -> ModuleType:
    """The program module `real_programs.<name>` (the package, not this script: a folder with an
    __init__.py is found before a module of the same name)."""
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    return importlib.import_module(f"real_programs.{name}")


def learned(losses: list[float]) -> bool:
    """The mean of the last 10% of the steps below 0.9 x the lowest of the first 5."""
    if len(losses) < 6 or not all(math.isfinite(v) for v in losses):
        return False
    tail = losses[-max(1, round(0.1 * len(losses))):]
    return sum(tail) / len(tail) < 0.9 * min(losses[:5])


def compare(monitored: list[float], plain: list[float]) -> tuple[str, float]:
    """Whether the monitor changed the losses: a short answer and the largest difference
    relative to the largest |loss|."""
    if len(monitored) != len(plain):
        return f"YES ({len(monitored)} vs {len(plain)} steps)", math.inf
    if monitored == plain:
        return "no", 0.0
    scale = max((abs(v) for v in plain if math.isfinite(v)), default=1.0) or 1.0
    diffs = [abs(a - b) / scale if math.isfinite(a - b) else math.inf
             for a, b in zip(monitored, plain, strict=True)]
    worst = max(diffs)
    if worst <= NOISE:
        return f"no (rel {worst:.0e})", worst
    first = next(i for i, d in enumerate(diffs) if d > NOISE)
    return f"YES (rel {worst:.1e} from step {first})", worst


@contextlib.contextmanager
def _warnings_seen() -> Iterator[list[str]]:
    """Every warning raised inside (the monitor's own, NeuralDbgWarning, among them)."""
    found: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield found
    seen: set[str] = set()
    for w in caught:
        text = f"{w.category.__name__}: {str(w.message).splitlines()[0][:160]}"
        if text not in seen:
            seen.add(text)
            found.append(text)


def run_program(mod: ModuleType, steps: int, run_dir: Path) -> dict[str, Any]:
    """Train `mod` monitored, diagnose its run file, train it again plain; the row's facts."""
    from neuraldbg import NeuralDbg, diagnose, load_run

    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = run_dir / f"{stamp}-{mod.NAME}.ndbg"
    n = 1
    while path.exists():
        path, n = run_dir / f"{stamp}-{mod.NAME}-{n}.ndbg", n + 1
    made: list[Any] = []

    def dbg_factory(model: torch.nn.Module) -> Any:
        made.append(NeuralDbg(model, path=path))
        return made[-1]

    from real_programs._data import NoMonitor

    row: dict[str, Any] = dict(name=mod.NAME, example=mod.EXAMPLE, expect=mod.EXPECT,
                               steps=steps, path=str(path))
    t0 = time.perf_counter()
    with _warnings_seen() as seen:
        losses = mod.run(dbg_factory, steps)
    row["seconds_monitored"] = time.perf_counter() - t0
    row["warnings"] = seen
    if len(made) != 1:
        raise RuntimeError(f"{mod.NAME} made {len(made)} monitors, not one")
    d = diagnose(load_run(made[0].run.path))
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = mod.run(lambda model: NoMonitor(), steps)
    row["seconds_plain"] = time.perf_counter() - t0
    changed, worst = compare(losses, plain)
    did_learn = learned(losses)
    verdict = "failing" if not d.healthy else "stalled" if d.stalled else "healthy"
    top = d.hypotheses[0] if len(d) else None
    row.update(
        losses=losses, losses_plain=plain, learned=did_learn, verdict=verdict,
        healthy=d.healthy, stalled=d.stalled, failing=d.failing,
        top_cause=top.cause if top else None, top_confidence=top.confidence if top else None,
        false_alarm=mod.EXPECT == "healthy" and verdict != "healthy",
        monitor_changes=changed, max_rel_diff=worst, report=d.format(),
        diagnosis=d.to_dict())
    return row


def _fmt(v: float) -> str:
    return f"{v:.4g}" if math.isfinite(v) else str(v)


def table_row(r: dict[str, Any]) -> str:
    if "error" in r:
        return (f"| {r['name']} | {r['expect']} | {r['steps']} | - | - | ERROR | "
                f"{r['error']} | - | - | - | - |")
    losses = r["losses"]
    span = f"{_fmt(losses[0])} -> {_fmt(losses[-1])}" if losses else "-"
    top = f"{r['top_cause']} {r['top_confidence']:.2f}" if r["top_cause"] else "-"
    failing = "-" if r["failing"] is None else f"{r['failing']:.2f}"
    return (f"| {r['name']} | {r['expect']} | {len(losses)} | {span} | "
            f"{'yes' if r['learned'] else 'no'} | {r['verdict']} | {top} | {failing} | "
            f"{'YES' if r['false_alarm'] else 'no'} | {r['monitor_changes']} | "
            f"{r['seconds_monitored']:.1f} / {r['seconds_plain']:.1f} |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("programs", nargs="*", help=f"default: all ({', '.join(PROGRAMS)})")
    ap.add_argument("--steps", type=int, default=None,
                    help="optimizer steps per program (default: each program's STEPS)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json", default=None, help="write every row (losses, diagnosis) here")
    ap.add_argument("--keep", default=None, help="keep the run files in this folder")
    ap.add_argument("--reports", action="store_true",
                    help="print the diagnosis report of every run not called healthy")
    args = ap.parse_args(argv)
    unknown = sorted(set(args.programs) - set(PROGRAMS))
    if unknown:
        raise SystemExit(f"unknown programs {unknown}; choose among {', '.join(PROGRAMS)}")
    names = [p for p in PROGRAMS if p in args.programs] if args.programs else list(PROGRAMS)
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, threads {torch.get_num_threads()}, steps "
          f"{args.steps or 'per program'}, preset standard, README's loop (record_loss only)\n")
    print("| program | expected | steps | loss first -> last | learned | verdict | top cause "
          "| failing | false alarm | monitor changes losses? | s monitored / plain |")
    print("|---|---|---:|---|---|---|---|---:|---|---|---:|")
    rows: list[dict[str, Any]] = []
    t_all = time.perf_counter()
    with contextlib.ExitStack() as stack:
        if args.keep:
            run_dir = Path(args.keep)
            run_dir.mkdir(parents=True, exist_ok=True)
        else:
            run_dir = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        for name in names:
            mod = load(name)
            steps = args.steps or mod.STEPS
            try:
                row = run_program(mod, steps, run_dir)
            except Exception as e:
                traceback.print_exc()
                row = dict(name=name, expect=mod.EXPECT, steps=steps,
                           error=f"{type(e).__name__}: {str(e).splitlines()[0][:120]}")
            rows.append(row)
            print(table_row(row), flush=True)
    ok = [r for r in rows if "error" not in r]
    counted = [r for r in ok if r["expect"] == "healthy"]
    alarms = [r for r in counted if r["false_alarm"]]
    changed = [r for r in ok if r["monitor_changes"].startswith("YES")]
    print(f"\nfalse alarms {len(alarms)} of {len(counted)} (programs expected healthy; "
          f"{len(rows)} run, {len(rows) - len(ok)} errors"
          + (f"; {', '.join(r['name'] for r in alarms)}" if alarms else "")
          + f"); the monitor changed the losses of {len(changed)}; total "
          f"{time.perf_counter() - t_all:.0f} s")
    for r in ok:
        if r["warnings"]:
            print(f"\nwarnings in {r['name']} (monitored run):")
            for w in r["warnings"]:
                print(f"  {w}")
    if args.reports:
        for r in ok:
            if r["verdict"] != "healthy":
                print(f"\n--- {r['name']} ({r['verdict']})\n{r['report']}")
    if args.json:
        for r in rows:
            if not args.keep:
                r.pop("path", None)  # a temporary file, gone
        Path(args.json).write_text(json.dumps(rows, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
