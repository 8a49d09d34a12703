"""Real runs of the bundled scenarios: the expected cause ranks first (a healthy scenario stays
healthy) and the localizer names the scenario's ORIGIN layer."""

from __future__ import annotations

from pathlib import Path

import pytest

from causal.diagnose import REPORT_THRESHOLD, diagnose, format_diagnosis, is_healthy
from neuraldbg.scenario import load_scenario, scenario_files, train

DATASETS = Path(__file__).resolve().parents[1] / "datasets"
#: The families the hand-set likelihoods were checked against while writing them (one per cause
#: plus healthy ones). Other families in datasets/ are measured by `neuraldbg bench`, not tuned
#: on, so that accuracy figures stay honest.
DEVELOPMENT = ["bad_init_relu_mlp", "data_outlier_mlp", "dead_relu_mlp", "fp16_overflow_mlp",
               "healthy_cnn_warmup", "healthy_fp16_scaler_mlp", "healthy_gru_spike",
               "healthy_mlp_regression", "lr_too_high_cnn", "saturation_tanh_mlp",
               "unsafe_op_bce_mlp", "unscaled_inputs_mlp"]
FILES = [DATASETS / f"{name}.py" for name in DEVELOPMENT]


def test_the_suite_has_every_cause_and_healthy_runs():
    causes = {load_scenario(p).cause for p in scenario_files(DATASETS)}
    assert {"saturation", "lr_too_high", "bad_init", "data_outlier", "fp16_overflow",
            "unsafe_op", "dead_relu", "unscaled_inputs", "healthy"} <= causes


@pytest.mark.slow
@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_scenario_is_diagnosed(path, run_path):
    scenario = load_scenario(path)
    _, run = train(scenario.build(0), run_path(scenario.name))
    assert run is not None
    hyps = diagnose(run)
    report = format_diagnosis(run, hyps)
    if scenario.cause == "healthy":
        assert is_healthy(hyps), report
        return
    assert hyps and hyps[0].cause == scenario.cause, report
    assert hyps[0].confidence >= REPORT_THRESHOLD, report
    if scenario.origin is not None:
        assert hyps[0].layer == scenario.origin, report
