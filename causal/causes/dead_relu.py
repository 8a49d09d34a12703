"""Dead ReLU: units stop firing for every input, their gradients stop, the loss plateaus.

Symptoms: the fraction of ReLU units that are zero for the whole batch rises against the
layer's own start (about half inactive per example is normal); gradients vanish; the loss
plateaus; nothing becomes non-finite. Distinguished from saturation (tanh/sigmoid bounds) and
bad_init (trend with depth at step 0) by the dying units.
Reference: Lu et al., "Dying ReLU and Initialization" (2019); Maas et al., "Rectifier
Nonlinearities Improve Neural Network Acoustic Models" (2013, LeakyReLU).
"""

from __future__ import annotations

from types import MappingProxyType

from causal.causes.base import FAILED_OUTCOME, CauseNode
from causal.hypothesis import Localization
from causal.run_queries import finite, forward_order, layer_label, layer_series
from causal.schema.run import ActivationKind, LayerStat, Run, State


class DeadRelu(CauseNode):
    name = "dead_relu"
    prior = 0.04
    summary = "Dead ReLU units"
    likelihoods = MappingProxyType({
        "outcome": FAILED_OUTCOME,
        "dead_units": {"normal": 0.05, "rising": 0.33, "dead": 0.5, "dead_after_blowup": 0.1,
                       "no_relu": 0.02},
        "loss_pattern": {"steady": 0.1, "spike_recover": 0.05, "oscillating": 0.05,
                         "diverging": 0.05, "plateau": 0.65,
                         "overshoot_plateau": 0.1},
        "grad_regime": {"healthy": 0.3, "exploding": 0.05, "vanishing": 0.55, "both": 0.1},
        "nonfinite_birth": {"none": 0.935, "input": 0.01, "target": 0.005, "forward_op": 0.008,
                            "forward_op_on_outlier": 0.002, "forward_layer": 0.02, "loss": 0.01,
                            "backward": 0.01},
        "grad_depth": {"flat": 0.75, "vanishing_saturating": 0.02, "vanishing": 0.18,
                       "exploding": 0.05},
        # units are often killed by oversized updates (the catalogue's first fix is a lower
        # lr): without its own column here, a run whose dead units went unseen would be
        # judged on the healthy runs' update sizes, and read as the lr with confidence
        "update_ratio": {"normal": 0.5, "high": 0.3, "very_high": 0.2},
        "lr_level": {"typical": 0.6, "high": 0.3, "very_high": 0.1},
        # a network whose units all died outputs a constant: the loss settles at the
        # trivial predictor's (the targets' mean, the labels' frequencies)
        "loss_vs_trivial": {"below": 0.25, "at_trivial": 0.6, "above": 0.15},
    })

    def localize(self, run: Run) -> Localization:
        """The first ReLU layer to go dead (by step, then forward order), else the one with
        the most dead units (earliest in forward order on ties)."""
        relu = {n.name for n in run.dag.nodes if n.activation_kind == ActivationKind.RELU}
        order = forward_order(run)
        died = sorted((e for e in run.events if e.to_state == State.ACTIVATION_DEAD),
                      key=lambda e: (e.step, order.get(e.layer_name, 1 << 30)))
        if died:
            first = died[0]
            return Localization(first.layer_name, first.step,
                                tuple(e for e in died if e.step == first.step))
        dead = layer_series(run, LayerStat.ACT_DEAD)
        scored = [(max(finite(v for _, v in pts), default=0.0), -order.get(k, 1 << 30), k)
                  for k, pts in dead.items() if k in relu]
        if not scored:
            return Localization(None, None)
        _, _, layer = max(scored)
        events = tuple(e for e in run.events if e.layer_name == layer
                       and e.to_state == State.ACTIVATION_DEAD)
        step = events[0].step if events else None
        return Localization(layer, step, events)

    def describe(self, run: Run, loc: Localization) -> str:
        if loc.layer is None:
            return "Dead ReLU units stopped the gradients"
        peak = max(finite(v for _, v in layer_series(run, LayerStat.ACT_DEAD).get(
            loc.layer, [])), default=0.0)
        return (f"Dead ReLU units in {layer_label(run, loc.layer)}: "
                f"{peak:.0%} never fire, the loss stalls")

    def fixes(self, run: Run, loc: Localization) -> list[str]:
        return ["use LeakyReLU/GELU instead of ReLU there", "lower the learning rate",
                "kaiming_uniform_ init and a small positive bias (e.g. 0.01)"]
