"""The causal network: CPD construction, exact posteriors against brute-force enumeration of the
joint, validation errors, caching, invariants (hypothesis) and the torch-free, lazy-pgmpy import
(numpy answers `posteriors`; pgmpy only builds `model` and answers `posteriors_pgmpy`)."""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from causal.causes.base import CauseError, CauseNode
from causal.errors import NeuralDbgError
from causal.hypothesis import Hypothesis, Localization
from causal.network import NetworkError, get_network
from causal.registry import REGISTRY, Registry, RegistryError
from causal.schema.run import Event, Run
from causal.symptoms.base import Symptom, SymptomError

REPO = Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------- a small network, by hand


def make_symptom(name: str, states: tuple[str, ...], leak: dict | None = None) -> Symptom:
    return type(name.title(), (Symptom,), {"name": name, "states": states, "leak": leak})()


def make_cause(name: str, prior: float, likelihoods: dict, summary: str = "") -> CauseNode:
    attrs = {"name": name, "prior": prior, "summary": summary or name.replace("_", " "),
             "likelihoods": likelihoods}
    return type(name.title().replace("_", ""), (CauseNode,), attrs)()


SYMPTOMS = [
    make_symptom("loss_pattern", ("steady", "diverging", "plateau", "spike"),
                 {"steady": 0.7, "diverging": 0.1, "plateau": 0.15, "spike": 0.05}),
    make_symptom("origin", ("none", "forward", "backward")),
    make_symptom("onset", ("late", "step0")),
    make_symptom("scale", ("normal", "huge", "tiny"), {"normal": 0.95, "huge": 0.05}),  # tiny: 0
    make_symptom("unused", ("quiet", "loud")),  # no cause mentions it: left out of the network
]
CAUSES = [
    make_cause("lr_too_high", 0.1, {
        "loss_pattern": {"steady": 0.05, "diverging": 0.7, "plateau": 0.05, "spike": 0.2},
        "origin": {"none": 0.2, "forward": 0.2, "backward": 0.6}}),
    make_cause("bad_init", 0.05, {
        "loss_pattern": {"steady": 0.1, "diverging": 0.5, "plateau": 0.3, "spike": 0.1},
        "onset": {"late": 0.1, "step0": 0.9},
        "scale": {"normal": 0.2, "huge": 0.5, "tiny": 0.3}}),
    make_cause("dead_relu", 0.08, {
        "loss_pattern": {"steady": 0.1, "plateau": 0.85, "spike": 0.05},  # diverging: 0
        "origin": {"none": 0.9, "forward": 0.05, "backward": 0.05}}),
]


def build(symptoms=SYMPTOMS, causes=CAUSES) -> Registry:
    reg = Registry()
    for s in symptoms:
        reg.register_symptom(s)
    for c in causes:
        reg.register_cause(c)
    return reg


@pytest.fixture(scope="module")
def net():
    return get_network(build())


def leak_of(sym: Symptom) -> dict[str, float]:
    """The leak as the design defines it, floored at 1e-6 and normalised (written independently)."""
    k = len(sym.states)
    raw = dict(sym.leak) if sym.leak else {s: 0.9 if i == 0 else 0.1 / (k - 1)
                                           for i, s in enumerate(sym.states)}
    w = {s: max(raw.get(s, 0.0), 1e-6) for s in sym.states}
    return {s: v / sum(w.values()) for s, v in w.items()}


def cpd(sym: Symptom, present: list[CauseNode]) -> dict[str, float]:
    """P(sym | exactly `present`): leak(s) * prod P_i(s) / leak(s), normalised; causes that
    contradict each other outright (every state 0) have each P_i floored at 1e-6 instead."""
    lk = leak_of(sym)
    for floor in (0.0, 1e-6):
        w = {s: lk[s] * math.prod(max(c.likelihoods[sym.name].get(s, 0.0), floor) / lk[s]
                                  for c in present)
             for s in sym.states}
        if sum(w.values()) > 0:
            break
    return {s: v / sum(w.values()) for s, v in w.items()}


def brute_force(symptoms, causes, evidence) -> dict[str, float]:
    """P(cause present | virtual evidence), summing the joint over all 2^n cause configurations."""
    mentioned = {s for c in causes for s in c.likelihoods}
    weight = dict.fromkeys((c.name for c in causes), 0.0)
    total = 0.0
    for config in itertools.product((False, True), repeat=len(causes)):
        pairs = list(zip(causes, config, strict=True))
        p = math.prod(c.prior if on else 1.0 - c.prior for c, on in pairs)
        present = [c for c, on in pairs if on]
        for sym in symptoms:
            if sym.name in evidence and sym.name in mentioned:
                parents = [c for c in present if sym.name in c.likelihoods]
                col = cpd(sym, parents)
                p *= sum(col[s] * evidence[sym.name].get(s, 0.0) for s in sym.states)
        total += p
        for c in present:
            weight[c.name] += p
    return {n: w / total for n, w in weight.items()}


EVIDENCE_CASES = {
    "none": {},
    "hard": {"loss_pattern": {"diverging": 1.0}, "origin": {"backward": 1.0},
             "onset": {"late": 1.0}},
    "soft": {"loss_pattern": {"steady": 0.1, "diverging": 0.6, "plateau": 0.2, "spike": 0.1},
             "scale": {"normal": 0.3, "huge": 0.6, "tiny": 0.1}},
    "mixed": {"loss_pattern": {"plateau": 1.0}, "origin": {"none": 0.7, "forward": 0.3},
              "onset": {"late": 0.4, "step0": 0.6}, "scale": {"tiny": 1.0},
              "unused": {"loud": 1.0}},
}


@pytest.mark.parametrize("case", sorted(EVIDENCE_CASES))
def test_posteriors_equal_brute_force_enumeration(net, case):
    evidence = EVIDENCE_CASES[case]
    got = net.posteriors(evidence)
    want = brute_force(SYMPTOMS, CAUSES, evidence)
    assert got.keys() == want.keys()
    for name in want:
        assert got[name] == pytest.approx(want[name], abs=1e-9), name


def brute_force_failing(symptoms, causes, evidence) -> float:
    """1 - P(every cause absent | evidence), from the joint over all 2^n configurations."""
    mentioned = {s for c in causes for s in c.likelihoods}
    cells = {}
    for config in itertools.product((False, True), repeat=len(causes)):
        pairs = list(zip(causes, config, strict=True))
        p = math.prod(c.prior if on else 1.0 - c.prior for c, on in pairs)
        present = [c for c, on in pairs if on]
        for sym in symptoms:
            if sym.name in evidence and sym.name in mentioned:
                col = cpd(sym, [c for c in present if sym.name in c.likelihoods])
                p *= sum(col[s] * evidence[sym.name].get(s, 0.0) for s in sym.states)
        cells[config] = p
    return 1.0 - cells[(False,) * len(causes)] / sum(cells.values())


@pytest.mark.parametrize("case", sorted(EVIDENCE_CASES))
def test_failing_is_the_chance_that_some_cause_is_present(net, case):
    """P(failing) counts every configuration with a cause present: never below the largest
    marginal, and with no evidence 1 - prod(1 - prior)."""
    evidence = EVIDENCE_CASES[case]
    got = net.failing(evidence)
    assert got == pytest.approx(brute_force_failing(SYMPTOMS, CAUSES, evidence), abs=1e-9)
    assert got >= max(net.posteriors(evidence).values()) - 1e-12
    assert net.failing({}) == pytest.approx(1.0 - math.prod(1.0 - c.prior for c in CAUSES))


def test_per_cause_queries_match_the_joint_query(net, monkeypatch):
    import causal.network

    evidence = EVIDENCE_CASES["mixed"]
    joint = net.posteriors_pgmpy(evidence)
    monkeypatch.setattr(causal.network, "_JOINT_LIMIT", 1)  # pgmpy's path for very many causes
    assert net.posteriors_pgmpy(evidence) == pytest.approx(joint, abs=1e-12)


def test_network_shape(net):
    assert net.causes == ("lr_too_high", "bad_init", "dead_relu")
    assert set(net.symptoms) == {"loss_pattern", "origin", "onset", "scale"}  # not "unused"
    assert set(net.model.get_parents("loss_pattern")) == set(net.causes)
    assert net.prior_posteriors() == pytest.approx({"lr_too_high": 0.1, "bad_init": 0.05,
                                                    "dead_relu": 0.08}, abs=1e-12)


@pytest.mark.parametrize("cause", CAUSES, ids=lambda c: c.name)
def test_posterior_rises_on_own_symptoms_and_falls_on_normal_ones(net, cause):
    symptoms = {s.name: s for s in SYMPTOMS}
    own = {s: symptoms[s].hard(st) for s, st in cause.most_likely_states(symptoms).items()}
    normal = {s: symptoms[s].hard(symptoms[s].states[0]) for s in cause.likelihoods}
    assert net.posteriors(own)[cause.name] > cause.prior
    assert net.posteriors(normal)[cause.name] < cause.prior


def test_cpd_columns_are_likelihoods_and_leak(net):
    def column(sym: str, present: set[str]) -> dict[str, float]:
        factor = net.model.get_cpds(sym).to_factor()
        parents = net.model.get_parents(sym)
        assign = {c: "present" if c in present else "absent" for c in parents}
        return {s: factor.get_value(**{sym: s}, **assign) for s in net.symptoms[sym].states}

    for sym in SYMPTOMS[:4]:
        assert column(sym.name, set()) == pytest.approx(leak_of(sym), abs=1e-12)
        for cause in CAUSES:
            if sym.name in cause.likelihoods:
                lik = {s: cause.likelihoods[sym.name].get(s, 0.0) for s in sym.states}
                assert column(sym.name, {cause.name}) == pytest.approx(lik, abs=1e-12)
                assert net.column(sym.name, [cause.name]) == pytest.approx(lik, abs=1e-12)
    assert column("loss_pattern", set()) == pytest.approx(SYMPTOMS[0].leak, abs=1e-12)
    assert column("origin", set()) == pytest.approx(
        {"none": 0.9, "forward": 0.05, "backward": 0.05}, abs=1e-12)
    both = column("loss_pattern", {"lr_too_high", "dead_relu"})
    assert both == pytest.approx(cpd(SYMPTOMS[0], [CAUSES[0], CAUSES[2]]), abs=1e-12)
    assert both["diverging"] == 0.0  # a zero likelihood vetoes the state


def test_contradicting_certainties_still_give_a_distribution():
    sym = make_symptom("flag", ("off", "on"))
    reg = build([sym], [make_cause("always_on", 0.1, {"flag": {"on": 1.0}}),
                        make_cause("always_off", 0.1, {"flag": {"off": 1.0}})])
    col = get_network(reg).column("flag", ["always_on", "always_off"])
    assert sum(col.values()) == pytest.approx(1.0) and all(v >= 0 for v in col.values())


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize(("likelihoods", "needles"), [
    ({"origin": {"none": 0.5, "forward": 0.4}}, ["bad_cause", "origin", "sum to 0.9"]),
    ({"nope": {"a": 1.0}}, ["bad_cause", "unknown symptom 'nope'", "register it first"]),
    ({"origin": {"none": 0.5, "sideways": 0.5}}, ["bad_cause", "unknown state 'sideways'"]),
    ({"origin": {"none": 1.5, "forward": -0.5}}, ["bad_cause", "P(forward) = -0.5", ">= 0"]),
    ({}, ["bad_cause", "at least one symptom"]),
])
def test_bad_likelihoods_raise_cause_error(likelihoods, needles):
    reg = build(SYMPTOMS, [])
    with pytest.raises(CauseError) as info:
        reg.register_cause(make_cause("bad_cause", 0.1, likelihoods))
    for needle in needles:
        assert needle in str(info.value)
    assert reg.causes() == {}


@pytest.mark.parametrize("prior", [0.0, 1.0, 1.5, -0.1, math.nan, "0.1", True])
def test_bad_prior_raises_cause_error(prior):
    with pytest.raises(CauseError, match=r"cause 'bad_prior': prior .* strictly between 0 and 1"):
        build(SYMPTOMS, []).register_cause(make_cause("bad_prior", prior, CAUSES[0].likelihoods))


@pytest.mark.parametrize("name", ["LrTooHigh", "lr-too-high", "1cause", "__x", ""])
def test_names_must_be_snake_case(name):
    cause = type("C", (CauseNode,), {"name": name, "prior": 0.1, "summary": "s",
                                     "likelihoods": CAUSES[0].likelihoods})
    with pytest.raises(CauseError, match="snake_case"):
        build(SYMPTOMS, []).register_cause(cause)
    with pytest.raises(SymptomError, match="snake_case"):
        Registry().register_symptom(type("S", (Symptom,), {"name": name, "states": ("a", "b")}))


@pytest.mark.parametrize(("states", "leak", "needle"), [
    (("only",), None, "at least two"),
    (("a", "a"), None, "duplicate"),
    (["a", "b"], None, "tuple"),
    (("a", "b"), {"a": 0.5}, "sum to 0.5"),
    (("a", "b"), {"a": 0.5, "c": 0.5}, "unknown state 'c'"),
])
def test_bad_symptoms_raise_symptom_error(states, leak, needle):
    with pytest.raises(SymptomError, match=needle) as info:
        Registry().register_symptom(make_symptom("sym", states, leak))
    assert "'sym'" in str(info.value)


def test_symptom_helpers():
    sym = SYMPTOMS[1]
    assert sym.hard("forward") == {"none": 0.0, "forward": 1.0, "backward": 0.0}
    assert sym.check_distribution({"none": 0.25, "backward": 0.75})["forward"] == 0.0
    with pytest.raises(SymptomError, match="symptom 'origin': unknown state 'up'"):
        sym.hard("up")
    with pytest.raises(SymptomError, match="symptom 'origin': probabilities sum to 2"):
        sym.check_distribution({"none": 1.0, "forward": 1.0})
    with pytest.raises(SymptomError, match="not a number"):
        sym.check_distribution({"none": "high"})
    with pytest.raises(NotImplementedError, match=r"Origin\.observe"):
        sym.evidence(Run())


def test_registration_errors():
    reg = build()
    with pytest.raises(RegistryError, match=r"'lr_too_high' is already registered.*replace=True"):
        reg.register_cause(make_cause("lr_too_high", 0.2, CAUSES[0].likelihoods))
    with pytest.raises(RegistryError, match="'origin' is already registered"):
        reg.register_symptom(make_symptom("origin", ("a", "b")))
    with pytest.raises(RegistryError, match="a symptom already has that name"):
        reg.register_cause(make_cause("origin", 0.2, CAUSES[0].likelihoods))
    with pytest.raises(RegistryError, match="expected a CauseNode subclass or instance"):
        reg.register_cause(SYMPTOMS[0])
    with pytest.raises(RegistryError, match=r"no cause named 'nope'.*lr_too_high"):
        reg.unregister_cause("nope")
    version = reg.version
    reg.register_cause(make_cause("lr_too_high", 0.2, CAUSES[0].likelihoods), replace=True)
    assert reg.causes()["lr_too_high"].prior == 0.2 and reg.version == version + 1
    for err in (CauseError, SymptomError, RegistryError, NetworkError):
        assert issubclass(err, NeuralDbgError)


@pytest.mark.parametrize(("evidence", "needle"), [
    ({"nope": {"a": 1.0}}, "unknown symptom 'nope'"),
    ({"origin": {"up": 1.0}}, "evidence for symptom 'origin': unknown state 'up'"),
    ({"origin": {"none": 0.2}}, "sum to 0.2"),
    ({"unused": {"loud": 2.0}}, "sum to 2"),  # validated even though it carries no information
])
def test_bad_evidence_raises_network_error(net, evidence, needle):
    with pytest.raises(NetworkError, match=needle):
        net.posteriors(evidence)


def test_check_model_failure_names_the_node(monkeypatch):
    from causal.network import _pgmpy

    def reject(self):
        raise ValueError("CPD associated with loss_pattern doesn't have proper parents")

    monkeypatch.setattr(_pgmpy().DiscreteBayesianNetwork, "check_model", reject)
    with pytest.raises(NetworkError, match="rejected node 'loss_pattern': CPD associated"):
        get_network(build()).model  # noqa: B018 (built and checked on first use)


# ---------------------------------------------------------------- caching


def test_get_network_is_cached_per_registry_version():
    reg = build(SYMPTOMS, CAUSES[:2])
    first = get_network(reg)
    assert get_network(reg) is first
    reg.register_cause(CAUSES[2])
    second = get_network(reg)
    assert second is not first and "dead_relu" in second.causes
    assert get_network(reg) is second
    reg.unregister_cause("dead_relu")
    assert get_network(reg) is not second and get_network(reg).causes == first.causes
    other = reg.copy()
    assert get_network(other) is not get_network(reg)
    assert get_network() is get_network(REGISTRY)


def test_empty_registry_has_no_posteriors():
    assert get_network(Registry()).posteriors({}) == {}
    assert get_network(Registry()).failing({}) == 0.0


# ---------------------------------------------------------------- invariants (hypothesis)


def _dist(draw, n: int, zeros: bool) -> list[float]:
    raw = draw(st.lists(st.floats(0.0 if zeros else 0.01, 1.0), min_size=n, max_size=n)
               .filter(lambda xs: sum(xs) > 0.05))
    return [x / sum(raw) for x in raw]


@st.composite
def networks(draw):
    n_sym = draw(st.integers(1, 4))
    symptoms = [make_symptom(f"s{j}", tuple(f"x{i}" for i in range(draw(st.integers(2, 4)))))
                for j in range(n_sym)]
    causes = []
    for i in range(draw(st.integers(1, 4))):
        mentioned = draw(st.lists(st.sampled_from(symptoms), min_size=1, max_size=n_sym,
                                  unique_by=lambda s: s.name))
        liks = {s.name: dict(zip(s.states, _dist(draw, len(s.states), zeros=True), strict=True))
                for s in mentioned}
        causes.append(make_cause(f"c{i}", draw(st.floats(0.01, 0.99)), liks))
    observed = draw(st.lists(st.sampled_from(symptoms), unique_by=lambda s: s.name))
    evidence = {s.name: dict(zip(s.states, _dist(draw, len(s.states), zeros=True), strict=True))
                for s in observed}
    order = draw(st.permutations(list(evidence)))
    return symptoms, causes, evidence, order


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(networks())
def test_posteriors_are_probabilities_and_ignore_evidence_order(case):
    symptoms, causes, evidence, order = case
    net = get_network(build(symptoms, causes))
    got = net.posteriors(evidence)
    reordered = net.posteriors({name: evidence[name] for name in order})
    want = brute_force(symptoms, causes, evidence)
    for c in causes:
        assert 0.0 <= got[c.name] <= 1.0
        assert reordered[c.name] == pytest.approx(got[c.name], abs=1e-12)
        assert got[c.name] == pytest.approx(want[c.name], abs=1e-9)


# ---------------------------------------------------------------- hypotheses


def test_hypothesis_prints_and_serialises():
    ev = Event(446, "layers.4", "activation", "activation_healthy", "activation_saturated", 0.97)
    h = Hypothesis("saturation", 0.913, "layers.4", 449, "Activation saturation in 'layers.4'",
                   (ev,), ("LeakyReLU",))
    assert str(h) == "[0.91] Activation saturation in 'layers.4'"
    assert Hypothesis.from_dict(json.loads(json.dumps(h.to_dict(), allow_nan=False))) == h
    cause = CAUSES[0]
    assert cause.hypothesis(Run(), 0.5) == Hypothesis("lr_too_high", 0.5, None, None,
                                                      "lr too high")
    assert cause.describe(Run(), Localization("net.4", 12)) == "lr too high in 'net.4' at step 12"


# ---------------------------------------------------------------- imports: torch-free, lazy pgmpy

_BLOCK_TORCH = """
import sys
class _NoTorch:  # behaves like torch not being installed at all
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ImportError(f"{name} is blocked by the test")
sys.meta_path.insert(0, _NoTorch())
"""


def _run_python(code: str) -> str:
    proc = subprocess.run([sys.executable, "-W", "error", "-c", textwrap.dedent(code)],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_import_causal_without_torch():
    out = _run_python("""
        import sys
        sys.modules["torch"] = None
        import causal, causal.network, causal.registry, causal.causes.base, causal.hypothesis
        print("pgmpy" in sys.modules, "torch" in sys.modules and sys.modules["torch"] is not None)
    """)
    assert out.split() == ["False", "False"]


def test_pgmpy_loads_only_for_the_pgmpy_model_and_works_without_torch():
    out = _run_python(_BLOCK_TORCH + """
import causal.network as network
from causal.registry import Registry
from causal.symptoms.base import Symptom
from causal.causes.base import CauseNode
class Flag(Symptom):
    name, states = "flag", ("off", "on")
class Cause(CauseNode):
    name, prior, summary, likelihoods = "flagger", 0.2, "flags", {"flag": {"off": 0.1, "on": 0.9}}
reg = Registry()
reg.register_symptom(Flag)
reg.register_cause(Cause)
net = network.get_network(reg)
post = net.posteriors({"flag": {"on": 1.0}})
print("pgmpy" in sys.modules, round(post["flagger"], 6))
post = net.posteriors_pgmpy({"flag": {"on": 1.0}})
print("pgmpy" in sys.modules, "torch" in sys.modules, round(post["flagger"], 6))
""")
    # P(present | on) = 0.2 * 0.9 / (0.2 * 0.9 + 0.8 * 0.1)
    want = str(round(0.18 / 0.26, 6))
    assert out.split() == ["False", want, "True", "False", want]
