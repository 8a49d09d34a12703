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


@pytest.mark.slow
def test_removing_any_one_signal_never_makes_a_wrong_cause_confident(shipped):
    """Each fitted run with one symptom made unobserved (uniform: what a signal the monitor
    could not see leaves): no cause other than the true one reaches CONFIDENT unless it
    already did with every signal."""
    reg, fitted, table = shipped
    net = get_network(fitted.apply(reg))
    symptoms = reg.symptoms()
    made_confident = []
    for ob in table:
        full = fitted.calibrate(net.posteriors(ob.evidence))
        before = max((p for c, p in full.items() if c != ob.cause), default=0.0)
        for name in ob.evidence:
            states = symptoms[name].states
            evidence = {**ob.evidence, name: {s: 1.0 / len(states) for s in states}}
            post = fitted.calibrate(net.posteriors(evidence))
            for cause, p in post.items():
                if cause != ob.cause and p > max(CONFIDENT, before):
                    made_confident.append((ob.family, ob.seed, name, cause, round(p, 3)))
    assert not made_confident, made_confident[:10]
