"""Data outlier: one or a few corrupt, extreme or NaN batches in otherwise good data.

Symptoms: one batch's max|x| is far from all others (robust z-score), a batch takes a sign its data
never had on the step that turned non-finite, or an input or target is non-finite; the run was calm
before and fails late, right at that batch. Distinguished from unscaled_inputs (all batches large
from step 0) and unsafe_op (inputs ordinary, an op fails).
Reference: Northcutt et al., "Pervasive Label Errors in Test Sets" (NeurIPS 2021) for how
common corrupt samples are; PyTorch forum reports of NaN loss from a single bad batch.
"""

from __future__ import annotations

import math
from types import MappingProxyType

from causal.causes.base import FAILED_OUTCOME, CauseNode
from causal.hypothesis import Localization
from causal.localize import input_layer, output_layer
from causal.run_queries import failure_step, input_born, robust_z, sign_break
from causal.schema.run import INPUT, Event, Run


class DataOutlier(CauseNode):
    name = "data_outlier"
    prior = 0.05
    summary = "A corrupt or extreme input batch"
    likelihoods = MappingProxyType({
        "outcome": FAILED_OUTCOME,
        "input_outlier": {"none": 0.05, "outlier": 0.55, "nonfinite": 0.3,
                          "nonfinite_target": 0.1},
        "onset": {"none": 0.02, "start": 0.03, "early": 0.25, "late": 0.7},
        # an op that kept to the data's range until the batch left it (an exp, a log)
        "nonfinite_birth": {"none": 0.23, "input": 0.31, "target": 0.08, "forward_op": 0.01,
                            "forward_op_on_outlier": 0.06, "forward_layer": 0.18, "loss": 0.1,
                            "backward": 0.03},
        "loss_pattern": {"steady": 0.35, "spike_recover": 0.45, "oscillating": 0.05,
                         "diverging": 0.1, "plateau": 0.04,
                         "overshoot_plateau": 0.01},
        "input_scale": {"normal": 0.9, "large": 0.08, "huge": 0.02},
        # one extreme batch makes one extreme gradient and one oversized update
        "grad_regime": {"healthy": 0.35, "exploding": 0.5, "vanishing": 0.05, "both": 0.1},
        "update_ratio": {"normal": 0.5, "high": 0.3, "very_high": 0.2},
        # weights that gave ordinary losses one step earlier met the batch
        "loss_jump": {"none": 0.3, "on_calm_weights": 0.6, "after_trouble": 0.1},
        # a calm run that learned until the bad batch
        "loss_vs_trivial": {"below": 0.8, "at_trivial": 0.05, "above": 0.15},
    })

    def localize(self, run: Run) -> Localization:
        """The step of the offending batch: the first non-finite input, else the largest
        robust outlier of max|x| (or max|y|). At the layer the batch enters the model by, or,
        when only its targets are bad (the inputs of that step are finite and ordinary), at
        the output layer the loss compares with them."""
        for column in ("input_nonfinite", "target_nonfinite"):
            bad = [s for s, v in run.series.get(column) if v]
            if bad:
                chain = tuple(e for e in run.events if e.layer_name == INPUT and e.step == bad[0])
                return _placed(run, column.startswith("target"), bad[0], chain)
        if (origin := input_born(run)) is not None:  # another argument than the batch
            return _placed(run, False, origin.step, (origin,))
        if (broke := sign_break(run)) is not None:  # a value of a sign its data never had
            broke_step, kind, _ = broke
            chain = tuple(e for e in run.events if e.step == broke_step)
            return _placed(run, kind == "target", broke_step, chain[:6])
        stop = failure_step(run)
        best: tuple[float, int, bool] | None = None
        for column in ("input_max_abs", "target_max_abs"):
            pts = [(s, v) for s, v in run.series.get(column) if math.isfinite(v) and v > 0
                   and (stop is None or s <= stop + 1)]
            if len(pts) < 3:
                continue
            z = robust_z([math.log10(v) for _, v in pts])
            k = max(range(len(z)), key=z.__getitem__)
            if best is None or z[k] > best[0]:
                best = (z[k], pts[k][0], column.startswith("target"))
        step = best[1] if best is not None else stop
        chain = tuple(e for e in run.events if step is not None and step <= e.step <= step + 1)
        return _placed(run, best is not None and best[2], step, chain[:6])

    def describe(self, run: Run, loc: Localization) -> str:
        broke = sign_break(run)
        sign = (f": a value of {broke[2]:.3g} where the {broke[1]}s were never negative"
                if broke is not None and broke[0] == loc.step else "")
        if _in_targets(loc):
            return (f"A corrupt or extreme target batch at step {loc.step} broke a calm run"
                    f"{sign} (the loss compares {loc.layer!r} with them)")
        where = f" (it enters the model at {loc.layer!r})" if loc.layer not in (None, INPUT) else ""
        return f"A corrupt or extreme input batch at step {loc.step} broke a calm run{sign}{where}"

    def fixes(self, run: Run, loc: Localization) -> list[str]:
        if _in_targets(loc):
            first = (f"inspect the targets of step {loc.step}: mask or drop non-finite, sentinel "
                     "(1e10, -999) or out-of-range labels before the loss")
        else:
            first = (f"inspect the batch of step {loc.step}: filter non-finite or extreme samples "
                     "(torch.isfinite(x).all(), a max|x| bound) before the forward pass")
        rest = ["clip gradients (clip_grad_norm_) and use a robust loss (Huber/SmoothL1) so "
                "one batch cannot wreck the weights"]
        if _in_targets(loc) and any(v for s, v in run.series.get("target_nonfinite")
                                    if s == loc.step):
            # the monitor reads the targets the loss used, which the loss may have computed
            rest.insert(0, "if the loss transforms the targets before using them (divides by "
                        "their std, takes their log), guard that op with an eps: a flat or "
                        "zero target gives the same non-finite value")
        return [first, *rest]


#: The note of a batch placed at the output layer: only its targets were bad.
TARGETS_NOTE = "the inputs of that step are ordinary, its targets are not"


def _in_targets(loc: Localization) -> bool:
    """Whether `localize` put the batch at the output layer (only its targets were bad)."""
    return loc.note == TARGETS_NOTE


def _placed(run: Run, in_targets: bool, step: int | None, chain: tuple[Event, ...]
            ) -> Localization:
    """At the layer that reads the input batch's values (`<input>` when the layer graph has
    none), unless only the targets of step `step` are bad: then at the output layer."""
    if in_targets and step is not None and _inputs_ordinary(run, step):
        out = output_layer(run)
        if out is not None:
            return Localization(out, step, chain, TARGETS_NOTE)
    return Localization(input_layer(run, step) or INPUT, step, chain)


def _inputs_ordinary(run: Run, step: int) -> bool:
    """The inputs of `step` are finite and within 10x of the run's median max|x|."""
    if any(s == step and v for s, v in run.series.get("input_nonfinite")):
        return False
    pts = [v for _, v in run.series.get("input_max_abs") if math.isfinite(v)]
    at = [v for s, v in run.series.get("input_max_abs") if s == step]
    if not at or not pts:
        return not at  # no input recorded at that step (only targets): nothing says otherwise
    median = sorted(pts)[len(pts) // 2]
    return math.isfinite(at[0]) and at[0] <= 10.0 * max(median, 1e-12)
