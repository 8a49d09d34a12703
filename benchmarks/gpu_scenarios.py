"""The README's three-line loop on a GPU: bundled scenarios trained on CUDA and diagnosed, next
to the same scenario trained on the CPU, as the suite runs it.

On the GPU each scenario runs through the suite's own loop (`neuraldbg.suite.scenario.train`
with `device`, `record_loss(loss)` only): its model and batches moved to the device, the forward
and loss under `torch.autocast("cuda")` when the scenario sets `amp_dtype`, and a CUDA
`GradScaler` with the scenario scaler's state in place of its own. A scenario whose code makes CPU
tensors of its own (a mask, a constant) cannot move and is reported as such, not scored.
The CPU side runs in worker processes while the GPU trains.

    python benchmarks/gpu_scenarios.py [--suite DIR ...] [--match GLOB ...] [--seeds 0]
        [--budget 300] [--workers 8] [--json OUT]

Prints one row per run (label, CPU answer, GPU answer; "(nan)" where the loss went non-finite)
and a summary: how often each side is right first, how often the two agree, and how many runs
that fail on the CPU with a non-finite loss stay finite on the GPU.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import fnmatch
import json
import math
import multiprocessing as mp
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SUITES = ("datasets/train", "datasets/validation")


def _answer(run: Any) -> dict[str, Any]:
    """The diagnosis's first answer: healthy, a cause, or "unexplained" (failing, no cause
    reaching the report threshold)."""
    from causal.diagnose import diagnose, is_healthy

    hyps = diagnose(run)
    if is_healthy(hyps):
        return {"cause": "healthy", "confidence": None, "layer": None}
    if not hyps:
        return {"cause": "unexplained", "confidence": None, "layer": None}
    top = hyps[0]
    return {"cause": top.cause, "confidence": round(top.confidence, 3), "layer": top.layer}


def _shown(answer: dict[str, Any]) -> str:
    """One side's answer in a row: cause, confidence, layer, "(nan)" for a non-finite loss."""
    if "not_portable" in answer:
        return "not portable"
    if "error" in answer:
        return "error"
    conf = f" {answer['confidence']:.2f}" if answer["confidence"] is not None else ""
    nan = " (nan)" if answer.get("nonfinite") else ""
    return f"{answer['cause']}{conf} @{answer['layer']}{nan}"


def cpu_task(path: str, seed: int, tmp: str) -> dict[str, Any]:
    """One scenario on the CPU, as the suite runs it (one torch thread)."""
    torch.set_num_threads(1)
    from neuraldbg.suite.scenario import load_scenario, train

    t0 = time.perf_counter()
    sc = load_scenario(path)
    try:
        losses, run = train(sc.build(seed), Path(tmp) / f"{sc.name}-{seed}-cpu.ndbg")
        return {**_answer(run), **_outcome(losses), "seconds": time.perf_counter() - t0}
    except Exception as e:  # a scenario's own error is a row, not a crash
        return {"error": f"{type(e).__name__}: {e}"[:200]}


def gpu_task(sc: Any, seed: int, tmp: str, device: torch.device) -> dict[str, Any]:
    """One scenario (a loaded `Scenario`) on `device`, through the suite's loop."""
    from neuraldbg.suite.scenario import train

    t0 = time.perf_counter()
    try:
        losses, run = train(sc.build(seed), Path(tmp) / f"{sc.name}-{seed}-gpu.ndbg",
                            device=device)
    except Exception as e:  # a scenario's own error is a row, not a crash
        text = str(e)
        if "device" in text or "(torch.cuda." in text:  # a tensor of its own left on the CPU
            return {"not_portable": (text.splitlines() or [""])[0][:160]}
        return {"error": f"{type(e).__name__}: {text}"[:200]}
    return {**_answer(run), **_outcome(losses), "seconds": time.perf_counter() - t0}


def _outcome(losses: list[float]) -> dict[str, Any]:
    """Whether the loss went non-finite, and its last value: on a GPU a scenario written on the
    CPU may not fail at all (CUDA's autocast runs exp, sum, softmax and more in float32)."""
    return {"nonfinite": not all(math.isfinite(v) for v in losses),
            "final_loss": losses[-1] if losses else None}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--suite", action="append", default=None,
                   help=f"scenario directory (repeatable; default {', '.join(DEFAULT_SUITES)})")
    p.add_argument("--match", action="append", default=None, metavar="GLOB",
                   help="keep only files whose name matches (repeatable; default all)")
    p.add_argument("--seeds", default="0")
    p.add_argument("--budget", type=float, default=300.0,
                   help="seconds after which no new GPU run starts (rows done are kept)")
    p.add_argument("--workers", type=int, default=8, help="CPU worker processes")
    p.add_argument("--json", metavar="OUT", default=None)
    p.add_argument("--device", default="cuda",
                   help="the device of the second column (default cuda; cpu tries the harness)")
    args = p.parse_args(argv)
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        print("no CUDA device: this benchmark needs a GPU (or --device cpu)", file=sys.stderr)
        return 2
    from neuraldbg.suite.scenario import load_scenario, scenario_files

    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    files = [f for d in (args.suite or DEFAULT_SUITES) for f in scenario_files(ROOT / d)
             if not args.match or any(fnmatch.fnmatch(f.name, m) for m in args.match)]
    tasks = [(str(f), s) for f in files for s in seeds]
    name = torch.cuda.get_device_name(0) if device.type == "cuda" else "cpu"
    print(f"torch {torch.__version__} on {name}, python "
          f"{platform.python_version()}; {len(tasks)} runs", flush=True)
    rows: list[dict[str, Any]] = []
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="ndbg-gpu-") as tmp, \
            cf.ProcessPoolExecutor(args.workers, mp_context=mp.get_context("spawn")) as pool:
        cpu = {t: pool.submit(cpu_task, t[0], t[1], tmp) for t in tasks}
        for path, seed in tasks:
            if time.perf_counter() - t_start > args.budget:
                print(f"budget of {args.budget:.0f} s spent: {len(rows)} of {len(tasks)} runs",
                      flush=True)
                break
            sc = load_scenario(path)
            gpu = gpu_task(sc, seed, tmp, device)
            try:
                on_cpu = cpu[(path, seed)].result(timeout=120)
            except cf.TimeoutError:
                on_cpu = {"error": "CPU run past 120 s"}
            row = {"scenario": sc.name, "seed": seed, "label": sc.cause, "origin": sc.origin,
                   "cpu": on_cpu, "gpu": gpu}
            rows.append(row)
            print(f"{sc.name[:60]:60s} s{seed} {sc.cause:15s} cpu: {_shown(on_cpu):40s} "
                  f"gpu: {_shown(gpu)}", flush=True)
        for f in cpu.values():
            f.cancel()
    scored = [r for r in rows if "cause" in r["gpu"] and "cause" in r["cpu"]]
    n = len(scored)
    gpu_right = sum(r["gpu"]["cause"] == r["label"] for r in scored)
    cpu_right = sum(r["cpu"]["cause"] == r["label"] for r in scored)
    agree = sum(r["gpu"]["cause"] == r["cpu"]["cause"] for r in scored)
    unportable = sum("not_portable" in r["gpu"] for r in rows)
    errors = [r for r in rows if "error" in r["gpu"] or "error" in r["cpu"]]
    # a run whose loss went non-finite on the CPU but not on the GPU did not fail there
    finite_on_gpu = [r for r in scored if r["cpu"].get("nonfinite") and not r["gpu"]["nonfinite"]]
    healthy_there = sum(r["gpu"]["cause"] == "healthy" for r in finite_on_gpu)
    print()
    print("| runs scored | right first on CPU | right first on GPU | same answer | "
          "not portable | errors |")
    print("|---:|---:|---:|---:|---:|---:|")
    print(f"| {n} | {cpu_right} | {gpu_right} | {agree} | {unportable} | {len(errors)} |")
    print(f"\n{len(finite_on_gpu)} runs whose loss went non-finite on the CPU stayed finite on "
          f"the GPU ({healthy_there} of them called healthy there)")
    for r in errors:
        print(f"error: {r['scenario']} s{r['seed']}: cpu {r['cpu'].get('error', 'ok')}; "
              f"gpu {r['gpu'].get('error', 'ok')}")
    print(f"total {time.perf_counter() - t_start:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps({"torch": torch.__version__,
                                               "device": name,
                                               "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
