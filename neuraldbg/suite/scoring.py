"""The benchmark's measures, on JSON-safe rows (one per run), so a saved `--json` can be
rescored without torch.

Definitions (docs/design.md "Measures", made precise here; `threshold` = REPORT_THRESHOLD):

* **ranking**: the hypotheses' causes by root-cause confidence; when the row's failing confidence
  is below the threshold (rows without one: no hypothesis reaches it) the run is predicted
  healthy and "healthy" takes rank 1. top-k is right when the true label (a cause or
  "healthy") is among the first k, so a healthy run counts only when healthy is predicted.
* **localization** (runs whose scenario has ORIGIN): the rank-1 hypothesis names the right cause
  and its layer is ORIGIN, or inside ORIGIN when ORIGIN names a container (a module that holds
  layers and is not one itself, so no layer could ever equal it: `bench.origin_layers`); "hop":
  or a layer one DAG edge (either way) from ORIGIN (from any layer inside it). The
  gradient-rule baseline names no cause, so only its layer is checked.
* **ECE**: 15 equal-width bins over the rank-1 confidence (a run predicted healthy has confidence
  1 - its failing confidence, or 1 - max posterior), correctness = top-1; sum over bins of
  |accuracy - confidence| x share.
* **Brier**: one-vs-rest, per run the mean over causes of (P(cause) - y)^2 with y = 1 only for the
  true cause (all 0 for a healthy run), using every cause's posterior; averaged over runs.
* **false-alarm rate**: healthy runs predicted failing.
* **called healthy** (counts): failing runs predicted healthy, and of those the ones whose
  first hypothesis is their own cause; **confident mistakes**: wrong first answers (a cause,
  or healthy) above CONFIDENT_WRONG (0.95). Issue 26's targets for both: none.
* **latency** (steps): first failure event of the monitor minus the step at which the loss shows
  the failure (first non-finite loss, or the loss turning nan/inf/diverging/plateau), median over
  failing runs; negative means the monitor saw it before the loss did.
* **seconds**: mean wall time of `diagnose(run)` (the network is built once beforehand).

Baselines, scored on the same runs: the gradient-norm rule (blame the first layer whose gradient
norm leaves [1e-6, 1e3]; it names no cause, so it is right on a run only by calling it healthy)
and the prior alone (causes ranked by the network's posteriors with no evidence).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from causal.diagnose import REPORT_THRESHOLD
from causal.verdict import CONFIDENT_WRONG
from neuraldbg.suite.verify import HEALTHY

Row = dict[str, Any]
BINS = 15

# ---------------------------------------------------------------- measures (pure, on rows)


def _hyps(row: Row) -> list[Mapping[str, Any]]:
    return sorted(row.get("hypotheses") or (), key=lambda h: -float(h["confidence"]))


def predicted_healthy(row: Row, threshold: float = REPORT_THRESHOLD) -> bool:
    """The row's failing confidence below `threshold` (rows without one: no hypothesis
    reaching it)."""
    if row.get("failing") is not None:
        return float(row["failing"]) < threshold
    return not any(float(h["confidence"]) >= threshold for h in _hyps(row))


def ranking(row: Row, threshold: float = REPORT_THRESHOLD) -> list[str | None]:
    causes = [h["cause"] for h in _hyps(row)]
    return [HEALTHY, *causes] if predicted_healthy(row, threshold) else causes


def _scored(rows: Sequence[Row]) -> list[Row]:
    return [r for r in rows if not r.get("error")]


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def top_k(rows: Sequence[Row], k: int, threshold: float = REPORT_THRESHOLD) -> float | None:
    return _mean([float(r["cause"] in ranking(r, threshold)[:k]) for r in _scored(rows)])


def localized(row: Row, hop: bool = False, require_cause: bool = True,
              threshold: float = REPORT_THRESHOLD) -> bool:
    hyps = _hyps(row)
    if predicted_healthy(row, threshold) or not hyps:
        return False
    top = hyps[0]
    if require_cause and top["cause"] != row["cause"]:
        return False
    layer = top.get("layer")
    if layer is None:
        return False
    layer = str(layer).split("#")[0]  # a second call site "net.0#1" is module "net.0"
    return (layer == row["origin"] or layer in (row.get("origin_layers") or ())
            or (hop and layer in (row.get("origin_neighbors") or ())))


def localization(rows: Sequence[Row], hop: bool = False, require_cause: bool = True,
                 threshold: float = REPORT_THRESHOLD) -> float | None:
    return _mean([float(localized(r, hop, require_cause, threshold))
                  for r in _scored(rows) if r.get("origin") is not None])


def top1_confidence(row: Row, threshold: float = REPORT_THRESHOLD) -> float:
    hyps = _hyps(row)
    if not predicted_healthy(row, threshold):
        return float(hyps[0]["confidence"]) if hyps else 0.0
    if row.get("failing") is not None:
        return 1.0 - float(row["failing"])
    post = row.get("posteriors") or {h["cause"]: h["confidence"] for h in hyps}
    return 1.0 - max((float(p) for p in post.values()), default=0.0)


def calibration_bins(rows: Sequence[Row], bins: int = BINS,
                     threshold: float = REPORT_THRESHOLD) -> list[tuple[int, float, float]]:
    """Per equal-width bin of top-1 confidence ([i/bins, (i+1)/bins), the last one closed):
    (count, mean confidence, accuracy); empty bins are (0, nan, nan)."""
    acc: list[list[tuple[float, float]]] = [[] for _ in range(bins)]
    for r in _scored(rows):
        conf = top1_confidence(r, threshold)
        right = float(ranking(r, threshold)[:1] == [r["cause"]])
        acc[min(int(conf * bins), bins - 1)].append((conf, right))
    return [(len(b), sum(c for c, _ in b) / len(b), sum(a for _, a in b) / len(b)) if b
            else (0, math.nan, math.nan) for b in acc]


def ece(rows: Sequence[Row], bins: int = BINS,
        threshold: float = REPORT_THRESHOLD) -> float | None:
    cells = calibration_bins(rows, bins, threshold)
    n = sum(c for c, _, _ in cells)
    return sum(c / n * abs(a - conf) for c, conf, a in cells if c) if n else None


def brier(rows: Sequence[Row]) -> float | None:
    scores = []
    for r in _scored(rows):
        post = r.get("posteriors")
        if post is None:
            continue
        causes = set(post) | ({r["cause"]} - {HEALTHY})
        scores.append(sum((float(post.get(c, 0.0)) - float(c == r["cause"])) ** 2
                          for c in causes) / len(causes))
    return _mean(scores)


def false_alarm_rate(rows: Sequence[Row], threshold: float = REPORT_THRESHOLD) -> float | None:
    return _mean([float(not predicted_healthy(r, threshold))
                  for r in _scored(rows) if r["cause"] == HEALTHY])


def latency(rows: Sequence[Row]) -> float | None:
    values = [float(r["latency"]) for r in _scored(rows)
              if r["cause"] != HEALTHY and r.get("latency") is not None]
    return statistics.median(values) if values else None


def called_healthy(rows: Sequence[Row], threshold: float = REPORT_THRESHOLD
                   ) -> tuple[int, int, int]:
    """(failing runs, how many were predicted healthy, how many of those with their own cause
    ranked first among the hypotheses): a run that did not learn reported healthy is the
    worst miss, the more so when the engine had its cause in hand."""
    failing = [r for r in _scored(rows) if r.get("cause") not in (None, HEALTHY)]
    missed = [r for r in failing if predicted_healthy(r, threshold)]
    first = sum(1 for r in missed if _hyps(r) and _hyps(r)[0]["cause"] == r["cause"])
    return len(failing), len(missed), first


def confident_mistakes(rows: Sequence[Row], threshold: float = REPORT_THRESHOLD,
                       above: float = CONFIDENT_WRONG) -> int:
    """Runs whose first answer (a cause, or healthy) is wrong at a confidence above `above`."""
    return sum(1 for r in _scored(rows) if r.get("cause") is not None
               and ranking(r, threshold)[:1] != [r["cause"]]
               and top1_confidence(r, threshold) > above)


def summarize(rows: Sequence[Row], threshold: float = REPORT_THRESHOLD,
              require_cause: bool = True, probabilities: bool = True) -> dict[str, Any]:
    """The measures of `rows`; `require_cause=False` and `probabilities=False` score a rule that
    names a layer but no cause and no probability (localization by layer alone, no ECE/Brier)."""
    scored = _scored(rows)
    out = {
        "runs": len(scored), "errors": len(rows) - len(scored),
        "top1": top_k(rows, 1, threshold), "top3": top_k(rows, 3, threshold),
        "localization": localization(rows, False, require_cause, threshold),
        "localization_hop": localization(rows, True, require_cause, threshold),
        "ece": ece(rows, BINS, threshold) if probabilities else None,
        "brier": brier(rows) if probabilities else None,
        "false_alarm_rate": false_alarm_rate(rows, threshold), "latency": latency(rows),
        "seconds": _mean([float(r["seconds"]) for r in scored if r.get("seconds") is not None]),
    }
    if probabilities:  # a rule that names no cause calls no run healthy or wrong with a confidence
        failing, missed, first = called_healthy(rows, threshold)
        out.update(failing_runs=failing, called_healthy=missed,
                   called_healthy_cause_first=first,
                   confident_wrong=confident_mistakes(rows, threshold))
    return out


def score(rows: Sequence[Row], threshold: float = REPORT_THRESHOLD,
          require_cause: bool = True, probabilities: bool = True) -> dict[str, Any]:
    """{"summary": ..., "per_cause": {cause: ...}} (rows of an unknown cause count only overall)."""
    causes = sorted({r["cause"] for r in rows if r.get("cause") is not None},
                    key=lambda c: (c == HEALTHY, c))
    return {"summary": summarize(rows, threshold, require_cause, probabilities),
            "per_cause": {c: summarize([r for r in rows if r.get("cause") == c], threshold,
                                       require_cause, probabilities) for c in causes}}
