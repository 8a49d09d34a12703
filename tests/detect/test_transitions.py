"""Tests of the per-layer state machines and the `TransitionDetector` (pure Python, no torch)."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from causal.schema.run import LOSS, ActivationKind, Event, EventKind, State
from neuraldbg.detect.transitions import (
    GradState,
    LossState,
    Thresholds,
    TransitionDetector,
    advance_grad,
    advance_loss,
)

SAT, RELU, OTHER = ActivationKind.SATURATING, ActivationKind.RELU, ActivationKind.OTHER


def grads(norms: Iterable[float], layer: str = "fc", det: TransitionDetector | None = None,
          start: int = 0) -> tuple[TransitionDetector, list[Event]]:
    det = det or TransitionDetector()
    events: list[Event] = []
    for step, n in enumerate(norms, start):
        events += det.observe_grads(step, {layer: n})
    return det, events


def acts(rows: Iterable[dict[str, float | None]], kind: str,
         det: TransitionDetector | None = None) -> tuple[TransitionDetector, list[Event]]:
    det = det or TransitionDetector()
    events: list[Event] = []
    for step, row in enumerate(rows):
        events += det.observe_activations(step, {"act": row}, {"act": kind})
    return det, events


def losses(values: Iterable[float]) -> tuple[TransitionDetector, list[Event]]:
    det = TransitionDetector()
    events: list[Event] = []
    for step, v in enumerate(values):
        events += det.observe_loss(step, v)
    return det, events


def hops(events: list[Event]) -> list[tuple[int, str, str]]:
    return [(e.step, e.from_state, e.to_state) for e in events]


# ------------------------------------------------------------------------------------ gradients


def test_grad_rising_to_1e9_emits_one_exploding_event_at_the_crossing() -> None:
    norms = [0.1 * 10 ** (k / 10) for k in range(101)]  # 0.1 -> 1e9, crosses 1e3 at k = 41
    first = next(k for k, n in enumerate(norms) if n > 1e3)
    det, events = grads(norms)
    assert hops(events) == [(first, State.GRAD_HEALTHY, State.GRAD_EXPLODING)]
    ev = events[0]
    assert ev.kind == EventKind.GRAD and ev.layer_name == "fc"
    assert ev.value == pytest.approx(norms[first])
    assert ev.metadata["rule"] == "absolute" and ev.metadata["threshold"] == 1e3
    assert det.state("fc", EventKind.GRAD) == State.GRAD_EXPLODING and det.abnormal()
    json.dumps(ev.to_dict(), allow_nan=False)


def test_exploding_at_first_observation() -> None:
    _, events = grads([5e3])
    assert hops(events) == [(0, State.GRAD_HEALTHY, State.GRAD_EXPLODING)]


def test_relative_explosion_below_absolute_threshold_after_warmup() -> None:
    _, events = grads([1e-4] * 20 + [1e-1] * 3)
    assert hops(events) == [(20, State.GRAD_HEALTHY, State.GRAD_EXPLODING)]
    assert events[0].metadata["rule"] == "relative"
    assert events[0].metadata["baseline"] == pytest.approx(1e-4)
    # before the warmup the relative rule does not apply
    _, early = grads([1e-4] * 5 + [1e-1] * 3)
    assert early == []


def test_noisy_layer_around_threshold_does_not_flap() -> None:
    norms = [900.0, 1100.0, 950.0, 1200.0] * 50
    _, events = grads(norms)
    assert 1 <= len(events) <= 2
    assert hops(events)[0] == (1, State.GRAD_HEALTHY, State.GRAD_EXPLODING)


def test_a_regime_entered_again_and_again_recurs() -> None:
    """A layer whose norm keeps crossing the exploding limit and coming back: every crossing
    is an event, but from the third entry on (within RECUR_WINDOW steps of the last) an entry,
    and the exit that ends it, are recurrences: no news for the schedule (`last_news` stays)."""
    from neuraldbg.detect.transitions import RECUR_AFTER, RECUR_WINDOW

    pulse = [2e3] * 3 + [10.0] * 7  # in, then out after exit_patience steps in the band
    det = TransitionDetector()
    flags: list[tuple[int, str, bool]] = []
    for step, n in enumerate(pulse * 5):
        for e in det.observe_grads(step, {"fc": n}):
            flags.append((e.step, e.to_state, det.recurrence(e)))
            if not det.recurrence(e):
                assert det.last_news == step
    entries = [f for f in flags if f[1] == State.GRAD_EXPLODING]
    assert [f[0] for f in entries] == [0, 10, 20, 30, 40]
    assert [r for _, _, r in entries] == [k >= RECUR_AFTER for k in range(5)]
    exits = [f for f in flags if f[1] == State.GRAD_HEALTHY]
    assert len(exits) == 5 and [r for _, _, r in exits] == [r for _, _, r in entries]
    assert det.last_news == exits[1][0] == 15  # the second entry's exit: the last news
    # another layer's first entry is news; so is this layer's after a long quiet spell
    step = 49 + RECUR_WINDOW + 1
    for layer in ("other", "fc"):
        (e,) = [e for e in det.observe_grads(step, {layer: 2e3}) if e.layer_name == layer]
        assert not det.recurrence(e) and det.last_news == step
        step += 1


def test_non_finite_values_are_news_every_time() -> None:
    det = TransitionDetector()
    seen = []
    for step, n in enumerate([1.0, math.inf, 1.0] * 4):
        seen += [det.recurrence(e) for e in det.observe_grads(step, {"fc": n})
                 if e.kind == EventKind.GRAD_FINITE]
    assert len(seen) == 8 and not any(seen)


def test_exit_needs_exit_patience_inside_the_hysteresis_band() -> None:
    # 300 is below the enter threshold but above exploding / hysteresis = 250: still exploding
    det, events = grads([1.0, 2e3, 300.0, 300.0, 300.0, 300.0, 300.0, 300.0])
    assert len(events) == 1 and det.state("fc", EventKind.GRAD) == State.GRAD_EXPLODING
    det, events = grads([10.0, 10.0, 10.0], det=det, start=8)
    assert hops(events) == [(10, State.GRAD_EXPLODING, State.GRAD_HEALTHY)]  # 3rd in-band step
    assert events[0].metadata["rule"] == "exit" and not det.abnormal()
    # an out-of-band observation restarts the count
    _, events = grads([1.0, 2e3, 10.0, 10.0, 600.0, 10.0, 10.0, 10.0])
    assert hops(events)[1] == (7, State.GRAD_EXPLODING, State.GRAD_HEALTHY)


def test_vanishing_needs_two_observations_and_exact_zero_vanishes() -> None:
    _, events = grads([0.5, 1e-8, 0.5, 1e-8, 0.5])
    assert events == []
    det, events = grads([0.5, 0.5, 0.0, 0.0, 0.0])
    assert hops(events) == [(3, State.GRAD_HEALTHY, State.GRAD_VANISHING)]
    assert events[0].value == 0.0 and det.abnormal()
    _, events = grads([0.0, 0.0, 5e-6, 5e-6, 5e-6])  # exit above vanishing * 4 after 3 steps
    assert hops(events) == [(1, State.GRAD_HEALTHY, State.GRAD_VANISHING),
                            (4, State.GRAD_VANISHING, State.GRAD_HEALTHY)]


def test_relative_vanishing_and_baseline_frozen_while_unhealthy() -> None:
    s, cfg = GradState(), Thresholds()
    for _ in range(20):
        s, _ = advance_grad(s, 1.0, cfg)
    base = s.log_base
    s, tr1 = advance_grad(s, 1e-5, cfg)
    s, tr2 = advance_grad(s, 1e-5, cfg)
    assert tr1 is None and tr2 is not None and tr2.metadata["rule"] == "relative"
    for _ in range(10):
        s, _ = advance_grad(s, 1e-5, cfg)
    assert s.log_base == base and s.regime == State.GRAD_VANISHING


def test_nonfinite_grad_moves_only_the_finiteness_machine() -> None:
    det, events = grads([0.5, math.inf, math.nan, 0.5])
    assert [(e.step, e.kind, e.to_state) for e in events] == [
        (1, EventKind.GRAD_FINITE, State.GRAD_INF),
        (2, EventKind.GRAD_FINITE, State.GRAD_NAN),
        (3, EventKind.GRAD_FINITE, State.GRAD_FINITE),
    ]
    assert det.state("fc", EventKind.GRAD) == State.GRAD_HEALTHY
    exact = det.observe_grads(4, {"fc": math.inf}, exact={"fc": (7.0, False)})
    assert exact[0].value == 7.0 and exact[0].to_state == State.GRAD_INF
    assert det.observe_grad_finiteness(5, "fc", 0, False)[0].to_state == State.GRAD_FINITE


# ---------------------------------------------------------------------------------- activations


def test_saturation_enter_and_exit_with_patience() -> None:
    fracs = [0.2, 0.8, 0.6, 0.4, 0.4, 0.4]
    _, events = acts([{"act_saturated_frac": f, "act_max_abs": 1.0} for f in fracs], SAT)
    assert hops(events) == [(1, State.ACTIVATION_HEALTHY, State.ACTIVATION_SATURATED),
                            (5, State.ACTIVATION_SATURATED, State.ACTIVATION_HEALTHY)]
    assert events[0].value == 0.8 and events[0].metadata["activation_kind"] == "saturating"
    # the same fractions on a non-saturating layer mean nothing
    _, events = acts([{"act_saturated_frac": f} for f in fracs], OTHER)
    assert events == []


def test_dead_relu_but_half_zeros_is_healthy() -> None:
    _, events = acts([{"act_zero_frac": 0.5, "act_max_abs": 2.0}] * 50, RELU)
    assert events == []
    det, events = acts([{"act_zero_frac": z} for z in (0.5, 0.9, 0.97, 0.9)], RELU)
    assert hops(events) == [(2, State.ACTIVATION_HEALTHY, State.ACTIVATION_DEAD)]
    assert det.state("act", EventKind.ACTIVATION) == State.ACTIVATION_DEAD


def test_activation_exploding_absolute_and_priority_over_saturation() -> None:
    rows = [{"act_saturated_frac": 0.9, "act_max_abs": 1.0}, {"act_saturated_frac": 0.9,
                                                              "act_max_abs": 2e4}]
    _, events = acts(rows, SAT)
    assert [e.to_state for e in events] == [State.ACTIVATION_SATURATED,
                                            State.ACTIVATION_EXPLODING]


def test_headroom_rule_under_fp16() -> None:
    rows = [{"act_max_abs": 100.0, "act_headroom": 655.0}] * 3
    rows += [{"act_max_abs": 30000.0, "act_headroom": 65504 / 30000}]  # < 4x headroom left
    rows += [{"act_max_abs": 100.0, "act_headroom": 655.0}] * 3
    _, events = acts(rows, OTHER)
    assert hops(events) == [(3, State.ACTIVATION_HEALTHY, State.ACTIVATION_EXPLODING),
                            (6, State.ACTIVATION_EXPLODING, State.ACTIVATION_HEALTHY)]
    # fp32: no headroom statistic, the same max|a| = 3000 is fine
    _, events = acts([{"act_max_abs": 3000.0, "act_headroom": None}] * 3, OTHER)
    assert events == []


def test_activation_nonfinite_skips_regime() -> None:
    rows: list[dict[str, float | None]] = [
        {"act_max_abs": math.inf, "act_nonfinite": 3.0},
        {"act_max_abs": math.nan, "act_nonfinite": 5.0, "act_has_nan": 1.0},
        {"act_max_abs": 1.0, "act_nonfinite": 0.0},
    ]
    det, events = acts(rows, OTHER)
    assert [(e.kind, e.to_state, e.value) for e in events] == [
        (EventKind.ACTIVATION_FINITE, State.ACTIVATION_INF, 3.0),
        (EventKind.ACTIVATION_FINITE, State.ACTIVATION_NAN, 5.0),
        (EventKind.ACTIVATION_FINITE, State.ACTIVATION_FINITE, 0.0),
    ]
    assert det.state("act", EventKind.ACTIVATION) == State.ACTIVATION_HEALTHY


# ------------------------------------------------------------------------- finiteness and loss


def test_input_and_loss_finiteness_inf_then_nan_then_finite() -> None:
    det = TransitionDetector()
    ev = det.observe_input(0, 0, False) + det.observe_input(1, 2, False)
    ev += det.observe_input(2, 3, True) + det.observe_input(3, 0, False)
    assert hops(ev) == [(1, State.INPUT_FINITE, State.INPUT_INF),
                        (2, State.INPUT_INF, State.INPUT_NAN),
                        (3, State.INPUT_NAN, State.INPUT_FINITE)]
    _, ev = losses([1.0, math.inf, math.nan, 1.0])
    assert hops(ev) == [(1, State.LOSS_FINITE, State.LOSS_INF),
                        (2, State.LOSS_INF, State.LOSS_NAN),
                        (3, State.LOSS_NAN, State.LOSS_FINITE)]
    assert all(e.kind == EventKind.LOSS_FINITE and e.layer_name == LOSS for e in ev)


def test_loss_spike_then_recover() -> None:
    rng = random.Random(0)
    values = [1.0 + 0.05 * rng.random() for _ in range(30)] + [50.0] + [1.0] * 30
    det, events = losses(values)
    assert hops(events) == [(30, State.LOSS_STEADY, State.LOSS_SPIKE),
                            (31, State.LOSS_SPIKE, State.LOSS_STEADY)]
    assert events[0].value == 50.0 and not det.abnormal()


def test_loss_divergence() -> None:
    values = [1.0 - 0.005 * t for t in range(100)] + [0.5 * 1.1**t for t in range(100)]
    det, events = losses(values)
    diverging = [e for e in events if e.to_state == State.LOSS_DIVERGING]
    assert len(diverging) == 1 and 100 < diverging[0].step < 200
    assert det.abnormal() and det.state(LOSS, EventKind.LOSS) == State.LOSS_DIVERGING
    assert not any(e.to_state == State.LOSS_SPIKE for e in events)


def test_loss_thrown_far_above_its_start_early_is_divergence() -> None:
    """A classifier's loss jumps from chance (1.6) to ~10 on its first steps and stays there:
    before a spike can be judged (5 losses) and never 10x its lowest level, but 3x its start."""
    rng = random.Random(0)
    values = [1.6, 2.7, 8.6] + [8.0 + 4.0 * rng.random() for _ in range(60)]
    det, events = losses(values)
    diverging = [e for e in events if e.to_state == State.LOSS_DIVERGING]
    assert len(diverging) == 1 and diverging[0].step < 15 and det.abnormal()
    assert diverging[0].metadata["threshold"] == pytest.approx(3 * 1.6)
    # the same noise around a level 2x the start, or a 5x jump that recovers: not diverging
    _, events = losses([1.6, 2.7] + [3.2 + 0.5 * rng.random() for _ in range(60)])
    assert not any(e.to_state == State.LOSS_DIVERGING for e in events)
    _, events = losses([1.6, 8.0, 8.0, 1.5] + [1.4 - 0.005 * t for t in range(60)])
    assert not any(e.to_state == State.LOSS_DIVERGING for e in events)


def test_plateau_on_flat_loss_not_on_slow_decrease() -> None:
    det, events = losses([0.7] * 400)
    assert hops(events) == [(199, State.LOSS_STEADY, State.LOSS_PLATEAU)]  # window full
    assert not det.abnormal()  # a plateau is not abnormal
    _, events = losses([1 / math.sqrt(t) for t in range(1, 3001)])
    assert events == []
    # a loss stuck near zero has converged, not plateaued
    _, events = losses([1.0] + [1e-6] * 400)
    assert events == []


def test_plateau_exit_on_real_improvement() -> None:
    _, events = losses([0.7] * 300 + [0.7 * 0.98**t for t in range(100)])
    assert [e.to_state for e in events] == [State.LOSS_PLATEAU, State.LOSS_STEADY]


def test_healthy_noisy_training_makes_few_events() -> None:
    rng = random.Random(1)
    det = TransitionDetector()
    events: list[Event] = []
    layers = [f"layers.{i}" for i in range(4)]
    for t in range(2000):
        loss = 2 * math.exp(-t / 300) + 0.1 + rng.gauss(0, 1) * 0.02
        norms = {name: 0.5 * math.exp(rng.gauss(0, 0.5)) for name in layers}
        events += det.observe_grads(t, norms) + det.observe_loss(t, loss)
        events += det.observe_activations(
            t, {"relu": {"act_zero_frac": 0.5 + 0.05 * rng.random(), "act_max_abs": 3.0}},
            {"relu": RELU})
    assert len(events) <= 3, [str(e) for e in events]
    assert not det.abnormal()


def test_loss_memory_is_bounded() -> None:
    s, cfg = LossState(), Thresholds()
    for t in range(5000):
        s, _ = advance_loss(s, 1.0 + math.sin(t), cfg)
    assert len(s.recent) == cfg.loss_window and len(s.smoothed) == cfg.plateau_window


# ----------------------------------------------------------------------------- API and property


def test_thresholds_validation() -> None:
    with pytest.raises(ValueError, match="vanishing"):
        Thresholds(vanishing=1e4)
    with pytest.raises(ValueError, match="vanishing"):
        Thresholds(vanishing=0.0)
    with pytest.raises(ValueError, match="saturated_exit"):
        Thresholds(saturated_exit=0.9)
    with pytest.raises(ValueError, match="exit_patience"):
        Thresholds(exit_patience=0)
    with pytest.raises(ValueError, match="hysteresis"):
        Thresholds(hysteresis=0.5)
    with pytest.raises(ValueError, match="spike_exit"):
        Thresholds(spike_factor=1.5)
    assert Thresholds(exploding=1e4).exploding == 1e4
    with pytest.raises(ValueError, match="event kind"):
        TransitionDetector().state("fc", "bogus")


finite = st.floats(min_value=0.0, max_value=1e12)
frac = st.floats(min_value=0.0, max_value=1.0)
row = st.fixed_dictionaries({}, optional={
    "act_max_abs": finite, "act_saturated_frac": frac, "act_zero_frac": frac,
    "act_headroom": st.floats(min_value=0.5, max_value=1e6), "act_nonfinite": st.just(0.0),
})
step_obs = st.tuples(finite | st.sampled_from([0.0, 1e-9, 1e4]),
                     st.floats(-1e6, 1e6) | st.sampled_from([0.0, 1e-9, 1e5]), row,
                     st.sampled_from([SAT, RELU, OTHER]))


@settings(max_examples=60, deadline=None)
@given(st.lists(step_obs, max_size=80), st.integers(1, 4))
def test_random_finite_inputs_alternate_consistently(obs: list, patience: int) -> None:
    det = TransitionDetector(Thresholds(exit_patience=patience, baseline_warmup=patience))
    events: list[Event] = []
    for step, (norm, loss, stats, kind) in enumerate(obs):
        events += det.observe_grads(step, {"a": norm, "b": norm / 7})
        events += det.observe_activations(step, {"a": stats}, {"a": kind})
        events += det.observe_loss(step, loss)
    last: dict[tuple[str, str], str] = {}
    for e in events:
        key = (e.layer_name, e.kind)
        assert e.from_state != e.to_state
        assert e.from_state == last.get(key, e.from_state)
        last[key] = e.to_state
        json.dumps(e.to_dict(), allow_nan=False)
    for (layer, kind), current in last.items():
        assert det.state(layer, kind) == current


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(allow_nan=True, allow_infinity=True),
                          st.floats(allow_nan=True, allow_infinity=True)), max_size=40))
def test_nonfinite_inputs_never_crash(obs: list) -> None:
    det = TransitionDetector()
    for step, (norm, loss) in enumerate(obs):
        det.observe_grads(step, {"a": abs(norm)})
        det.observe_loss(step, loss)
        det.observe_activations(step, {"a": {"act_max_abs": abs(norm)}}, {})
    assert isinstance(det.abnormal(), bool)


def test_exploding_straight_to_vanishing_and_layer_order() -> None:
    _, events = grads([1.0, 5e3, 0.0, 0.0, 0.0])
    assert hops(events) == [(1, State.GRAD_HEALTHY, State.GRAD_EXPLODING),
                            (4, State.GRAD_EXPLODING, State.GRAD_VANISHING)]
    det = TransitionDetector()
    ev = det.observe_grads(0, {"z": 5e3, "a": math.nan, "m": 1.0})
    assert [(e.layer_name, e.kind) for e in ev] == [("z", EventKind.GRAD),
                                                    ("a", EventKind.GRAD_FINITE)]


def test_missing_activation_statistic_keeps_the_regime() -> None:
    rows: list[dict[str, float | None]] = [
        {"act_zero_frac": 0.99}, {}, {"act_max_abs": 1.0}, {"act_zero_frac": math.nan}]
    det, events = acts(rows, RELU)
    assert len(events) == 1 and det.state("act", EventKind.ACTIVATION) == State.ACTIVATION_DEAD
    # ... but a more severe regime still gets through
    _, events = acts([{"act_zero_frac": 0.99}, {"act_max_abs": 1e5}], RELU, det=det)
    assert events[-1].to_state == State.ACTIVATION_EXPLODING and events[-1].value == 1e5


def test_module_does_not_import_torch() -> None:
    import ast
    from pathlib import Path

    import neuraldbg.detect.transitions as mod

    tree = ast.parse(Path(mod.__file__).read_text(encoding="utf-8"))
    names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert not any(name.split(".")[0] == "torch" for name in names)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(min_value=1e-9, max_value=1e6), min_size=1, max_size=120))
def test_grad_fast_path_matches_the_pure_machine(norms):
    """The detector's fast path for quiet layers must be invisible: same states, same events."""
    cfg = Thresholds()
    det = TransitionDetector(cfg)
    state, expected = GradState(), []
    for step, norm in enumerate(norms):
        state, tr = advance_grad(state, norm, cfg)
        if tr is not None:
            expected.append((step, tr.from_state, tr.to_state))
        got = det.observe_grads(step, {"layer": norm})
        assert [(e.step, e.from_state, e.to_state) for e in got] == [
            x for x in expected if x[0] == step]
        assert det._states[("layer", EventKind.GRAD)] == state


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(min_value=0.0, max_value=1e9), min_size=1, max_size=80),
       st.lists(st.floats(min_value=1e-3, max_value=1e6), min_size=1, max_size=80))
def test_abnormal_matches_the_states(norms, losses):
    """`abnormal()` is kept incrementally: it must equal a scan over every machine's regime."""
    from neuraldbg.detect.transitions import _CALM

    det = TransitionDetector(Thresholds())
    for step, (norm, loss) in enumerate(zip(norms, losses, strict=False)):
        det.observe_grads(step, {"a": norm, "b": norm * 0.5})
        det.observe_loss(step, loss)
        scan = any(s.regime not in _CALM for s in det._states.values())
        assert det.abnormal() == scan
