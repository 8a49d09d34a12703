"""Verify the labels of a directory of failure scenarios by intervention.

    .venv/bin/python benchmarks/verify_scenarios.py [DIR] [--seeds 0,1,2] [--no-determinism]

Every ``*.py`` file in DIR (default: ``datasets/``) is loaded by path and must follow the scenario
contract of DESIGN.md: ``CAUSE``, ``ORIGIN``, ``SOURCE`` and ``build(seed, fixed=False) -> dict``
with ``model``, ``optimizer``, ``loss_fn``, ``batches``, ``steps``, ``amp_dtype`` and ``scaler``.
For each seed the script builds and trains the unfixed run and the fixed run with the canonical
loop (``run_scenario``) on one CPU thread and prints one row per (scenario, seed).

Failure criterion (applied to the per-step training losses of one run):

* **non-finite**: the loss is NaN or +-inf at some step; the run fails at the first such step.
* **stall**: with ``head`` = the lowest loss of the first 5 steps and ``tail`` = the mean loss of
  the last 10% of the steps (at least 5 steps), the run stalls when ``tail >= 0.9 * head``, i.e.
  training did not remove even 10% of its starting loss. A finite loss that grows
  (``tail > head``) is a stall as well ("diverged" in the table when ``tail > 10 * head``). The
  lowest rather than the mean of the first steps keeps a run that explodes within its first 5
  steps (1e8 -> 1e29) from counting as progress. The ratio is scale-free, so runs whose losses
  are in different units (standardised versus raw targets) compare fairly.

A run is *ok* when it neither hits a non-finite loss nor stalls.

Label validity, per seed:

* a failure scenario (``CAUSE != "healthy"``) is valid when the unfixed run fails (non-finite or
  stall) and the fixed run is ok; because the fixed run is ok, a stall of the unfixed run is a
  stall that the fixed run does not have;
* a healthy scenario is valid when both runs (``fixed`` changes nothing there) are ok.

The script also checks the contract itself: the cause name, that ``ORIGIN`` is ``None`` or a
module name of the unfixed model, one batch per step, and (unless ``--no-determinism``) that two
builds with the same seed give identical parameters and batches. A scenario that raises is
reported as an ``error`` row and the script goes on. The exit status is 1 when any label is
invalid or any scenario errored, else 0.

Table columns: ``unfixed`` / ``fixed`` are ``non-finite@STEP``, ``stalled(r=...)``,
``diverged(r=...)`` or ``ok(r=...)`` with r = tail / head; ``secs`` is the wall time of build +
training of the unfixed / fixed run. Rows also stream to stderr as they finish.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import re
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

KNOWN_CAUSES = (
    "saturation",
    "lr_too_high",
    "bad_init",
    "data_outlier",
    "fp16_overflow",
    "unsafe_op",
    "dead_relu",
    "unscaled_inputs",
    "healthy",
)
REQUIRED_KEYS = ("model", "optimizer", "loss_fn", "batches", "steps", "amp_dtype", "scaler")
HEAD_STEPS = 5
TAIL_FRACTION = 0.1
STALL_RATIO = 0.9
DIVERGED_RATIO = 10.0


def load_scenario(path: Path) -> ModuleType:
    """Import a scenario file by path (``datasets/`` is not a package on purpose)."""
    name = f"_neuraldbg_scenario_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _to_list(x: Any) -> list[Any]:
    return list(x) if isinstance(x, tuple) else [x]


def run_scenario(spec: dict[str, Any]) -> dict[str, Any]:
    """Train one built scenario with the canonical loop.

    Returns ``{"losses": [float, ...], "failed": bool, "reason": str, "ratio": float | None,
    "fail_step": int | None}``; ``reason`` is ``"non-finite"``, ``"stall"`` or ``"ok"``. The run
    stops at the first non-finite loss.
    """
    model = spec["model"]
    opt = spec["optimizer"]
    loss_fn = spec["loss_fn"]
    amp_dtype = spec.get("amp_dtype")
    scaler = spec.get("scaler")
    steps = int(spec["steps"])
    batches = spec["batches"]
    model.train()
    losses: list[float] = []
    for step in range(steps):
        x, y = batches[step]
        opt.zero_grad()
        if amp_dtype is not None:
            with torch.autocast(device_type="cpu", dtype=amp_dtype):
                out = model(*x) if isinstance(x, tuple) else model(x)
                loss = loss_fn(out, y)
        else:
            out = model(*x) if isinstance(x, tuple) else model(x)
            loss = loss_fn(out, y)
        value = float(loss.detach())
        losses.append(value)
        if not math.isfinite(value):
            return {
                "losses": losses,
                "failed": True,
                "reason": "non-finite",
                "ratio": None,
                "fail_step": step,
            }
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            opt.step()
    ratio = stall_ratio(losses)
    stalled = ratio >= STALL_RATIO
    return {
        "losses": losses,
        "failed": stalled,
        "reason": "stall" if stalled else "ok",
        "ratio": ratio,
        "fail_step": None,
    }


def stall_ratio(losses: Sequence[float]) -> float:
    """Mean loss of the last 10% of steps (at least 5) over the lowest of the first 5 steps."""
    head = min(losses[:HEAD_STEPS])
    n_tail = max(HEAD_STEPS, math.ceil(TAIL_FRACTION * len(losses)))
    tail_part = losses[-n_tail:]
    tail = sum(tail_part) / len(tail_part)
    if head <= 0.0:
        return 0.0 if tail <= head else math.inf
    return tail / head


def describe(result: dict[str, Any]) -> str:
    if result["reason"] == "non-finite":
        return f"non-finite@{result['fail_step']}"
    ratio = result["ratio"]
    if result["reason"] == "stall":
        word = "diverged" if ratio > DIVERGED_RATIO else "stalled"
        return f"{word}(r={ratio:.3g})"
    return f"ok(r={ratio:.3g})"


def _state(spec: dict[str, Any]) -> list[torch.Tensor]:
    tensors = [p.detach().clone() for p in spec["model"].state_dict().values()]
    for x, y in spec["batches"]:
        tensors.extend(t for t in [*_to_list(x), *_to_list(y)] if isinstance(t, torch.Tensor))
    return tensors


def check_contract(module: ModuleType, spec: dict[str, Any]) -> None:
    cause = getattr(module, "CAUSE", None)
    if not isinstance(cause, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", cause):
        # Built-in names are KNOWN_CAUSES; a user's registered cause is any snake_case id.
        raise ValueError(f"CAUSE {cause!r} is not a snake_case cause name or 'healthy'")
    source = getattr(module, "SOURCE", None)
    if not isinstance(source, str) or not source.strip():
        raise ValueError("SOURCE must be a non-empty string")
    if not hasattr(module, "ORIGIN"):
        raise ValueError("ORIGIN is missing")
    missing = [k for k in REQUIRED_KEYS if k not in spec]
    if missing:
        raise ValueError(f"build() result lacks {missing}")
    origin = module.ORIGIN
    names = {n for n, _ in spec["model"].named_modules()}
    if origin is not None and origin not in names:
        raise ValueError(f"ORIGIN {origin!r} is not a module of the unfixed model")
    if len(spec["batches"]) != int(spec["steps"]):
        raise ValueError(f"{len(spec['batches'])} batches for {spec['steps']} steps")


def check_determinism(module: ModuleType, seed: int, spec: dict[str, Any]) -> None:
    again = module.build(seed, fixed=False)
    a, b = _state(spec), _state(again)
    same = len(a) == len(b) and all(
        x.shape == y.shape and x.dtype == y.dtype and torch.equal(x.nan_to_num(), y.nan_to_num())
        for x, y in zip(a, b, strict=True)
    )
    if not same:
        raise ValueError(f"build({seed}) is not deterministic")


def verify_one(module: ModuleType, seed: int, determinism: bool) -> dict[str, Any]:
    t0 = time.perf_counter()
    spec = module.build(seed, fixed=False)
    check_contract(module, spec)
    unfixed = run_scenario(spec)
    t1 = time.perf_counter()
    fixed = run_scenario(module.build(seed, fixed=True))
    t2 = time.perf_counter()
    if determinism:
        check_determinism(module, seed, module.build(seed, fixed=False))
    if module.CAUSE == "healthy":
        valid = not unfixed["failed"] and not fixed["failed"]
    else:
        valid = unfixed["failed"] and not fixed["failed"]
    return {
        "unfixed": unfixed,
        "fixed": fixed,
        "valid": valid,
        "seconds_unfixed": t1 - t0,
        "seconds_fixed": t2 - t1,
    }


def _warm_up() -> None:
    """One tiny SGD and Adam step, so one-off lazy initialisation is not timed as a scenario."""
    model = torch.nn.Linear(4, 1)
    for opt in (torch.optim.SGD(model.parameters(), lr=0.1), torch.optim.Adam(model.parameters())):
        opt.zero_grad()
        model(torch.ones(2, 4)).sum().backward()
        opt.step()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("dir", nargs="?", default="datasets", help="directory of scenario files")
    parser.add_argument("--seeds", default="0,1,2", help="comma-separated seeds (default 0,1,2)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument(
        "--no-determinism",
        action="store_true",
        help="skip the check that two builds with one seed are identical",
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    _warm_up()
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    files = sorted(p for p in Path(args.dir).glob("*.py") if not p.name.startswith("_"))
    if not files:
        print(f"no scenario files in {args.dir}", file=sys.stderr)
        return 1

    header = ("scenario", "cause", "seed", "unfixed", "fixed", "verdict", "secs")
    rows: list[tuple[str, ...]] = []
    bad = 0
    for path in files:
        try:
            module = load_scenario(path)
        except Exception as exc:  # report and go on
            rows.append((path.stem, "?", "-", "-", "-", f"error: {exc!r}"[:80], "-"))
            bad += 1
            continue
        cause = str(getattr(module, "CAUSE", "?"))
        for seed in seeds:
            try:
                r = verify_one(module, seed, not args.no_determinism)
            except Exception as exc:  # report and go on
                last = traceback.extract_tb(exc.__traceback__)[-1]
                where = f"{Path(last.filename).name}:{last.lineno}"
                msg = f"error: {type(exc).__name__}: {exc} ({where})"
                rows.append((path.stem, cause, str(seed), "-", "-", msg[:100], "-"))
                bad += 1
                continue
            if not r["valid"]:
                bad += 1
            secs = f"{r['seconds_unfixed']:.2f}/{r['seconds_fixed']:.2f}"
            rows.append(
                (
                    path.stem,
                    cause,
                    str(seed),
                    describe(r["unfixed"]),
                    describe(r["fixed"]),
                    "valid" if r["valid"] else "INVALID",
                    secs,
                )
            )
            print(" | ".join(rows[-1]), file=sys.stderr, flush=True)

    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))
    n_rows = len(rows)
    print(f"\n{n_rows - bad}/{n_rows} valid; stall: mean(last 10%) >= {STALL_RATIO} x min(first 5)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
