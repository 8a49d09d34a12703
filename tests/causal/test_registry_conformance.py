"""One conformance suite over the registry: every cause node, built-in or a user's, passes the same
checks (valid CPDs, check_model() with it added, posterior above prior given its own symptoms,
localize/describe/fixes on an empty Run and on a Run read back from a run file). Also: the
registry's module-level functions and entry-point loading."""

from __future__ import annotations

import importlib.metadata
import math
import textwrap
from typing import ClassVar

import pytest

import causal.registry as registry_module
from causal.causes.base import CauseNode
from causal.hypothesis import Localization
from causal.network import get_network
from causal.registry import Registry, RegistryError
from causal.schema.run import Event, EventKind, Run, State, StepStat
from causal.schema.run_file import RunWriter, load_run
from causal.symptoms.base import Symptom
from causal.testing import conformance_problems

# ---------------------------------------------------------------- a demo registry of toy causes


class GradRegime(Symptom):
    name = "grad_regime"
    states = ("healthy", "exploding", "vanishing")
    description = "the last gradient regime any layer moved to"

    def observe(self, run: Run) -> dict[str, float]:
        events = run.events_of(EventKind.GRAD)
        if not events:
            return self.hard("healthy")
        last = str(events[-1].to_state)
        return self.hard({State.GRAD_EXPLODING: "exploding",
                          State.GRAD_VANISHING: "vanishing"}.get(last, "healthy"))


class LossFinite(Symptom):
    name = "loss_finite"
    states = ("finite", "nonfinite")
    description = "whether the recorded loss ever became non-finite"

    def observe(self, run: Run) -> dict[str, float]:
        losses = [v for _, v in run.series.get(StepStat.LOSS)]
        return self.hard("nonfinite" if any(not math.isfinite(v) for v in losses) else "finite")


class ToyExplosion(CauseNode):
    """Gradients explode and the loss goes non-finite (toy stand-in for lr_too_high)."""

    name = "toy_explosion"
    prior = 0.1
    summary = "Gradient explosion"
    likelihoods: ClassVar[dict[str, dict[str, float]]] = {
        "grad_regime": {"healthy": 0.1, "exploding": 0.8, "vanishing": 0.1},
        "loss_finite": {"finite": 0.3, "nonfinite": 0.7}}

    def localize(self, run: Run) -> Localization:
        for ev in run.events_of(EventKind.GRAD):
            if ev.to_state == State.GRAD_EXPLODING:
                return Localization(ev.layer_name, ev.step, (ev,))
        return Localization(None, None)

    def fixes(self, run: Run, loc: Localization) -> list[str]:
        return [f"clip gradients of {loc.layer!r}" if loc.layer else "clip gradients"]


class ToyVanishing(CauseNode):
    """Gradients vanish; the loss stays finite (toy stand-in for saturation)."""

    name = "toy_vanishing"
    prior = 0.05
    summary = "Vanishing gradients"
    likelihoods: ClassVar[dict[str, dict[str, float]]] = {
        "grad_regime": {"healthy": 0.2, "vanishing": 0.8},
        "loss_finite": {"finite": 0.95, "nonfinite": 0.05}}


def demo_registry() -> Registry:
    reg = Registry()
    reg.register_symptom(GradRegime)
    reg.register_symptom(LossFinite)
    reg.register_cause(ToyExplosion)
    reg.register_cause(ToyVanishing)
    return reg


# The one line to change to run the suite over the real causes (e.g. `causal.registry.REGISTRY`
# once the built-in causes register themselves there).
REGISTRY_UNDER_TEST = demo_registry()


def builtin() -> Registry:
    from causal.diagnose import builtin_registry

    return builtin_registry(Registry())


BUILTIN_UNDER_TEST = builtin()


@pytest.mark.parametrize("cause_name", list(BUILTIN_UNDER_TEST.causes()))
def test_builtin_cause_conforms(cause_name: str) -> None:
    """Every built-in cause node passes the same checks as a user's."""
    assert conformance_problems(BUILTIN_UNDER_TEST, cause_name) == []


@pytest.mark.parametrize("cause_name", list(REGISTRY_UNDER_TEST.causes()))
def test_cause_conforms(cause_name):
    assert conformance_problems(REGISTRY_UNDER_TEST, cause_name) == []


# ---------------------------------------------------------------- the suite catches bad causes


class Parrot(CauseNode):
    """Its likelihoods equal the leak: observing its symptoms says nothing about it."""

    name = "parrot"
    prior = 0.1
    summary = "Parrot"
    likelihoods: ClassVar[dict[str, dict[str, float]]] = {
        "loss_finite": {"finite": 0.9, "nonfinite": 0.1}}


class Fragile(CauseNode):
    """Assumes the run has events; an empty run breaks its localizer."""

    name = "fragile"
    prior = 0.1
    summary = "Fragile"
    likelihoods: ClassVar[dict[str, dict[str, float]]] = {
        "loss_finite": {"finite": 0.1, "nonfinite": 0.9}}

    def localize(self, run: Run) -> Localization:
        ev = run.events[0]
        return Localization(ev.layer_name, ev.step, (ev,))


def test_conformance_reports_problems():
    reg = demo_registry()
    reg.register_cause(Parrot)
    reg.register_cause(Fragile)
    [problem] = conformance_problems(reg, "parrot")
    assert "'parrot': posterior" in problem and "does not rise above its prior" in problem
    [problem] = conformance_problems(reg, "fragile")
    assert "failed on an empty Run()" in problem and "IndexError" in problem
    assert "not registered" in conformance_problems(reg, "nope")[0]


# ---------------------------------------------------------------- the pipeline on a run file


def test_toy_causes_rank_on_a_run_read_from_a_file(run_path):
    writer = RunWriter(run_path(), meta={"model": "Toy"})
    writer.add_step(0, {StepStat.LOSS: 1.0})
    ev = Event(3, "layers.2", EventKind.GRAD, State.GRAD_HEALTHY, State.GRAD_EXPLODING, 2e9)
    writer.add_events([ev])
    writer.add_step(3, {StepStat.LOSS: math.inf})
    writer.close(status="failed")
    run = load_run(writer.path)
    reg = demo_registry()
    evidence = {name: sym.evidence(run) for name, sym in reg.symptoms().items()}
    post = get_network(reg).posteriors(evidence)
    assert max(post, key=post.__getitem__) == "toy_explosion"
    h = reg.causes()["toy_explosion"].hypothesis(run, post["toy_explosion"])
    assert (h.layer, h.step, h.evidence) == ("layers.2", 3, (ev,))
    assert h.description == "Gradient explosion in 'layers.2' at step 3"
    assert h.fixes == ("clip gradients of 'layers.2'",)
    quiet = {name: sym.evidence(Run()) for name, sym in reg.symptoms().items()}
    for name, p in get_network(reg).posteriors(quiet).items():
        assert p < reg.causes()[name].prior


# ---------------------------------------------------------------- registry functions


def test_module_level_functions_act_on_the_default_registry(monkeypatch):
    fresh = Registry()
    monkeypatch.setattr(registry_module, "REGISTRY", fresh)
    assert registry_module.register_symptom(LossFinite) is LossFinite
    registry_module.register_cause(Fragile)  # a class is instantiated with no arguments
    assert isinstance(fresh.causes()["fragile"], Fragile) and fresh.version == 2
    assert isinstance(registry_module.unregister_cause("fragile"), Fragile)
    assert fresh.causes() == {} and fresh.version == 3


def test_decorator_registration_and_copy():
    reg = Registry()
    reg.register_symptom(LossFinite)

    @reg.register_cause
    class Decorated(Fragile):
        name = "decorated"

    assert isinstance(reg.causes()["decorated"], Decorated)
    clone = reg.copy()
    clone.unregister_cause("decorated")
    assert "decorated" in reg.causes() and "decorated" not in clone.causes()


def test_cause_needs_its_symptoms_registered_first():
    from causal.causes.base import CauseError

    with pytest.raises(CauseError, match="unknown symptom 'loss_finite'; register it first"):
        Registry().register_cause(Fragile)


PLUGIN = """
from causal.causes.base import CauseNode
from causal.symptoms.base import Symptom

class Frozen(Symptom):
    name, states = "grads_frozen", ("no", "yes")

class FrozenLayer(CauseNode):
    name, prior, summary = "frozen_layer", 0.02, "A layer was frozen by mistake"
    likelihoods = {"grads_frozen": {"no": 0.05, "yes": 0.95}}

NOT_A_CAUSE = 42
"""


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """A package 'installed' with entry points: a module on sys.path and patched metadata."""
    (tmp_path / "ndbg_test_plugin.py").write_text(textwrap.dedent(PLUGIN))
    monkeypatch.syspath_prepend(str(tmp_path))
    eps: list[importlib.metadata.EntryPoint] = []

    def entry_points(group: str):
        return [ep for ep in eps if ep.group == group]

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)

    def declare(name: str, value: str, group: str = "neuraldbg.causes") -> None:
        eps.append(importlib.metadata.EntryPoint(name=name, value=value, group=group))

    return declare


def test_load_entry_points_registers_symptoms_then_causes(plugin):
    plugin("frozen_layer", "ndbg_test_plugin:FrozenLayer")  # the cause comes first on purpose
    plugin("grads_frozen", "ndbg_test_plugin:Frozen")
    plugin("elsewhere", "ndbg_test_plugin:NOT_A_CAUSE", group="another.group")
    reg = demo_registry()
    assert reg.load_entry_points() == ["grads_frozen", "frozen_layer"]
    assert reg.load_entry_points() == []  # loading twice is harmless
    assert conformance_problems(reg, "frozen_layer") == []


@pytest.mark.parametrize(("value", "needle"), [
    ("ndbg_test_plugin:Missing", "failed to load: AttributeError"),
    ("ndbg_no_such_module:Cause", "failed to load: ModuleNotFoundError"),
    ("ndbg_test_plugin:NOT_A_CAUSE", "it loaded 42, not a CauseNode or Symptom"),
    ("ndbg_test_plugin:FrozenLayer", "unknown symptom 'grads_frozen'"),
])
def test_broken_entry_points_raise_registry_error_naming_them(plugin, value, needle):
    plugin("broken", value)
    with pytest.raises(RegistryError, match="entry point 'broken'") as info:
        Registry().load_entry_points()
    assert needle in str(info.value)
