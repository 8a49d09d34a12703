"""fp16 overflow: half-precision values pass 65504; the scaler is missing or broken.

Symptoms: autocast float16 (or fp16 parameters); a layer's headroom to the dtype's maximum
shrinks to nothing; the first non-finite value is an inf born in the forward (or the scaled
backward); a GradScaler's scale keeps collapsing. Distinguished from lr_too_high and bad_init
by the half-precision headroom: the same values would be finite in fp32.
Reference: Micikevicius et al., "Mixed Precision Training" (ICLR 2018); PyTorch AMP docs
(torch.amp.GradScaler).
"""

from __future__ import annotations

from types import MappingProxyType

from causal.causes.base import FAILED_OUTCOME, CauseNode
from causal.hypothesis import Localization
from causal.localize import OWN_CODE_NOTE, output_layer, own_code_inputs
from causal.run_queries import (
    failure_step,
    finite,
    first_origin,
    forward_order,
    layer_label,
    layer_series,
)
from causal.schema.run import Direction, LayerStat, Run
from causal.symptoms.data import half_loss_overflow_ops


class Fp16Overflow(CauseNode):
    name = "fp16_overflow"
    prior = 0.03
    summary = "Half-precision overflow"
    likelihoods = MappingProxyType({
        "outcome": FAILED_OUTCOME,
        "half_precision": {"fp32": 0.01, "ok": 0.09, "near_limit": 0.3, "overflow": 0.6},
        "scaler": {"none": 0.5, "stable": 0.2, "collapsing": 0.3},
        "nonfinite_birth": {"none": 0.095, "input": 0.01, "target": 0.005, "forward_op": 0.08,
                            "forward_op_on_outlier": 0.02, "forward_layer": 0.5, "loss": 0.14,
                            "backward": 0.15},
        "onset": {"none": 0.05, "start": 0.25, "early": 0.3, "late": 0.4},
        "loss_jump": {"none": 0.45, "on_calm_weights": 0.35, "after_trouble": 0.2},
        # a calm run that learned until the overflow
        "loss_vs_trivial": {"below": 0.8, "at_trivial": 0.05, "above": 0.15},
    })

    def localize(self, run: Run) -> Localization:
        """The first inf born in the forward pass; for one born in a loss that summed or
        exponentiated in half precision, the output layer whose values it did that to; else
        the layer with the least headroom."""
        origin = first_origin(run)
        if origin is not None and (fed := own_code_inputs(run, origin)):
            return Localization(self._least_headroom(run, fed), origin.step, (origin,),
                                OWN_CODE_NOTE)
        if origin is not None and origin.birth.direction == Direction.FORWARD:
            return Localization(origin.layer_name, origin.step, (origin,))
        if origin is not None and (ops := half_loss_overflow_ops(origin)):
            out = origin.birth.output_layer or output_layer(run)
            return Localization(str(out) if out else None, origin.step, (origin,),
                                f"the loss ran {', '.join(ops)} in float16")
        return Localization(self._least_headroom(run), origin.step if origin else
                            failure_step(run), (origin,) if origin else ())

    @staticmethod
    def _least_headroom(run: Run, among: list[str] | None = None) -> str | None:
        """The layer whose outputs came closest to the fp16 maximum up to the failure (of
        `among`, when given; the first in forward order on a tie or with no headroom seen)."""
        heads = layer_series(run, LayerStat.ACT_HEADROOM, until=failure_step(run))
        order = forward_order(run)
        names = among if among is not None else list(heads)
        return min(names, default=None, key=lambda k: (
            min(finite(v for _, v in heads.get(k, ())), default=float("inf")),
            order.get(k, 1 << 30)))

    def describe(self, run: Run, loc: Localization) -> str:
        origin = first_origin(run)
        if origin is not None and (ops := half_loss_overflow_ops(origin)):
            on = f" on {layer_label(run, loc.layer)}'s output" if loc.layer else ""
            return (f"Half-precision overflow in the loss{on}: it ran {', '.join(ops)} in "
                    "float16 and passed the fp16 maximum (65504)")
        if loc.note == OWN_CODE_NOTE and loc.layer:
            where = (" in the model's own forward code, on the output of "
                     f"{layer_label(run, loc.layer)}")
        else:
            where = f" in {layer_label(run, loc.layer)}" if loc.layer else ""
        text = f"Half-precision overflow{where}: values passed the fp16 maximum (65504)"
        if origin is not None and origin.birth.fp32_finite is True:
            max_abs = origin.birth.fp32_max_abs
            text += (f"; re-run in float32 on the same inputs, {origin.layer_name!r} is finite "
                     f"(max |output| {max_abs if max_abs is not None else float('nan'):.3g})")
        return text

    def fixes(self, run: Run, loc: Localization) -> list[str]:
        origin = first_origin(run)
        if origin is not None and half_loss_overflow_ops(origin):
            return ["compute the loss in float32: loss_fn(output.float(), target), or the loss "
                    "outside autocast (autocast(enabled=False))",
                    "run under bfloat16 autocast instead of float16 (same range as fp32)"]
        if loc.note == OWN_CODE_NOTE and loc.layer:
            first = (f"compute what your forward does with the output of {loc.layer!r} in "
                     "float32 (a sum, exp or product of it: .float() on it, or "
                     "autocast(enabled=False) around that code)")
        elif loc.layer:
            first = (f"keep {loc.layer!r} in float32 (autocast(enabled=False) around it, inputs "
                     ".float())")
        else:
            first = "keep the overflowing op in float32"
        out = [first,
               "run under bfloat16 autocast instead of float16 (same range as fp32)"]
        origin = first_origin(run)
        if origin is not None and origin.birth.direction == Direction.FORWARD:
            out.append("a GradScaler cannot help here: it scales gradients, and this overflow "
                       "is in the forward pass")
        elif not run.series.get("scaler_scale"):
            out.append("use torch.amp.GradScaler with float16 autocast (none was passed)")
        return out
