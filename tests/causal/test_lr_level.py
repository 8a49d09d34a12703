"""The lr the run was given against its optimizer family's usual range
(`causal.symptoms.optimizer`): families by class name, the peak over groups and schedules up to
the failure, shared near a cut, and no evidence when the optimizer or its family is unknown."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from causal.schema.run import LOSS, Event, EventKind, Run, Series, SettingChange, State
from causal.symptoms.optimizer import LR_CUTS, LrLevel, optimizer_family, peak_lr


def run_with(optimizer: str | None, lrs: list[tuple[int, str, float]], steps: int = 50,
             nan_at: int | None = None) -> Run:
    """A calm run of `steps` losses (NaN from `nan_at`, with the event the monitor records
    then), the optimizer's class name and (step, group, lr) settings."""
    settings = [SettingChange(0, "optimizer", optimizer)] if optimizer else []
    settings += [SettingChange(s, f"lr/{g}", str(v)) for s, g, v in lrs]
    loss = tuple(math.nan if nan_at is not None and i >= nan_at else 1.0 - 0.001 * i
                 for i in range(steps))
    events = () if nan_at is None else (
        Event(nan_at, LOSS, EventKind.LOSS_FINITE, State.LOSS_FINITE, State.LOSS_NAN,
              math.nan, {}),)
    return Run({}, events=events, series=Series(tuple(range(steps)), {"loss": loss}),
               settings=tuple(settings))


@pytest.mark.parametrize(("name", "family"), [
    ("Adam", "adam"), ("AdamW", "adam"), ("ClippedAdam", "adam"), ("NAdam", "adam"),
    ("Lamb", "adam"), ("Adafactor", "adam"), ("SGD", "sgd"), ("WarmupCosineSGD", "sgd"),
    ("InvTimeNesterov", "sgd"), ("Adagrad", "adagrad"), ("RMSprop", "rmsprop"),
    ("Lion", "lion"), ("LBFGS", None), ("MyRule", None)])
def test_optimizers_are_grouped_by_the_word_in_their_class_name(name, family):
    found = optimizer_family(name)
    assert (found and found[0]) == family


def test_an_adam_lr_ten_times_its_usual_range_is_very_high_and_a_usual_one_typical():
    assert LrLevel().evidence(run_with("AdamW", [(0, "0", 1e-3)]))["typical"] == 1.0
    assert LrLevel().evidence(run_with("AdamW", [(0, "0", 0.5)]))["very_high"] == 1.0
    # the same lr is usual for SGD
    assert LrLevel().evidence(run_with("SGD", [(0, "0", 0.05)]))["typical"] == 1.0
    assert LrLevel().evidence(run_with("SGD", [(0, "0", 10.0)]))["very_high"] == 1.0


def test_the_peak_over_groups_and_schedule_counts_up_to_the_failure_only():
    lrs = [(0, "0", 1e-3), (0, "1", 1e-3), (5, "1", 0.05), (30, "0", 1.0)]
    assert peak_lr(run_with("Adam", lrs)) == 1.0
    assert peak_lr(run_with("Adam", lrs), until=10) == 0.05
    # the warmup that reaches 1.0 at step 30 comes after the NaN at step 20: not its cause
    assert LrLevel().evidence(run_with("Adam", lrs, nan_at=20))["high"] == 1.0


def test_an_unknown_optimizer_or_no_lr_gives_no_evidence():
    unread = LrLevel().unobserved()
    assert LrLevel().evidence(run_with("LBFGS", [(0, "0", 1.0)])) == unread
    assert LrLevel().evidence(run_with(None, [(0, "0", 1.0)])) == unread
    assert LrLevel().evidence(run_with("Adam", [])) == unread


@given(family=st.sampled_from(LR_CUTS), factor=st.floats(min_value=0.2, max_value=5.0))
def test_an_lr_near_a_cut_is_shared_and_the_reading_rises_with_the_lr(family, factor):
    _, words, high, _ = family
    low = LrLevel().evidence(run_with(words[0], [(0, "0", high * factor)]))
    up = LrLevel().evidence(run_with(words[0], [(0, "0", high * factor * 1.2)]))
    assert sum(low.values()) == pytest.approx(1.0)
    assert low["typical"] >= up["typical"]
    if 1 / 1.4 < factor < 1.4:  # within the graded band of the cut: neither state is certain
        assert max(low.values()) < 1.0


def test_the_lr_cause_says_how_the_lr_stands_against_its_optimizers_usual_range():
    from causal.causes.lr_too_high import LrTooHigh
    from causal.hypothesis import Localization

    where = Localization("net.0", 3, ())
    high = LrTooHigh().describe(run_with("AdamW", [(0, "0", 0.5)]), where)
    usual = LrTooHigh().describe(run_with("SGD", [(0, "0", 0.03)]), where)
    unknown = LrTooHigh().describe(run_with("LBFGS", [(0, "0", 1.0)]), where)
    assert "(lr 0.5, above AdamW's usual range: high from 0.01)" in high
    assert "(lr 0.03, a usual lr for SGD, too large for this model)" in usual
    assert "(lr 1)" in unknown
