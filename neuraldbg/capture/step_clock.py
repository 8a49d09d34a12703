"""The step label the monitor and its capture share: set by the user (`dbg.step = ...`) or
advanced by the capture on each optimizer step."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class StepClock:
    value: int = 0

    def advance(self) -> None:
        self.value += 1
