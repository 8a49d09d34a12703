"""The shipped fit, checked on the table of observations it was made from
(`causal/calibration/fitted.observations.json`, written by `neuraldbg fit`): it reproduces to the
bit, and missing evidence widens the posterior instead of narrowing it onto a wrong cause."""

from __future__ import annotations

import pytest

from causal.calibration.fit import (
    FittedParameters,
    fit_parameters,
    load_observations,
    observations_path,
)
from causal.calibration.parameters import SHIPPED_PATH
from causal.diagnose import builtin_registry
from causal.network import get_network
from causal.registry import Registry
from causal.verdict import verdict

#: A wrong cause's confidence that removing one signal must never push a run past.
CONFIDENT = 0.9


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


#: The share of (run, signal) pairs in which removing the signal made a wrong cause confident,
#: measured on the shipped fit with root-cause confidences as `diagnose` gives them (27 of
#: 15,136 pairs, 0.18%, 2026-12-02, with the `lr_level` reading; 23 of 14,160 before it; 43 of
#: 14,145 before the tempered shares): a guard against regressions, not the goal, which is none
#: (issue 26, item 3). `neuraldbg fit` chooses the root-share temperature under the same bound
#: (`causal.calibration.fit.MISSING_SIGNAL_BOUND`).
MADE_CONFIDENT_BOUND = 0.002


@pytest.mark.slow
def test_removing_one_signal_rarely_makes_a_wrong_cause_confident(shipped):
    """Each fitted run with one symptom made unobserved (uniform: what a signal the monitor
    could not see leaves): a cause other than the true one whose root-cause confidence (what
    the report shows) was at most CONFIDENT with every signal stays at most CONFIDENT, in all
    but MADE_CONFIDENT_BOUND of the pairs."""
    reg, fitted, table = shipped
    net = get_network(fitted.apply(reg))
    temperature = fitted.calibration.share_temperature  # as `diagnose` judges
    symptoms = reg.symptoms()
    made_confident, pairs = [], 0
    for ob in table:
        full = verdict(net, ob.evidence, fitted.calibrate, temperature).root
        if max((p for c, p in full.items() if c != ob.cause), default=0.0) > CONFIDENT:
            continue  # already confidently wrong (or a second cause co-present) with all
        for name in ob.evidence:
            pairs += 1
            states = symptoms[name].states
            evidence = {**ob.evidence, name: {s: 1.0 / len(states) for s in states}}
            post = verdict(net, evidence, fitted.calibrate, temperature).root
            wrong = [c for c, p in post.items() if c != ob.cause and p > CONFIDENT]
            if wrong:
                made_confident.append((ob.family, ob.seed, name, wrong))
    assert pairs > 10_000
    print(f"{len(made_confident)} of {pairs} pairs made a wrong cause confident")
    assert len(made_confident) <= MADE_CONFIDENT_BOUND * pairs, made_confident[:10]
