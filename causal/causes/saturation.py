"""Activation saturation: tanh/sigmoid units pinned at their bounds.

Symptoms: a saturating layer's saturated fraction high before the first gradient transition;
gradients vanish (or explode in the layers around it); the loss plateaus or diverges.
Distinguished from bad_init (scale grows with depth from step 0) and lr_too_high (large update
ratios) by saturation that builds up in a layer while the depth trend at step 0 is flat.
Reference: Glorot & Bengio, "Understanding the difficulty of training deep feedforward neural
networks" (AISTATS 2010), section 3.
"""

from __future__ import annotations

from types import MappingProxyType

from causal.cause import CauseNode
from causal.hypothesis import Localization
from causal.localize import first_cause
from causal.run import ActivationKind, LayerStat, Run
from causal.views import failure_step, finite, forward_order, layer_series, module_type


class Saturation(CauseNode):
    name = "saturation"
    prior = 0.05
    summary = "Activation saturation"
    likelihoods = MappingProxyType({
        "saturated_fraction": {"low": 0.03, "moderate": 0.17, "high": 0.78,
                               "no_saturating_layers": 0.02},
        "grad_regime": {"healthy": 0.15, "exploding": 0.3, "vanishing": 0.4, "both": 0.15},
        "loss_pattern": {"steady": 0.1, "spike_recover": 0.05, "oscillating": 0.1,
                         "diverging": 0.3, "plateau": 0.45},
        "init_depth_trend": {"flat": 0.8, "growing": 0.15, "shrinking": 0.05},
        "onset": {"none": 0.05, "start": 0.15, "early": 0.4, "late": 0.4},
    })

    def localize(self, run: Run) -> Localization:
        """The saturating layer most saturated before the failure (earliest in forward order
        among ties), at the step it first crossed into saturation."""
        stop = failure_step(run)
        sat = {n.name for n in run.dag.nodes if n.activation_kind == ActivationKind.SATURATING}
        series = layer_series(run, LayerStat.ACT_SATURATED, until=stop)
        order = forward_order(run)
        best, best_key = None, None
        for layer, pts in series.items():
            vals = finite(v for _, v in pts)
            if layer in sat and vals:
                key = (round(max(vals), 2), -order.get(layer, 1 << 30))
                if best_key is None or key > best_key:
                    best, best_key = layer, key
        entered = [e for e in run.events if e.to_state == "activation_saturated"
                   and e.layer_name in sat and (stop is None or e.step <= stop)]
        lead, note = first_cause(run, entered)
        if lead is not None:
            best = lead.layer_name
        step = lead.step if lead is not None else stop
        chain = ((lead,) if lead is not None else ()) + tuple(
            e for e in run.events if e.kind == "grad" and step is not None and e.step >= step)[:3]
        return Localization(best, step, chain, note)

    def describe(self, run: Run, loc: Localization) -> str:
        if loc.layer is None:
            return "Activation saturation drove the gradients out of their healthy range"
        peak = max(finite(v for _, v in layer_series(run, LayerStat.ACT_SATURATED).get(
            loc.layer, [])), default=None)
        pct = f" ({peak:.0%} saturated)" if peak is not None else ""
        return (f"Activation saturation in {loc.layer!r} ({module_type(run, loc.layer)}){pct} "
                f"drove the gradient failure" + (f" at step {loc.step}" if loc.step else ""))

    def fixes(self, run: Run, loc: Localization) -> list[str]:
        where = (f"{loc.layer!r} ({module_type(run, loc.layer)})" if loc.layer
                 else "the tanh/sigmoid layers")
        return [
            f"{where} saturates: use a non-saturating activation (ReLU/GELU/LeakyReLU) there",
            "or put a LayerNorm/BatchNorm before it so its pre-activations stay near 0",
            "shrink the pre-activations: xavier_uniform_ init, lower lr, clip gradients",
        ]
