"""What a diagnosis hands back: ranked `Hypothesis` objects, and the `Localization` behind each.

A cause node's localizer returns a `Localization` (where and when it started, with the evidence
chain); `CauseNode.hypothesis` joins it with the posterior, the description and the fixes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from causal.schema.run import Event


@dataclass(frozen=True)
class Localization:
    """Where a cause started: origin `layer` (a module name or None), `step`, and the events
    that show it, in causal order. `note` explains a cause-versus-effect call when one was made
    ("upstream coupling: layers.5 is the cause, layers.4 and layers.6 follow")."""

    layer: str | None
    step: int | None
    evidence: tuple[Event, ...] = ()
    note: str = ""


@dataclass(frozen=True)
class Hypothesis:
    """One candidate root cause of a failed run, with its posterior probability.

    `cause` is a registered cause name, `confidence` the (calibrated) posterior, `layer` and
    `step` the origin, `evidence` the events that support it and `fixes` concrete directions.
    """

    cause: str
    confidence: float
    layer: str | None
    step: int | None
    description: str
    evidence: tuple[Event, ...] = ()
    fixes: tuple[str, ...] = ()
    note: str = ""  # cause versus effect, when the localizer had to decide it

    def __str__(self) -> str:
        return f"[{self.confidence:.2f}] {self.description}"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict (what `neuraldbg diagnose --json` prints)."""
        return {
            "cause": self.cause,
            "confidence": float(self.confidence),
            "layer": self.layer,
            "step": self.step,
            "description": self.description,
            "evidence": [ev.to_dict() for ev in self.evidence],
            "fixes": list(self.fixes),
            "note": self.note,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Hypothesis:
        """Inverse of `to_dict`."""
        step = d.get("step")
        return cls(
            cause=str(d["cause"]),
            confidence=float(d["confidence"]),
            layer=None if d.get("layer") is None else str(d["layer"]),
            step=None if step is None else int(step),
            description=str(d["description"]),
            evidence=tuple(Event.from_dict(e) for e in d.get("evidence", ())),
            fixes=tuple(str(f) for f in d.get("fixes", ())),
            note=str(d.get("note", "")),
        )
