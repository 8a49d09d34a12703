"""Unsafe op: a calm run hit by log(0), sqrt'(0), 0/0 or a log(softmax) collapse.

Symptoms: the first non-finite value is born in a parameterless op on finite inputs (or in
the loss, or in the backward pass of such an op), suddenly, while gradients and the loss were
calm and the inputs ordinary. Distinguished from data_outlier (an extreme input batch) and
lr_too_high / bad_init (scale grows before the failure) by the calm before it.
Reference: PyTorch docs on numerical stability (torch.log_softmax instead of log(softmax));
"Hunting for NaNs" reports: sqrt backward at 0 is inf.
"""

from __future__ import annotations

from types import MappingProxyType

from causal.causes.base import FAILED_OUTCOME, CauseNode
from causal.hypothesis import Localization
from causal.localize import OWN_CODE_NOTE, loss_input_layer, own_code_inputs
from causal.run_queries import (
    born_in_found_targets,
    first_origin,
    layer_label,
    loss_output_at_bound,
)
from causal.schema.run import LOSS, Direction, Run

#: The note of an op in the loss, placed at the layer whose output it took: the loss function
#: is no module, and the authors of the suite's scenarios who name one for such an op name that
#: layer (the others give none).
IN_LOSS_NOTE = "the op is in the loss function: the layer named is the one whose output it took"
#: The note of an op placed in the loss because the first non-finite value was a target the
#: monitor found in the loss's graph: the loss may have computed it from the labels.
FROM_TARGETS_NOTE = ("a corrupt label looks the same from the loss's graph: "
                     "record_loss(loss, target=y) tells the two apart")


class UnsafeOp(CauseNode):
    name = "unsafe_op"
    prior = 0.04
    summary = "A numerically unsafe operation"
    likelihoods = MappingProxyType({
        "outcome": FAILED_OUTCOME,
        "nonfinite_birth": {"none": 0.02, "input": 0.01, "target": 0.05, "forward_op": 0.49,
                            "forward_op_on_outlier": 0.01, "forward_layer": 0.05, "loss": 0.22,
                            "backward": 0.15},
        "onset": {"none": 0.02, "start": 0.2, "early": 0.28, "late": 0.5},
        "grad_regime": {"healthy": 0.7, "exploding": 0.15, "vanishing": 0.1, "both": 0.05},
        "loss_pattern": {"steady": 0.75, "spike_recover": 0.1, "oscillating": 0.05,
                         "diverging": 0.05, "plateau": 0.04,
                         "overshoot_plateau": 0.01},
        "input_outlier": {"none": 0.93, "outlier": 0.03, "nonfinite": 0.01,
                          "nonfinite_target": 0.03},
        "update_ratio": {"normal": 0.9, "high": 0.08, "very_high": 0.02},
        "loss_jump": {"none": 0.35, "on_calm_weights": 0.5, "after_trouble": 0.15},
        # a calm run that learned until the op broke
        "loss_vs_trivial": {"below": 0.75, "at_trivial": 0.05, "above": 0.2},
    })

    def localize(self, run: Run) -> Localization:
        origin = first_origin(run)
        if origin is None:
            return Localization(None, None)
        layer = loss_output_at_bound(origin)
        if layer is not None:  # the loss met outputs sitting on its singular points
            return Localization(layer, origin.step, (origin,))
        if born_in_found_targets(run, origin):
            return Localization(LOSS, origin.step, (origin,), FROM_TARGETS_NOTE)
        fed = loss_input_layer(run, origin)
        if fed is not None:  # the op is in the loss; where it starts is the output it took
            return Localization(fed, origin.step, (origin,), IN_LOSS_NOTE)
        took = own_code_inputs(run, origin)
        if len(took) == 1:  # in the model's forward code, on the output of one layer
            return Localization(took[0], origin.step, (origin,), OWN_CODE_NOTE)
        return Localization(origin.layer_name, origin.step, (origin,))

    def describe(self, run: Run, loc: Localization) -> str:
        if loc.layer is None:
            return "A numerically unsafe operation produced the first non-finite value"
        origin = first_origin(run)
        direction = origin.birth.direction if origin else None
        where = {Direction.FORWARD: "in the forward pass", Direction.LOSS: "in the loss",
                 Direction.BACKWARD: "in the backward pass"}.get(direction, "") if direction \
            else ""
        label = layer_label(run, loc.layer)
        state = origin.to_state if origin else "non-finite"
        if loc.note == FROM_TARGETS_NOTE:
            return (f"An unsafe op in the loss produced {state} at step {loc.step} from the "
                    "targets: the tensor it compared the model's output with was already "
                    f"{state} (a division by the targets' spread, a log of them)")
        if loc.note == OWN_CODE_NOTE:
            return (f"An unsafe op in the model's own forward code produced {state} at step "
                    f"{loc.step}, on the output of {label}")
        if loc.note == IN_LOSS_NOTE:
            if direction == Direction.BACKWARD:
                return (f"An unsafe op in the loss produced {state} in its backward pass at "
                        f"step {loc.step} (a gradient such as sqrt'(0)), on the output of "
                        f"{label}")
            return (f"An unsafe op in the loss produced {state} at step {loc.step}, on the "
                    f"output of {label}")
        if origin is not None and loss_output_at_bound(origin) == loc.layer:
            birth = origin.birth
            return (f"An unsafe op in the loss produced {state} at step {loc.step}: "
                    f"{birth.output_zeros or 0} output values of {label} were exactly 0 and "
                    f"{birth.output_ones or 0} exactly 1 (log(p), log(1 - p) or a division "
                    f"there is inf)")
        return f"An unsafe op in {label} produced {state} {where} at step {loc.step}".rstrip()

    def fixes(self, run: Run, loc: Localization) -> list[str]:
        first = []
        if loc.note == FROM_TARGETS_NOTE:
            first = ["guard what the loss computes from the targets: (y - y.mean()) / "
                     "(y.std() + eps), a divisor clamped away from 0 (a flat group's spread, a "
                     "naive forecast's error); if the labels themselves are bad, filter them"]
        return [*first, "guard the op: torch.log(x.clamp_min(1e-12)), torch.sqrt(x + 1e-12), "
                "x / (y + eps)",
                "use fused stable forms: log_softmax / cross_entropy on logits, "
                "binary_cross_entropy_with_logits"]
