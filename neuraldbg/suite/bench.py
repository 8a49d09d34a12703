"""The accuracy benchmark: train every scenario x seed under the monitor, diagnose it, score it.

`run_bench` collects one JSON-safe row per run (a crash or a broken file is an error row and the
benchmark goes on); `neuraldbg.suite.scoring.score` turns rows into the measures (defined there).
The
baselines, scored on the same runs: the gradient-norm rule (blame the first layer whose gradient
norm leaves [1e-6, 1e3]; it names no cause, so it is right on a run only by calling it healthy)
and the prior alone (causes ranked by the network's posteriors with no evidence).
"""

from __future__ import annotations

import math
import os
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from causal.diagnose import REPORT_THRESHOLD, Parameters
from causal.schema.vocabulary import EventKind, State
from neuraldbg.suite.parallel import DEFAULT_TIMEOUT, TaskFailed, run_scenarios
from neuraldbg.suite.scenario import check_instrument
from neuraldbg.suite.scoring import BINS, CONFIDENT_WRONG, Row, calibration_bins, score
from neuraldbg.suite.verify import failure_of, suite_files

if TYPE_CHECKING:
    from causal.registry import Registry
    from causal.schema.run import LayerGraph, Run

GRAD_RANGE = (1e-6, 1e3)
_CALM = frozenset({State.GRAD_HEALTHY, State.ACTIVATION_HEALTHY, State.GRAD_FINITE,
                   State.ACTIVATION_FINITE, State.LOSS_FINITE, State.INPUT_FINITE,
                   State.LOSS_STEADY, State.FINITE})
_LOSS_FAILED = frozenset({State.LOSS_NAN, State.LOSS_INF, State.LOSS_DIVERGING,
                          State.LOSS_PLATEAU})
_GRAD_OUT: dict[str, tuple[str, ...]] = {
    EventKind.GRAD: (State.GRAD_VANISHING, State.GRAD_EXPLODING),
    EventKind.GRAD_FINITE: (State.GRAD_NAN, State.GRAD_INF)}

# ---------------------------------------------------------------- evidence from one run


def origin_layers(dag: LayerGraph, origin: str | None) -> list[str]:
    """The layers ORIGIN stands for: itself when it is a layer of the DAG; when it names a
    container (a module that holds layers and is not one, so no layer can equal it), every
    layer inside it."""
    if origin is None:
        return []
    modules = {n.module for n in dag.nodes}
    if origin in modules or origin == "":
        return [origin]
    return sorted(m for m in modules if m.startswith(origin + "."))


def origin_neighbors(dag: LayerGraph, origin: str | None) -> list[str]:
    """Layers one DAG edge (either direction) from ORIGIN (from any layer inside it, when it
    names a container), as node and module names."""
    if origin is None:
        return []
    inside = set(origin_layers(dag, origin))
    own = {n.name for n in dag.nodes if n.module in inside} | {origin}
    modules = {n.name: n.module for n in dag.nodes}
    near = {b for a, b in dag.edges if a in own} | {a for a, b in dag.edges if b in own}
    return sorted(({modules.get(x, x) for x in near} | near) - own - {origin})


def grad_rule(run: Run, bounds: tuple[float, float] = GRAD_RANGE) -> tuple[str, int] | None:
    """The rule everyone writes first: the first (step, then forward order) layer whose gradient
    norm leaves `bounds` (grad events, non-finite gradient events, recorder windows)."""
    lo, hi = bounds
    found = [(ev.step, ev.layer_name) for ev in run.events
             if ev.to_state in _GRAD_OUT.get(ev.kind, ())]
    for w in run.windows:
        for layer in w.layers:
            found += [(s, layer) for s, v in w.series(layer, "grad_norm") if not lo <= v <= hi]
    if not found:
        return None
    order = {name: i for i, name in enumerate(run.dag.forward_order())}
    step, layer = min(found, key=lambda f: (f[0], order.get(f[1], len(order)), f[1]))
    return layer, step


def loss_failure_step(run: Run, losses: Sequence[float]) -> int | None:
    """Where the loss shows the failure: first non-finite loss, or a loss failure event."""
    series = run.series.get("loss")
    steps = [s for s, v in series if not math.isfinite(v)][:1] if series else [
        i for i, v in enumerate(losses) if not math.isfinite(v)][:1]
    steps += [ev.step for ev in run.events
              if ev.kind in (EventKind.LOSS, EventKind.LOSS_FINITE) and ev.to_state in _LOSS_FAILED]
    return min(steps) if steps else None


def first_event_step(run: Run) -> int | None:
    steps = [ev.step for ev in run.events if ev.to_state not in _CALM]
    return min(steps) if steps else None


# ---------------------------------------------------------------- collection


def bench_task(path: str, seed: int, parameters: Parameters = "shipped",
               instrument: str = "readme", registry: Registry | None = None,
               store: str | None = None) -> tuple[Row, Row | None, Row | None]:
    """`bench_one` in a temporary folder (what a worker runs), with the default registry
    unless one is given, reusing the runs kept in `store` (`neuraldbg.suite.run_store`)."""
    import tempfile

    from causal.diagnose import builtin_registry

    reg = builtin_registry() if registry is None else registry
    with tempfile.TemporaryDirectory(prefix="ndbg-bench-") as tmp:
        return bench_one(Path(path), seed, reg, tmp, parameters, instrument,
                         None if store is None else Path(store))


def bench_one(path: Path, seed: int, registry: Registry, tmp: str,
              parameters: Parameters = "shipped", instrument: str = "readme",
              store: Path | None = None) -> tuple[Row, Row | None, Row | None]:
    """Train, diagnose and time one scenario x seed: (row, grad-rule row, prior-only row).
    The row also keeps every symptom's evidence, so that other parameters can re-score it.
    `instrument`: the loop the monitor is given (`neuraldbg.suite.scenario.train`)."""
    from causal.diagnose import collect_evidence, diagnose, run_verdict
    from causal.network import get_network
    from neuraldbg.suite.run_store import train_or_load
    from neuraldbg.suite.scenario import load_scenario

    row: Row = {"scenario": path.stem, "seed": seed, "cause": None, "origin": None,
                "hypotheses": [], "seconds": None, "error": None, "warnings": []}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            scenario = load_scenario(path)
            row.update(cause=scenario.cause, origin=scenario.origin)
            losses, run = train_or_load(lambda: scenario.build(seed), path, seed, instrument,
                                        store, tmp)
            if run is None:
                raise RuntimeError("the monitor returned no run")
            t0 = time.perf_counter()
            hyps = diagnose(run, registry, parameters=parameters)
            row["seconds"] = time.perf_counter() - t0
            evidence = collect_evidence(run, registry)
            judged = run_verdict(run, registry, parameters, evidence)
        except Exception as exc:  # a crash is an error row; the benchmark goes on
            row["error"] = f"{type(exc).__name__}: {exc}"
        row["warnings"] = sorted({str(w.message) for w in caught})
    if row["error"] or run is None:
        return row, None, None
    failure = failure_of(losses)
    at_loss, first = loss_failure_step(run, losses), first_event_step(run)
    row.update(
        hypotheses=[{"cause": h.cause, "confidence": float(h.confidence), "layer": h.layer,
                     "step": h.step} for h in hyps],
        posteriors=dict(judged.root), failing=judged.failing, evidence=evidence,
        steps=len(losses),
        failure=None if failure is None else str(failure),
        origin_layers=origin_layers(run.dag, scenario.origin),
        origin_neighbors=origin_neighbors(run.dag, scenario.origin),
        loss_failure_step=at_loss, first_event_step=first,
        latency=None if at_loss is None or first is None else first - at_loss)
    base = {k: row[k] for k in ("scenario", "seed", "cause", "origin", "origin_layers",
                                "origin_neighbors",
                                "loss_failure_step", "error")}
    flag = grad_rule(run)
    rule = {**base, "posteriors": None, "seconds": None,
            "hypotheses": [] if flag is None else [
                {"cause": None, "confidence": 1.0, "layer": flag[0], "step": flag[1]}],
            "latency": None if flag is None or at_loss is None else flag[1] - at_loss}
    prior = get_network(registry).prior_posteriors()
    prior_row = {**base, "posteriors": prior, "seconds": None, "latency": None,
                 "hypotheses": [{"cause": c, "confidence": p, "layer": None, "step": None}
                                for c, p in sorted(prior.items(), key=lambda kv: (-kv[1], kv[0]))]}
    return row, rule, prior_row


def run_bench(directory: str | os.PathLike[str] | None, seeds: Sequence[int],
              progress: bool = True, registry: Registry | None = None,
              threshold: float = REPORT_THRESHOLD, parameters: Parameters = "shipped", *,
              instrument: str = "readme", workers: int | None = None,
              timeout: float = DEFAULT_TIMEOUT, plugins: Sequence[str] = (), threads: int = 1,
              store: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Benchmark a suite directory (None: the bundled validation families): the scored result,
    JSON-safe. `parameters` as in `causal.diagnose.posteriors` (default: the shipped fit).
    `instrument`: "readme" (the README's loop, `record_loss(loss)`) or "full" (targets too).
    `workers`: worker processes (None: this process, one run after the other), each importing
    `plugins` first; a run past `timeout` seconds is an error row. A custom `registry` only
    runs in this process. `store`: a folder that keeps the recorded runs and reuses them
    (`neuraldbg.suite.run_store`), so re-scoring after a change to the diagnosis skips training."""
    import functools

    from causal.calibration.parameters import effective
    from causal.diagnose import builtin_registry
    from causal.network import get_network

    files = suite_files(directory, split="validation")
    reg = builtin_registry() if registry is None else registry
    t0 = time.perf_counter()
    eff = effective(reg, parameters)
    get_network(eff.registry)  # built once, so `seconds` is the cost of one diagnosis
    build_seconds = time.perf_counter() - t0
    rows: list[Row] = []
    rule_rows: list[Row] = []
    prior_rows: list[Row] = []
    check_instrument(instrument)
    tasks = [(str(path), seed, parameters, instrument) for path in files for seed in seeds]
    kept = None if store is None else os.fspath(store)
    results = run_scenarios(
        functools.partial(bench_task, registry=registry, store=kept),
        tasks, workers=None if registry is not None else workers, timeout=timeout,
        threads=threads, plugins=plugins, progress=progress)
    for (path, seed, _, _), result in zip(tasks, results, strict=True):
        if isinstance(result, TaskFailed):
            rows.append({"scenario": Path(path).stem, "seed": seed, "cause": None,
                         "origin": None, "hypotheses": [], "seconds": None,
                         "error": result.message, "warnings": []})
            continue
        row, rule, prior = result
        rows.append(row)
        if rule is not None and prior is not None:
            rule_rows.append(rule)
            prior_rows.append(prior)
    return {
        **score(rows, threshold),
        "runs": rows,
        "baselines": {
            "grad_threshold": {**score(rule_rows, threshold, False, probabilities=False),
                               "runs": rule_rows, "bounds": list(GRAD_RANGE)},
            "prior_only": {**score(prior_rows, threshold), "runs": prior_rows},
        },
        "meta": {"suite": str(files[0].parent), "seeds": list(seeds), "threshold": threshold,
                 "bins": BINS, "network_build_seconds": build_seconds,
                 "parameters": eff.source, "instrument": instrument},
    }


# ---------------------------------------------------------------- presentation

_COLUMNS: tuple[tuple[str, str, Callable[[Any], str]], ...] = (
    ("runs", "runs", str), ("top-1", "top1", "{:.2f}".format), ("top-3", "top3", "{:.2f}".format),
    ("loc", "localization", "{:.2f}".format), ("loc ±1 hop", "localization_hop", "{:.2f}".format),
    ("ECE", "ece", "{:.3f}".format), ("Brier", "brier", "{:.3f}".format),
    ("false alarms", "false_alarm_rate", "{:.2f}".format),
    ("latency (steps)", "latency", "{:+g}".format), ("s/diagnosis", "seconds", "{:.4f}".format),
    ("errors", "errors", str),
)


def format_table(result: Mapping[str, Any]) -> str:
    """A markdown table: one row per cause, overall, then the baselines (overall)."""
    lines = ["| cause | " + " | ".join(c[0] for c in _COLUMNS) + " |",
             "|---|" + "---:|" * len(_COLUMNS)]

    def add(label: str, stats: Mapping[str, Any]) -> None:
        cells = ["-" if stats.get(key) is None else fmt(stats[key]) for _, key, fmt in _COLUMNS]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")

    for cause, stats in result["per_cause"].items():
        add(cause, stats)
    add("**overall**", result["summary"])
    names = {"grad_threshold": "baseline: grad-norm rule [1e-6, 1e3]",
             "prior_only": "baseline: prior only"}
    for key, base in result.get("baselines", {}).items():
        add(names.get(key, f"baseline: {key}"), base["summary"])
    return "\n".join(lines)


def format_targets(result: Mapping[str, Any]) -> str:
    """The overall counts the table leaves out: failing runs called healthy (with their own
    cause first) and wrong first answers above 0.95 confidence."""
    s = result["summary"]
    if s.get("failing_runs") is None:
        return ""
    return (f"failing runs called healthy: {s['called_healthy']} of {s['failing_runs']} "
            f"({s['called_healthy_cause_first']} with their own cause first); wrong first "
            f"answers above {CONFIDENT_WRONG}: {s['confident_wrong']} of {s['runs']}")


def plot_reliability(result: Mapping[str, Any], out: str | os.PathLike[str]) -> None:
    """Save a reliability diagram (accuracy against top-1 confidence, 15 bins) to `out`."""
    try:
        from matplotlib.figure import Figure
    except ImportError as e:
        from neuraldbg.errors import NeuralDbgError

        raise NeuralDbgError("--plot needs matplotlib: pip install matplotlib") from e
    threshold = float(result.get("meta", {}).get("threshold", REPORT_THRESHOLD))
    cells = calibration_bins(result["runs"], BINS, threshold)
    width = 1.0 / BINS
    centers = [(i + 0.5) * width for i in range(BINS)]
    fig = Figure(figsize=(5, 6))
    ax, hist = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    ax.bar(centers, [0.0 if n == 0 else a for n, _, a in cells], width=width * 0.9,
           edgecolor="black", label="accuracy")
    ax.plot([0, 1], [0, 1], "--", color="gray", label="perfect calibration")
    ax.set_ylabel("top-1 accuracy")
    ax.set_ylim(0, 1)
    ece_value = result["summary"].get("ece")
    ax.set_title("neuraldbg reliability" + ("" if ece_value is None else
                                            f" (ECE {ece_value:.3f})"))
    ax.legend(loc="upper left")
    hist.bar(centers, [n for n, _, _ in cells], width=width * 0.9, color="gray")
    hist.set_xlabel("top-1 confidence")
    hist.set_ylabel("runs")
    hist.set_xlim(0, 1)
    fig.tight_layout()
    fig.savefig(out)
