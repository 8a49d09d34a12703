"""The state machines of one signal each: statistics in, regime changes out (pure functions).

Design belief 2: watch transitions, not values. Each signal of each layer has a small machine that
maps a statistic to a regime (healthy / exploding / ...); an `Event` is emitted only when the
regime changes. The machines are pure functions `advance_*(state, obs, cfg) -> (state, change)`
over frozen states, so they are easy to test; `TransitionDetector` only holds their states.
Pure Python on host floats (no torch), with memory bounded per machine.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from causal.schema.run import ActivationKind, EventKind, State

_SPIKE_MIN_HISTORY = 5  # finite losses needed before a spike can be judged


@dataclass(frozen=True)
class Thresholds:
    """Every threshold of every machine (defaults are the seed-compatible ones)."""

    vanishing: float = 1e-6
    exploding: float = 1e3
    relative_exploding: float = 1e2
    relative_vanishing: float = 1e-4
    baseline_alpha: float = 0.05
    baseline_warmup: int = 10
    vanish_patience: int = 2
    exit_patience: int = 3
    hysteresis: float = 4.0
    saturated_enter: float = 0.75
    saturated_exit: float = 0.5
    dead_enter: float = 0.95
    dead_exit: float = 0.85
    activation_exploding: float = 1e4
    headroom_enter: float = 4.0
    spike_factor: float = 5.0
    spike_exit: float = 2.0  # added: the "back below 2 x median" constant, made configurable
    loss_window: int = 20
    loss_alpha: float = 0.1  # added: the EMA weight of the smoothed loss, made configurable
    diverge_factor: float = 10.0
    # also diverging: the smoothed loss this many times above the first loss (the loss of the
    # untrained model), as when a far too large step throws a classifier far above chance
    diverge_from_start: float = 3.0
    diverge_patience: int = 5
    plateau_window: int = 200
    plateau_rel: float = 1e-3
    plateau_floor: float = 1e-3

    def __post_init__(self) -> None:
        checks = [
            (0 < self.vanishing < self.exploding, "vanishing", "must be > 0 and < exploding"),
            (self.relative_exploding > 1, "relative_exploding", "must be > 1"),
            (0 < self.relative_vanishing < 1, "relative_vanishing", "must be in (0, 1)"),
            (0 < self.baseline_alpha <= 1, "baseline_alpha", "must be in (0, 1]"),
            (self.hysteresis >= 1, "hysteresis", "must be >= 1 (1 disables hysteresis)"),
            (0 < self.saturated_exit <= self.saturated_enter <= 1, "saturated_exit",
             "must satisfy 0 < saturated_exit <= saturated_enter <= 1"),
            (0 < self.dead_exit <= self.dead_enter <= 1, "dead_exit",
             "must satisfy 0 < dead_exit <= dead_enter <= 1"),
            (self.activation_exploding > 0, "activation_exploding", "must be > 0"),
            (self.headroom_enter >= 1, "headroom_enter", "must be >= 1"),
            (1 < self.spike_exit < self.spike_factor, "spike_exit",
             "must satisfy 1 < spike_exit < spike_factor"),
            (self.loss_window >= _SPIKE_MIN_HISTORY, "loss_window", "must be >= 5"),
            (0 < self.loss_alpha <= 1, "loss_alpha", "must be in (0, 1]"),
            (self.diverge_factor > 2, "diverge_factor", "must be > 2 (exit is below half of it)"),
            (self.diverge_from_start > 2, "diverge_from_start",
             "must be > 2 (exit is below half of it)"),
            (self.plateau_window >= 8, "plateau_window", "must be >= 8 (exit waits window/4)"),
            (self.plateau_rel > 0, "plateau_rel", "must be > 0"),
            (self.plateau_floor >= 0, "plateau_floor", "must be >= 0"),
        ]
        for name in ("baseline_warmup", "vanish_patience", "exit_patience", "diverge_patience"):
            value = getattr(self, name)
            checks.append((isinstance(value, int) and value >= 1, name, "must be an int >= 1"))
        for ok, name, fix in checks:
            if not ok:
                raise ValueError(f"Thresholds.{name}={getattr(self, name)!r}: {fix}")


@dataclass(frozen=True)
class Transition:
    """A regime change of one machine; the detector turns it into an `Event`."""

    from_state: State
    to_state: State
    value: float
    metadata: Mapping[str, Any] = field(default_factory=dict)


def _change(old: State, new: State, value: float | None, **meta: Any) -> Transition:
    """A transition with JSON-friendly metadata (non-finite floats become None)."""
    meta = {k: None if isinstance(v, float) and not math.isfinite(v) else v
            for k, v in meta.items()}
    return Transition(old, new, math.nan if value is None else float(value), meta)


# ------------------------------------------------- banded machines (gradient norm, activation)

_Rule = Callable[[State, bool], "tuple[str, float] | None"]  # (regime, entering) -> why


@dataclass(frozen=True)
class BandState:
    """Regime, an EMA of log10(statistic) over healthy observations (a scale baseline that one
    outlier cannot drag far), and the streak of observations towards a pending change."""

    regime: State
    log_base: float | None = None
    n: int = 0
    streak: int = 0

    def baseline(self, cfg: Thresholds) -> float | None:
        ready = self.log_base is not None and self.n >= cfg.baseline_warmup
        return 10.0**self.log_base if ready and self.log_base is not None else None


@dataclass(frozen=True)
class GradState(BandState):
    regime: State = State.GRAD_HEALTHY


@dataclass(frozen=True)
class ActivationState(BandState):
    regime: State = State.ACTIVATION_HEALTHY


_S = TypeVar("_S", bound=BandState)


def _band(s: _S, healthy: State, order: tuple[State, ...], rule: _Rule, x: float | None,
          cfg: Thresholds, patience: Mapping[State, int], judged: bool = True
          ) -> tuple[_S, State, str | None, float]:
    """Shared engine: enter the first regime of `order` whose rule fires (after its patience,
    default 1: minimal latency) unless already in one as severe; leave a bad regime only after
    `exit_patience` observations outside its hysteresis band, for the regime they then show.
    Only healthy observations move the baseline (of statistic `x`). `judged` False: the current
    regime's statistic is missing, so nothing but a more severe regime can change it.
    Returns (state, regime, rule, threshold); the regime is `s.regime` when nothing changed."""
    rank = {r: len(order) - i for i, r in enumerate(order)} | {healthy: 0}
    target, why = healthy, ("exit", math.nan)
    for regime in order:
        if (hit := rule(regime, True)) is not None:
            target, why = regime, hit
            break
    if rank[target] > rank[s.regime]:
        if s.streak + 1 < patience.get(target, 1):
            return replace(s, streak=s.streak + 1), s.regime, None, math.nan
        return replace(s, regime=target, streak=0), target, *why
    if s.regime == healthy:
        if x is not None and 0 < x < math.inf:
            lx = math.log10(x)
            lb = lx if s.log_base is None else s.log_base + cfg.baseline_alpha * (lx - s.log_base)
            s = replace(s, log_base=lb, n=s.n + 1)
        return replace(s, streak=0), s.regime, None, math.nan
    if not judged:
        return s, s.regime, None, math.nan
    if rule(s.regime, False) is not None:  # still inside the bad regime's (wider) band
        return replace(s, streak=0), s.regime, None, math.nan
    if s.streak + 1 < cfg.exit_patience:
        return replace(s, streak=s.streak + 1), s.regime, None, math.nan
    return replace(s, regime=target, streak=0), target, *why  # ("exit", nan) back to healthy


def advance_grad(s: GradState, norm: float, cfg: Thresholds) -> tuple[GradState, Transition | None]:
    """Exploding on the absolute or (baseline ready) relative rule, at once; vanishing after
    `vanish_patience` (an exact 0 vanishes); exit thresholds are the enter ones moved by
    `hysteresis`. Non-finite norms belong to the finiteness machine."""
    if not (math.isfinite(norm) and norm >= 0):
        raise ValueError(f"grad norm must be finite and >= 0, got {norm!r}")
    base = s.baseline(cfg)

    def rule(regime: State, entering: bool) -> tuple[str, float] | None:
        h = 1.0 if entering else cfg.hysteresis
        if regime == State.GRAD_EXPLODING:
            rel = math.inf if base is None else base * cfg.relative_exploding
            return next(((r, t / h) for r, t in (("absolute", cfg.exploding), ("relative", rel))
                         if norm > t / h), None)
        rel = 0.0 if base is None else base * cfg.relative_vanishing
        return next(((r, t * h) for r, t in (("absolute", cfg.vanishing), ("relative", rel))
                     if norm < t * h), None)

    new, to, why, threshold = _band(
        s, State.GRAD_HEALTHY, (State.GRAD_EXPLODING, State.GRAD_VANISHING), rule, norm, cfg,
        {State.GRAD_VANISHING: cfg.vanish_patience})
    if to == s.regime:
        return new, None
    return new, _change(s.regime, to, norm, rule=why, threshold=threshold, baseline=base)


@dataclass(frozen=True)
class ActivationObs:
    """One layer's output statistics at one step (None: not measured)."""

    kind: str = ActivationKind.OTHER
    max_abs: float | None = None
    saturated: float | None = None
    zero: float | None = None
    headroom: float | None = None  # dtype max / max|a|, only under fp16/bf16


def _act_value(regime: State, o: ActivationObs) -> float | None:
    """The statistic that judges `regime` (None when it was not measured)."""
    by_regime = {State.ACTIVATION_SATURATED: o.saturated, State.ACTIVATION_DEAD: o.zero}
    return by_regime.get(regime, o.max_abs if o.max_abs is not None else o.headroom)


def advance_activation(s: ActivationState, o: ActivationObs,
                       cfg: Thresholds) -> tuple[ActivationState, Transition | None]:
    """Priority exploding > dead (ReLU) / saturated (saturating) > healthy; all enter at once.
    A bad regime whose statistic was not measured this step is not left."""
    base = s.baseline(cfg)

    def rule(regime: State, entering: bool) -> tuple[str, float] | None:
        h = 1.0 if entering else cfg.hysteresis
        if regime == State.ACTIVATION_EXPLODING:
            rel = math.inf if base is None else base * cfg.relative_exploding / h
            for name, t in (("absolute", cfg.activation_exploding / h), ("relative", rel)):
                if o.max_abs is not None and o.max_abs >= t:
                    return name, t
            if o.headroom is not None and o.headroom < cfg.headroom_enter * h:
                return "headroom", cfg.headroom_enter * h
            return None
        stat, kind, enter, leave = (
            (o.saturated, ActivationKind.SATURATING, cfg.saturated_enter, cfg.saturated_exit)
            if regime == State.ACTIVATION_SATURATED
            else (o.zero, ActivationKind.RELU, cfg.dead_enter, cfg.dead_exit))
        t = enter if entering else leave
        if o.kind == kind and stat is not None and stat >= t:
            return regime.split("_")[1], t
        return None

    order = (State.ACTIVATION_EXPLODING, State.ACTIVATION_DEAD, State.ACTIVATION_SATURATED)
    new, to, why, threshold = _band(s, State.ACTIVATION_HEALTHY, order, rule, o.max_abs, cfg, {},
                                    judged=_act_value(s.regime, o) is not None)
    if to == s.regime:
        return new, None
    shown = _act_value(to if to != State.ACTIVATION_HEALTHY else s.regime, o)
    return new, _change(s.regime, to, shown, rule=why, threshold=threshold, baseline=base,
                        activation_kind=str(o.kind))


# ---------------------------------------------------------------------------------- finiteness

FINITE_STATES: dict[str, tuple[State, State, State]] = {
    EventKind.GRAD_FINITE: (State.GRAD_FINITE, State.GRAD_INF, State.GRAD_NAN),
    EventKind.ACTIVATION_FINITE: (State.ACTIVATION_FINITE, State.ACTIVATION_INF,
                                  State.ACTIVATION_NAN),
    EventKind.LOSS_FINITE: (State.LOSS_FINITE, State.LOSS_INF, State.LOSS_NAN),
    EventKind.INPUT_FINITE: (State.INPUT_FINITE, State.INPUT_INF, State.INPUT_NAN),
}


@dataclass(frozen=True)
class FiniteState:
    """finite (level 0) / inf (1) / nan (2) of one signal; `kind` picks the state names."""

    kind: str
    level: int = 0

    @property
    def regime(self) -> State:
        return FINITE_STATES[self.kind][self.level]


def advance_finite(s: FiniteState, count: float,
                   has_nan: bool) -> tuple[FiniteState, Transition | None]:
    """Exact, no hysteresis: any non-finite value changes the regime at once; NaN beats inf."""
    level = 2 if has_nan else 1 if (math.isnan(count) or count > 0) else 0
    if level == s.level:
        return s, None
    new = replace(s, level=level)
    return new, _change(s.regime, new.regime, count, has_nan=bool(has_nan))


# ---------------------------------------------------------------------------------------- loss


@dataclass(frozen=True)
class LossState:
    """Regime of the finite losses, with bounded memory (tuples cut to their windows)."""

    regime: State = State.LOSS_STEADY
    recent: tuple[float, ...] = ()  # last `loss_window` finite losses
    smoothed: tuple[float, ...] = ()  # last `plateau_window` smoothed losses
    min_smooth: float | None = None
    first_smooth: float | None = None
    dev: float = 0.0  # EMA of |loss - smoothed|: the noise scale (sd of a loss ~ 1.22 dev)
    diverge_streak: int = 0
    plateau_level: float | None = None  # fitted smoothed loss at plateau entry; None: no plateau
    plateau_streak: int = 0  # consecutive steps clearly below the plateau level
    seen: int = 0  # finite losses observed (the plateau test runs every plateau_window/20)


def _plateau(hist: tuple[float, ...], sd: float, cfg: Thresholds) -> float | None:
    """The fitted level when the window is a plateau, else None. The improvement comes from a
    least-squares line through the smoothed losses (the least noisy estimate) and must stay below
    plateau_rel even after adding one noise sd, so a slowly improving noisy loss does not enter."""
    w = len(hist)
    tm, mean = (w - 1) / 2, math.fsum(hist) / w
    slope = math.fsum((i - tm) * y for i, y in enumerate(hist)) / (w * (w * w - 1) / 12)
    start, level = mean - slope * tm, mean + slope * tm
    gain_sd = sd * math.sqrt(12 / w)
    return level if start > 0 and (start - level + gain_sd) / start < cfg.plateau_rel else None


def advance_loss(s: LossState, loss: float, cfg: Thresholds) -> tuple[LossState, Transition | None]:
    """Priority diverging > spike > plateau > steady; a spike ends in the regime it interrupted
    (steady or plateau). Ratio rules need positive losses."""
    if not math.isfinite(loss):
        raise ValueError(f"loss must be finite (non-finite losses go to advance_finite): {loss!r}")
    a, w = cfg.loss_alpha, cfg.plateau_window
    med = statistics.median(s.recent) if len(s.recent) >= _SPIKE_MIN_HISTORY else None
    spike = med is not None and med > 0 and loss > cfg.spike_factor * med and loss > max(s.recent)
    # A spike enters the smoothed loss clipped to spike_factor x median, so one outlier batch is
    # a spike and not a divergence; a real divergence raises the median and passes anyway.
    x = cfg.spike_factor * med if spike and med is not None else loss
    prev = s.smoothed[-1] if s.smoothed else None
    smooth = x if prev is None else prev + a * (x - prev)
    dev = 0.0 if prev is None else s.dev + a * (abs(x - prev) - s.dev)
    low = smooth if s.min_smooth is None else min(s.min_smooth, smooth)
    first = smooth if s.first_smooth is None else s.first_smooth
    # diverging: far above the lowest smoothed loss, or far above the untrained model's loss
    limit = cfg.diverge_factor * low
    if first > 0:
        limit = min(limit, cfg.diverge_from_start * first)
    above = low > 0 and smooth > limit
    hist = (*s.smoothed, smooth)[-w:]
    # every field (the constructor costs half of `replace`, and this runs every step)
    new = LossState(regime=s.regime, recent=(*s.recent, loss)[-cfg.loss_window:],
                    smoothed=hist, min_smooth=low, first_smooth=first, dev=dev,
                    diverge_streak=s.diverge_streak + 1 if above else 0,
                    plateau_level=s.plateau_level, plateau_streak=s.plateau_streak,
                    seen=s.seen + 1)
    r, to, meta = s.regime, s.regime, {}
    if r != State.LOSS_DIVERGING and new.diverge_streak >= cfg.diverge_patience:
        to, meta = State.LOSS_DIVERGING, {"rule": "diverge", "threshold": limit}
        new = replace(new, plateau_level=None)
    elif r == State.LOSS_DIVERGING:
        if smooth < (t := limit / 2):
            to, meta = State.LOSS_STEADY, {"rule": "exit", "threshold": t}
    elif spike and med is not None and r != State.LOSS_SPIKE:
        to, meta = State.LOSS_SPIKE, {"rule": "spike", "threshold": cfg.spike_factor * med}
        new = replace(new, plateau_streak=0)
    elif r == State.LOSS_SPIKE:
        if med is not None and loss < cfg.spike_exit * med:
            to = State.LOSS_STEADY if s.plateau_level is None else State.LOSS_PLATEAU
            meta = {"rule": "exit", "threshold": cfg.spike_exit * med}
    elif r == State.LOSS_STEADY:
        level = None
        due = new.seen % max(1, w // 20) == 0  # a slow phenomenon: test it every w/20 steps
        if due and len(hist) == w and first > 0 and smooth > cfg.plateau_floor * first:
            level = _plateau(hist, 1.22 * dev, cfg)
        if level is not None:
            to, meta = State.LOSS_PLATEAU, {"rule": "plateau", "threshold": cfg.plateau_rel}
            new = replace(new, plateau_level=level, plateau_streak=0)
    else:
        # Leave the plateau once the smoothed loss stays below its level by > 10 x plateau_rel
        # and by 3 noise sd (sd of an EMA value ~ sqrt(a / (2 - a)) x sd of a loss, doubled in
        # variance for the level's own noise) for window/4 steps in a row: no flapping on noise.
        level = s.plateau_level or 0.0
        gap = max(10 * cfg.plateau_rel * abs(level), 3 * math.sqrt(2 * a / (2 - a)) * 1.22 * dev)
        new = replace(new, plateau_streak=s.plateau_streak + 1 if level - smooth > gap else 0)
        if new.plateau_streak >= w // 4:
            to, meta = State.LOSS_STEADY, {"rule": "exit", "threshold": level - gap}
            new = replace(new, plateau_level=None)
    if to == r:
        return new, None
    meta.update(median=med, smoothed=smooth, min_smoothed=low)
    return replace(new, regime=to), _change(r, to, loss, **meta)
