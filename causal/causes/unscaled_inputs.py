"""Unscaled inputs: features or targets not normalised; huge loss and gradients from step 0.

Symptoms: input or target magnitudes in the hundreds or more at the start; trouble from the
first steps; gradients explode; the loss diverges or crawls. Distinguished from data_outlier
(one batch) and bad_init (the weights, not the data, set the scale) by the data's own scale.
Reference: LeCun et al., "Efficient BackProp" (1998), section 4.3 (normalising the inputs).
"""

from __future__ import annotations

from types import MappingProxyType

from causal.causes.base import FAILED_OUTCOME, CauseNode
from causal.hypothesis import Localization
from causal.localize import input_layer, output_layer
from causal.run_queries import finite, layer_label
from causal.schema.run import Run
from causal.symptoms.data import LARGE_SCALE, start_median


class UnscaledInputs(CauseNode):
    name = "unscaled_inputs"
    prior = 0.05
    summary = "Inputs or targets are not normalised"
    likelihoods = MappingProxyType({
        "outcome": FAILED_OUTCOME,
        "input_scale": {"normal": 0.04, "large": 0.36, "huge": 0.6},
        "onset": {"none": 0.05, "start": 0.7, "early": 0.2, "late": 0.05},
        "grad_regime": {"healthy": 0.2, "exploding": 0.55, "vanishing": 0.1, "both": 0.15},
        "loss_pattern": {"steady": 0.15, "spike_recover": 0.05, "oscillating": 0.15,
                         "diverging": 0.4, "plateau": 0.22,
                         "overshoot_plateau": 0.03},
        "nonfinite_birth": {"none": 0.445, "input": 0.01, "target": 0.005, "forward_op": 0.015,
                            "forward_op_on_outlier": 0.005, "forward_layer": 0.3, "loss": 0.2,
                            "backward": 0.02},
        "input_outlier": {"none": 0.9, "outlier": 0.08, "nonfinite": 0.015,
                          "nonfinite_target": 0.005},
        "grad_depth": {"flat": 0.6, "vanishing_saturating": 0.1, "vanishing": 0.2,
                       "exploding": 0.1},
        # raw targets keep the loss far above; raw inputs may kill the first layer
        "loss_vs_trivial": {"below": 0.4, "at_trivial": 0.2, "above": 0.4},
    })

    def localize(self, run: Run) -> Localization:
        """The first layer that reads the inputs (a source of the layer DAG), at step 0; when
        only the targets are unscaled, the output layer that has to produce their scale (a
        sink of the layer DAG with weights)."""
        first = run.series.steps[0] if run.series.steps else 0
        if _side(run) == "targets" and (out := output_layer(run)) is not None:
            return Localization(out, first, (), "the inputs are in scale, the targets are not")
        return Localization(input_layer(run), first, ())

    def describe(self, run: Run, loc: Localization) -> str:
        x = max(finite(v for _, v in run.series.get("input_max_abs")[:5]), default=None)
        y = max(finite(v for _, v in run.series.get("target_max_abs")[:5]), default=None)
        facts = ", ".join(f"max|{n}| {v:.3g}" for n, v in (("x", x), ("y", y)) if v is not None)
        if _side(run) == "targets":
            where = f" that {layer_label(run, loc.layer)} has to produce" if loc.layer else ""
            return f"Targets are not normalised ({facts}){where}"
        where = f" into {layer_label(run, loc.layer)}" if loc.layer else ""
        return f"Inputs or targets are not normalised ({facts}){where}"

    def fixes(self, run: Run, loc: Localization) -> list[str]:
        if _side(run) == "targets":
            return ["standardise the targets: (y - mean) / std on the training set, and invert "
                    "it at prediction time (or predict log(y) for positive, skewed targets)",
                    "or give the output layer a bias initialised at the targets' mean and scale"]
        return ["standardise the features: (x - mean) / std computed on the training set",
                "scale the targets too (and invert the scaling at prediction time)"]


#: Below this magnitude the inputs are in scale (standardised features sit within a few units).
_IN_SCALE = 10.0


def _side(run: Run) -> str:
    """"targets" when the inputs are in scale and only the targets are not, else "inputs"."""
    steps = run.series.steps[:5]
    x, y = start_median(run, "input_max_abs", steps), start_median(run, "target_max_abs", steps)
    return "targets" if x < _IN_SCALE and y >= LARGE_SCALE else "inputs"
