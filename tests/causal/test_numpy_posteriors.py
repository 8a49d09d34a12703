"""numpy's posteriors (`causal.factors`, what `CausalNetwork.posteriors` answers) and P(some cause
present) (`CausalNetwork.failing`) equal pgmpy's (`posteriors_pgmpy`, `failing_pgmpy`): on every
training run's evidence, on random small networks (hypothesis) and
past `MAX_CAUSES`; and a diagnosis never imports pgmpy, pandas, scikit-learn, scipy or torch."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from causal.calibration.fit import load_observations, observations_path
from causal.calibration.parameters import SHIPPED_PATH, FittedParameters
from causal.causes.base import CauseNode
from causal.diagnose import builtin_registry
from causal.network import CausalNetwork, get_network
from causal.registry import Registry
from causal.schema.layer_graph import LayerGraph, LayerNode
from causal.schema.run import Event, EventKind, State, StepStat
from causal.schema.run_file import RunWriter
from causal.symptoms.base import Symptom

REPO = Path(__file__).resolve().parents[2]
#: numpy and pgmpy sum the same products in other orders: they agree to rounding.
TOLERANCE = 1e-12


def assert_same(net: CausalNetwork, evidence, failing: bool = True) -> None:
    got, want = net.posteriors(evidence), net.posteriors_pgmpy(evidence)
    assert list(got) == list(want)
    for cause in want:
        assert got[cause] == pytest.approx(want[cause], abs=TOLERANCE), cause
    if failing:  # P(some cause present): numpy's all-absent cell, pgmpy's chain rule
        assert net.failing(evidence) == pytest.approx(net.failing_pgmpy(evidence), abs=1e-9)


# ---------------------------------------------------------------- every training run

@pytest.fixture(scope="module")
def shipped() -> tuple[Registry, FittedParameters, list]:
    reg = builtin_registry(Registry())
    return reg, FittedParameters.load(SHIPPED_PATH), load_observations(
        observations_path(SHIPPED_PATH), reg)


@pytest.mark.slow
@pytest.mark.parametrize("tables", ["fitted", "hand-set"])
def test_numpy_equals_pgmpy_on_every_training_run(shipped, tables):
    reg, fitted, table = shipped
    net = get_network(fitted.apply(reg) if tables == "fitted" else reg)
    assert len(table) >= 900
    for i, ob in enumerate(table):
        # pgmpy's P(some cause present) takes a query per cause: checked on every 25th run
        assert_same(net, ob.evidence, failing=i % 25 == 0)


# ---------------------------------------------------------------- random small networks


def _symptom(name: str, states: tuple[str, ...]) -> Symptom:
    return type(name.title(), (Symptom,), {"name": name, "states": states, "leak": None})()


def _cause(name: str, prior: float, likelihoods: dict) -> CauseNode:
    return type(name.title(), (CauseNode,), {"name": name, "prior": prior, "summary": name,
                                             "likelihoods": likelihoods})()


@st.composite
def _dist(draw, states: tuple[str, ...]) -> dict[str, float]:
    raw = draw(st.lists(st.sampled_from([0.0, 1e-9, 0.05, 0.3, 1.0, 7.0]),
                        min_size=len(states), max_size=len(states)).filter(any))
    return {s: x / sum(raw) for s, x in zip(states, raw, strict=True)}


@st.composite
def _networks(draw) -> tuple[Registry, dict]:
    reg = Registry()
    symptoms = [_symptom(f"s{j}", tuple(f"x{i}" for i in range(draw(st.integers(2, 4)))))
                for j in range(draw(st.integers(1, 5)))]
    for sym in symptoms:
        reg.register_symptom(sym)
    for i in range(draw(st.integers(1, 6))):
        raised = draw(st.lists(st.sampled_from(symptoms), min_size=1, unique_by=lambda s: s.name))
        reg.register_cause(_cause(f"c{i}", draw(st.floats(1e-3, 0.999)),
                                  {s.name: draw(_dist(s.states)) for s in raised}))
    observed = draw(st.lists(st.sampled_from(symptoms), unique_by=lambda s: s.name))
    return reg, {s.name: draw(_dist(s.states)) for s in observed}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_networks())
def test_numpy_equals_pgmpy_on_random_networks(case):
    reg, evidence = case
    assert_same(get_network(reg), evidence)


def test_past_max_causes_pgmpy_answers(monkeypatch):
    import causal.network

    reg = builtin_registry(Registry())
    evidence = {"outcome": {"nonfinite": 1.0}, "grad_regime": {"exploding": 0.7, "both": 0.3}}
    numpy_post = CausalNetwork(reg).posteriors(evidence)
    monkeypatch.setattr(causal.network, "MAX_CAUSES", len(reg.causes()) - 1)
    net = CausalNetwork(reg)
    assert net.posteriors(evidence) == net.posteriors_pgmpy(evidence)
    assert net.posteriors(evidence) == pytest.approx(numpy_post, abs=TOLERANCE)
    assert net.failing(evidence) == pytest.approx(CausalNetwork(reg).failing(evidence), abs=1e-9)


# ---------------------------------------------------------------- a diagnosis imports no pgmpy

HEAVY = ("pgmpy", "pandas", "sklearn", "scipy", "torch")


def _small_run(path: Path) -> str:
    """A run that blows up, with a layer graph (so the graph symptoms read it too)."""
    writer = RunWriter(path, meta={"model": "Toy"})
    writer.set_dag(LayerGraph("fx", tuple(
        LayerNode(f"layers.{i}", f"layers.{i}", "Linear", 10, order=i, ran=True, weight_gain=0.6)
        for i in range(3)), (("layers.0", "layers.1"), ("layers.1", "layers.2"))))
    for step in range(4):
        writer.add_step(step, {StepStat.LOSS: 1.0 - 0.1 * step})
    writer.add_events([Event(4, "layers.2", EventKind.GRAD, State.GRAD_HEALTHY,
                             State.GRAD_EXPLODING, 2e9)])
    writer.add_step(4, {StepStat.LOSS: float("inf")})
    writer.close(status="failed")
    return str(path)


def test_diagnosing_a_run_imports_none_of_the_heavy_packages(tmp_path):
    code = f"""
        import sys
        import causal
        from neuraldbg.cli import main
        main(["diagnose", sys.argv[1]])
        print(causal.diagnose(causal.load_run(sys.argv[1])).failing > 0.5)
        print(sorted(m for m in {HEAVY!r} if m in sys.modules))
    """
    run = _small_run(tmp_path / "toy.ndbg")
    proc = subprocess.run([sys.executable, "-W", "error", "-c", textwrap.dedent(code), run],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-2:] == ["True", "[]"], proc.stdout
