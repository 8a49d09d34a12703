"""How far the network's independence assumption is from the fitted runs: within each cause, the
mutual information (nats) between two symptoms' most likely states.

The network treats a cause's symptoms as independent given the cause, so two symptoms that
always move together (a non-finite loss and the `outcome` "nonfinite") count the same evidence
twice; the calibration's temperature and the root shares' temperature pull the result back only
on average. The pairs at the top of this table are where a richer model (a failure mode per
cause, on which the symptoms depend) would change the answers most.

    .venv/bin/python benchmarks/symptom_dependence.py [--observations PATH] [--top 25]
        [--cause dead_relu] [--min-runs 20]

Reads the observations `neuraldbg fit` wrote beside the shipped tables
(`causal/calibration/fitted.observations.json`); no torch.
"""

from __future__ import annotations

import argparse
import collections
import itertools
import json
import math
from pathlib import Path

from causal.diagnose import shown_state

DEFAULT = Path(__file__).resolve().parents[1] / "causal/calibration/fitted.observations.json"


def mutual_information(pairs: list[tuple[str, str]]) -> float:
    """The mutual information (nats) of the state pairs' empirical joint distribution."""
    n = len(pairs)
    left = collections.Counter(a for a, _ in pairs)
    right = collections.Counter(b for _, b in pairs)
    return math.fsum(c / n * math.log(c * n / (left[a] * right[b]))
                     for (a, b), c in collections.Counter(pairs).items())


def dependence(observations: list[dict], min_runs: int) -> dict[tuple[str, str, str], float]:
    """(cause, symptom, symptom) -> mutual information, over the pairs both observed on at least
    `min_runs` of the cause's runs."""
    by_cause: dict[str, list[dict[str, str]]] = collections.defaultdict(list)
    for ob in observations:
        states = {s: st for s, d in ob["evidence"].items()
                  if (st := shown_state(d)) != "unobserved"}
        by_cause[ob["cause"]].append(states)
    out = {}
    for cause, runs in sorted(by_cause.items()):
        names = sorted({s for r in runs for s in r})
        for a, b in itertools.combinations(names, 2):
            pairs = [(r[a], r[b]) for r in runs if a in r and b in r]
            if len(pairs) >= min_runs:
                out[(cause, a, b)] = mutual_information(pairs)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--observations", type=Path, default=DEFAULT)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--cause", help="only this cause's pairs")
    ap.add_argument("--min-runs", type=int, default=20)
    args = ap.parse_args()
    data = json.loads(args.observations.read_text())
    found = dependence(data["observations"], args.min_runs)
    rows = sorted(((mi, k) for k, mi in found.items() if not args.cause or k[0] == args.cause),
                  reverse=True)[:args.top]
    print(f"{len(data['observations'])} runs of {args.observations}; pairs observed on at least "
          f"{args.min_runs} runs of their cause\n")
    print("| cause | symptom | symptom | mutual information (nats) |\n|---|---|---|---:|")
    for mi, (cause, a, b) in rows:
        print(f"| {cause} | {a} | {b} | {mi:.3f} |")


if __name__ == "__main__":
    main()
