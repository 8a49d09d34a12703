"""Cause nodes: the extension point. One small base class; a cause is one file.

A cause declares a stable `name`, a `prior`, a one-line `summary` and its `likelihoods` (for each
symptom it raises, the symptom's distribution when this cause alone is present), and may override
`localize`, `describe` and `fixes`. The registry and the network do the rest.
`causal.testing.conformance_problems` runs the checks every cause, built-in or a user's, must
pass.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import ClassVar

from causal.errors import CauseError
from causal.hypothesis import Hypothesis, Localization
from causal.schema.run import Run
from causal.symptoms.base import Symptom, check_states_distribution, is_snake_case

#: How a run that a cause broke ends, by the scenario contract (non-finite, or a loss that did
#: not learn; rarely one that learned): the `outcome` row each built-in cause declares, where
#: its fit starts from. A cause that does not declare `outcome` is judged there by the
#: symptom's leak, as if the run were healthy.
FAILED_OUTCOME = MappingProxyType({"learned": 0.05, "stalled": 0.45, "nonfinite": 0.5})


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
