"""How much a blind wave's figures move by chance alone, for the shipped engine.

    .venv/bin/python benchmarks/wave_spread.py [--families 48] [--draws 1000] [--fitted PATH]

A blind wave is 48 families (144 runs): its top-1 and, above all, its ECE (15 bins over 144
confidences) carry sampling noise that says nothing about the engine. This script scores every
fitted family leave-one-family-out (the tables fitted without it, the shipped calibration:
`neuraldbg.suite.fit_driver.cross_fitted_rows`, what `neuraldbg fit` prints as "fitted +
calibrated"), then draws waves of `--families` families from them without replacement and
prints, per figure, its value over all families, its mean and 10th-90th percentiles over the
draws, and how often a draw meets issue 26's target. The draws share the engine's real
accuracy and calibration, so their spread is the noise floor a blind wave is read against. No
torch, no training: the observations kept beside the fitted parameters are all it reads.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from causal.calibration.fit import load_observations, observations_path  # noqa: E402
from causal.calibration.parameters import FittedParameters  # noqa: E402
from causal.diagnose import builtin_registry  # noqa: E402
from neuraldbg.suite.fit_driver import cross_fitted_rows  # noqa: E402
from neuraldbg.suite.scoring import summarize  # noqa: E402

DEFAULT = ROOT / "causal" / "calibration" / "fitted.json"
#: (figure, how `summarize` names it, the target, whether higher is better)
FIGURES = (("top-1", "top1", 0.92, True), ("top-3", "top3", 0.98, True),
           ("ECE", "ece", 0.05, False), ("Brier", "brier", None, False),
           ("false alarms", "false_alarm_rate", 0.05, False),
           ("failing runs called healthy, their cause first", "called_healthy_cause_first", 0,
            False),
           ("wrong answers above 0.95", "confident_wrong", 0, False))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fitted", type=Path, default=DEFAULT,
                    help="fitted parameters; their observations are read from beside them")
    ap.add_argument("--families", type=int, default=48, help="families per drawn wave")
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    registry = builtin_registry()
    fitted = FittedParameters.load(args.fitted)
    observations = load_observations(observations_path(args.fitted), registry)
    t0 = time.perf_counter()
    rows = cross_fitted_rows(observations, registry, fitted)
    by_family: dict[str, list[dict]] = defaultdict(list)
    for ob, row in zip(observations, rows, strict=True):
        by_family[ob.family].append(row)
    families = sorted(by_family)
    if args.families > len(families):
        ap.error(f"--families {args.families}: only {len(families)} families were fitted")
    rng = random.Random(args.seed)
    drawn = [summarize([r for f in rng.sample(families, args.families) for r in by_family[f]])
             for _ in range(args.draws)]
    whole = summarize(rows)
    print(f"fitted: {args.fitted} ({len(families)} families, {len(rows)} runs, scored "
          f"leave-one-family-out in {time.perf_counter() - t0:.0f} s); {args.draws} waves of "
          f"{args.families} families drawn from them (seed {args.seed})\n")
    print("| figure | all families | drawn waves: mean | 10th pct | 90th pct | target | "
          "waves meeting it |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, key, target, higher in FIGURES:
        values = sorted(v for d in drawn if (v := d.get(key)) is not None)
        if not values:
            continue
        pct = [values[min(len(values) - 1, int(q * len(values)))] for q in (0.1, 0.9)]
        meets = [] if target is None else [v >= target if higher else v <= target
                                           for v in values]
        met = f"{sum(meets) / len(meets):.2f}" if meets else "-"
        print(f"| {label} | {whole[key]:.3g} | {statistics.fmean(values):.3f} | {pct[0]:.3f} | "
              f"{pct[1]:.3f} | {'-' if target is None else format(target, 'g')} | {met} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
