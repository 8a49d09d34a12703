"""A loss that ends where a model ignoring its inputs would (the labels' entropy, the targets'
variance) is a stall at the trivial predictor's loss; below it the model learned; without
targets the symptom says nothing."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from causal.run_queries import trivial_losses
from causal.schema.run import LayerGraph, Run, Series
from causal.symptoms.loss_level import AT_CERTAIN, AT_NONE, LossVsTrivial

SYMPTOM = LossVsTrivial()


def run_with(losses: list[float], **columns: list[float | None]) -> Run:
    n = len(losses)
    cols = {"loss": tuple(losses), **{k: tuple(v) for k, v in columns.items()}}
    assert all(len(v) == n for v in cols.values())
    return Run({}, LayerGraph("fx", (), ()), (), Series(tuple(range(n)), cols), (), ())


def classifier(end: float, n: int = 60, entropy: float = math.log(4)) -> Run:
    """A 4-class classifier whose loss falls from 1.6 to `end`; the labels' entropy on every
    fifth step."""
    losses = [1.6 + (end - 1.6) * min(1.0, i / (n / 2)) for i in range(n)]
    return run_with(losses, target_entropy=[entropy if i % 5 == 0 else None for i in range(n)])


def test_a_classifier_stuck_at_the_labels_entropy_is_at_the_trivial_loss():
    assert SYMPTOM.observe(classifier(math.log(4)))["at_trivial"] == 1.0


def test_a_classifier_that_learned_is_below_and_one_far_above_is_above():
    assert SYMPTOM.observe(classifier(0.3)) == {"below": 1.0, "at_trivial": 0.0, "above": 0.0}
    assert SYMPTOM.observe(classifier(5.0)) == {"below": 0.0, "at_trivial": 0.0, "above": 1.0}


def test_a_regression_stuck_at_its_targets_variance_is_at_the_trivial_loss():
    n = 40  # targets with std 2 around means 1 and 3 (pooled variance 4 + 1)
    means = [1.0 if i % 2 else 3.0 for i in range(n)]
    run = run_with([5.0] * n, target_mean=means, target_std=[2.0] * n,
                   target_max_abs=[9.0] * n)
    assert trivial_losses(run) == {"mean": pytest.approx(5.0)}
    assert SYMPTOM.observe(run)["at_trivial"] == 1.0


def test_binary_targets_also_give_the_binary_cross_entropy_of_their_mean():
    n = 40
    run = run_with([0.5] * n, target_mean=[0.2] * n, target_std=[0.4] * n,
                   target_max_abs=[1.0] * n)
    levels = trivial_losses(run)
    assert levels["binary"] == pytest.approx(-(0.2 * math.log(0.2) + 0.8 * math.log(0.8)))
    assert SYMPTOM.observe(run)["at_trivial"] == 1.0  # 0.50 is the BCE of predicting 0.2


def test_no_targets_too_few_steps_or_a_loss_below_zero_leave_it_unobserved():
    unobserved = SYMPTOM.unobserved()
    assert SYMPTOM.observe(run_with([1.0] * 60)) == unobserved
    assert SYMPTOM.observe(classifier(math.log(4), n=15)) == unobserved
    negative = classifier(math.log(4))
    cols = dict(negative.series.columns)
    cols["loss"] = (-1.0, *cols["loss"][1:])
    assert SYMPTOM.observe(Run({}, negative.dag, (), Series(negative.series.steps, cols), (),
                               ())) == unobserved


def test_a_run_whose_loss_turned_non_finite_is_left_unobserved():
    run = classifier(math.log(4), n=60)
    cols = dict(run.series.columns)
    cols["loss"] = (*cols["loss"][:50], math.nan, *cols["loss"][51:])
    assert SYMPTOM.observe(Run({}, run.dag, (), Series(run.series.steps, cols), (), ())) \
        == SYMPTOM.unobserved()


@settings(max_examples=60, deadline=None)
@given(st.floats(0.05, 20.0), st.floats(0.1, 8.0))
def test_at_trivial_fades_with_the_distance_and_the_rest_is_on_the_right_side(end, entropy):
    dist = SYMPTOM.observe(classifier(end, entropy=entropy))
    assert math.fsum(dist.values()) == pytest.approx(1.0)
    gap = abs(math.log(end / entropy))
    if gap <= AT_CERTAIN:
        assert dist["at_trivial"] == pytest.approx(1.0)
    elif gap >= AT_NONE:
        assert dist["at_trivial"] == 0.0
    side = "below" if end < entropy else "above"
    other = "above" if side == "below" else "below"
    assert dist[other] == 0.0
