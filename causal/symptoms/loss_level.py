"""Where the loss ended against what a model that ignores its inputs scores.

A network whose units all died, saturated or were initialised to nothing outputs the same value
for every example; training then finds the best constant (an output bias fits the targets' mean,
the logits the labels' frequencies) and the loss settles exactly there: a stall at the trivial
predictor's loss, whatever the architecture. A model that learns goes below it; far too large
steps, a loss summed rather than averaged, or a loss of another kind sit above it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple

from causal.run_queries import (
    STALL_MIN_STEPS,
    loss_level_unreadable,
    loss_tail,
    losses,
    trivial_losses,
)
from causal.schema.run import Run
from causal.symptoms.base import Symptom

#: How far (|log| of the ratio) the loss may end from the trivial predictor's loss and still be
#: at it for certain, and where it stops being at it at all (shared linearly in between): a
#: batch's label entropy or target variance is an estimate, and a constant output only gets
#: close to the best constant.
AT_CERTAIN, AT_NONE = 0.07, 0.15


#: What each trivial level of `trivial_losses` is, for the report.
TRIVIAL_WHAT = {
    "labels": "the cross-entropy of predicting only the labels' frequencies",
    "mean": "the squared error of predicting only the targets' mean",
    "binary": "the binary cross-entropy of predicting only the targets' mean",
}


class TrivialEnd(NamedTuple):
    """Where the loss ended (`end`: the median of its last tenth) and the
    nearest trivial predictor's loss (`level`, of kind `kind`: a key of `trivial_losses`);
    `gap`: log(end / level)."""

    end: float
    level: float
    kind: str
    gap: float

    @property
    def at_trivial(self) -> float:
        """How surely the loss ended at the trivial level (1 within AT_CERTAIN, 0 from
        AT_NONE)."""
        return min(1.0, max(0.0, (AT_NONE - abs(self.gap)) / (AT_NONE - AT_CERTAIN)))

    def sentence(self) -> str:
        return (f"the loss ended at {self.end:.4g}, where a model that ignores its inputs ends "
                f"({TRIVIAL_WHAT[self.kind]}: {self.level:.4g})")


def trivial_end(run: Run) -> TrivialEnd | None:
    """The loss's end against the trivial predictor's loss the targets give (the nearest of
    `trivial_losses`); None when the run recorded no targets, has fewer than STALL_MIN_STEPS
    losses, a non-finite one (that run failed otherwise: where its loss ended says nothing of
    a stall), or a loss that goes negative or keeps changing sign (no error level to
    compare)."""
    levels = trivial_losses(run)
    vals = [v for _, v in losses(run)]
    if not levels or len(vals) < STALL_MIN_STEPS or not all(map(math.isfinite, vals)) \
            or min(vals) < 0 or loss_level_unreadable(run):
        return None
    tail = sorted(loss_tail(vals))
    end = tail[len(tail) // 2]
    if not end > 0:
        kind = min(levels, key=levels.__getitem__)
        return TrivialEnd(end, levels[kind], kind, -math.inf)
    kind = min(levels, key=lambda k: abs(math.log(end / levels[k])))
    return TrivialEnd(end, levels[kind], kind, math.log(end / levels[kind]))


class LossVsTrivial(Symptom):
    """Where the loss ended against the trivial predictor's loss (`trivial_end`): below it, at
    it (within `AT_CERTAIN`, fading out by `AT_NONE`), or above it; unobserved when
    `trivial_end` cannot say."""

    name = "loss_vs_trivial"
    states = ("below", "at_trivial", "above")
    description = "the loss's end against a constant predictor's loss"
    leak = MappingProxyType({"below": 0.85, "at_trivial": 0.03, "above": 0.12})
    often_unreadable = True  # no trivial level for the loss seen: 44% of the fitted runs

    def observe(self, run: Run) -> Mapping[str, float]:
        end = trivial_end(run)
        if end is None:
            return self.unobserved()
        at = end.at_trivial
        rest = "below" if end.gap < 0 else "above"
        return {"below": 0.0, "above": 0.0, rest: 1.0 - at, "at_trivial": at}
