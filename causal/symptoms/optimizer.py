"""The learning rate the run was given, against what its optimizer's family usually trains with:
the first thing a person asks about a run that blew up or stalled ("what is your lr?").

Adaptive optimizers move every weight by about the lr per step whatever the gradient's scale, so
their lr has a usual range across models (Adam and its relatives 1e-4 to 3e-3: Kingma & Ba 2015
suggest 1e-3; Lion about ten times smaller; RMSprop a little larger; Adagrad 1e-2 to 1e-1). Plain
SGD's step is the lr times the gradient, so its usual range is wider (1e-3 to 1e-1). The lr of a
run whose root cause is elsewhere is one its fixed twin trains with, so it sits in that range;
a too high lr sits an order of magnitude or more above it.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from causal.run_queries import failure_step, lr_settings
from causal.schema.run import Run
from causal.symptoms.base import Symptom

#: Optimizer families by a word in the optimizer's class name (users subclass and rename:
#: "WarmupCosineSGD", "ClippedAdam"), first match wins, and the lr from which each family's lr
#: is high and very high.
LR_CUTS: tuple[tuple[str, tuple[str, ...], float, float], ...] = (
    ("lion", ("Lion",), 3e-3, 3e-2),
    ("adagrad", ("Adagrad",), 0.3, 3.0),
    ("rmsprop", ("RMSprop",), 3e-2, 0.3),
    ("adam", ("Adam", "Lamb", "Adafactor", "Adamax"), 1e-2, 1e-1),
    ("sgd", ("SGD", "Nesterov", "Momentum"), 0.3, 3.0),
)


def optimizer_family(name: str) -> tuple[str, float, float] | None:
    """(family, high, very high) of an optimizer class name, or None when no family matches
    (LBFGS, a custom rule: its lr says nothing by itself)."""
    for family, words, high, very_high in LR_CUTS:
        if any(word.lower() in name.lower() for word in words):
            return family, high, very_high
    return None


def optimizer_of(run: Run) -> tuple[str, float, float] | None:
    """(class name, high, very high) of the run's optimizer (`optimizer_family`), or None when
    the monitor saw none or its family is not known."""
    names = [str(c.value) for c in run.settings if c.key == "optimizer"]
    family = optimizer_family(names[0]) if names else None
    return None if family is None else (names[0], family[1], family[2])


def peak_lr(run: Run, until: int | None = None) -> float | None:
    """The largest lr of any parameter group the run set, up to step `until` (a schedule's
    peak; one group's lr far above the others' is still an lr far too high)."""
    return max((lr for _, lr in lr_settings(run, until)), default=None)


class LrLevel(Symptom):
    """The run's peak learning rate up to the failure against its optimizer family's usual
    range (`LR_CUTS`), read on a log scale (shared near a cut); unobserved when the optimizer
    or its lr was not seen, or its family is not known."""

    name = "lr_level"
    states = ("typical", "high", "very_high")
    description = "the peak lr against the optimizer family's usual range"
    leak = MappingProxyType({"typical": 0.9, "high": 0.08, "very_high": 0.02})

    def observe(self, run: Run) -> Mapping[str, float]:
        optimizer = optimizer_of(run)
        lr = peak_lr(run, failure_step(run))
        if optimizer is None or lr is None:
            return self.unobserved()
        _, high, very_high = optimizer
        return self.graded(lr, ((high, "high"), (very_high, "very_high")), "typical")
