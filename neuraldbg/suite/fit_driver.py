"""`neuraldbg fit`: run the training families of a suite, fit the network, score held-out families.

`collect` trains scenario x seed under the monitor and keeps one `Observation` per run (label +
every symptom's distribution), optionally cached in a JSON file so that re-fitting does not
retrain. `split_families` (from `causal.calibration.fit`) holds out whole families (scenario
files), never
only seeds. `run_fit` does it all: split, collect, `causal.calibration.fit.fit_parameters` on the
training
families, and a comparison of hand-set vs fitted vs fitted+calibrated posteriors on the held-out
families with the benchmark's own measures (`neuraldbg.suite.scoring.summarize`: top-1, top-3, ECE
with
15 bins, Brier, false alarms).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from causal.calibration.fit import (
    HEALTHY,
    FitError,
    FittedParameters,
    Observation,
    fit_parameters,
    observations_path,
    save_observations,
    select_ess,
    split_families,
)
from neuraldbg.suite.parallel import DEFAULT_TIMEOUT, TaskFailed, run_scenarios

if TYPE_CHECKING:
    from causal.network import CausalNetwork
    from causal.registry import Registry
    from causal.verdict import Verdict

__all__ = ["Observation", "collect", "evaluate", "format_comparison", "run_fit",
           "split_families", "suite_labels"]

CACHE_FORMAT = "neuraldbg-observations"
CACHE_SCHEMA = 1
#: Hypotheses below this posterior are not listed (mirrors `diagnose`'s default min_confidence).
MIN_CONFIDENCE = 0.05


def suite_labels(directory: str | os.PathLike[str] | None,
                 errors: list[tuple[str, int | None, str]] | None = None,
                 split: str | Sequence[str] | None = None) -> dict[str, str]:
    """Family (file stem) -> label (CAUSE) of every loadable scenario file in the suite.

    A file that cannot be loaded is left out (and appended to `errors` when given)."""
    from neuraldbg.suite.scenario import load_scenario
    from neuraldbg.suite.verify import suite_files

    out = {}
    for path in suite_files(directory, split=split):
        try:
            out[path.stem] = load_scenario(path).cause
        except Exception as exc:  # a broken file is reported, the others are used
            if errors is None:
                raise
            errors.append((path.stem, None, f"{type(exc).__name__}: {exc}"))
    return out


def _signature(registry: Registry) -> str:
    """What the evidence of a run depends on, besides the run (see `symptom_signature`)."""
    from causal.calibration.fingerprint import symptom_signature

    return symptom_signature(registry)


def _cache_key(path: Path, seed: int, signature: str, instrument: str) -> str:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    return f"{path.stem}:{seed}:{digest}:{signature}:{instrument}"


def _read_cache(path: Path | None) -> dict[str, dict[str, Any]]:
    if path is None or not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {}
    if data.get("format") != CACHE_FORMAT or data.get("schema") != CACHE_SCHEMA:
        return {}
    entries = data.get("entries")
    return dict(entries) if isinstance(entries, dict) else {}


def _write_cache(path: Path, entries: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"format": CACHE_FORMAT, "schema": CACHE_SCHEMA,
                               "entries": {k: entries[k] for k in sorted(entries)}}, indent=1),
                   encoding="utf-8")
    os.replace(tmp, path)


def observe_task(path: str, seed: int, instrument: str, registry: Registry | None = None,
                 store: str | None = None) -> Observation:
    """`observe_one` in a temporary folder (what a worker runs), with the default registry
    unless one is given, reusing the runs kept in `store` (`neuraldbg.suite.run_store`)."""
    from causal.diagnose import builtin_registry

    reg = builtin_registry() if registry is None else registry
    with tempfile.TemporaryDirectory(prefix="ndbg-fit-") as tmp:
        return observe_one(Path(path), seed, reg, tmp, instrument,
                           None if store is None else Path(store))


def observe_one(path: Path, seed: int, registry: Registry, tmp: str,
                instrument: str = "readme", store: Path | None = None) -> Observation:
    """Train one scenario x seed under the monitor (attached as `instrument` says), or read it
    back from `store`; its label and every symptom's evidence."""
    from causal.diagnose import collect_evidence
    from neuraldbg.suite.run_store import train_or_load
    from neuraldbg.suite.scenario import load_scenario

    scenario = load_scenario(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the scenarios' own warnings are not ours to report
        _, run = train_or_load(lambda: scenario.build(seed), path, seed, instrument, store, tmp)
    if run is None:
        raise RuntimeError("the monitor returned no run")
    return Observation(scenario=scenario.name, family=path.stem, seed=seed,
                       cause=scenario.cause, evidence=collect_evidence(run, registry))


def collect(directory: str | os.PathLike[str] | None, seeds: Sequence[int],
            families: Sequence[str] | None = None, *, registry: Registry | None = None,
            cache: str | os.PathLike[str] | None = None, progress: bool = False,
            errors: list[tuple[str, int | None, str]] | None = None,
            split: str | Sequence[str] | None = None, instrument: str = "readme",
            workers: int | None = None,
            timeout: float = DEFAULT_TIMEOUT, plugins: Sequence[str] = (),
            threads: int = 1, store: str | os.PathLike[str] | None = None
            ) -> list[Observation]:
    """One `Observation` per scenario file (restricted to `families`, file stems) x seed.
    `directory` None means the bundled suite, or its `split`.

    `cache`: a JSON file of observations keyed by file stem, seed, a hash of the file and a hash
    of the registered symptoms' code, so an unchanged scenario is not retrained (delete it when
    the monitor itself changes). A run that crashes is left out and appended to `errors` (a
    list of (family, seed, message)) when given, else raised. `instrument`, `workers`,
    `timeout`, `plugins`, `threads` and `store` as in `neuraldbg.suite.bench.run_bench`.
    """
    import functools

    from causal.diagnose import builtin_registry
    from neuraldbg.suite.scenario import check_instrument
    from neuraldbg.suite.verify import suite_files

    reg = builtin_registry() if registry is None else registry
    files = suite_files(directory, split=split)
    if families is not None:
        wanted = set(families)
        files = [p for p in files if p.stem in wanted]
    cache_path = None if cache is None else Path(cache)
    entries = _read_cache(cache_path)
    signature = _signature(reg)
    check_instrument(instrument)
    keys = {(path, seed): _cache_key(path, seed, signature, instrument)
            for path in files for seed in seeds}
    todo = [(str(path), seed, instrument) for path in files for seed in seeds
            if keys[path, seed] not in entries]
    results = run_scenarios(
        functools.partial(observe_task, registry=registry,
                          store=None if store is None else os.fspath(store)),
        todo, workers=None if registry is not None else workers, timeout=timeout,
        threads=threads, plugins=plugins, progress=progress)
    fresh = 0
    for (path_text, seed, _), result in zip(todo, results, strict=True):
        if isinstance(result, TaskFailed):
            if errors is None:
                raise RuntimeError(f"{Path(path_text).stem} seed {seed}: {result.message}")
            errors.append((Path(path_text).stem, seed, result.message))
            continue
        entries[keys[Path(path_text), seed]] = result.to_dict()
        fresh += 1
    if cache_path is not None and fresh:
        _write_cache(cache_path, entries)
    out = [Observation.from_dict(entries[keys[path, seed]]) for path in files for seed in seeds
           if keys[path, seed] in entries]
    return out


# ---------------------------------------------------------------- evaluation


def _row(ob: Observation, judged: Verdict) -> dict[str, Any]:
    return {"scenario": ob.scenario, "seed": ob.seed, "cause": ob.cause, "origin": None,
            "posteriors": dict(judged.root), "failing": judged.failing, "seconds": None,
            "latency": None, "error": None,
            "hypotheses": [{"cause": c, "confidence": p, "layer": None, "step": None}
                           for c, p in judged.listed(MIN_CONFIDENCE)]}


VARIANTS = ("hand-set", "fitted", "fitted + calibrated")


def evaluate(observations: Sequence[Observation], registry: Registry,
             fitted: FittedParameters) -> dict[str, dict[str, Any]]:
    """Per variant (hand-set, fitted, fitted + calibrated): the benchmark's `score` of the
    observations' posteriors ({"summary": ..., "per_cause": ...})."""
    from causal.network import get_network

    fit_net = get_network(fitted.apply(registry))
    return _score_variants(((ob, fit_net) for ob in observations), registry, fitted)


def evaluate_cross_fitted(observations: Sequence[Observation], registry: Registry,
                          fitted: FittedParameters) -> dict[str, dict[str, Any]]:
    """`evaluate` with every family scored by tables fitted without it (leave-one-family-out:
    how the engine does on a family it has not seen), calibrated by `fitted`'s map (itself
    fitted on these same cross-fitted posteriors)."""
    from causal.calibration.fit import cross_fitted
    from causal.network import get_network

    folds = cross_fitted(observations, registry, fitted.ess)
    return _score_variants(((ob, get_network(fold)) for mine, fold in folds for ob in mine),
                           registry, fitted)


def cross_fitted_rows(observations: Sequence[Observation], registry: Registry,
                      fitted: FittedParameters) -> list[dict[str, Any]]:
    """One bench row per observation (in their order) as the engine fitted as `fitted` would
    score it on a family it has not seen: the tables fitted without the observation's family,
    `fitted`'s calibration (what `evaluate_cross_fitted` scores as "fitted + calibrated", row
    by row)."""
    from causal.calibration.fit import cross_fitted
    from causal.network import get_network

    rows: dict[int, dict[str, Any]] = {}
    for mine, fold in cross_fitted(observations, registry, fitted.ess):
        net = get_network(fold)
        rows.update((id(ob), _row(ob, _calibrated(net, ob, fitted))) for ob in mine)
    return [rows[id(ob)] for ob in observations]


def _calibrated(net: CausalNetwork, ob: Observation, fitted: FittedParameters) -> Verdict:
    from causal.verdict import verdict

    return verdict(net, ob.evidence, fitted.calibrate, fitted.calibration.share_temperature,
                   fitted.calibration.sharp_temperature)


def _score_variants(fitted_networks: Iterable[tuple[Observation, CausalNetwork]],
                    registry: Registry, fitted: FittedParameters
                    ) -> dict[str, dict[str, Any]]:
    """`score` per variant, from each observation's verdict under the hand-set tables, its
    network of fitted tables, and that network with `fitted`'s calibration maps."""
    from causal.network import get_network
    from causal.verdict import verdict
    from neuraldbg.suite.scoring import score

    hand = get_network(registry)
    rows: dict[str, list[dict[str, Any]]] = {v: [] for v in VARIANTS}
    for ob, net in fitted_networks:
        rows["hand-set"].append(_row(ob, verdict(hand, ob.evidence)))
        rows["fitted"].append(_row(ob, verdict(net, ob.evidence)))
        rows["fitted + calibrated"].append(_row(ob, _calibrated(net, ob, fitted)))
    return {v: score(r) for v, r in rows.items()}


def _fmt(value: Any, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def format_comparison(result: Mapping[str, Mapping[str, Any]]) -> str:
    """Markdown: one row per variant (top-1, top-3, ECE, Brier, false alarms), then top-1 per
    cause and variant."""
    lines = ["| parameters | runs | top-1 | top-3 | ECE | Brier | false alarms |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for variant, res in result.items():
        s = res["summary"]
        lines.append(f"| {variant} | {s['runs']} | {_fmt(s['top1'], '.2f')} | "
                     f"{_fmt(s['top3'], '.2f')} | {_fmt(s['ece'], '.3f')} | "
                     f"{_fmt(s['brier'], '.3f')} | {_fmt(s['false_alarm_rate'], '.2f')} |")
    causes: list[str] = []
    for res in result.values():
        causes += [c for c in res["per_cause"] if c not in causes]
    if causes:
        lines += ["", "| top-1 by cause | runs | " + " | ".join(result) + " |",
                  "|---|---:|" + "---:|" * len(result)]
        for c in causes:
            first = next(iter(result.values()))["per_cause"].get(c, {})
            cells = [_fmt(res["per_cause"].get(c, {}).get("top1"), ".2f")
                     for res in result.values()]
            lines.append(f"| {c} | {first.get('runs', 0)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


# ---------------------------------------------------------------- the whole command


@dataclass(frozen=True)
class FitReport:
    fitted: FittedParameters
    training: tuple[str, ...]
    held_out: tuple[str, ...]
    comparison: dict[str, dict[str, Any]]
    errors: tuple[tuple[str, int | None, str], ...]
    #: How `comparison` was scored: "held-out" families, or "leave-one-family-out" over the
    #: training families (when there is no held-out split).
    scored_on: str = "held-out"


def run_fit(suite: str | os.PathLike[str] | None, seeds: Sequence[int],
            out: str | os.PathLike[str] | None, held_out_fraction: float = 0.34,
            split_seed: int = 0, ess: float | str = "auto", calibration: str = "temperature",
            registry: Registry | None = None, cache: str | os.PathLike[str] | None = None,
            progress: bool = False, log: Callable[[str], None] | None = None,
            held_out: str | os.PathLike[str] | None = None, *, instrument: str = "readme",
            workers: int | None = None, timeout: float = DEFAULT_TIMEOUT,
            plugins: Sequence[str] = (), threads: int = 1,
            store: str | os.PathLike[str] | None = None) -> FitReport:
    """Collect and fit on the training families, write the parameters to `out` (unless None)
    and score the held-out families.

    Where the families come from: with `suite` None, every bundled split but the blind one
    (`FIT_SPLITS`: train, validation, probe, scored) is fitted, and each family scored
    leave-one-family-out; with `held_out` given, `suite` is fitted and `held_out` scored;
    otherwise `suite` is split by family (`held_out_fraction` of each label's families,
    chosen with `split_seed`), never by seed; `held_out_fraction` 0 fits every family and
    scores leave-one-family-out.
    `instrument` (default "readme", the README's loop), `workers`, `timeout`, `plugins`,
    `threads`, `store`: see `collect`."""
    from causal.diagnose import builtin_registry

    reg = builtin_registry() if registry is None else registry
    errors: list[tuple[str, int | None, str]] = []
    from neuraldbg.suite.verify import FIT_SPLITS

    bundled = suite is None and held_out is None
    train_split = FIT_SPLITS if bundled else None
    held_split = None
    labels = suite_labels(suite, errors, split=train_split)
    if bundled or (held_out is None and held_out_fraction == 0):
        train, held = sorted(labels), []
    elif held_out is not None:
        held_labels = suite_labels(held_out, errors, split=held_split)
        shared = sorted(set(labels) & set(held_labels))
        if shared:
            raise FitError(f"families {shared} are both in the training and the held-out suite; "
                           "a family is held out whole")
        train, held = sorted(labels), sorted(held_labels)
        labels = {**labels, **held_labels}
    else:
        train, held = split_families(labels, held_out_fraction, split_seed)
    unknown = sorted({c for c in labels.values() if c != HEALTHY} - set(reg.causes()))
    if unknown:
        raise FitError(f"scenarios are labelled with unregistered causes {unknown}; register "
                       "them before fitting")
    if log is not None:
        log(f"training families ({len(train)}): {', '.join(train)}")
        log(f"held-out families ({len(held)}): {', '.join(held) or '(none)'}")
    runner: dict[str, Any] = {"instrument": instrument, "workers": workers, "timeout": timeout,
                              "plugins": plugins, "threads": threads, "store": store}
    train_obs = collect(suite, seeds, train, registry=None if registry is None else reg,
                        cache=cache, progress=progress, errors=errors, split=train_split,
                        **runner)
    if not train_obs:
        raise FitError("no training run succeeded; nothing to fit (see the errors above)")
    if ess == "auto":  # chosen by leave-one-family-out cross-validation on the training runs
        chosen, scores = select_ess(train_obs, reg)
        if log is not None:
            log("ess by leave-one-family-out log-loss: " + ", ".join(
                f"{e:g}: {v:.3f}" for e, v in scores.items()) + f" -> {chosen:g}")
    else:
        chosen = float(ess)
    fitted = fit_parameters(train_obs, reg, ess=chosen, calibration=calibration, seeds=seeds)
    if out is not None:
        fitted.save(out)
        save_observations(observations_path(out), train_obs, reg, instrument)
    held_dir = suite if held_out is None else held_out
    held_obs = collect(held_dir, seeds, held, registry=None if registry is None else reg,
                       cache=cache, progress=progress, errors=errors, split=held_split,
                       **runner) if held else []
    if held_obs:
        comparison, scored_on = evaluate(held_obs, reg, fitted), "held-out"
    elif not held and len({ob.family for ob in train_obs}) >= 2:
        comparison = evaluate_cross_fitted(train_obs, reg, fitted)
        scored_on = "leave-one-family-out"
    else:
        comparison, scored_on = {}, "held-out"
    return FitReport(fitted, tuple(train), tuple(held), comparison, tuple(errors), scored_on)


def print_errors(errors: Sequence[tuple[str, int | None, str]]) -> None:
    for family, seed, message in errors:
        where = family if seed is None else f"{family} seed {seed}"
        print(f"error: {where}: {message}", file=sys.stderr)
