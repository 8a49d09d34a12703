"""Activation saturation: tanh/sigmoid units pinned at their bounds.

Symptoms: a saturating layer's saturated fraction high before the first gradient transition;
gradients vanish (or explode in the layers around it); the loss plateaus or diverges.
Distinguished from bad_init (scale grows with depth from step 0) and lr_too_high (large update
ratios) by saturation that builds up in a layer while the depth trend at step 0 is flat.
Reference: Glorot & Bengio, "Understanding the difficulty of training deep feedforward neural
networks" (AISTATS 2010), section 3.
"""

from __future__ import annotations

import math
from types import MappingProxyType

from causal.causes.base import FAILED_OUTCOME, CauseNode
from causal.gradient_flow import start_gradients, start_steps, times
from causal.hypothesis import Localization
from causal.run_queries import (
    failure_step,
    finite,
    forward_order,
    layer_label,
    layer_series,
    state_window_end,
)
from causal.schema.run import ActivationKind, EventKind, LayerStat, Run, State
from causal.symptoms.layers import MODERATE


class Saturation(CauseNode):
    name = "saturation"
    prior = 0.05
    summary = "Activation saturation"
    likelihoods = MappingProxyType({
        "outcome": FAILED_OUTCOME,
        # rarely first saturated by a blow-up or by the first updates (far too large steps),
        # or pinned from the start by unscaled inputs (their own cause)
        "saturated_fraction": {"low": 0.03, "moderate": 0.17, "high": 0.74,
                               "high_after_blowup": 0.02, "high_from_inputs": 0.02,
                               "no_saturating_layers": 0.02},
        # saturated from the start, gradients can stay small without leaving their own band
        "grad_regime": {"healthy": 0.35, "exploding": 0.2, "vanishing": 0.3, "both": 0.15},
        # a saturated net learns slowly rather than not at all as often as it stalls outright
        "loss_pattern": {"steady": 0.25, "spike_recover": 0.05, "oscillating": 0.1,
                         "diverging": 0.25, "plateau": 0.3,
                         "overshoot_plateau": 0.05},
        "init_depth_trend": {"flat": 0.8, "growing": 0.15, "shrinking": 0.05},
        # weights set large can drive a sigmoid/tanh stack into its tails from the start
        "weight_scale": {"typical": 0.9, "small": 0.03, "large": 0.07},
        "onset": {"none": 0.05, "start": 0.15, "early": 0.4, "late": 0.4},
        # a deep sigmoid/tanh stack scales the gradient down by decades on its way back
        "grad_depth": {"flat": 0.45, "vanishing_saturating": 0.35, "vanishing": 0.1,
                       "exploding": 0.1},
        # units pinned at their bounds pass nothing of the input on: a constant output
        "loss_vs_trivial": {"below": 0.3, "at_trivial": 0.55, "above": 0.15},
    })

    def localize(self, run: Run) -> Localization:
        """Where saturation starts: at the first step any saturating layer is at least half
        saturated, the most upstream such layer (the layers after it inherit its output).
        When none ever is, the same at the level the saturation symptom already counts
        (`MODERATE`: a recurrent cell whose saturated fraction is averaged over its calls).
        Else the layer that throttles the gradient (`_throttling_layer`), else the most
        saturated of the saturating layers (`_most_saturated`)."""
        stop = failure_step(run)
        sat = {n.name for n in run.dag.nodes if n.activation_kind == ActivationKind.SATURATING}
        series = layer_series(run, LayerStat.ACT_SATURATED, until=state_window_end(run))
        order = forward_order(run)
        by_step = _saturated_by_step(series, sat, 0.5) or _saturated_by_step(
            series, sat, MODERATE)
        if not by_step:
            return (_throttling_layer(run) or _most_saturated(series, sat, order)
                    or Localization(None, stop))
        step = min(by_step)
        layers = sorted(by_step[step], key=lambda k: order.get(k, 1 << 30))
        best = layers[0]
        note = ""
        if len(layers) > 1:
            rest = ", ".join(layers[1:4]) + (" ..." if len(layers) > 4 else "")
            note = (f"upstream coupling at step {step}: {best} is the cause, {rest} "
                    f"{'follows' if len(layers) == 2 else 'follow'} (activations flow forward)")
        entered = [e for e in run.events if e.to_state == State.ACTIVATION_SATURATED
                   and e.layer_name in sat][:3]
        grads = [e for e in run.events if e.kind == EventKind.GRAD and e.step >= step][:3]
        chain = tuple(sorted(entered + grads, key=lambda e: e.step))  # in causal (step) order
        return Localization(best, step, chain, note)

    def describe(self, run: Run, loc: Localization) -> str:
        if loc.layer is None:
            return "Activation saturation drove the gradients out of their healthy range"
        peak = max(finite(v for _, v in layer_series(run, LayerStat.ACT_SATURATED).get(
            loc.layer, [])), default=None)
        start = start_gradients(run)
        if (peak is None or peak < MODERATE) and start is not None and start.gains:
            return (f"Vanishing gradient through saturating activations from "
                    f"{layer_label(run, loc.layer)} on: its {len(start.gains)} sigmoid/tanh "
                    f"layers scale the gradient down {times(10 ** -start.saturating_loss)} "
                    f"from the first step")
        gates = _recurrent(run, loc.layer)
        pct = (f" ({peak:.0%} {'of its gates ' if gates else ''}saturated)"
               if peak is not None else "")
        what = "Gate saturation" if gates else "Activation saturation"
        return (f"{what} in {layer_label(run, loc.layer)}{pct} "
                f"drove the gradient failure" + (f" at step {loc.step}" if loc.step else ""))

    def fixes(self, run: Run, loc: Localization) -> list[str]:
        where = (f"{layer_label(run, loc.layer)}" if loc.layer
                 else "the tanh/sigmoid layers")
        if loc.layer is not None and _recurrent(run, loc.layer):
            return [
                f"the gates of {where} sit at 0 or 1: start them in their linear range (gate "
                "biases near 0, the forget gate's at 1; orthogonal recurrent weights)",
                "normalise its inputs, or use a layer-normalised cell, so the gate "
                "pre-activations stay near 0",
                "shrink the pre-activations: lower lr, clip gradients",
            ]
        verb = "saturates" if loc.layer is not None else "saturate"
        return [
            f"{where} {verb}: use a non-saturating activation (ReLU/GELU/LeakyReLU) there",
            "or put a LayerNorm/BatchNorm before it so its pre-activations stay near 0",
            "shrink the pre-activations: xavier_uniform_ init, lower lr, clip gradients",
        ]


#: A sigmoid/tanh layer whose mean derivative is at most this throttles the gradient.
THROTTLING_GAIN = 0.5


def _throttling_layer(run: Run) -> Localization | None:
    """When no layer's units sit in the tails, yet the gradient vanishes toward the input
    through sigmoid/tanh layers (`grad_depth`'s vanishing_saturating): the most upstream of
    them whose mean derivative is at most THROTTLING_GAIN, at the first step."""
    start = start_gradients(run)
    if start is None or start.regime != "vanishing_saturating":
        return None
    limit = math.log10(THROTTLING_GAIN)
    layer = next((name for name, gain in start.gains if gain <= limit), None)
    if layer is None:
        return None
    gain = dict(start.gains)[layer]
    note = (f"its outputs' mean derivative is {10 ** gain:.2f}; the gradient reaching "
            f"{start.layers[0]} is {times(10 ** start.attenuation)} smaller than at "
            f"{start.layers[-1]}")
    return Localization(layer, min(start_steps(run)), (), note)


#: The least saturated fraction `_most_saturated` names a layer for.
SEEN_SATURATED = 0.01


def _most_saturated(series: dict[str, list[tuple[int, float]]], sat: set[str],
                    order: dict[str, int]) -> Localization | None:
    """When no saturating layer reached `MODERATE` and none throttles the gradient: the one
    with the largest saturated fraction seen (the most upstream on ties), as the best guess
    the measurements allow: a recurrent cell's gate statistics, for one, do not show its
    cell state pinned in the tanh's tails. None when no saturating layer was measured with at
    least SEEN_SATURATED of its units saturated: a layer with none is no guess at all."""
    peaks = [(max(seen), -order.get(k, 1 << 30), k)
             for k in sat if (seen := finite(v for _, v in series.get(k, ())))]
    if not peaks:
        return None
    peak, _, layer = max(peaks)
    if peak < SEEN_SATURATED:
        return None
    step = next((s for s, v in series[layer] if v >= peak / 2), None)  # when it rose there
    return Localization(layer, step, (), f"the most saturated of its sigmoid/tanh layers "
                        f"({peak:.0%} of its units at most)")


#: Module types whose saturated fraction is that of their gates
#: (`neuraldbg.capture.recurrent_gates`).
RECURRENT_TYPES = frozenset({"LSTM", "GRU", "RNN", "LSTMCell", "GRUCell", "RNNCell"})


def _recurrent(run: Run, layer: str) -> bool:
    node = run.dag.node(layer)
    return node is not None and node.module_type in RECURRENT_TYPES


def _saturated_by_step(series: dict[str, list[tuple[int, float]]], sat: set[str],
                       level: float) -> dict[int, list[str]]:
    """Step -> the saturating layers whose saturated fraction was at least `level` then."""
    by_step: dict[int, list[str]] = {}
    for layer, pts in series.items():
        if layer in sat:
            for step, v in pts:
                if v >= level:
                    by_step.setdefault(step, []).append(layer)
    return by_step
