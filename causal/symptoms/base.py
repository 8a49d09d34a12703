"""Symptoms: named discrete observations of a Run, the evidence nodes of the causal network.

A symptom declares its `states` (the first is the normal, quiet one) and turns a Run into a
distribution over them (`observe`): soft evidence where the state is uncertain, one-hot where it
is not. Cause nodes say how likely each state is when they are present; the network does the rest.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import ClassVar

from causal.errors import NeuralDbgError, SymptomError
from causal.schema.run import Run

#: Distributions must sum to 1 within this tolerance.
TOLERANCE = 1e-6
#: Half-width, in decades, of the band around a threshold where `Symptom.graded` shares a value
#: between the two states (0.15: a factor of 1.4 either side).
GRADE_WIDTH = 0.15
_SNAKE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")




def is_snake_case(name: object) -> bool:
    """True for stable ids like `lr_too_high` (they become network node names)."""
    return isinstance(name, str) and bool(_SNAKE.match(name))


def check_states_distribution(
    owner: str, states: tuple[str, ...], dist: Mapping[str, float], error: type[NeuralDbgError]
) -> dict[str, float]:
    """Validate `dist` over `states` and return it with every state present (omitted ones 0).

    `owner` names what the distribution belongs to in the message (e.g. "cause 'x', symptom
    'y'"); `error` is the exception class to raise, so each caller keeps its own error type.
    """
    if not isinstance(dist, Mapping):
        raise error(f"{owner}: expected a mapping state -> probability, got {type(dist).__name__}")
    unknown = [s for s in dist if s not in states]
    if unknown:
        raise error(f"{owner}: unknown state {unknown[0]!r}; the states are {list(states)}")
    out: dict[str, float] = {}
    for s in states:
        try:
            p = float(dist.get(s, 0.0))
        except (TypeError, ValueError):
            raise error(f"{owner}: P({s}) = {dist.get(s)!r} is not a number") from None
        if not math.isfinite(p) or p < 0.0:
            raise error(f"{owner}: P({s}) = {p!r}; probabilities must be finite and >= 0")
        out[s] = p
    total = math.fsum(out.values())
    if abs(total - 1.0) > TOLERANCE:
        shown = ", ".join(f"{s}={p:g}" for s, p in out.items())
        raise error(f"{owner}: probabilities sum to {total:.9g}, not 1 ({shown}); normalise them")
    return out


def unread(dist: Mapping[str, float]) -> bool:
    """Whether `dist` is what `Symptom.unobserved` leaves: every state alike, no reading."""
    return len(dist) > 1 and len(set(dist.values())) == 1


class Symptom:
    """Base class of a symptom: subclass it, set `name`, `states`, `description`, write `observe`.

    `leak` is the distribution of the symptom in runs where no registered cause is present
    (default: 0.9 on the first state, the rest spread evenly); it is the symptom's CPD column when
    every cause is absent, so it also sets how surprising each state is on its own.
    `fitted_leak_floor` (state -> probability): what `neuraldbg fit` leaves at least in the
    fitted leak, for a state that the fitted healthy runs under-represent by how they were
    chosen. `often_unreadable`: a signal many ordinary runs cannot show by how they are made (a
    loss whose trivial level is unknown, a model too shallow for a depth profile); left
    unobserved, it does not count as missing evidence that keeps the first answer under
    `causal.verdict.CONFIDENT_ANSWER`.
    """

    name: ClassVar[str]
    states: ClassVar[tuple[str, ...]]
    description: ClassVar[str] = ""
    leak: ClassVar[Mapping[str, float] | None] = None
    fitted_leak_floor: ClassVar[Mapping[str, float]] = MappingProxyType({})
    often_unreadable: ClassVar[bool] = False

    def observe(self, run: Run) -> Mapping[str, float]:
        """The distribution over `states` that `run` shows (use `hard(state)` when certain)."""
        raise NotImplementedError(f"{type(self).__name__}.observe(run) is not implemented")

    def evidence(self, run: Run) -> dict[str, float]:
        """`observe(run)`, validated and completed with every state (what the network takes)."""
        return self.check_distribution(self.observe(run))

    def hard(self, state: str) -> dict[str, float]:
        """A certain observation: probability 1 on `state`."""
        if state not in self.states:
            raise SymptomError(
                f"symptom {self.name!r}: unknown state {state!r}; the states are "
                f"{list(self.states)}"
            )
        return {s: 1.0 if s == state else 0.0 for s in self.states}

    def unobserved(self) -> dict[str, float]:
        """What a signal the run does not let us read leaves: every state alike (as virtual
        evidence, no information at all), never a guess at a state (`unread` tells it)."""
        return {s: 1.0 / len(self.states) for s in self.states}

    def graded(self, value: float, cuts: Sequence[tuple[float, str]], below: str,
               width: float = GRADE_WIDTH) -> dict[str, float]:
        """`below` under the first cut, each cut's state above it (cuts ascending): a magnitude
        read on a log scale, shared between neighbouring states within `width` decades of a cut
        (a value at a cut is half one, half the other), so that a run a hair either side of a
        threshold is not certain evidence of opposite things."""
        if not value > 0 or not math.isfinite(value):
            return self.hard(below if not value > 0 else cuts[-1][1])
        x = math.log10(value)
        out = dict.fromkeys(self.states, 0.0)
        prev, above_prev = below, 1.0
        for cut, state in cuts:
            above = min(1.0, max(0.0, (x - math.log10(cut) + width) / (2 * width)))
            above = min(above, above_prev)
            out[prev] += above_prev - above
            prev, above_prev = state, above
        out[prev] += above_prev
        return out

    def check_distribution(self, dist: Mapping[str, float]) -> dict[str, float]:
        """Validate a distribution over this symptom's states; raises `SymptomError`."""
        return check_states_distribution(f"symptom {self.name!r}", self.states, dist,
                                         SymptomError)

    def leak_distribution(self) -> dict[str, float]:
        """`leak`, or the default quiet distribution, validated, over every state."""
        if self.leak is not None:
            return check_states_distribution(
                f"symptom {self.name!r} leak", self.states, self.leak, SymptomError)
        k = len(self.states)
        if k == 1:
            return {self.states[0]: 1.0}
        return {s: 0.9 if i == 0 else 0.1 / (k - 1) for i, s in enumerate(self.states)}

    def check(self) -> None:
        """Validate the declaration (name, states, leak); raises `SymptomError` with the fix."""
        cls = type(self).__name__
        name = getattr(self, "name", None)
        if not is_snake_case(name):
            raise SymptomError(
                f"symptom class {cls}: name {name!r} is not a snake_case id; set "
                "`name = \"like_this\"` (it becomes a network node name)")
        states = getattr(self, "states", None)
        if (not isinstance(states, tuple) or len(states) < 2
                or not all(isinstance(s, str) and s for s in states)):
            raise SymptomError(
                f"symptom {name!r}: states must be a tuple of at least two non-empty strings, "
                f"the normal one first; got {states!r}")
        if len(set(states)) != len(states):
            raise SymptomError(f"symptom {name!r}: duplicate state names in {states!r}")
        self.leak_distribution()
        floor = dict(self.fitted_leak_floor)
        if (set(floor) - set(states) or len(floor) >= len(states)
                or not all(0.0 <= p < 1.0 for p in floor.values()) or sum(floor.values()) >= 1.0):
            raise SymptomError(
                f"symptom {name!r}: fitted_leak_floor must map some of its states {states!r} "
                f"(not all) to probabilities in [0, 1) that add up to less than 1; got {floor!r}")

    def __repr__(self) -> str:
        return f"<symptom {getattr(self, 'name', '?')} {getattr(self, 'states', ())}>"
