"""Cost is a setting: schedules decide which statistics run on which steps.

A schedule is a `step -> bool` callable. Gradient norms, the loss, input statistics and
finiteness run every step (they are cheap); full activation statistics and weight/update ratios
run on a schedule, and every step for `escalate_steps` steps once the cheap signals turn abnormal.
A regime that stays abnormal keeps full statistics every `abnormal_every` steps, not every step;
with nothing new (no machine changed regime: a layer whose gradients stay under the vanishing
limit for thousands of steps) that interval doubles every `SETTLE_SAMPLES` samples, up to
`2 ** MAX_DOUBLINGS` times (`abnormal_interval`). A new abnormal signal escalates again; a layer
re-entering a regime it already entered twice lately (a gradient norm that keeps crossing a limit
and coming back) is recorded but is no news (`TransitionDetector.recurrence`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from neuraldbg.errors import ConfigError


@dataclass(frozen=True)
class Every:
    """True every `n` steps, and on each of the first `first` steps (step 0 is evidence)."""

    n: int
    first: int = 0

    def __post_init__(self) -> None:
        if self.n < 1 or self.first < 0:
            raise ConfigError(f"every(n={self.n}, first={self.first}): need n >= 1, first >= 0")

    def __call__(self, step: int) -> bool:
        return step < self.first or step % self.n == 0


def every(n: int, first: int = 0) -> Every:
    return Every(n, first)


@dataclass(frozen=True)
class Schedule:
    """Which expensive statistics run when.

    activations: full per-layer activation statistics on these steps.
    weights: weight norms and update-to-weight ratios on these steps (one weight copy each).
    stash: keep a reference to every module output of every step, so the first non-finite value
        is localized exactly on the step it appears (costs a hook call per module per step).
        False: no hooks run inside the model on a quiet step; a step that turns non-finite
        before the optimizer applies it is run again with its outputs kept (`replay.py`), which
        on a model in host memory is always in time. None (the default): False for a model in
        host memory, True on an accelerator (knowing in time there would cost a second sync).
    escalate_steps: after an abnormal signal, full statistics on every step for this many steps.
    abnormal_every: after those, while some machine stays outside its healthy regime, full
        statistics every this many steps (until a new abnormal signal escalates again); spaced
        out while nothing changes (`abnormal_interval`).
    """

    activations: Callable[[int], bool]
    weights: Callable[[int], bool]
    stash: bool | None = None
    escalate_steps: int = 20
    abnormal_every: int = 5

    def __post_init__(self) -> None:
        if self.escalate_steps < 0 or self.abnormal_every < 1:
            raise ConfigError(
                f"Schedule(escalate_steps={self.escalate_steps}, abnormal_every="
                f"{self.abnormal_every}): need escalate_steps >= 0 and abnormal_every >= 1")


PRESETS: dict[str, Schedule] = {
    "light": Schedule(every(200, first=1), every(200, first=1), stash=False, escalate_steps=5,
                      abnormal_every=25),
    "standard": Schedule(every(50, first=3), every(50, first=1), stash=None, escalate_steps=20,
                         abnormal_every=5),
    "full": Schedule(every(1), every(1), stash=True, escalate_steps=0, abnormal_every=1),
}


#: Full-statistics samples of an abnormal regime with no new event before their interval doubles.
SETTLE_SAMPLES = 4
MAX_DOUBLINGS = 4


def abnormal_interval(every: int, quiet_for: int) -> int:
    """Steps between full-statistics samples of a regime that stays abnormal, `quiet_for`
    steps after the last event: `every`, doubled every `SETTLE_SAMPLES` intervals of `every`
    steps, at most `MAX_DOUBLINGS` times (standard preset: 5 steps, then 10, 20, 40, 80)."""
    return every << min(max(quiet_for, 0) // (SETTLE_SAMPLES * every), MAX_DOUBLINGS)


def resolve(preset: str | Schedule) -> Schedule:
    if isinstance(preset, Schedule):
        return preset
    if preset not in PRESETS:
        raise ConfigError(
            f"unknown preset {preset!r}: use one of {sorted(PRESETS)} or pass a Schedule(...)"
        )
    return PRESETS[preset]
