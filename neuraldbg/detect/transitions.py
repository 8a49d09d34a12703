"""Transition detection: one state machine per (layer, signal), events only on regime changes.

Design belief 2: watch transitions, not values. The machines are pure functions over frozen
states (`detect/state_machines.py`); `TransitionDetector` only holds their states and turns their
regime
changes into `Event`s. Pure Python on host floats (no torch), with memory bounded per machine.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from causal.schema.run import INPUT, LOSS, ActivationKind, Event, EventKind, LayerStat, State
from neuraldbg.detect.state_machines import (
    FINITE_STATES,
    ActivationObs,
    ActivationState,
    FiniteState,
    GradState,
    LossState,
    Thresholds,
    Transition,
    advance_activation,
    advance_finite,
    advance_grad,
    advance_loss,
)

__all__ = [
    "ActivationObs", "ActivationState", "FiniteState", "GradState", "LossState", "Thresholds",
    "Transition", "TransitionDetector", "advance_activation", "advance_finite", "advance_grad",
    "advance_loss",
]

_INITIAL: dict[str, Any] = {
    EventKind.GRAD: GradState(), EventKind.ACTIVATION: ActivationState(),
    EventKind.LOSS: LossState(), **{k: FiniteState(k) for k in FINITE_STATES},
}
#: Regimes that are not abnormal (a loss plateau is a stall, not a failure in progress).
_CALM = {State.GRAD_HEALTHY, State.ACTIVATION_HEALTHY, State.LOSS_STEADY, State.LOSS_PLATEAU,
         *(states[0] for states in FINITE_STATES.values())}
#: A machine's entry into an abnormal regime it already entered `RECUR_AFTER` times, the last
#: within `RECUR_WINDOW` steps, is a recurrence (and so is the exit that ends it): recorded as
#: any event, but no news for the monitor's schedule (`TransitionDetector.recurrence`).
#: Finiteness machines never recur: a non-finite value is news every time.
RECUR_AFTER = 2
RECUR_WINDOW = 1000


def _num(x: Any) -> float | None:
    return None if x is None else float(x)


def _stat(x: Any) -> float | None:
    """A measured statistic, or None (NaN marks a statistic that does not apply)."""
    v = _num(x)
    return None if v is None or math.isnan(v) else v


class TransitionDetector:
    """Holds one machine per (layer, signal kind) and turns their regime changes into `Event`s.

    Events come in the caller's layer order (the monitor passes forward order); within a layer
    the finiteness event comes before the regime event. Memory: one small state per machine.
    """

    def __init__(self, thresholds: Thresholds | None = None) -> None:
        self.thresholds = thresholds if thresholds is not None else Thresholds()
        self._states: dict[tuple[str, str], Any] = {}
        self._not_calm: set[tuple[str, str]] = set()
        # the step of the latest event of any machine that is not a recurrence
        self.last_news: int | None = None
        # per machine: (entries into each abnormal regime so far, in the current run of
        # entries no more than RECUR_WINDOW steps apart, and the step of the last one)
        self._entries: dict[tuple[str, str, str], tuple[int, int]] = {}
        # per machine: (step, is a recurrence) of its latest event
        self._latest: dict[tuple[str, str], tuple[int, bool]] = {}

    def _advance(self, step: int, layer: str, kind: EventKind,
                 advance: Callable[..., tuple[Any, Transition | None]], *obs: Any) -> list[Event]:
        key = (layer, kind)
        self._states[key], tr = advance(self._states.get(key, _INITIAL[kind]), *obs)
        if tr is None:
            return []
        if tr.to_state in _CALM:  # keep `abnormal()` O(1): it is asked at every step
            self._not_calm.discard(key)
            # an exit ends the episode its entry began: a recurrence if that was one
            recurrent = tr.from_state not in _CALM and self._latest.get(key, (0, False))[1]
        else:
            self._not_calm.add(key)
            recurrent = self._entered(step, layer, kind, tr.to_state)
        self._latest[key] = (step, recurrent)
        if not recurrent:
            self.last_news = step  # machines advance in step order
        return [Event(step, layer, kind, tr.from_state, tr.to_state, tr.value, tr.metadata)]

    def _entered(self, step: int, layer: str, kind: str, regime: str) -> bool:
        """Count an entry into an abnormal regime; whether it is a recurrence."""
        if kind in FINITE_STATES:
            return False
        key = (layer, kind, regime)
        count, last = self._entries.get(key, (0, step))
        if step - last > RECUR_WINDOW:
            count = 0
        self._entries[key] = (count + 1, step)
        return count >= RECUR_AFTER

    def recurrence(self, event: Event) -> bool:
        """Whether `event`, just returned by an observe method, repeats what its machine did
        before: an entry into an abnormal regime it entered `RECUR_AFTER` times already, the
        last within `RECUR_WINDOW` steps, or the exit from such an entry. A gradient norm that
        keeps crossing a limit and coming back (a layer whose norm sits near
        `threshold_exploding`) is then recorded every time without escalating every time."""
        step, recurrent = self._latest.get((event.layer_name, str(event.kind)), (-1, False))
        return recurrent and step == event.step

    def observe_grad_finiteness(self, step: int, layer: str, count: float,
                                has_nan: bool) -> list[Event]:
        """Exact non-finite count of a layer's parameter gradients."""
        return self._advance(step, layer, EventKind.GRAD_FINITE, advance_finite, count, has_nan)

    def observe_grads(self, step: int, norms: Mapping[str, float],
                      exact: Mapping[str, tuple[float, bool]] | None = None) -> list[Event]:
        """Per-layer gradient L2 norms; `exact` optionally gives (non-finite count, has_nan).
        A non-finite norm only moves the finiteness machine (count 1 unless `exact` says)."""
        out: list[Event] = []
        cfg, states = self.thresholds, self._states
        for layer, raw in norms.items():
            norm = float(raw)
            if exact is None and self._quiet_grad(layer, norm, cfg, states):
                continue
            count, has_nan = (exact[layer] if exact is not None and layer in exact
                              else (float(not math.isfinite(norm)), math.isnan(norm)))
            out += self.observe_grad_finiteness(step, layer, count, has_nan)
            if math.isfinite(norm) and not (count or has_nan):
                out += self._advance(step, layer, EventKind.GRAD, advance_grad, norm,
                                     self.thresholds)
        return out

    @staticmethod
    def _quiet_grad(layer: str, norm: float, cfg: Thresholds, states: dict[Any, Any]) -> bool:
        """Fast path for the common case (it runs for every layer at every step): a finite
        layer, healthy with nothing pending, whose norm stays inside its band. Only the baseline
        moves, exactly as `advance_grad` would move it; anything else takes the full machine."""
        g = states.get((layer, EventKind.GRAD))
        f = states.get((layer, EventKind.GRAD_FINITE))
        if g is None or g.regime is not State.GRAD_HEALTHY or g.streak or (
                f is not None and f.level):
            return False
        if not (cfg.vanishing <= norm <= cfg.exploding) or norm <= 0.0:
            return False
        base = g.baseline(cfg)
        if base is not None and not (base * cfg.relative_vanishing <= norm
                                     <= base * cfg.relative_exploding):
            return False
        lx = math.log10(norm)
        lb = lx if g.log_base is None else g.log_base + cfg.baseline_alpha * (lx - g.log_base)
        states[(layer, EventKind.GRAD)] = GradState(State.GRAD_HEALTHY, lb, g.n + 1, 0)
        return True

    def observe_activations(self, step: int, stats: Mapping[str, Mapping[str, float | None]],
                            kinds: Mapping[str, str]) -> list[Event]:
        """Per-layer output statistics keyed by `LayerStat` values (any may be missing), plus
        an optional "act_has_nan" (1.0/0.0); `kinds` maps layer -> `ActivationKind` value.
        A NaN fraction means "does not apply". Without act_nonfinite, a non-finite max|a|
        counts 1 (and is NaN-born if it is NaN)."""
        out: list[Event] = []
        for layer, st in stats.items():
            max_abs, count, nan_flag = (_num(st.get(k)) for k in (
                LayerStat.ACT_MAX_ABS, LayerStat.ACT_NONFINITE, "act_has_nan"))
            if count is None and max_abs is not None:
                count = float(not math.isfinite(max_abs))
            has_nan = bool(nan_flag) if nan_flag is not None else (
                max_abs is not None and math.isnan(max_abs))
            if count is not None:
                out += self._advance(step, layer, EventKind.ACTIVATION_FINITE, advance_finite,
                                     count, has_nan)
            if count or has_nan or (max_abs is not None and not math.isfinite(max_abs)):
                continue  # tainted statistics: only the finiteness machine judges this step
            obs = ActivationObs(kinds.get(layer, ActivationKind.OTHER), max_abs,
                                *(_stat(st.get(k)) for k in (LayerStat.ACT_SATURATED,
                                                            LayerStat.ACT_ZERO,
                                                            LayerStat.ACT_HEADROOM)))
            out += self._advance(step, layer, EventKind.ACTIVATION, advance_activation, obs,
                                 self.thresholds)
        return out

    def observe_loss(self, step: int, loss: float) -> list[Event]:
        """The step's loss: finiteness first; only finite losses move the regime machine."""
        loss = float(loss)
        out = self._advance(step, LOSS, EventKind.LOSS_FINITE, advance_finite,
                            float(not math.isfinite(loss)), math.isnan(loss))
        if math.isfinite(loss):
            out += self._advance(step, LOSS, EventKind.LOSS, advance_loss, loss, self.thresholds)
        return out

    def observe_input(self, step: int, nonfinite: float, has_nan: bool) -> list[Event]:
        """Non-finite count of the step's inputs (and targets)."""
        return self._advance(step, INPUT, EventKind.INPUT_FINITE, advance_finite,
                             float(nonfinite), has_nan)

    def state(self, layer: str, kind: str) -> str:
        """Current regime of one machine (its initial regime if it was never observed)."""
        if kind not in _INITIAL:
            raise ValueError(f"unknown event kind {kind!r}; use an EventKind value")
        return str(self._states.get((layer, kind), _INITIAL[kind]).regime)

    def abnormal(self) -> bool:
        """Whether any machine is outside its healthy regime (a loss plateau is not abnormal)."""
        return bool(self._not_calm)
