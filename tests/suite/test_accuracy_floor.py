"""CI's accuracy regression test: a small subset of the held-out families (one per cause and a
healthy one, seed 0), benchmarked end to end with the shipped parameters, must stay above a floor.

The floor is below what the full held-out benchmark measures (docs/accuracy.md), so that it
catches a regression (a symptom that stops firing, a localizer that moves, a broken parameter
file) without failing on one unlucky run; `neuraldbg bench` is where accuracy is measured.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from neuraldbg.suite.bench import run_bench

HELDOUT = Path(__file__).resolve().parents[2] / "datasets" / "validation"
SUBSET = ["bad_init_resnet", "data_outlier_cnn", "dead_relu_cnn", "fp16_overflow_attention",
          "healthy_transformer", "lr_too_high_adam_transformer", "saturation_tanh_cnn",
          "unsafe_op_sqrt_norm", "unscaled_inputs_cnn"]
FLOOR = {"top1": 0.85, "top3": 0.85, "localization": 0.6}  # measured 1.00, 1.00, 0.80
CEILING = {"false_alarm_rate": 0.0, "ece": 0.2}  # measured 0.00, 0.060


@pytest.mark.slow
def test_the_held_out_subset_stays_above_the_accuracy_floor(tmp_path):
    for name in SUBSET:
        shutil.copy(HELDOUT / f"{name}.py", tmp_path / f"{name}.py")
    result = run_bench(tmp_path, [0], progress=False)
    summary = result["summary"]
    assert summary["errors"] == 0, [r["error"] for r in result["runs"] if r.get("error")]
    assert result["meta"]["parameters"].startswith("fitted:"), result["meta"]["parameters"]
    misses = [(r["scenario"], [(h["cause"], round(h["confidence"], 2), h["layer"])
                               for h in r["hypotheses"][:2]]) for r in result["runs"]]
    for key, floor in FLOOR.items():
        assert summary[key] >= floor, (key, summary[key], misses)
    for key, ceiling in CEILING.items():
        assert summary[key] <= ceiling, (key, summary[key], misses)
