"""The shipped fit, checked on the table of observations it was made from
(`causal/calibration/fitted.observations.json`, written by `neuraldbg fit`): it reproduces to the
bit, and missing evidence widens the posterior instead of narrowing it onto a wrong cause."""

from __future__ import annotations

import pytest

from causal.calibration.fit import (
    CONFIDENT,
    MISSING_SIGNAL_BOUND,
    FittedParameters,
    fit_parameters,
    load_observations,
    missing_signal_pairs,
    observations_path,
)
from causal.calibration.parameters import SHIPPED_PATH
from causal.diagnose import builtin_registry
from causal.registry import Registry


@pytest.fixture(scope="module")
def shipped() -> tuple[Registry, FittedParameters, list]:
    reg = builtin_registry(Registry())
    return reg, FittedParameters.load(SHIPPED_PATH), load_observations(
        observations_path(SHIPPED_PATH), reg)


def test_the_table_covers_every_split_but_the_blind_one(shipped):
    _, fitted, table = shipped
    families = {ob.family for ob in table}
    assert families == set(fitted.training_families)
    assert len(families) >= 300  # train, validation and probe
    assert sum(fitted.runs.values()) == len(table)


@pytest.mark.slow
def test_the_shipped_parameters_refit_from_their_table_to_the_bit(shipped):
    reg, fitted, table = shipped
    again = fit_parameters(table, reg, ess=fitted.ess, calibration=fitted.calibration.method,
                           seeds=fitted.seeds)
    assert again.to_json() == SHIPPED_PATH.read_text(encoding="utf-8")


#: The share of (run, signal) pairs in which removing the signal made a wrong cause confident
#: (`missing_signal_pairs`), measured on the shipped fit with root-cause confidences as
#: `diagnose` gives them (27 of 15,136 pairs, 0.18%, 2026-12-02, with the `lr_level` reading;
#: 23 of 14,160 before it; 43 of 14,145 before the tempered shares), is a guard against
#: regressions, not the goal, which is none (issue 26, item 3). `neuraldbg fit` chooses the
#: root-share temperature under the same bound (MISSING_SIGNAL_BOUND, 0.2%).


@pytest.mark.slow
def test_removing_one_signal_rarely_makes_a_wrong_cause_confident(shipped):
    """Each fitted run with one symptom made unobserved (uniform: what a signal the monitor
    could not see leaves): a cause other than the true one whose root-cause confidence (what
    the report shows) was at most CONFIDENT (0.9) with every signal stays at most CONFIDENT,
    in all but MISSING_SIGNAL_BOUND of the pairs."""
    reg, fitted, table = shipped
    made, pairs = missing_signal_pairs(table, fitted.apply(reg), fitted.calibration,
                                       fitted.calibration.share_temperature)
    assert CONFIDENT == 0.9 and MISSING_SIGNAL_BOUND == 0.002
    assert pairs > 10_000
    print(f"{len(made)} of {pairs} pairs made a wrong cause confident")
    assert len(made) <= MISSING_SIGNAL_BOUND * pairs, [
        (ob.family, ob.seed, name, wrong) for ob, name, wrong in made[:10]]
