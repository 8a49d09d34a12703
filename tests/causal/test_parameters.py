"""Which tables `diagnose` runs with (`causal.calibration.parameters.effective`): the shipped fit
when it
fits the registry, the hand-set tables otherwise, and a warning only when something is wrong."""

from __future__ import annotations

import dataclasses
import warnings

import pytest

from causal.calibration.fit import Calibration, FittedParameters, Observation, fit_parameters
from causal.calibration.parameters import SHIPPED_PATH, FitError, effective
from causal.diagnose import builtin_registry
from causal.network import get_network
from causal.registry import Registry


def _fitted(reg: Registry) -> FittedParameters:
    quiet = {n: s.hard(s.states[0]) for n, s in reg.symptoms().items()}
    high = dict(quiet, update_ratio=reg.symptoms()["update_ratio"].hard("very_high"))
    obs = [Observation("lr", "lr", i, "lr_too_high", high) for i in range(4)]
    obs += [Observation("calm", "calm", i, "healthy", quiet) for i in range(4)]
    fp = fit_parameters(obs, reg, ess=1.0, calibration="none")
    return dataclasses.replace(fp, calibration=Calibration("temperature", 2.0, 0.0))


def test_given_parameters_change_the_tables_and_calibrate():
    reg = builtin_registry(Registry())
    fp = _fitted(reg)
    eff = effective(reg, fp)
    assert eff.source == "fitted: given"
    assert eff.registry is not reg
    fitted = eff.registry.causes()["lr_too_high"].likelihoods["update_ratio"]
    assert fitted == pytest.approx(fp.likelihoods["lr_too_high"]["update_ratio"])
    assert eff.calibrate({"x": 0.8})["x"] == pytest.approx(0.8 ** 2 / (0.8 ** 2 + 0.2 ** 2))
    # the caller's registry keeps its hand-set tables
    assert reg.causes()["lr_too_high"].likelihoods["update_ratio"] != fitted


def test_none_means_hand_set_and_a_file_is_loaded(tmp_path):
    reg = builtin_registry(Registry())
    assert effective(reg, None).registry is reg
    path = tmp_path / "fit.json"
    _fitted(reg).save(path)
    assert effective(reg, path).source == f"fitted: {path}"


def test_parameters_for_edited_tables_are_refused_or_fall_back_with_a_warning(tmp_path):
    reg = builtin_registry(Registry())
    path = tmp_path / "fit.json"
    _fitted(reg).save(path)
    node = reg.causes()["bad_init"]
    edited = dict(node.likelihoods)
    first = next(iter(edited))
    table = dict(edited[first])
    a, b = list(table)[:2]
    table[a], table[b] = table[b], table[a]
    edited[first] = table
    vars(node)["likelihoods"] = edited
    reg.register_cause(node, replace=True)
    with pytest.raises(FitError, match="hand-set tables changed"):
        effective(reg, path)


def test_a_custom_registry_quietly_keeps_its_hand_set_tables():
    from causal.causes import BUILTIN_CAUSES
    from causal.symptoms import BUILTIN_SYMPTOMS

    reg = Registry()
    for sym in BUILTIN_SYMPTOMS:
        reg.register_symptom(sym)
    reg.register_cause(BUILTIN_CAUSES[0])
    get_network(reg)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        eff = effective(reg)
    assert eff.registry is reg and eff.source.startswith("hand-set")


def test_the_shipped_parameters_fit_the_builtin_registry():
    from causal.calibration.fingerprint import symptom_signature

    reg = builtin_registry(Registry())
    fp = FittedParameters.load(SHIPPED_PATH)
    assert fp.problems(reg) == [] and not fp.is_stale(reg)
    # fitted on evidence from today's symptom code: changing a symptom (or causal/run_queries.py)
    # means re-running `neuraldbg fit`, which rewrites the shipped file
    assert fp.symptom_signature == symptom_signature(reg), (
        "the symptoms changed since causal/calibration/fitted.json was fitted: run `neuraldbg fit`")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert effective(reg).source == f"fitted: {SHIPPED_PATH}"


def test_every_fresh_registry_gets_the_builtins():
    """A freed registry's id is reused by the next one: each must still get the built-ins."""
    for _ in range(50):
        reg = builtin_registry(Registry())
        assert "saturation" in reg.causes() and "outcome" in reg.symptoms()
        del reg
