"""Verify every scenario label by intervention: the same as `neuraldbg suite verify`.

For each scenario file and seed, the unfixed run must fail (a non-finite loss, or a stall the
fixed run does not have: the mean loss of the last 10% of steps >= 0.9 x the lowest loss of the
first 5 steps) and the fixed run must not; a healthy scenario must not fail. The contract is
checked too (CAUSE registered, ORIGIN a module of the model, SOURCE given, one batch per step,
build(seed) deterministic). Exits 1 if any label is invalid.

    .venv/bin/python benchmarks/verify_scenarios.py [DIR] [--seeds 0,1,2]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from neuraldbg.cli import main

if __name__ == "__main__":
    sys.exit(main(["suite", "verify", *sys.argv[1:]]))
