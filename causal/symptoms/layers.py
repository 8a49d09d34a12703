"""Symptoms read from per-layer evidence: gradient regimes, saturation, dead units, the
activation scale against depth at the first step, the weights' scale at the start, and the
update-to-weight ratio."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from types import MappingProxyType

from causal.gradient_flow import start_gradients
from causal.run_queries import (
    HIGH_UPDATE_RATIO,
    failure_step,
    layer_series,
    main_path_layers,
    median_start_gain,
    nonfinite_step,
    param_layers,
    start_stds,
    state_window_end,
    stuck_at_zero,
    trouble_events,
    update_ratio_medians,
)
from causal.schema.run import ActivationKind, EventKind, LayerStat, Run, State
from causal.symptoms.base import Symptom
from causal.symptoms.data import LARGE_SCALE, start_median


class GradRegime(Symptom):
    """Whether layer gradients left their healthy band before the failure (exploding,
    vanishing, or both in different layers)."""

    name = "grad_regime"
    states = ("healthy", "exploding", "vanishing", "both")
    description = "gradient regime transitions before the failure"
    leak = MappingProxyType({"healthy": 0.85, "exploding": 0.07, "vanishing": 0.05, "both": 0.03})
    #: The suite's healthy families, written to learn cleanly, read `vanishing` 0.5% of the
    #: time once a margin loss's exactly-zero steps no longer count (`zero_loss_steps`); the
    #: healthy programs outside it do more often: 3 of the 40 healthy runs of
    #: benchmarks/hf_zoo.py and real_programs.py (BART, ELECTRA, MobileViT at initialisation).
    fitted_leak_floor = MappingProxyType({"vanishing": 0.02})

    def observe(self, run: Run) -> Mapping[str, float]:
        # the gradient regimes entered up to the first non-finite value (a zero-initialised
        # gate opening is no trouble: `trouble_events`)
        seen = {e.to_state for e in trouble_events(run, until=nonfinite_step(run))
                if e.kind == EventKind.GRAD}
        up, down = State.GRAD_EXPLODING in seen, State.GRAD_VANISHING in seen
        if up and down:
            return self.hard("both")
        if up:
            return self.hard("exploding")
        if down:
            return self.hard("vanishing")
        return self.hard("healthy")


#: The saturated fraction from which a saturating layer counts as saturated at all.
MODERATE = 0.35


class Saturation(Symptom):
    """How saturated the saturating layers (tanh, sigmoid...) were up to the failure.

    Saturation first reached after a blow-up (exploding gradients or activations, a loss spike
    or divergence), or by the first updates of a run whose units were not saturated before
    them, is told apart: far too large steps throw the pre-activations into the tails as a
    consequence, whatever caused them (`high_after_blowup`, as `DeadUnits` does for ReLUs).
    So is saturation there from the first step while the inputs are not standardised
    (`high_from_inputs`): raw features in the hundreds pin the units that read them (LeCun et
    al., "Efficient BackProp", 1998, section 4.3)."""

    name = "saturated_fraction"
    states = ("low", "moderate", "high", "high_after_blowup", "high_from_inputs",
              "no_saturating_layers")
    description = ("largest saturated fraction of a saturating layer before the failure, and "
                   "whether first reached after a blow-up or there from the start with "
                   "unscaled inputs")
    leak = MappingProxyType({"low": 0.5, "moderate": 0.15, "high": 0.05,
                             "high_after_blowup": 0.03, "high_from_inputs": 0.02,
                             "no_saturating_layers": 0.25})

    def observe(self, run: Run) -> Mapping[str, float]:
        sat_layers = {n.name for n in run.dag.nodes
                      if n.activation_kind == ActivationKind.SATURATING and n.ran}
        if not sat_layers:
            return self.hard("no_saturating_layers")
        series = layer_series(run, LayerStat.ACT_SATURATED, until=state_window_end(run))
        pts = [(s, v) for layer, p in series.items() if layer in sat_layers
               for s, v in p if math.isfinite(v)]
        if not pts:
            measured = [s for s in self.states if s != "no_saturating_layers"]
            return {s: 1.0 / len(measured) if s in measured else 0.0 for s in self.states}
        peak = max(v for _, v in pts)
        if peak >= HIGH:
            if _saturated_by_blowup(run, pts):
                return self.hard("high_after_blowup")
            return self.hard("high_from_inputs" if _saturated_by_inputs(run, pts) else "high")
        if peak >= MODERATE:
            return self.hard("moderate")
        return self.hard("low")


#: The saturated fraction from which a saturating layer counts as highly saturated.
HIGH = 0.75
#: Updates after the first recorded step within which units saturated from an unsaturated
#: start were thrown there by the first updates themselves.
FIRST_UPDATES = 2


def _saturated_by_blowup(run: Run, pts: list[tuple[int, float]]) -> bool:
    """Whether the saturating layers' (step, saturated fraction) points first reach `HIGH`
    after a blow-up, or within the first updates from below `MODERATE`."""
    high = min(s for s, v in pts if v >= HIGH)
    first = min(s for s, _ in pts)
    if _after_blowup(run, high):
        return True
    start = max(v for s, v in pts if s == first)
    return start < MODERATE and first < high <= first + FIRST_UPDATES


def _saturated_by_inputs(run: Run, pts: list[tuple[int, float]]) -> bool:
    """Whether the saturating layers are highly saturated at the first recorded step while
    the inputs of the first steps are not standardised (`input_scale`'s large or huge)."""
    first = min(s for s, _ in pts)
    if max(v for s, v in pts if s == first) < HIGH:
        return False
    return start_median(run, "input_max_abs", run.series.steps[:5]) >= LARGE_SCALE


#: Events of a blow-up: units that die or saturate after one were driven there by it.
BLOWUP = frozenset({State.GRAD_EXPLODING, State.LOSS_SPIKE, State.LOSS_DIVERGING,
                    State.ACTIVATION_EXPLODING})


def _after_blowup(run: Run, step: int) -> bool:
    """Whether `step` comes after the run's first blow-up event (statistics of a step are
    taken in its forward pass, before its update: at the blow-up's own step is before it)."""
    blowups = [e.step for e in run.events if e.to_state in BLOWUP]
    return bool(blowups) and step > min(blowups)


class DeadUnits(Symptom):
    """ReLU units that never fire, relative to the layer's own start (about half inactive
    per example is normal; units dead for the whole batch that keep growing are not).

    Dead units first seen after a blow-up (exploding gradients or activations, a loss spike or
    divergence) are told apart: an oversized update kills ReLU units as a consequence, whatever
    caused it. Statistics of a step are taken in its forward pass, before its update, so units
    seen dead at the blow-up's own step died before it."""

    name = "dead_units"
    states = ("normal", "rising", "dead", "dead_after_blowup", "no_relu")
    description = "dead ReLU units, against the layer's own start, and whether after a blow-up"
    leak = MappingProxyType({"normal": 0.6, "rising": 0.05, "dead": 0.02,
                             "dead_after_blowup": 0.03, "no_relu": 0.3})

    def observe(self, run: Run) -> Mapping[str, float]:
        relu = {n.name for n in run.dag.nodes if n.activation_kind == ActivationKind.RELU
                and n.ran}
        if not relu:
            return self.hard("no_relu")
        died = [e.step for e in run.events if e.to_state == State.ACTIVATION_DEAD]
        series = layer_series(run, LayerStat.ACT_DEAD)
        worst = 0.0
        known = False
        for layer, pts in series.items():
            vals = [(s, v) for s, v in pts if math.isfinite(v)]
            if layer not in relu or len(vals) < 2:
                continue
            known = True
            worst = max(worst, vals[-1][1] - vals[0][1])
            if vals[-1][1] >= 0.9:
                died.append(next(s for s, v in vals if v >= 0.9))
        if died:
            return self.hard("dead_after_blowup" if _after_blowup(run, min(died)) else "dead")
        if not known:
            return {"normal": 0.5, "rising": 0.25, "dead": 0.125, "dead_after_blowup": 0.125,
                    "no_relu": 0.0}
        return self.hard("rising") if worst >= 0.3 else self.hard("normal")


class InitDepthTrend(Symptom):
    """Activation scale against depth at the first recorded step: geometric growth or decay
    through the layers with weights is the signature of a bad initialisation. Depth is the
    layer DAG's longest path (`main_path_layers`): a side branch that feeds every block (a
    time-step embedding's projection) keeps its own scale and would flatten the trend. A
    stack that shrinks steeply and steadily (`_steep_fall`) shrinks, whatever follows it: a
    head or recurrence whose default-initialised biases restore the scale after an encoder
    initialised at std 0.01 hides the decay from the slope over the whole depth."""

    name = "init_depth_trend"
    states = ("flat", "growing", "shrinking")
    description = "std of layer outputs against depth at step 0"
    leak = MappingProxyType({"flat": 0.9, "growing": 0.05, "shrinking": 0.05})
    often_unreadable = True  # fewer than three layers with a scale: 12% of the fitted runs

    def observe(self, run: Run) -> Mapping[str, float]:
        _, start = start_stds(run)
        scale = [math.log10(start[n]) for n in main_path_layers(run) if n in start]
        if len(scale) < 3:  # too few scales along the longest path: all layers with weights
            scale = [math.log10(start[n]) for n in param_layers(run) if n in start]
        if len(scale) < 3:
            return self.unobserved()
        # least-squares slope of log10(std) per layer of depth
        xs = list(range(len(scale)))
        mx, my = statistics.fmean(xs), statistics.fmean(scale)
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, scale, strict=True)) / sum(
            (x - mx) ** 2 for x in xs)
        total = slope * (len(scale) - 1)
        # PyTorch's default init already shrinks the scale a little per layer (gain 1/sqrt(3)),
        # so decay must be much stronger than that to count; any real growth counts
        if total > 1.0 and slope > math.log10(1.5):
            return self.hard("growing")
        if (total < -2.0 and slope < -math.log10(3.0)) or _steep_fall(scale):
            return self.hard("shrinking")
        if total > 0.6:  # a milder growth: half the evidence
            return {"flat": 0.5, "growing": 0.5}
        if total < -1.5 and slope < -math.log10(2.0):
            return {"flat": 0.5, "shrinking": 0.5}
        return self.hard("flat")


#: A steep fall: FALL_STEPS or more layer-to-layer steps in a row along the depth (five layers),
#: each output's std at least FALL_STEP decades (4x) below the one before, FALL_TOTAL decades in
#: all. PyTorch's default init shrinks a ReLU stack about 0.4 decades a layer: far past it.
FALL_STEPS, FALL_STEP, FALL_TOTAL = 4, 0.6, 3.0


def _steep_fall(scale: list[float]) -> bool:
    """Whether the log10 stds along the depth hold a steep fall (FALL_STEPS...)."""
    start = 0
    for k in range(1, len(scale) + 1):
        if k < len(scale) and scale[k - 1] - scale[k] >= FALL_STEP:
            continue
        if k - 1 - start >= FALL_STEPS and scale[start] - scale[k - 1] >= FALL_TOTAL:
            return True
        start = k
    return False


#: A weight whose rms x sqrt(fan_in) is under SMALL_GAIN or over LARGE_GAIN at the start is off
#: the scale any standard init gives (PyTorch's default 0.58, Xavier and Kaiming 1-1.4): a tenth
#: of the default or less, several times Kaiming's or more.
SMALL_GAIN, LARGE_GAIN = 0.1, 5.0


class WeightScale(Symptom):
    """The scale of the weights when the monitor started, against their fan-in (each layer's
    `weight_gain`: rms x sqrt(fan_in), lookup tables left out): typical, or far below or above
    what any standard init gives, read on the median layer (a few zero-initialised heads or
    gates are a design, a whole stack at std 0.01 or 1 is not). Read directly, because the
    activations do not always show it: a tanh stack initialised far too large keeps its
    outputs' scale flat with depth, pinned at +-1. A layer stuck at zero (its weights start at
    exactly zero and no gradient reaches them: `stuck_at_zero`) is weights far too small
    wherever the median sits: nothing flows through it, ever. No layer with a weight: no
    evidence."""

    name = "weight_scale"
    states = ("typical", "small", "large")
    description = "the weights' rms x sqrt(fan_in) at the start, median over the layers"
    leak = MappingProxyType({"typical": 0.96, "small": 0.025, "large": 0.015})

    def observe(self, run: Run) -> Mapping[str, float]:
        gain = median_start_gain(run)
        if gain is None:
            return self.unobserved()
        if stuck_at_zero(run):
            return self.hard("small")
        return self.graded(gain, [(SMALL_GAIN, "typical"), (LARGE_GAIN, "large")],
                           below="small")


class GradDepth(Symptom):
    """How the gradient flows back through the depth at the first steps (`causal.gradient_flow`):
    flat; vanishing toward the input while the sigmoid/tanh layers on the way scale it down by
    decades (their mean derivatives, from their outputs' statistics: saturating units, or a
    deep sigmoid stack whose derivatives are at most 0.25 each); vanishing without them (weights
    far too small, dead units); or growing toward the input. A state there from the first step
    never shows as a transition, so it is read here directly. Too few layers to read: no
    evidence."""

    name = "grad_depth"
    states = ("flat", "vanishing_saturating", "vanishing", "exploding")
    description = "gradient norm from the last layer back to the first, at the start"
    leak = MappingProxyType({"flat": 0.86, "vanishing_saturating": 0.01, "vanishing": 0.1,
                             "exploding": 0.03})
    often_unreadable = True  # too few layers with gradients: 23% of the fitted runs

    def observe(self, run: Run) -> Mapping[str, float]:
        start = start_gradients(run)
        return self.unobserved() if start is None else self.hard(start.regime)


class UpdateRatio(Symptom):
    """Update-to-weight ratio |dw|/|w| of the layers with weights: about 1e-3 is healthy;
    far above it the optimizer overshoots. The first update of a layer that starts near zero
    is left out (`starts_near_zero`)."""

    name = "update_ratio"
    states = ("normal", "high", "very_high")
    description = "median over layers of |dw|/|w| at the steps it was measured"
    leak = MappingProxyType({"normal": 0.9, "high": 0.08, "very_high": 0.02})

    def observe(self, run: Run) -> Mapping[str, float]:
        medians = update_ratio_medians(run, until=failure_step(run))
        if not medians:
            return self.unobserved()
        peak = max(medians.values())
        return self.graded(peak, ((HIGH_UPDATE_RATIO, "high"), (1e-1, "very_high")), "normal")
