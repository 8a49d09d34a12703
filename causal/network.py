"""The Bayesian network over root causes, assembled from the registry, validated once, cached.

One binary node per cause ("absent"/"present", CPD = its prior) and one node per symptom that some
cause mentions, with an edge from each cause to each symptom it raises. A symptom's CPD combines
its parents log-linearly (a multiplicative noisy-OR generalised to categorical states): with the
set S of present causes, P(s | S) is proportional to leak(s) * prod_{i in S} P_i(s) / leak(s),
so one present cause gives exactly its own likelihoods and none gives the leak. Posteriors are
exact, with each symptom observation as virtual (soft) evidence: computed with numpy on the
compiled CPDs (`causal.factors`), and equal to pgmpy's `VariableElimination` on the same model
(`posteriors_pgmpy`).

pgmpy is imported lazily (it takes seconds and pulls torch when installed): building a network and
its posteriors never import it; `model` (the pgmpy model, built and checked on first use) and
`posteriors_pgmpy` do.
"""

from __future__ import annotations

import copy
import functools
import itertools
import math
import warnings
import weakref
from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Any

from causal.errors import NetworkError
from causal.factors import MAX_CAUSES, Factors
from causal.registry import REGISTRY, Registry
from causal.symptoms.base import check_states_distribution

CAUSE_STATES = ("absent", "present")
#: Floor for leak probabilities, so no state is impossible when every cause is absent.
LEAK_FLOOR = 1e-6
#: Above this many causes, pgmpy queries each cause separately instead of one joint over all.
_JOINT_LIMIT = 16


@functools.cache
def _pgmpy() -> SimpleNamespace:
    """Import pgmpy on first use, silencing the FutureWarnings it emits at import."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pgmpy.factors.discrete import TabularCPD
        from pgmpy.inference import VariableElimination
        from pgmpy.models import DiscreteBayesianNetwork
    return SimpleNamespace(TabularCPD=TabularCPD, VariableElimination=VariableElimination,
                           DiscreteBayesianNetwork=DiscreteBayesianNetwork)


def combine(states: Sequence[str], leak: Mapping[str, float],
            present: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """The symptom distribution when the causes whose likelihoods are `present` are present.

    P(s) is proportional to leak(s) * prod_i P_i(s) / leak(s), with leak floored at LEAK_FLOOR.
    If the present causes contradict each other outright (every state gets probability 0), each
    P_i is floored at LEAK_FLOOR too, so the column stays a distribution.
    """
    lk = {s: max(leak.get(s, 0.0), LEAK_FLOOR) for s in states}
    for floor in (0.0, LEAK_FLOOR):
        w = {s: lk[s] * math.prod(max(p.get(s, 0.0), floor) / lk[s] for p in present)
             for s in states}
        total = math.fsum(w.values())
        if total > 0.0:
            return {s: w[s] / total for s in states}
    raise AssertionError("unreachable: floored weights are positive")


class CausalNetwork:
    """The assembled network of one registry version; `posteriors(evidence)` is the query."""

    def __init__(self, registry: Registry) -> None:
        self.version = registry.version
        symptoms = registry.symptoms()
        self._causes = registry.causes()
        for sym in symptoms.values():
            sym.check()
        for cause in self._causes.values():
            cause.check(symptoms)
        self.causes: tuple[str, ...] = tuple(self._causes)
        self.priors = {n: float(c.prior) for n, c in self._causes.items()}
        parents: dict[str, list[str]] = {}
        for name, cause in self._causes.items():
            for sym_name in cause.likelihoods:
                parents.setdefault(sym_name, []).append(name)
        self.parents = {s: tuple(parents[s]) for s in symptoms if s in parents}
        self.symptoms = {s: symptoms[s] for s in self.parents}
        self.leaks = {s: sym.leak_distribution() for s, sym in self.symptoms.items()}
        self._all_symptoms = symptoms
        #: the symptoms many ordinary runs cannot show (`Symptom.often_unreadable`)
        self.often_unreadable = frozenset(s for s, sym in symptoms.items()
                                          if sym.often_unreadable)
        # the columns `root_shares` reads: each symptom with no cause present, and with each
        # of its parents alone
        self._none = {s: self.column(s, []) for s in self.parents}
        self._alone = {s: {c: self.column(s, [c]) for c in ps} for s, ps in self.parents.items()}
        self._tables = {s: self._table(s) for s in self.parents}
        cpds = {s: (ps, self._tables[s]) for s, ps in self.parents.items()}
        self._factors = Factors(self.priors, cpds) if len(self.causes) <= MAX_CAUSES else None

    def _table(self, symptom: str) -> list[list[float]]:
        """The symptom's CPD, state x parent configuration (the first parent varies slowest,
        absent before present)."""
        ps = self.parents[symptom]
        cols = [self.column(symptom, [c for c, on in zip(ps, cfg, strict=True) if on])
                for cfg in itertools.product((False, True), repeat=len(ps))]
        return [[col[st] for col in cols] for st in self.symptoms[symptom].states]

    @functools.cached_property
    def model(self) -> Any:
        """The pgmpy `DiscreteBayesianNetwork` of these CPDs, built and checked on first use."""
        pg = _pgmpy()
        model = pg.DiscreteBayesianNetwork()
        model.add_nodes_from([*self.causes, *self.symptoms])
        model.add_edges_from([(c, s) for s, ps in self.parents.items() for c in ps])
        cpds = [pg.TabularCPD(c, 2, [[1.0 - p], [p]], state_names={c: list(CAUSE_STATES)})
                for c, p in self.priors.items()]
        for s, ps in self.parents.items():
            states = self.symptoms[s].states
            cpds.append(pg.TabularCPD(
                s, len(states), self._tables[s], evidence=list(ps), evidence_card=[2] * len(ps),
                state_names={s: list(states), **{c: list(CAUSE_STATES) for c in ps}}))
        model.add_cpds(*cpds)
        try:
            model.check_model()
        except ValueError as e:
            msg = str(e)
            node = next((n for n in sorted(model.nodes(), key=len, reverse=True) if n in msg),
                        "?")
            raise NetworkError(
                f"pgmpy's check_model() rejected node {node!r}: {msg}. Check the likelihoods "
                "of the causes that point to it") from e
        return model

    def column(self, symptom: str, present: Sequence[str]) -> dict[str, float]:
        """The symptom's CPD column when exactly the causes in `present` are present."""
        liks = [self._causes[c].likelihoods[symptom] for c in present]
        return combine(self.symptoms[symptom].states, self.leaks[symptom], liks)

    def _checked(self, evidence: Mapping[str, Mapping[str, float]]
                 ) -> dict[str, dict[str, float]]:
        """Validate evidence; the distributions of the in-network symptoms (a symptom no
        cause mentions carries no information)."""
        out = {}
        for name in sorted(evidence):
            if name not in self._all_symptoms:
                raise NetworkError(
                    f"evidence for unknown symptom {name!r}; registered symptoms: "
                    f"{sorted(self._all_symptoms)}")
            dist = check_states_distribution(f"evidence for symptom {name!r}",
                                             self._all_symptoms[name].states, evidence[name],
                                             NetworkError)
            if name in self.symptoms:
                out[name] = dist
        return out

    def _virtual_evidence(self, evidence: Mapping[str, Mapping[str, float]]) -> list[Any]:
        """Validate evidence and turn each in-network symptom into a virtual-evidence CPD."""
        out = []
        for name, dist in self._checked(evidence).items():
            states = self.symptoms[name].states
            out.append(_pgmpy().TabularCPD(name, len(states), [[dist[s]] for s in states],
                                           state_names={name: list(states)}))
        return out

    def posteriors(self, evidence: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
        """P(cause present | evidence) for every cause; evidence is symptom -> distribution.

        Each distribution is virtual evidence (a one-hot one is a hard observation). Computed
        with numpy (`causal.factors`; by pgmpy above `MAX_CAUSES` causes). Measured on the
        2-core development machine, the fitted built-in network (8 causes, 15 symptoms, 2^8
        parent configurations for `outcome`), evidence on all: 0.3 ms per call, against 6-13 ms
        for `posteriors_pgmpy`.
        """
        if self._factors is None:
            return self.posteriors_pgmpy(evidence)
        return self._factors.posteriors(self._vectors(evidence))

    def _vectors(self, evidence: Mapping[str, Mapping[str, float]]) -> dict[str, list[float]]:
        """Validated evidence as the compiled tables take it: each in-network symptom's
        probabilities in its states' order."""
        return {name: [dist[s] for s in self.symptoms[name].states]
                for name, dist in self._checked(evidence).items()}

    def failing(self, evidence: Mapping[str, Mapping[str, float]]) -> float:
        """P(at least one cause present | evidence): that something is wrong with the run.

        Not the largest marginal: evidence that something is wrong but fits three causes
        alike (a loss that stalled, with the layers' signals split between saturation, dead
        ReLUs and a bad init) leaves each cause's marginal near a third, while the chance
        that one of them is present is near 1. Exact, by numpy on the compiled CPDs (by pgmpy
        above `MAX_CAUSES` causes: `failing_pgmpy`)."""
        if self._factors is None:
            return self.failing_pgmpy(evidence)
        return 1.0 - self._factors.none_posterior(self._vectors(evidence))

    def failing_pgmpy(self, evidence: Mapping[str, Mapping[str, float]]) -> float:
        """`failing` by pgmpy's `VariableElimination`: P(every cause absent | evidence) by the
        chain rule, one query per cause given the ones before it absent."""
        virtual = self._virtual_evidence(evidence)
        none = 1.0
        given: dict[str, str] = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            for cause in self.causes:
                engine = copy.copy(self._engine) if virtual else self._engine
                result = engine.query([cause], evidence=dict(given) or None,
                                      virtual_evidence=virtual or None, show_progress=False)
                none *= float(result.get_value(**{cause: "absent"}))
                given[cause] = "absent"
        return 1.0 - none

    @functools.cached_property
    def _engine(self) -> Any:
        return _pgmpy().VariableElimination(self.model)

    def posteriors_pgmpy(self, evidence: Mapping[str, Mapping[str, float]]
                         ) -> dict[str, float]:
        """`posteriors` by pgmpy's `VariableElimination` on `model` (imports pgmpy)."""
        virtual = self._virtual_evidence(evidence)
        if not self.causes:
            return {}
        # pgmpy's query rebinds the engine to a model extended with virtual-evidence nodes; a
        # shallow copy keeps the cached engine pristine (and the call thread-safe).
        engine = copy.copy(self._engine) if virtual else self._engine
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            if len(self.causes) <= _JOINT_LIMIT:
                result = engine.query(list(self.causes), virtual_evidence=virtual or None,
                                      joint=False, show_progress=False)
            else:
                result = {c: copy.copy(engine).query(
                    [c], virtual_evidence=virtual or None, show_progress=False)
                    for c in self.causes}
        return {c: float(result[c].get_value(**{c: "present"})) for c in self.causes}

    def root_log_odds(self, evidence: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
        """Per cause: log of its prior odds times the evidence's likelihood with only that
        cause present over its likelihood with none (`root_shares` normalises these)."""
        checked = self._checked(evidence)

        def log_fit(column: Mapping[str, float], dist: Mapping[str, float]) -> float:
            return math.log(max(math.fsum(column[s] * p for s, p in dist.items()), 1e-300))

        logs = {c: math.log(p) - math.log1p(-p) for c, p in self.priors.items()}
        for sym, dist in checked.items():
            none = log_fit(self._none[sym], dist)
            for cause, alone in self._alone[sym].items():  # causes not raising it: it cancels
                logs[cause] += log_fit(alone, dist) - none
        return logs

    def none_column(self, symptom: str) -> dict[str, float] | None:
        """The symptom's distribution with no cause present (None: no cause points to it)."""
        col = self._none.get(symptom)
        return None if col is None else dict(col)

    def root_shares(self, evidence: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
        """P(c is the one cause | evidence, exactly one cause is present), for every cause.

        The marginals of `posteriors` answer "is c present?", and two causes can both be
        present at 0.98 when the evidence fits their joint presence (a too high lr and the
        ReLUs it killed). A run has one root cause, so the question the report answers is
        which single cause explains the evidence: each cause's prior odds times the evidence's
        likelihood with only that cause present over its likelihood with none, normalised
        over the causes. Exact and cheap: one column per symptom and cause."""
        return normalised(self.root_log_odds(evidence))

    def prior_posteriors(self) -> dict[str, float]:
        """Posteriors with no evidence (equal to the priors: causes are independent roots)."""
        return self.posteriors({})

    def __repr__(self) -> str:
        return (f"<CausalNetwork v{self.version}: {len(self.causes)} causes, "
                f"{len(self.symptoms)} symptoms>")


def normalised(log_odds: Mapping[str, float]) -> dict[str, float]:
    """Log-odds made shares that add up to one (a softmax; empty stays empty)."""
    if not log_odds:
        return {}
    top = max(log_odds.values())
    weights = {c: math.exp(v - top) for c, v in log_odds.items()}
    z = math.fsum(weights.values())
    return {c: w / z for c, w in weights.items()}


_CACHE: weakref.WeakKeyDictionary[Registry, CausalNetwork] = weakref.WeakKeyDictionary()


def get_network(registry: Registry = REGISTRY) -> CausalNetwork:
    """The network for `registry`, built and checked once per registry version, then cached.

    The cache is keyed by the registry object (weakly, so a dropped registry cannot alias a new
    one with the same id) and checked against `registry.version`.
    """
    net = _CACHE.get(registry)
    if net is None or net.version != registry.version:
        net = CausalNetwork(registry)
        _CACHE[registry] = net
    return net
