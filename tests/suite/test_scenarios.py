"""Real runs of the bundled scenarios: the expected cause ranks first (a healthy scenario stays
healthy) and the localizer names the scenario's ORIGIN layer."""

from __future__ import annotations

from pathlib import Path

import pytest

from neuraldbg import diagnose
from neuraldbg.suite.scenario import load_scenario, scenario_files, train

DATASETS = Path(__file__).resolve().parents[2] / "datasets"
#: The training split: the families the hand-set likelihoods were checked against; `neuraldbg
#: fit` fits on it with the validation, probe and scored splits (so the headline accuracy is the
#: blind split's).
FILES = scenario_files(DATASETS / "train")
#: Training families the shipped network still misses on seed 0, and why. Strict: a fix that
#: makes one pass fails the test until it is taken off this list.
KNOWN_MISSES: dict[str, str] = {
    # with the tables fitted on 1282 families (session 32: the scored blind waves too, whose
    # authors label some of these mechanisms the other way), seed 0, 2026-12-03; none before;
    # the confidences as of session 33 (wave 20 fitted too, 1330 families; sharp temperature 1.0)
    "lr_too_high_contrastive_temperature_cnn": "an lr that drives a learned temperature until "
                                               "the logits overflow: read as unsafe_op (0.56)",
    "lr_too_high_relu_mixer_adam": "an Adam lr that kills a mixer's ReLUs: read as dead_relu "
                                   "(0.80), the effect",
    "unscaled_inputs_gru": "raw inputs that pin the GRU's gates: read as saturation (0.52), the "
                           "effect",
    # (data_outlier_poisson_exp_link, a glitched sensor row whose log-rate overflows exp in a
    # Poisson head, was read as unsafe_op until session 36, right with waves 23 and 24 fitted
    # too, unsafe_op again with session 38's fit (0.55 against 0.43), and right again with
    # session 39's on 1714 families: data_outlier 0.50 against unsafe_op 0.48, a near tie;
    # 0.90 since session 40 reads an op that broke on an extreme batch's step as its own state)
    # (lr_too_high_relu_convnet_sgd, an SGD lr that kills a convnet's ReLUs, a near tie that
    # flips with the fit: dead_relu 0.32 against lr_too_high 0.28 from session 33, right with
    # session 38's final fit (0.50 against 0.42), dead_relu 0.51 against 0.41 with wave 29
    # fitted too, right again with wave 30 (session 40's final fit: lr_too_high 0.51 against
    # dead_relu 0.41); wave 29's and wave 30's authors label ReLUs an lr killed both ways)
}


def test_the_suite_has_every_cause_and_healthy_runs():
    causes = {load_scenario(p).cause for p in scenario_files(DATASETS)}
    assert {"saturation", "lr_too_high", "bad_init", "data_outlier", "fp16_overflow",
            "unsafe_op", "dead_relu", "unscaled_inputs", "healthy"} <= causes


def _case(path: Path) -> object:
    reason = KNOWN_MISSES.get(path.stem)
    marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
    return pytest.param(path, id=path.stem, marks=marks)


def test_known_misses_are_training_families():
    assert set(KNOWN_MISSES) <= {p.stem for p in FILES}


@pytest.mark.slow
@pytest.mark.parametrize("path", [_case(p) for p in FILES])
def test_scenario_is_diagnosed(path, run_path):
    scenario = load_scenario(path)
    _, run = train(scenario.build(0), run_path(scenario.name))
    assert run is not None
    hyps = diagnose(run)
    report = hyps.format()
    if scenario.cause == "healthy":
        assert hyps.healthy, report
        return
    assert not hyps.healthy, report
    assert hyps and hyps[0].cause == scenario.cause, report
    if scenario.origin is not None:
        assert hyps[0].layer == scenario.origin, report
