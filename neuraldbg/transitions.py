"""Per-layer state machines: statistics in, regime changes ("events") out.

Design belief 2: watch transitions, not values. Each signal of each layer has a small machine that
maps a statistic to a regime (healthy / exploding / ...); an `Event` is emitted only when the
regime changes. The machines are pure functions `advance_*(state, obs, cfg) -> (state, change)`
over frozen states, so they are easy to test; `TransitionDetector` only holds their states.
Pure Python on host floats (no torch), with memory bounded per machine.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from causal.run import INPUT, LOSS, ActivationKind, Event, EventKind, LayerStat, State

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
            (self.plateau_window >= 4, "plateau_window", "must be >= 4 (exit looks at window/4)"),
            (self.plateau_rel > 0, "plateau_rel", "must be > 0"),
            (self.plateau_floor >= 0, "plateau_floor", "must be >= 0"),
        ]
        for name in ("baseline_warmup", "vanish_patience", "exit_patience", "diverge_patience"):
            value = getattr(self, name)
            checks.append((isinstance(value, int) and value >= 1, name, "must be an int >= 1"))
        for ok, name, fix in checks:
            if not ok:
                raise ValueError(f"Thresholds.{name}={getattr(self, name)!r}: {fix}")

    def to_dict(self) -> dict[str, float]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class Transition:
    """A regime change of one machine; the detector turns it into an `Event`."""

    from_state: State
    to_state: State
    value: float
    metadata: Mapping[str, Any] = field(default_factory=dict)


def _clean(meta: Mapping[str, Any]) -> dict[str, Any]:
    """JSON-friendly metadata: non-finite floats become None."""
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
            for k, v in meta.items()}


def _change(old: State, new: State, value: float | None, **meta: Any) -> Transition:
    return Transition(old, new, math.nan if value is None else float(value), _clean(meta))


def _ema_log(log_base: float | None, x: float, alpha: float) -> float:
    """EMA of log10(x): a scale baseline that one outlier cannot drag far."""
    lx = math.log10(x)
    return lx if log_base is None else log_base + alpha * (lx - log_base)


def _baseline(log_base: float | None, n: int, cfg: Thresholds) -> float | None:
    return 10.0**log_base if log_base is not None and n >= cfg.baseline_warmup else None


# ------------------------------------------------------------------------------- gradient norm


@dataclass(frozen=True)
class GradState:
    """Regime of one layer's parameter-gradient norm, its log baseline and the pending streak."""

    regime: State = State.GRAD_HEALTHY
    log_base: float | None = None
    n: int = 0  # healthy observations folded into the baseline
    streak: int = 0  # consecutive observations towards a pending change (vanish enter or exit)


def advance_grad(s: GradState, norm: float, cfg: Thresholds) -> tuple[GradState, Transition | None]:
    """Exploding enters at once (minimal latency), vanishing after `vanish_patience`, and a bad
    regime is left only after `exit_patience` observations inside the hysteresis band."""
    if not (math.isfinite(norm) and norm >= 0):
        raise ValueError(f"grad norm must be finite and >= 0, got {norm!r}")
    base = _baseline(s.log_base, s.n, cfg)
    hi, lo = [("absolute", cfg.exploding)], [("absolute", cfg.vanishing)]
    if base is not None:  # relative rules only once the baseline is ready
        hi.append(("relative", base * cfg.relative_exploding))
        lo.append(("relative", base * cfg.relative_vanishing))
    up = next(((r, t) for r, t in hi if norm > t), None)
    down = next(((r, t) for r, t in lo if norm < t), None)  # 0 < vanishing: exact 0 vanishes
    boom, ok, low = State.GRAD_EXPLODING, State.GRAD_HEALTHY, State.GRAD_VANISHING
    if up is not None and s.regime != boom:
        return replace(s, regime=boom, streak=0), _change(
            s.regime, boom, norm, rule=up[0], threshold=up[1], baseline=base)
    if s.regime == ok:
        if down is None:  # a healthy observation: only these move the baseline
            log_base = _ema_log(s.log_base, norm, cfg.baseline_alpha)
            return replace(s, streak=0, log_base=log_base, n=s.n + 1), None
        if s.streak + 1 < cfg.vanish_patience:
            return replace(s, streak=s.streak + 1), None
        return replace(s, regime=low, streak=0), _change(
            ok, low, norm, rule=down[0], threshold=down[1], baseline=base)
    h = cfg.hysteresis
    exit_at = min(t / h for _, t in hi) if s.regime == boom else max(t * h for _, t in lo)
    inside = norm < exit_at if s.regime == boom else norm > exit_at
    if not inside:
        return replace(s, streak=0), None
    if s.streak + 1 < cfg.exit_patience:
        return replace(s, streak=s.streak + 1), None
    return replace(s, regime=ok, streak=0), _change(
        s.regime, ok, norm, rule="exit", threshold=exit_at, baseline=base)


# ---------------------------------------------------------------------------------- activation


@dataclass(frozen=True)
class ActivationObs:
    """One layer's output statistics at one step (None: not measured)."""

    kind: str = ActivationKind.OTHER
    max_abs: float | None = None
    saturated: float | None = None
    zero: float | None = None
    headroom: float | None = None  # dtype max / max|a|, only under fp16/bf16


@dataclass(frozen=True)
class ActivationState:
    regime: State = State.ACTIVATION_HEALTHY
    log_base: float | None = None  # EMA of log10(max|a|) over healthy observations
    n: int = 0
    streak: int = 0


_ACT_RANK = {State.ACTIVATION_HEALTHY: 0, State.ACTIVATION_SATURATED: 1,
             State.ACTIVATION_DEAD: 1, State.ACTIVATION_EXPLODING: 2}


def _act_rule(regime: State, o: ActivationObs, base: float | None, cfg: Thresholds,
              entering: bool) -> tuple[str, float] | None:
    """(rule, threshold) by which `o` is in `regime`; exit thresholds when not `entering`."""
    h = 1.0 if entering else cfg.hysteresis
    if regime == State.ACTIVATION_EXPLODING:
        m = o.max_abs
        if m is not None and m >= cfg.activation_exploding / h:
            return "absolute", cfg.activation_exploding / h
        if m is not None and base is not None and m > base * cfg.relative_exploding / h:
            return "relative", base * cfg.relative_exploding / h
        if o.headroom is not None and o.headroom < cfg.headroom_enter * h:
            return "headroom", cfg.headroom_enter * h
    elif regime == State.ACTIVATION_SATURATED and o.kind == ActivationKind.SATURATING:
        t = cfg.saturated_enter if entering else cfg.saturated_exit
        if o.saturated is not None and o.saturated >= t:
            return "saturated", t
    elif regime == State.ACTIVATION_DEAD and o.kind == ActivationKind.RELU:
        t = cfg.dead_enter if entering else cfg.dead_exit
        if o.zero is not None and o.zero >= t:
            return "dead", t
    return None


def _act_value(regime: State, o: ActivationObs) -> float | None:
    """The statistic that judges `regime` (None when it was not measured)."""
    if regime == State.ACTIVATION_SATURATED:
        return o.saturated
    if regime == State.ACTIVATION_DEAD:
        return o.zero
    return o.max_abs if o.max_abs is not None else o.headroom


def advance_activation(s: ActivationState, o: ActivationObs,
                       cfg: Thresholds) -> tuple[ActivationState, Transition | None]:
    """Priority exploding > dead/saturated > healthy; bad regimes enter at once and are left
    after `exit_patience` observations past the exit threshold."""
    base = _baseline(s.log_base, s.n, cfg)
    target, rule = State.ACTIVATION_HEALTHY, None
    for regime in (State.ACTIVATION_EXPLODING, State.ACTIVATION_DEAD, State.ACTIVATION_SATURATED):
        rule = _act_rule(regime, o, base, cfg, entering=True)
        if rule is not None:
            target = regime
            break
    meta: dict[str, Any] = {"baseline": base, "activation_kind": str(o.kind)}
    if rule is not None and _ACT_RANK[target] > _ACT_RANK[s.regime]:
        return replace(s, regime=target, streak=0), _change(
            s.regime, target, _act_value(target, o), rule=rule[0], threshold=rule[1], **meta)
    if s.regime == State.ACTIVATION_HEALTHY:
        if o.max_abs is not None and o.max_abs > 0:
            log_base = _ema_log(s.log_base, o.max_abs, cfg.baseline_alpha)
            s = replace(s, log_base=log_base, n=s.n + 1)
        return s, None
    if _act_value(s.regime, o) is None:  # the deciding statistic is missing: no information
        return s, None
    if _act_rule(s.regime, o, base, cfg, entering=False) is not None:
        return replace(s, streak=0), None
    if s.streak + 1 < cfg.exit_patience:
        return replace(s, streak=s.streak + 1), None
    shown = target if target != State.ACTIVATION_HEALTHY else s.regime
    return replace(s, regime=target, streak=0), _change(
        s.regime, target, _act_value(shown, o), rule="exit", threshold=None, **meta)


# ---------------------------------------------------------------------------------- finiteness

_FINITE: dict[str, tuple[State, State, State]] = {
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
        return _FINITE[self.kind][self.level]


def advance_finite(s: FiniteState, count: float,
                   has_nan: bool) -> tuple[FiniteState, Transition | None]:
    """Exact, no hysteresis: any non-finite value changes the regime at once; NaN beats inf."""
    bad = has_nan or math.isnan(count) or count > 0
    level = (2 if has_nan else 1) if bad else 0
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
    dev: float = 0.0  # EMA of |loss - smoothed|: the noise scale
    diverge_streak: int = 0
    plateau_level: float | None = None  # mean smoothed loss of the window's last quarter, at entry
    plateau_streak: int = 0  # consecutive steps clearly below the plateau level


def _mean(xs: tuple[float, ...]) -> float:
    return math.fsum(xs) / len(xs)


def advance_loss(s: LossState, loss: float, cfg: Thresholds) -> tuple[LossState, Transition | None]:
    """Priority diverging > spike > plateau > steady. Ratio rules need positive losses."""
    if not math.isfinite(loss):
        raise ValueError(f"loss must be finite (non-finite losses go to advance_finite): {loss!r}")
    a, w, q = cfg.loss_alpha, cfg.plateau_window, cfg.plateau_window // 4
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
    above = low > 0 and smooth > cfg.diverge_factor * low
    hist = (*s.smoothed, smooth)[-w:]
    new = replace(s, recent=(*s.recent, loss)[-cfg.loss_window:], smoothed=hist, min_smooth=low,
                  first_smooth=first, dev=dev, diverge_streak=s.diverge_streak + 1 if above else 0)
    r, to, meta = s.regime, s.regime, {}
    if r != State.LOSS_DIVERGING and new.diverge_streak >= cfg.diverge_patience:
        to, meta = State.LOSS_DIVERGING, {"rule": "diverge", "threshold": cfg.diverge_factor * low}
    elif r == State.LOSS_DIVERGING:
        if smooth < (t := cfg.diverge_factor / 2 * low):
            to, meta = State.LOSS_STEADY, {"rule": "exit", "threshold": t}
    elif spike and med is not None and r != State.LOSS_SPIKE:
        to, meta = State.LOSS_SPIKE, {"rule": "spike", "threshold": cfg.spike_factor * med}
    elif r == State.LOSS_SPIKE:
        if med is not None and loss < cfg.spike_exit * med:
            to, meta = State.LOSS_STEADY, {"rule": "exit", "threshold": cfg.spike_exit * med}
    elif r == State.LOSS_STEADY and len(hist) == w:
        # Improvement over the window, between the means of its first and last quarters: a point
        # comparison of two noisy EMA values would enter on noise (and then flap back out).
        old, level = _mean(hist[:q]), _mean(hist[-q:])
        if (first > 0 and level > cfg.plateau_floor * first and old > 0
                and (old - level) / old < cfg.plateau_rel):
            to, meta = State.LOSS_PLATEAU, {"rule": "plateau", "threshold": cfg.plateau_rel}
            new = replace(new, plateau_level=level, plateau_streak=0)
    elif r == State.LOSS_PLATEAU:
        # Leave once the smoothed loss stays below the plateau level by > 10 x plateau_rel and by
        # 3 noise sd (sd of an EMA value ~ sqrt(a / (2 - a)) * 1.22 * dev, doubled in variance
        # for the level's own noise) for window/4 steps in a row: a noisy flat loss cannot flap.
        level = s.plateau_level or 0.0
        gap = max(10 * cfg.plateau_rel * abs(level), 3 * math.sqrt(2 * a / (2 - a)) * 1.22 * dev)
        new = replace(new, plateau_streak=s.plateau_streak + 1 if level - smooth > gap else 0)
        if new.plateau_streak >= q:
            to, meta = State.LOSS_STEADY, {"rule": "exit", "threshold": level - gap}
    if to == r:
        return new, None
    meta.update(median=med, smoothed=smooth, min_smoothed=low)
    return replace(new, regime=to), _change(r, to, loss, **meta)


# ------------------------------------------------------------------------------------ detector


def _num(x: Any) -> float | None:
    return None if x is None else float(x)


class TransitionDetector:
    """Holds one machine per (layer, signal) and turns their regime changes into `Event`s.

    Events come in the caller's layer order (the monitor passes forward order); within a layer
    the finiteness event comes before the regime event.
    """

    def __init__(self, thresholds: Thresholds | None = None) -> None:
        self.thresholds = thresholds if thresholds is not None else Thresholds()
        self._grad: dict[str, GradState] = {}
        self._act: dict[str, ActivationState] = {}
        self._finite: dict[tuple[str, str], FiniteState] = {}
        self._loss = LossState()

    def _finite_step(self, step: int, layer: str, kind: EventKind, count: float,
                     has_nan: bool) -> list[Event]:
        s = self._finite.get((layer, kind), FiniteState(kind))
        self._finite[(layer, kind)], tr = advance_finite(s, count, has_nan)
        return _events(step, layer, kind, tr)

    def observe_grad_finiteness(self, step: int, layer: str, count: float,
                                has_nan: bool) -> list[Event]:
        """Exact non-finite count of a layer's parameter gradients."""
        return self._finite_step(step, layer, EventKind.GRAD_FINITE, count, has_nan)

    def observe_grads(self, step: int, norms: Mapping[str, float],
                      exact: Mapping[str, tuple[float, bool]] | None = None) -> list[Event]:
        """Per-layer gradient L2 norms; `exact` optionally gives (non-finite count, has_nan).
        A non-finite norm only moves the finiteness machine (count 1 unless `exact` says)."""
        out: list[Event] = []
        for layer, raw in norms.items():
            norm = float(raw)
            if exact is not None and layer in exact:
                count, has_nan = exact[layer]
            else:
                count, has_nan = float(not math.isfinite(norm)), math.isnan(norm)
            out += self.observe_grad_finiteness(step, layer, count, has_nan)
            if math.isfinite(norm) and count == 0 and not has_nan:
                s = self._grad.get(layer, GradState())
                self._grad[layer], tr = advance_grad(s, norm, self.thresholds)
                out += _events(step, layer, EventKind.GRAD, tr)
        return out

    def observe_activations(self, step: int, stats: Mapping[str, Mapping[str, float | None]],
                            kinds: Mapping[str, str]) -> list[Event]:
        """Per-layer output statistics keyed by `LayerStat` values (any may be missing), plus
        an optional "act_has_nan" (1.0/0.0); `kinds` maps layer -> `ActivationKind` value."""
        out: list[Event] = []
        for layer, st in stats.items():
            max_abs = _num(st.get(LayerStat.ACT_MAX_ABS))
            count = _num(st.get(LayerStat.ACT_NONFINITE))
            if count is None and max_abs is not None:
                count = float(not math.isfinite(max_abs))
            nan_flag = _num(st.get("act_has_nan"))
            has_nan = bool(nan_flag) if nan_flag is not None else (
                max_abs is not None and math.isnan(max_abs))
            if count is not None:
                out += self._finite_step(step, layer, EventKind.ACTIVATION_FINITE, count, has_nan)
            if (count is not None and count != 0) or has_nan:
                continue  # tainted statistics: only the finiteness machine judges this step
            obs = ActivationObs(kinds.get(layer, ActivationKind.OTHER), max_abs,
                                _num(st.get(LayerStat.ACT_SATURATED)),
                                _num(st.get(LayerStat.ACT_ZERO)),
                                _num(st.get(LayerStat.ACT_HEADROOM)))
            s = self._act.get(layer, ActivationState())
            self._act[layer], tr = advance_activation(s, obs, self.thresholds)
            out += _events(step, layer, EventKind.ACTIVATION, tr)
        return out

    def observe_loss(self, step: int, loss: float) -> list[Event]:
        """The step's loss: finiteness first; only finite losses move the regime machine."""
        loss = float(loss)
        out = self._finite_step(step, LOSS, EventKind.LOSS_FINITE,
                                float(not math.isfinite(loss)), math.isnan(loss))
        if math.isfinite(loss):
            self._loss, tr = advance_loss(self._loss, loss, self.thresholds)
            out += _events(step, LOSS, EventKind.LOSS, tr)
        return out

    def observe_input(self, step: int, nonfinite: float, has_nan: bool) -> list[Event]:
        """Non-finite count of the step's inputs (and targets)."""
        return self._finite_step(step, INPUT, EventKind.INPUT_FINITE, float(nonfinite), has_nan)

    def state(self, layer: str, kind: str) -> str:
        """Current regime of one machine (the initial one if it was never observed)."""
        if kind == EventKind.GRAD:
            return self._grad.get(layer, GradState()).regime
        if kind == EventKind.ACTIVATION:
            return self._act.get(layer, ActivationState()).regime
        if kind == EventKind.LOSS:
            return self._loss.regime
        if kind in _FINITE:
            return self._finite.get((layer, kind), FiniteState(kind)).regime
        raise ValueError(f"unknown event kind {kind!r}; use an EventKind value")

    def abnormal(self) -> bool:
        """Whether any machine is outside its healthy regime (a loss plateau is not abnormal)."""
        return (any(s.regime != State.GRAD_HEALTHY for s in self._grad.values())
                or any(s.regime != State.ACTIVATION_HEALTHY for s in self._act.values())
                or any(s.level != 0 for s in self._finite.values())
                or self._loss.regime in (State.LOSS_SPIKE, State.LOSS_DIVERGING))


def _events(step: int, layer: str, kind: EventKind, tr: Transition | None) -> list[Event]:
    if tr is None:
        return []
    return [Event(step, layer, kind, tr.from_state, tr.to_state, tr.value, dict(tr.metadata))]
