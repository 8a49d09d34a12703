"""Cause nodes: the extension point. One small base class; a cause is one file.

A cause declares a stable `name`, a `prior`, a one-line `summary` and its `likelihoods` (for each
symptom it raises, the symptom's distribution when this cause alone is present), and may override
`localize`, `describe` and `fixes`. The registry and the network do the rest.
`conformance_problems` runs the checks every cause, built-in or a user's, must pass.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, ClassVar

from causal.errors import NeuralDbgError
from causal.hypothesis import Hypothesis, Localization
from causal.run import Event, Run
from causal.symptom import Symptom, check_states_distribution, is_snake_case

if TYPE_CHECKING:
    from causal.registry import Registry


class CauseError(NeuralDbgError, ValueError):
    """A cause node is ill-defined (name, prior, likelihoods); the message names the fix."""


class CauseNode:
    """Base class of a root cause. Subclass it; override `localize`, `describe`, `fixes`.

    `likelihoods[symptom][state]` = P(symptom = state | this cause is present, no other is).
    States a symptom distribution omits count as 0; each distribution must sum to 1. A 0 is a
    veto (observing that state rules the cause out), so prefer small values such as 0.01.
    """

    name: ClassVar[str]
    prior: ClassVar[float]
    summary: ClassVar[str]
    likelihoods: ClassVar[Mapping[str, Mapping[str, float]]] = MappingProxyType({})

    def localize(self, run: Run) -> Localization:
        """Origin layer, step and evidence chain of this cause in `run` (default: unknown)."""
        return Localization(None, None)

    def describe(self, run: Run, loc: Localization) -> str:
        """One line for the report: the summary, plus where and when when known."""
        text = self.summary
        if loc.layer is not None:
            text += f" in {loc.layer!r}"
        if loc.step is not None:
            text += f" at step {loc.step}"
        return text

    def fixes(self, run: Run, loc: Localization) -> list[str]:
        """Concrete fix directions, using the run's own facts where possible (default: none)."""
        return []

    def hypothesis(self, run: Run, confidence: float) -> Hypothesis:
        """Localize, describe and suggest fixes: the ranked result for this cause."""
        loc = self.localize(run)
        return Hypothesis(
            cause=self.name, confidence=confidence, layer=loc.layer, step=loc.step,
            description=self.describe(run, loc), evidence=tuple(loc.evidence),
            fixes=tuple(self.fixes(run, loc)), note=loc.note,
        )

    def check(self, symptoms: Mapping[str, Symptom]) -> None:
        """Validate this cause against the registered `symptoms`; raises `CauseError`."""
        cls = type(self).__name__
        name = getattr(self, "name", None)
        if not is_snake_case(name):
            raise CauseError(
                f"cause class {cls}: name {name!r} is not a snake_case id; set "
                "`name = \"like_this\"` (it is stable: run files and reports refer to it)")
        prior = getattr(self, "prior", None)
        if (isinstance(prior, bool) or not isinstance(prior, (int, float))
                or not math.isfinite(prior) or not 0.0 < prior < 1.0):
            raise CauseError(
                f"cause {name!r}: prior {prior!r} must be a probability strictly between 0 "
                "and 1 (how often this cause is behind a failing run, e.g. 0.05)")
        if not isinstance(getattr(self, "summary", None), str) or not self.summary:
            raise CauseError(f"cause {name!r}: set `summary` to a one-line description")
        liks = getattr(self, "likelihoods", None)
        if not isinstance(liks, Mapping) or not liks:
            raise CauseError(
                f"cause {name!r}: `likelihoods` must map at least one symptom name to the "
                "distribution of its states when this cause is present")
        for sym_name, dist in liks.items():
            if sym_name not in symptoms:
                raise CauseError(
                    f"cause {name!r}: likelihood for unknown symptom {sym_name!r}; register "
                    f"it first (known: {sorted(symptoms)})")
            check_states_distribution(f"cause {name!r}, symptom {sym_name!r}",
                                      symptoms[sym_name].states, dist, CauseError)

    def most_likely_states(self, symptoms: Mapping[str, Symptom]) -> dict[str, str]:
        """Per symptom, the state this cause makes most likely (ties: most above the leak)."""
        out = {}
        for sym_name, dist in self.likelihoods.items():
            leak = symptoms[sym_name].leak_distribution()

            def rank(s: str, d: Mapping[str, float] = dist,
                     lk: Mapping[str, float] = leak) -> tuple[float, float]:
                return d.get(s, 0.0), d.get(s, 0.0) / max(lk[s], 1e-6)

            out[sym_name] = max(symptoms[sym_name].states, key=rank)
        return out

    def __repr__(self) -> str:
        return f"<cause {getattr(self, 'name', '?')} prior={getattr(self, 'prior', '?')}>"


def conformance_problems(registry: Registry, cause_name: str) -> list[str]:
    """Every check a registered cause must pass; returns the problems found (empty: conforms).

    Valid declaration and CPDs, `check_model()` passes with it, its posterior rises above its
    prior given its own most likely symptom states, and `localize/describe/fixes` run on an empty
    Run and on a Run read back from a run file.
    """
    from causal.network import get_network
    from causal.runfile import RunWriter, load_run

    causes, symptoms = registry.causes(), registry.symptoms()
    if cause_name not in causes:
        return [f"cause {cause_name!r} is not registered (registered: {sorted(causes)})"]
    cause = causes[cause_name]
    try:
        cause.check(symptoms)
        net = get_network(registry)
    except NeuralDbgError as e:
        return [f"{type(e).__name__}: {e}"]
    problems = []
    evidence = {s: symptoms[s].hard(st) for s, st in cause.most_likely_states(symptoms).items()}
    post = net.posteriors(evidence)[cause_name]
    if not post > cause.prior:
        problems.append(
            f"cause {cause_name!r}: posterior {post:.4g} does not rise above its prior "
            f"{cause.prior:.4g} given its own most likely states {evidence}; make its "
            "likelihoods differ from the symptoms' leak distributions")
    with tempfile.TemporaryDirectory() as tmp:
        writer = RunWriter(Path(tmp) / "conformance.ndbg", meta={"model": "Conformance"})
        writer.add_step(0, {"loss": 1.0})
        writer.add_events([Event(1, "layers.0", "grad", "grad_healthy", "grad_exploding", 1e9)])
        writer.add_step(1, {"loss": math.inf})
        writer.close(status="failed")
        runs = {"an empty Run()": Run(), "a Run read from a run file": load_run(writer.path)}
    for what, run in runs.items():
        try:
            h = cause.hypothesis(run, 0.5)
            if not isinstance(h.description, str) or not h.description:
                problems.append(f"cause {cause_name!r}: describe() on {what} gave no text")
            if not all(isinstance(f, str) for f in h.fixes):
                problems.append(f"cause {cause_name!r}: fixes() on {what} must return strings")
        except Exception as e:
            problems.append(
                f"cause {cause_name!r}: localize/describe/fixes failed on {what}: "
                f"{type(e).__name__}: {e}; handle runs that lack the events you look for")
    return problems
