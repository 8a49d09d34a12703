"""Stalls are failures (the gradient's flow through the depth at the start, a healthy verdict
that says the run did not learn) and causes come before consequences (a loss that jumps on calm
weights against one that jumps after a blow-up), on hand-built runs."""

from __future__ import annotations

import itertools
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from causal.diagnose import diagnose
from causal.gradient_flow import start_gradients, times
from causal.registry import Registry
from causal.run_queries import first_origin, loss_level_unreadable, loss_stall, skipped_steps
from causal.schema.run import (
    LOSS,
    ActivationKind,
    Event,
    EventKind,
    LayerGraph,
    LayerNode,
    LayerStat,
    Run,
    Series,
    State,
    Window,
)
from causal.symptoms.failure import LossJump, LossPattern, Onset, loss_jump_step
from causal.symptoms.layers import GradDepth, GradRegime

STATS = tuple(s.value for s in LayerStat)


def stack(act: str, depth: int) -> LayerGraph:
    """Linear, act, Linear, act, ..., Linear: a chain `depth` Linears deep."""
    kind = {"Sigmoid": ActivationKind.SATURATING, "Tanh": ActivationKind.SATURATING,
            "ReLU": ActivationKind.RELU}[act]
    nodes = []
    for i in range(depth):
        nodes.append(LayerNode(f"net.{2 * i}", f"net.{2 * i}", "Linear", 1000, 2 * i, 2 * i,
                               True))
        if i < depth - 1:
            nodes.append(LayerNode(f"net.{2 * i + 1}", f"net.{2 * i + 1}", act, 0, 2 * i + 1,
                                   2 * i + 1, True, kind))
    names = [n.name for n in nodes]
    return LayerGraph("fx", tuple(nodes), tuple(itertools.pairwise(names)))


def start_window(g: LayerGraph, grads: list[float], act_mean: float, act_std: float) -> Window:
    """Steps 0-2: gradient norms of the Linears (input first), weight norm 3, and the
    activations' output mean and std."""
    values: dict[tuple[str, str], float] = {}
    linears = [n.name for n in g.nodes if n.module_type == "Linear"]
    for name, gn in zip(linears, grads, strict=True):
        values[name, "grad_norm"] = gn
        values[name, "weight_norm"] = 3.0
        values[name, "act_std"] = 1.0
    for n in g.nodes:
        if n.module_type != "Linear":
            values[n.name, "act_mean"] = act_mean
            values[n.name, "act_std"] = act_std
            values[n.name, "act_saturated_frac"] = 0.0
            values[n.name, "act_dead_frac"] = 0.0
    layers = tuple(n.name for n in g.nodes)
    row = tuple(tuple(values.get((layer, stat)) for stat in STATS) for layer in layers)
    return Window(2, (0, 1, 2), layers, STATS, (row, row, row))


def run_of(g: LayerGraph, loss: list[float], windows: tuple[Window, ...] = (),
           events: tuple[Event, ...] = ()) -> Run:
    n = len(loss)
    cols = {"loss": tuple(loss), "input_max_abs": (3.0,) * n, "input_std": (1.0,) * n,
            "target_max_abs": (2.0,) * n, "input_nonfinite": (0.0,) * n,
            "target_nonfinite": (0.0,) * n}
    return Run({"model_class": "Net"}, g, events, Series(tuple(range(n)), cols), (), windows)


def geometric(first: float, factor: float, depth: int) -> list[float]:
    return [first * factor ** i for i in range(depth)]


FLAT_LOSS = [1.386 + 0.01 * math.sin(i) for i in range(200)]


# ---------------------------------------------------------------- the gradient through the depth


def test_a_deep_sigmoid_stack_whose_gradient_vanishes_reads_vanishing_saturating():
    g = stack("Sigmoid", 7)
    # sigmoid outputs around 0.5 +- 0.14: mean derivative 0.23 per layer, six of them
    run = run_of(g, FLAT_LOSS, (start_window(g, geometric(1e-5, 8.0, 7), 0.5, 0.14),))
    start = start_gradients(run)
    assert start is not None
    assert math.isclose(start.attenuation, 6 * math.log10(8.0))
    assert [name for name, _ in start.gains] == [f"net.{2 * i + 1}" for i in range(6)]
    assert math.isclose(10 ** start.gains[0][1], 0.5 - (0.14 ** 2 + 0.25), rel_tol=1e-9)
    assert GradDepth().evidence(run)["vanishing_saturating"] == 1.0


def test_vanishing_without_saturating_layers_flat_and_growing_gradients_are_told_apart():
    relu = stack("ReLU", 6)
    assert GradDepth().evidence(run_of(relu, FLAT_LOSS, (
        start_window(relu, geometric(1e-6, 10.0, 6), 0.3, 0.5),)))["vanishing"] == 1.0
    assert GradDepth().evidence(run_of(relu, FLAT_LOSS, (
        start_window(relu, geometric(1e-2, 1.2, 6), 0.3, 0.5),)))["flat"] == 1.0
    assert GradDepth().evidence(run_of(relu, FLAT_LOSS, (
        start_window(relu, geometric(10.0, 0.3, 6), 0.3, 0.5),)))["exploding"] == 1.0
    # tanh units in their linear range scale nothing down: the decay is the weights'
    tanh = stack("Tanh", 6)
    assert GradDepth().evidence(run_of(tanh, FLAT_LOSS, (
        start_window(tanh, geometric(1e-6, 10.0, 6), 0.0, 0.05),)))["vanishing"] == 1.0


def test_too_few_layers_to_read_give_no_evidence():
    g = stack("Sigmoid", 2)
    dist = GradDepth().evidence(run_of(g, FLAT_LOSS, (
        start_window(g, [1e-6, 1.0], 0.5, 0.1),)))
    assert len(set(dist.values())) == 1  # uniform: unknown, not "flat"
    assert GradDepth().evidence(run_of(g, FLAT_LOSS))["flat"] == 0.25


def test_a_stalled_sigmoid_stack_is_put_at_its_first_throttling_layer_and_said_so():
    g = stack("Sigmoid", 7)
    run = run_of(g, FLAT_LOSS, (start_window(g, geometric(1e-5, 8.0, 7), 0.5, 0.14),))
    diag = diagnose(run)
    sat = next(h for h in diag if h.cause == "saturation")
    assert sat.layer == "net.1" and sat.step == 0
    assert "Vanishing gradient through saturating activations" in sat.description
    assert "0.23" in sat.note
    assert diag.stalled


def test_times_reads_as_people_write_factors():
    assert [times(x) for x in (3.14159, 37.2, 1207.4, 2.4e7)] == [
        "3.1x", "37x", "1,207x", "2.4e+07x"]


# ---------------------------------------------------------------- stalls are failures


def test_a_run_that_did_not_learn_is_never_reported_healthy_without_saying_so():
    g = stack("ReLU", 3)
    empty = Registry()  # no cause at all: the verdict can only come from the loss
    diag = diagnose(run_of(g, FLAT_LOSS), registry=empty)
    assert diag.healthy and diag.stalled
    text = diag.format()
    assert text.startswith("Stalled, cause unclear: the loss ended at 10")
    assert "Healthy" not in text
    assert diag.to_dict()["stalled"] is True


def test_learning_runs_negative_losses_and_short_runs_are_not_stalls():
    g = stack("ReLU", 3)
    assert loss_stall(run_of(g, [1.0 - 0.004 * i for i in range(200)])) is None
    assert loss_stall(run_of(g, [-1.0 - 0.001 * math.sin(i) for i in range(200)])) is None
    assert loss_stall(run_of(g, [1.0] * 10)) is None
    assert loss_stall(run_of(g, [1.0] * 100 + [math.nan])) is None  # it failed otherwise
    head, tail = loss_stall(run_of(g, [1.0 + 0.002 * i for i in range(100)]))
    assert head == 1.0 and tail > head
    text = diagnose(run_of(g, [1.0 - 0.004 * i for i in range(200)]),
                    registry=Registry()).format()
    assert text.startswith("Healthy")


@settings(max_examples=40, deadline=None)
@given(peak=st.floats(min_value=1.3, max_value=20.0), end=st.floats(min_value=0.3, max_value=1.2))
def test_a_loss_thrown_up_by_the_first_updates_learned_only_below_the_untrained_models(peak, end):
    """The first updates throw the loss `peak` times above the untrained model's, then it
    settles at `end` times the untrained loss: whether the run learned is judged against
    where the untrained model began, not against the inflated first steps."""
    from causal.symptoms.failure import LEARNED_AT, STALLED_AT, Outcome

    g = stack("ReLU", 3)
    back = 2.0 * (1 + peak) / 2  # on its way down, then a steady descent to `end`
    loss = ([2.0, 2.0 * peak, 2.0 * peak] + [back + (2.0 * end - back) * i / 40 for i in range(41)]
            + [2.0 * end] * 56)
    seen = Outcome().evidence(run_of(g, loss))
    if end <= LEARNED_AT:
        assert seen["learned"] == 1.0
    elif end >= STALLED_AT:
        assert seen["stalled"] == 1.0


@settings(max_examples=40, deadline=None)
@given(start=st.floats(min_value=-5e3, max_value=-0.5),
       fall=st.floats(min_value=-0.2, max_value=2.0))
def test_a_loss_that_starts_negative_learned_when_it_fell_at_all(start, fall):
    """A likelihood or a summed objective to maximise starts negative: its magnitude is an
    offset, no scale, so a fall by `fall` x |start| of a few percent is learning (a Student-t
    NLL from -3.1 to -3.4), and none at all a stall, as the scenario contract's own test reads
    a start at or below zero. A loss that keeps changing sign (a policy gradient's) stays
    unread."""
    from causal.symptoms.failure import NEGATIVE_LEARNED_FALL, Outcome

    end = start - fall * abs(start)
    noise = random.Random(3)
    loss = [start + (end - start) * min(i / 60, 1.0) + 1e-5 * abs(start) * noise.random()
            for i in range(100)]
    seen = Outcome().evidence(run_of(stack("ReLU", 3), loss))
    if fall <= -0.001:
        assert seen["stalled"] == 1.0
    elif fall >= 1.01 * NEGATIVE_LEARNED_FALL:
        assert seen["learned"] == 1.0
    flipping = [(-1.0) ** i * (1.0 + 0.01 * i) for i in range(100)]
    assert Outcome().evidence(run_of(stack("ReLU", 3), flipping)) == Outcome().unobserved()


def test_a_loss_that_went_negative_from_a_positive_start_is_read_against_it():
    """From a positive start a loss that crossed zero learned (a Gaussian NLL); one whose last
    tenth sits near its start stalled, though one batch's loss dipped far below zero."""
    from causal.symptoms.failure import Outcome

    g = stack("ReLU", 3)
    crossed = [2.0 - 0.04 * i for i in range(100)]  # 2.0 -> -1.96
    assert Outcome().evidence(run_of(g, crossed))["learned"] == 1.0
    dipped = [1.5] * 40 + [-600.0] + [1.45] * 59
    assert Outcome().evidence(run_of(g, dipped))["stalled"] == 1.0


@settings(max_examples=40, deadline=None)
@given(peak=st.floats(min_value=5.0, max_value=1e8), end=st.floats(min_value=0.9, max_value=40.0))
def test_a_loss_that_came_back_from_a_blow_up_did_not_diverge(peak, end):
    """Far too large first steps throw the loss `peak` times up on step 1 (a divergence
    transition fires), then it sits at `end` times the untrained model's loss, with minibatch
    noise, for the rest of the run. Back near where it began, the run's failure is the plateau
    it ended on (after an overshoot); still far above it, it diverged."""
    from causal.symptoms.failure import CAME_BACK_MARGIN

    noise = random.Random(0)
    g = stack("ReLU", 3)
    loss = [2.0, 2.0 * peak] + [2.0 * end * (1 + 0.01 * noise.random()) for _ in range(98)]
    rise = Event(1, LOSS, EventKind.LOSS, State.LOSS_STEADY, State.LOSS_DIVERGING, 2.0 * peak)
    seen = LossPattern().observe(run_of(g, loss, events=(rise,)))
    top = max(seen.items(), key=lambda kv: kv[1])[0]
    if end <= 0.98 * CAME_BACK_MARGIN:
        assert top == "overshoot_plateau"
    elif end >= 1.02 * CAME_BACK_MARGIN:
        assert top == "diverging"


@settings(max_examples=40, deadline=None)
@given(end=st.floats(min_value=1.2, max_value=20.0))
def test_a_loss_that_ended_far_above_its_start_diverged_even_without_a_transition(end):
    """The loss climbs slowly from the untrained model's level to `end` times it and stays
    there (a dead network's output bias thrown around by far too large steps): no divergence
    transition fires, yet ending ENDED_ABOVE times above the start or more is a divergence; a
    loss that ended nearer its start is a plateau."""
    from causal.symptoms.failure import ENDED_ABOVE

    noise = random.Random(1)
    g = stack("ReLU", 3)
    loss = [2.0 * (1 + (end - 1) * min(i / 30, 1.0)) * (1 + 0.01 * noise.random())
            for i in range(100)]
    seen = LossPattern().observe(run_of(g, loss))
    top = max(seen.items(), key=lambda kv: kv[1])[0]
    if end >= 1.02 * ENDED_ABOVE:
        assert top == "diverging"
    elif end <= 0.98 * ENDED_ABOVE:
        assert top != "diverging"


@settings(max_examples=40, deadline=None)
@given(floor=st.floats(min_value=0.1, max_value=0.9), later=st.floats(min_value=0.2, max_value=1.0))
def test_a_loss_that_fell_only_in_its_first_steps_stalled(floor, later):
    """The loss falls from 1.3 to `floor` x 1.3 within four steps (an output bias finding the
    targets' mean), then ends at `later` x that level: ending where the first updates left it
    is a stall, however far those first steps fell; falling well below it is learning."""
    from causal.symptoms.failure import LEARNED_AT, STALLED_AT, Outcome

    noise = random.Random(2)
    start, low = 1.3, 1.3 * floor
    drop = [start + (low - start) * i / 4 for i in range(5)]
    rest = [low * (1 + (later - 1) * i / 95) * (1 + 0.005 * noise.random()) for i in range(95)]
    seen = Outcome().evidence(run_of(stack("ReLU", 3), drop + rest))
    if later >= 1.02 * STALLED_AT:
        assert seen["stalled"] == 1.0
    elif later <= 0.98 * LEARNED_AT:
        assert seen["learned"] == 1.0 or floor > LEARNED_AT  # a small first drop: the start


@settings(max_examples=40, deadline=None)
@given(end=st.floats(min_value=0.3, max_value=1.0), spike=st.floats(min_value=1.0, max_value=50.0))
def test_a_noisy_loss_that_never_got_below_its_best_first_batch_stalled(end, spike):
    """Batches scatter by about a third around a level that moves from 1 to `end`; the first
    five hold one lucky batch at 0.65 and their median is 1.2. Whether the run learned is
    judged against that lowest start, as the scenario contract's stall test judges it: a
    typical batch that fell to 0.7 never got below the best early one, so no progress was
    made. The tail is read by its median: the last batch `spike` x higher changes nothing."""
    from causal.symptoms.failure import LEARNED_AT, STALLED_AT, Outcome

    first = [1.0, 0.65, 1.35, 1.3, 1.2]
    cycle = (0.7, 1.3, 1.0, 0.8, 1.2)  # median 1.0
    level = [1.0 + (end - 1.0) * min(i / 55, 1.0) for i in range(115)]
    loss = first + [lv * cycle[i % 5] for i, lv in enumerate(level)]
    loss[-1] *= spike
    seen = Outcome().evidence(run_of(stack("ReLU", 3), loss))
    if end / 0.65 >= 1.02 * STALLED_AT:
        assert seen["stalled"] == 1.0
    elif end / 0.65 <= 0.98 * LEARNED_AT:
        assert seen["learned"] == 1.0


def test_a_stall_that_fits_several_causes_alike_is_failing_though_none_is_sure():
    """A loss that stalled on a plateau, with nothing measured inside the model: saturation,
    dead ReLUs and a bad init all fit it, so each one's marginal stays moderate, but that one
    of them (or a cause outside the catalogue) is at work is near certain: the run is failing,
    with its root cause unsure, never healthy because the evidence is split."""
    from causal.calibration.parameters import effective
    from causal.diagnose import builtin_registry
    from causal.network import get_network
    from causal.verdict import verdict

    eff = effective(builtin_registry(Registry()), "shipped")
    net = get_network(eff.registry)
    stall = {"outcome": {"stalled": 1.0}, "loss_pattern": {"plateau": 1.0}}
    present = eff.calibrate(net.posteriors(stall))
    judged = verdict(net, stall, eff.calibrate, eff.share_temperature, eff.sharp_temperature)
    assert sum(p >= 0.2 for p in present.values()) >= 2  # split between causes
    assert judged.failing >= 0.9 > 0.7 >= max(judged.root.values())


# ---------------------------------------------------------------- causes before consequences


def jumpy_loss(n: int = 120, at: int = 80, rise: float = 0.0) -> list[float]:
    """A noisy loss falling slowly (rising by `rise` per step from step 40 on), 50x higher at
    step `at`."""
    out = []
    for i in range(n):
        v = 1.0 - 0.002 * i + 0.01 * math.sin(1.7 * i) + (rise * (i - 40) if i >= 40 else 0.0)
        out.append(50.0 if i == at else v)
    return out


def test_a_loss_that_jumps_on_calm_weights_points_at_what_that_step_met():
    g = stack("ReLU", 3)
    run = run_of(g, jumpy_loss())
    assert loss_jump_step(run) == (80, True)
    assert LossJump().evidence(run)["on_calm_weights"] == 1.0
    assert LossJump().evidence(run_of(g, jumpy_loss(at=10_000)))["none"] == 1.0
    nan = jumpy_loss()
    nan[80] = math.nan
    assert loss_jump_step(run_of(g, nan)) == (80, True)


def test_a_jump_on_a_rising_loss_is_the_steps_not_the_batch():
    g = stack("ReLU", 3)
    assert loss_jump_step(run_of(g, jumpy_loss(rise=0.03))) == (80, False)


def with_grad_norms(run: Run, norms: list[float]) -> Run:
    cols = dict(run.series.columns)
    cols["grad_norm"] = tuple(norms)
    return Run(run.meta, run.dag, run.events, Series(run.series.steps, cols), (), run.windows)


@settings(max_examples=40, deadline=None)
@given(noise=st.lists(st.floats(min_value=0.75, max_value=1.45), min_size=120, max_size=120),
       growth=st.floats(min_value=2.0, max_value=1e3))
def test_a_gradient_that_grows_into_the_jump_makes_it_the_steps_not_the_batch(noise, growth):
    """Steps too large for the curvature grow the gradient for a few steps before the loss
    leaves; a corrupt batch meets a gradient at its usual size (noisy within a factor of
    two: 1.45 / 0.75 < GRAD_GROWTH)."""
    g = stack("ReLU", 3)
    run = run_of(g, jumpy_loss())
    assert loss_jump_step(with_grad_norms(run, noise)) == (80, True)
    grown = list(noise)
    grown[79] = growth * max(noise[72:78])
    assert loss_jump_step(with_grad_norms(run, grown)) == (80, False)
    assert LossJump().evidence(with_grad_norms(run, grown))["after_trouble"] == 1.0


def test_a_non_finite_target_with_finite_inputs_is_its_own_evidence():
    """A NaN label and a NaN the loss computed from the targets look alike to the monitor:
    neither is a non-finite input."""
    from causal.causes.data_outlier import DataOutlier
    from causal.symptoms.data import InputOutlier

    g = stack("ReLU", 3)
    run = run_of(g, jumpy_loss())

    def flagged(column: str) -> Run:  # the NaN reached the loss at that step
        cols = dict(run.series.columns)
        cols[column] = tuple(1.0 if i == 80 else 0.0 for i in run.series.steps)
        cols["loss"] = tuple(math.nan if i == 80 else v for i, v in enumerate(cols["loss"]))
        return Run(run.meta, g, (), Series(run.series.steps, cols), (), ())

    assert InputOutlier().evidence(flagged("target_nonfinite"))["nonfinite_target"] == 1.0
    assert InputOutlier().evidence(flagged("input_nonfinite"))["nonfinite"] == 1.0
    cause, bad_label = DataOutlier(), flagged("target_nonfinite")
    where = cause.localize(bad_label)
    assert where.step == 80
    assert "guard that op" in " ".join(cause.fixes(bad_label, where))
    bad_input = flagged("input_nonfinite")
    assert "guard that op" not in " ".join(cause.fixes(bad_input, cause.localize(bad_input)))


@pytest.mark.parametrize("column", ["input_nonfinite", "target_nonfinite"])
def test_a_nan_in_the_data_that_never_reached_the_loss_is_no_corrupt_batch(column):
    """Padding or missing readings stored as NaN in every batch, zero-filled and masked by the
    model or the loss (GRU-D style): the loss stays finite all run and learns, so the NaN is no
    failure's origin and no corrupt batch. The same NaN on a run whose loss turned NaN is."""
    from causal.symptoms.data import InputOutlier
    from causal.symptoms.failure import NonfiniteBirth

    g = stack("ReLU", 3)
    learning = [1.0 * 0.98 ** i for i in range(100)]
    birth = Event(0, "<input>", EventKind.NONFINITE_ORIGIN, State.FINITE, State.NAN, 1.0,
                  {"direction": "input", "tensor": column.split("_")[0]})

    def with_nan(loss: list[float]) -> Run:
        run = run_of(g, loss, events=(birth,))
        cols = {**run.series.columns, column: (1.0,) * len(loss)}
        return Run(run.meta, g, run.events, Series(run.series.steps, cols), (), ())

    masked = with_nan(learning)
    assert first_origin(masked) is None
    assert NonfiniteBirth().evidence(masked)["none"] == 1.0
    assert InputOutlier().evidence(masked)["none"] == 1.0
    assert diagnose(masked).healthy
    broken = with_nan(learning[:50] + [math.nan] * 50)
    assert first_origin(broken) is birth
    assert NonfiniteBirth().evidence(broken)["none"] == 0.0
    assert InputOutlier().evidence(broken)["none"] == 0.0


@settings(max_examples=40, deadline=None)
@given(blowup=st.integers(min_value=20, max_value=119),
       kind=st.sampled_from(["grad_exploding", "activation_exploding", "loss_spike"]))
def test_a_blow_up_before_the_jump_makes_it_a_consequence_one_after_it_does_not(blowup, kind):
    g = stack("ReLU", 3)
    kinds = {"grad_exploding": ("grad", "grad_healthy"),
             "activation_exploding": ("activation", "activation_healthy"),
             "loss_spike": ("loss", "loss_steady")}[kind]
    layer = LOSS if kind == "loss_spike" else "net.2"
    event = Event(blowup, layer, kinds[0], kinds[1], kind, 1e4, {})
    step, calm = loss_jump_step(run_of(g, jumpy_loss(), events=(event,)))
    assert step == 80
    assert calm is (blowup >= 80)  # the step's statistics come before its own update


@pytest.mark.parametrize("at", [1, 2, 3, 30])
def test_a_corrupt_batch_that_breaks_the_run_at_once_is_judged_against_the_batches_after(at):
    """Finite targets in the wrong unit at step `at`, Adam's state wrecked there (the loss
    jumps, then sits): too few batches came before the failure to say what ordinary is, so
    the ones after it do; a batch after the failure is never the one that caused it."""
    from causal.symptoms.data import InputOutlier

    g = stack("ReLU", 3)
    loss = [1.0] * at + [60.0] + [1.5] * (119 - at)
    jump = Event(at, LOSS, "loss", "loss_steady", "loss_spike", 60.0, {})

    def with_targets(bad_step: int) -> Run:
        run = run_of(g, loss, events=(jump,))
        cols = dict(run.series.columns)
        cols["target_max_abs"] = tuple(7e4 if i == bad_step else 2.0 + 0.1 * math.sin(i)
                                       for i in run.series.steps)
        return Run(run.meta, g, run.events, Series(run.series.steps, cols), (), ())

    assert InputOutlier().evidence(with_targets(at))["outlier"] == 1.0
    assert InputOutlier().evidence(with_targets(at + 10))["outlier"] == 0.0


def test_targets_not_seen_are_said_and_leave_an_outlier_in_them_open():
    from causal.symptoms.data import TARGETS_UNSEEN, InputOutlier

    g = stack("ReLU", 3)
    seen = run_of(g, FLAT_LOSS)
    cols = {k: v for k, v in seen.series.columns.items() if not k.startswith("target")}
    unseen = Run(seen.meta, g, (), Series(seen.series.steps, cols), (), ())
    assert InputOutlier().evidence(seen)["none"] == 1.0
    assert InputOutlier().evidence(unseen) == dict(TARGETS_UNSEEN)
    assert "targets not seen" in diagnose(unseen).format()
    assert "targets not seen" not in diagnose(seen).format()


# ---------------------------------------------------------------- a loss without a level


def policy_loss(n: int = 120) -> list[float]:
    """An actor-critic's summed objective: it changes sign every few steps and grows as the
    episodes it sums get longer (30x by the end), with a last-step jump."""
    return [(1.0 + 0.25 * i) * math.sin(1.3 * i) + (40.0 if i == n - 5 else 0.0)
            for i in range(n)]


def test_a_loss_that_keeps_changing_sign_is_left_unread():
    g = stack("ReLU", 3)
    run = run_of(g, policy_loss())
    assert loss_level_unreadable(run)
    for sym in (LossPattern(), LossJump()):
        ev = sym.evidence(run)
        assert len(set(ev.values())) == 1, sym.name  # every state alike: no information
    assert Onset().evidence(run)["none"] == 1.0
    text = diagnose(run, registry=Registry()).format()
    assert text.startswith("Healthy")


def margin_loss(hard: float, seed: int = 0) -> list[float]:
    """A margin (hinge, triplet, ranking) loss: it falls from 1.0, then sits at exactly 0 once
    every pair meets the margin, with a hard batch (`hard`) now and then."""
    rng = random.Random(seed)
    head = [1.0 - 0.06 * i for i in range(15)]
    return head + [hard * (0.5 + rng.random()) if rng.random() < 0.1 else 0.0
                   for _ in range(135)]


@settings(max_examples=30, deadline=None)
@given(hard=st.floats(min_value=1e-3, max_value=0.5), seed=st.integers(0, 50))
def test_a_margin_loss_leaving_exactly_zero_for_a_hard_batch_is_no_jump_nor_divergence(hard,
                                                                                         seed):
    """From a window of losses at exactly 0, any positive loss is infinitely many spreads
    above them: a hard batch there jumps only if it lands above where the run began, and a
    rise from 0 that ends below where the run began came back. Gradients that are exactly 0
    on a step whose loss is exactly 0 did not vanish through the layers."""
    g = stack("ReLU", 3)
    loss = margin_loss(hard, seed)
    first_hard = next(i for i, v in enumerate(loss) if i > 15 and v > 0.0)
    rise = Event(first_hard, LOSS, EventKind.LOSS, State.LOSS_STEADY, State.LOSS_DIVERGING,
                 loss[first_hard])
    zero_step = next(i for i, v in enumerate(loss) if i > 15 and v == 0.0)
    vanish = tuple(Event(zero_step, name, EventKind.GRAD, State.GRAD_HEALTHY,
                         State.GRAD_VANISHING, 0.0) for name in ("net.0", "net.2", "net.4"))
    run = run_of(g, loss, events=(rise, *vanish))
    assert loss_jump_step(run) is None
    assert LossJump().evidence(run)["none"] == 1.0
    assert LossPattern().evidence(run)["diverging"] == 0.0
    assert GradRegime().evidence(run)["healthy"] == 1.0
    assert diagnose(run, registry=Registry()).healthy
    broken = list(loss)
    broken[first_hard] = 40.0  # a batch that throws it far above where it began still jumps
    assert loss_jump_step(run_of(g, broken)) is not None


@pytest.mark.parametrize("loss", [
    [2.0 - 0.05 * i for i in range(120)],                       # a NLL that goes negative
    [1.0 - 0.004 * i + 0.01 * math.sin(1.7 * i) for i in range(120)],  # a positive loss
    [0.5 - 0.01 * i + 0.03 * math.sin(1.7 * i) for i in range(120)],  # jitters across 0
])
def test_a_likelihood_that_crosses_zero_once_stays_readable(loss):
    run = run_of(stack("ReLU", 3), loss)
    assert not loss_level_unreadable(run)
    assert max(LossPattern().evidence(run).values()) >= 0.6  # read, not left open


def test_a_stall_no_cause_predicts_well_says_so_and_keeps_its_confidences_low():
    g = stack("ReLU", 3)
    # the built-in causes, every one listed: none predicts a quiet stall well
    diag = diagnose(run_of(g, FLAT_LOSS), min_confidence=0.0)
    # that something is wrong is likely (a loss that never fell), which cause is not: the
    # run is failing, and the report says that no cause is sure
    assert diag.stalled and diag.failing is not None and diag.failing > 0.5
    assert diag.unexplained > 0.01  # the alternative outside the catalogue takes its part
    assert all(h.confidence < 0.5 for h in diag)  # no catalogued cause claimed with confidence
    assert math.isclose(diag.unexplained + sum(h.confidence for h in diag), diag.failing)
    assert diag.format().startswith(f"Failing ({diag.failing:.2f}), root cause unsure")
    assert diag.to_dict()["unexplained"] == diag.unexplained
    learning = diagnose(run_of(g, [1.386 * 0.98 ** i for i in range(200)]))
    assert learning.healthy and learning.unexplained < 0.05


def test_a_gradscaler_skip_is_no_failure_even_on_the_last_step():
    """A GradScaler skips a step whose scaled gradients overflowed: the step's own loss is
    finite, so the skip is the scaler doing its job wherever it falls, the run's last recorded
    step included (a run read while it trains). A skip whose loss itself is non-finite is one
    only when a finite loss follows."""
    g = stack("ReLU", 3)

    def skip_at(step: int, loss: list[float]) -> Run:
        origin = Event(step, "0", EventKind.NONFINITE_ORIGIN, State.FINITE, State.INF, 1.0,
                       {"direction": "backward", "scaler_skipped": True})
        return run_of(g, loss, events=(origin,))

    learning = [2.0 * 0.98 ** i for i in range(80)]
    for step in (40, 79):  # in the middle, and on the last step
        run = skip_at(step, learning)
        assert skipped_steps(run) == {step} and first_origin(run) is None
        assert diagnose(run, parameters=None).healthy
    broken = [*learning[:79], math.inf]  # the loss itself overflowed, and nothing came after
    assert skipped_steps(skip_at(79, broken)) == set()
    assert first_origin(skip_at(79, broken)) is not None
