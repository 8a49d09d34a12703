"""The failure suite: where it lives, the failure criterion, and label verification by intervention.

A label is valid only if, for each seed, the unfixed run fails and the fixed run does not (a
healthy scenario fails in neither). `failure_of` is THE failure criterion: `neuraldbg suite
verify`, the benchmark and `benchmarks/verify_scenarios.py` all apply this one function.

Failure criterion, on the per-step training losses of one run:

* **non-finite**: the loss is NaN or +-inf at some step; the run fails at the first such step.
* **stall**: with `head` = the lowest loss of the first 5 steps and `tail` = the mean loss of the
  last 10% of the steps (at least 5), the run stalls when `tail >= 0.9 * head`: training did not
  remove even 10% of its starting loss (a finite loss that grows is a stall too, "diverged" when
  `tail > 10 * head`). Given the fixed run's losses, a stall counts only if the fixed run does
  not stall as well.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from causal.run_queries import STALL_RATIO, stall_ratio
from neuraldbg.errors import SuiteError

if TYPE_CHECKING:
    from neuraldbg.suite.scenario import Scenario

DIVERGED_RATIO = 10.0
HEALTHY = "healthy"



#: The bundled suite's splits: `train` (the families the hand-set tables were checked against
#: and `neuraldbg fit` fits on), `validation` (used to make decisions: what `neuraldbg bench`
#: scores by default), `probe` (written blind, then used to find capture gaps), `scored` (blind
#: waves after their one scoring: their figures were recorded then, and they are training data
#: since) and `blind` (waves written blind and not scored yet, kept to be scored once each,
#: with the README's loop; never fitted nor fixed against: `neuraldbg bench --suite
#: datasets/blind`).
SPLITS = ("train", "validation", "probe", "scored", "blind")
#: The splits `neuraldbg fit` fits on by default: every one but the blind.
FIT_SPLITS = ("train", "validation", "probe", "scored")


def bundled_suite(split: str | None = None) -> Path:
    """The bundled `datasets/` folder next to the package (source checkout, editable install), or
    one of its SPLITS."""
    here = Path(__file__).resolve().parents[2] / "datasets"
    if split is not None:
        if split not in SPLITS:
            raise SuiteError(f"unknown split {split!r}; the bundled suite has {SPLITS}")
        here = here / split
    if not here.is_dir():
        raise SuiteError(f"no bundled scenario suite at {here} (it ships with a source checkout); "
                         "pass a directory of scenario files with --suite DIR")
    return here


def suite_files(directory: str | os.PathLike[str] | None, flag: str = "--suite",
                split: str | Sequence[str] | None = None) -> list[Path]:
    """The scenario files of `directory`, subfolders included (None: the bundled suite, or its
    `split`, or the files of several splits in order); SuiteError if there are none."""
    from neuraldbg.suite.scenario import scenario_files

    if directory is None and split is not None and not isinstance(split, str):
        return [f for one in split for f in suite_files(None, flag, one)]
    path = bundled_suite(split if isinstance(split, str) else None) if directory is None \
        else Path(directory)
    if not path.is_dir():
        raise SuiteError(f"{path} is not a directory of scenario files; pass one with {flag} DIR")
    files = scenario_files(path)
    if not files:
        raise SuiteError(f"no scenario files (*.py) in {path}; pass another directory with "
                         f"{flag} DIR")
    return files


def parse_seeds(text: str) -> list[int]:
    """`"0,1,2"` -> [0, 1, 2]; SuiteError on anything else."""
    try:
        seeds = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        seeds = []
    if not seeds:
        raise SuiteError(f"--seeds {text!r}: expected comma-separated integers such as 0,1,2")
    return seeds


# ---------------------------------------------------------------- the failure criterion


@dataclass(frozen=True)
class Failure:
    """How a run failed: `kind` "non-finite" (at `step`) or "stall" (loss `ratio` tail/head)."""

    kind: str
    step: int | None = None
    ratio: float | None = None

    def __str__(self) -> str:
        if self.kind == "non-finite":
            return f"failed at step {self.step} (non-finite)"
        word = "diverged" if (self.ratio or 0.0) > DIVERGED_RATIO else "stalled"
        return f"{word} (r={self.ratio:.3g})"


def _own_failure(losses: Sequence[float]) -> Failure | None:
    for step, value in enumerate(losses):
        if not math.isfinite(value):
            return Failure("non-finite", step=step)
    ratio = stall_ratio(losses)
    return Failure("stall", ratio=ratio) if ratio >= STALL_RATIO else None


def failure_of(losses: Sequence[float],
               fixed_losses: Sequence[float] | None = None) -> Failure | None:
    """The failure of a run from its per-step losses, or None when it trained fine.

    A non-finite loss always fails. A stall fails only when the fixed run (when given) does not
    stall too. Call it with `fixed_losses=None` for a fixed or a healthy run.
    """
    own = _own_failure(losses)
    if own is None or own.kind == "non-finite" or fixed_losses is None:
        return own
    fixed = _own_failure(fixed_losses)
    return own if fixed is None or fixed.kind != "stall" else None


def outcome(losses: Sequence[float], failure: Failure | None) -> str:
    """One table cell: the failure, or "ok (r=...)"."""
    return str(failure) if failure is not None else f"ok (r={stall_ratio(losses):.3g})"


# ---------------------------------------------------------------- verification


@dataclass(frozen=True)
class VerifyRow:
    """One scenario x seed of `verify`: both outcomes and whether the label holds."""

    scenario: str
    cause: str
    seed: int | None
    unfixed: str
    fixed: str
    valid: bool
    seconds: float = 0.0
    error: str | None = None


def _error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def check_labels(scenario: Scenario, spec: dict[str, Any]) -> None:
    """CAUSE is registered (or healthy) and ORIGIN is None or a module of the unfixed model."""
    from causal.diagnose import builtin_registry
    from neuraldbg.suite.scenario import ScenarioError

    causes = builtin_registry().causes()
    if scenario.cause != HEALTHY and scenario.cause not in causes:
        raise ScenarioError(f"{scenario.path.name}: CAUSE {scenario.cause!r} is not a registered "
                            f"cause (registered: {sorted(causes)}) nor {HEALTHY!r}")
    model = spec["model"]
    names = {n for n, _ in model.named_modules()}
    if scenario.origin is not None and scenario.origin not in names:
        raise ScenarioError(f"{scenario.path.name}: ORIGIN {scenario.origin!r} is not a module "
                            "of the unfixed model (use a name from model.named_modules())")
    if not scenario.source.strip():
        raise ScenarioError(f"{scenario.path.name}: SOURCE is empty; name the public report or "
                            "known pattern the scenario is modelled on")
    steps = spec.get("steps")
    if steps is not None and len(spec["batches"]) != int(steps):
        raise ScenarioError(f"{scenario.path.name}: {len(spec['batches'])} batches for {steps} "
                            "steps; build() must return one batch per step")


def _fingerprint(spec: dict[str, Any]) -> list[Any]:
    """The initial weights and every batch tensor of a build (for the determinism check)."""
    import torch

    out: list[Any] = [t.detach().clone() for t in spec["model"].state_dict().values()]
    for x, y in spec["batches"]:
        for t in (*(x if isinstance(x, (tuple, list)) else (x,)), y):
            if isinstance(t, torch.Tensor):
                out.append(t)
    return out


def check_determinism(scenario: Scenario, seed: int, spec: dict[str, Any]) -> None:
    """build(seed) twice gives the same weights and batches (labels must be reproducible)."""
    import torch

    a, b = _fingerprint(spec), _fingerprint(scenario.build(seed))
    same = len(a) == len(b) and all(
        x.shape == y.shape and x.dtype == y.dtype and torch.equal(x.nan_to_num(), y.nan_to_num())
        for x, y in zip(a, b, strict=True))
    if not same:
        from neuraldbg.suite.scenario import ScenarioError

        raise ScenarioError(f"{scenario.path.name}: build({seed}) is not deterministic; seed "
                            "every generator from the seed argument")


def verify_one(path: Path, seeds: Sequence[int]) -> list[VerifyRow]:
    """The rows of one scenario file; an error (load, build, train) becomes an invalid row."""
    from neuraldbg.suite.scenario import load_scenario, train

    try:
        scenario = load_scenario(path)
    except Exception as exc:  # a broken file is reported, the suite goes on
        return [VerifyRow(path.stem, "?", None, "-", "-", False, error=_error_text(exc))]
    rows = []
    for seed in seeds:
        t0 = time.perf_counter()
        try:
            spec = scenario.build(seed)
            check_labels(scenario, spec)
            check_determinism(scenario, seed, spec)
            losses, _ = train(spec)
            fixed_losses, _ = train(scenario.build(seed, fixed=True))
        except Exception as exc:
            rows.append(VerifyRow(scenario.name, scenario.cause, seed, "-", "-", False,
                                  time.perf_counter() - t0, _error_text(exc)))
            continue
        fixed_failure = failure_of(fixed_losses)
        if scenario.cause == HEALTHY:
            failure = failure_of(losses)
            valid = failure is None and fixed_failure is None
        else:
            failure = failure_of(losses, fixed_losses)
            valid = failure is not None and fixed_failure is None
        rows.append(VerifyRow(scenario.name, scenario.cause, seed, outcome(losses, failure),
                              outcome(fixed_losses, fixed_failure), valid,
                              time.perf_counter() - t0))
    return rows


def verify_task(path: str, seed: int) -> list[VerifyRow]:
    """`verify_one` of one seed (what a worker runs)."""
    return verify_one(Path(path), [seed])


def verify(directory: str | os.PathLike[str] | None, seeds: Sequence[int], *,
           workers: int | None = None, timeout: float | None = None,
           progress: bool = False) -> list[VerifyRow]:
    """Verify every label of a suite directory (None: the bundled one) by intervention, in
    `workers` processes (None: this one); a run past `timeout` seconds is an invalid row."""
    from neuraldbg.suite.parallel import DEFAULT_TIMEOUT, TaskFailed, run_scenarios

    tasks = [(str(path), seed) for path in suite_files(directory, flag="DIR") for seed in seeds]
    results = run_scenarios(verify_task, tasks, workers=workers, progress=progress,
                            timeout=DEFAULT_TIMEOUT if timeout is None else timeout)
    rows: list[VerifyRow] = []
    for (path, seed), result in zip(tasks, results, strict=True):
        if isinstance(result, TaskFailed):
            rows.append(VerifyRow(Path(path).stem, "?", seed, "-", "-", False,
                                  error=result.message))
        else:
            rows.extend(result)
    return rows


def format_verify(rows: Sequence[VerifyRow]) -> str:
    """A plain-text table of `verify` rows and a closing count."""
    header = ("scenario", "cause", "seed", "unfixed", "fixed", "verdict", "secs")
    cells = [(r.scenario, r.cause, "-" if r.seed is None else str(r.seed), r.unfixed, r.fixed,
              "valid" if r.valid else f"INVALID: {r.error}" if r.error else "INVALID",
              f"{r.seconds:.2f}") for r in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) if cells else len(h)
              for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip(),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
              for row in cells]
    n_valid = sum(r.valid for r in rows)
    lines.append(f"\n{n_valid}/{len(rows)} valid; failure: a non-finite loss, or a stall (mean "
                 f"loss of the last 10% >= {STALL_RATIO} x min of the first 5) that the fixed "
                 "run does not have")
    return "\n".join(lines)
