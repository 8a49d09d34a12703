"""Symptoms read from the data and the numeric format: input outliers, input/target scale at
the start, half-precision headroom and the GradScaler's scale."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from types import MappingProxyType

from causal.run_queries import (
    data_nonfinite_contained,
    extreme_batch,
    failure_step,
    finite,
    first_origin,
    half_dtypes,
    input_born,
    layer_series,
    sign_break,
)
from causal.schema.run import Direction, Event, LayerStat, Run, State
from causal.symptoms.base import Symptom

#: `input_outlier` when the inputs look ordinary but the targets were never seen (the loss took
#: none the monitor could find, or only class indices): an outlier confined to the targets is
#: not ruled out, so "none" is only as likely as the inputs alone make it.
TARGETS_UNSEEN = MappingProxyType({"none": 0.7, "outlier": 0.22, "nonfinite": 0.0,
                                   "nonfinite_target": 0.08})


class InputOutlier(Symptom):
    """A single batch far from the others (robust z-score of log max|x|, or a value of a sign
    the data never had on the step that turned non-finite: `sign_break`), or a non-finite
    input (the measured batch, or any other argument the model was given, as the first
    non-finite value's origin says), in otherwise ordinary data. Only a batch at or before the
    failure can be its cause; when the run broke in its first steps, the batches after the
    failure say what ordinary is. A non-finite target while
    every input was finite is its own state (`nonfinite_target`): a corrupt label, or a value
    the loss function computed from the targets before using them (a normalisation by a
    zero spread), which the monitor sees the same way when it finds the targets in the
    loss's graph. When the targets were never seen, ordinary inputs leave an outlier in the
    targets open (`TARGETS_UNSEEN`): targets not seen are not targets fine. A non-finite value
    in data whose loss stayed finite all run was masked or filled on purpose
    (`data_nonfinite_contained`): no corrupt batch."""

    name = "input_outlier"
    states = ("none", "outlier", "nonfinite", "nonfinite_target")
    description = "one batch with extreme or non-finite values"
    leak = MappingProxyType({"none": 0.93, "outlier": 0.05, "nonfinite": 0.015,
                             "nonfinite_target": 0.005})

    def observe(self, run: Run) -> Mapping[str, float]:
        stop = failure_step(run)

        def nonfinite(column: str) -> bool:
            return any(v for s, v in run.series.get(column) if stop is None or s <= stop)

        born = input_born(run, stop)
        contained = data_nonfinite_contained(run)  # the loss never saw it: masked or filled
        if (nonfinite("input_nonfinite") and not contained) or (
                born is not None and born.birth.tensor != "target"):
            return self.hard("nonfinite")
        if (nonfinite("target_nonfinite") and not contained) or born is not None:
            return self.hard("nonfinite_target")
        if sign_break(run) is not None:  # a value of a sign its data never had, made non-finite
            return self.hard("outlier")
        if extreme_batch(run) is not None:
            return self.hard("outlier")
        if not run.series.get("target_max_abs"):
            return dict(TARGETS_UNSEEN)
        return self.hard("none")


#: Data of magnitude from here up is not standardised (`input_scale` calls it large).
LARGE_SCALE = 50.0


class InputScale(Symptom):
    """Input and target magnitude at the start of the run: standardised data sits within a
    few units; raw features or targets in the hundreds or more make the loss huge from step 0.

    Targets count only as far as the loss shows them: a loss that uses them for ordering,
    weighting or counting (survival times, a Poisson rate's counts) stays ordinary however
    large they are, and then they are no scale problem."""

    name = "input_scale"
    states = ("normal", "large", "huge")
    description = "max |x| and max |y| over the first steps"
    leak = MappingProxyType({"normal": 0.9, "large": 0.07, "huge": 0.03})

    def observe(self, run: Run) -> Mapping[str, float]:
        steps = run.series.steps[:5]
        if not steps:
            return {s: 1 / 3 for s in self.states}
        peak = start_median(run, "input_max_abs", steps)
        target = start_median(run, "target_max_abs", steps)
        start_loss = _start_loss(run, steps[:3])
        if start_loss is not None:
            target = min(target, start_loss)
        return self.graded(max(peak, target), ((LARGE_SCALE, "large"), (1e3, "huge")), "normal")


def start_median(run: Run, column: str, steps: Sequence[int]) -> float:
    """The median of `column` over `steps` (0.0 when not recorded)."""
    vals = sorted(finite(v for s, v in run.series.get(column) if s in steps))
    return vals[len(vals) // 2] if vals else 0.0


def _start_loss(run: Run, steps: Sequence[int]) -> float | None:
    """The largest finite |loss| of the first steps; None when none was recorded or none was
    finite (then the loss says nothing of how large the targets are to it)."""
    vals = [abs(v) for s, v in run.series.get("loss") if s in steps and math.isfinite(v)]
    return max(vals) if vals else None


#: Ops whose float16 result overflows on ordinary-looking inputs: exponentials, powers,
#: sums and products of many terms (as the monitor names them, from the loss's graph).
OVERFLOW_OPS = frozenset({"Exp", "Exp2", "Expm1", "Pow", "Sum", "Cumsum", "Prod", "Cumprod",
                          "Mm", "Bmm", "Addmm", "Baddbmm", "Matmul"})


def half_loss_overflow_ops(origin: Event) -> list[str]:
    """The overflow-prone ops (`OVERFLOW_OPS`) a loss ran in half precision, when the first
    non-finite value was born in that loss; empty otherwise."""
    if origin.birth.direction != Direction.LOSS:
        return []
    return sorted(OVERFLOW_OPS & set(origin.birth.loss_half_ops or ()))


#: A layer output within this factor of the half dtype's largest value is near its limit
#: (`LayerStat.ACT_HEADROOM`: the dtype's max over the output's max |value|).
NEAR_LIMIT_HEADROOM = 4.0


class HalfPrecision(Symptom):
    """Under fp16/bf16 autocast, how close layer outputs came to the dtype's largest value; an
    overflow when the first non-finite value is an inf born under float16, or when the monitor's
    float32 re-run of the module where it was born comes out finite; likely one when a NaN
    was born in a loss that computed exponentials or sums in float16 itself (inf / inf), and
    as likely as not when a NaN was born in a float16 forward, loss or backward pass that no
    float32 re-run could judge."""

    name = "half_precision"
    states = ("fp32", "ok", "near_limit", "overflow")
    description = "headroom to the half-precision maximum"
    leak = MappingProxyType({"fp32": 0.8, "ok": 0.17, "near_limit": 0.02, "overflow": 0.01})

    def observe(self, run: Run) -> Mapping[str, float]:
        halves = half_dtypes(run)
        if not halves:
            return self.hard("fp32")
        origin = first_origin(run)
        fp16 = "float16" in halves
        stop = failure_step(run)
        heads = finite(v for pts in layer_series(run, LayerStat.ACT_HEADROOM, until=stop).values()
                       for _, v in pts)
        near = bool(heads) and min(heads) < NEAR_LIMIT_HEADROOM
        rerun = origin.birth.fp32_finite if origin is not None else None
        if fp16 and rerun is True:  # the monitor re-ran the origin in float32: finite there
            return self.hard("overflow")
        if rerun is False:  # non-finite in float32 too: not the half format's range
            return self.hard("near_limit" if near else "ok")
        if origin is not None and origin.to_state == State.INF and fp16 \
                and origin.birth.direction in (Direction.FORWARD, Direction.LOSS,
                                               Direction.BACKWARD):
            return self.hard("overflow")
        if origin is not None and fp16 and half_loss_overflow_ops(origin):
            return {"overflow": 0.8, "ok": 0.2}
        if origin is not None and fp16 and origin.to_state == State.NAN \
                and origin.birth.direction in (Direction.FORWARD, Direction.LOSS,
                                               Direction.BACKWARD):
            # a NaN born in float16 that no float32 re-run could judge: an inf made and used
            # inside one op (a sum or exp past 65504, then inf - inf, inf / inf or 0 * inf) as
            # often as an op's own singular point: half the evidence either way
            return {"overflow": 0.5, "near_limit" if near else "ok": 0.5}
        return self.hard("near_limit" if near else "ok")


class ScalerScale(Symptom):
    """A GradScaler's scale: a few drops early then stable is normal; a scale that keeps
    collapsing means values overflow at every step."""

    name = "scaler"
    states = ("none", "stable", "collapsing")
    description = "GradScaler scale over the run"
    leak = MappingProxyType({"none": 0.85, "stable": 0.13, "collapsing": 0.02})

    def observe(self, run: Run) -> Mapping[str, float]:
        scales = finite(v for _, v in run.series.get("scaler_scale"))
        if not scales:
            return self.hard("none")
        drops = sum(1 for a, b in itertools.pairwise(scales) if b < a)
        settled = len(scales) >= 10 and scales[-1] >= min(scales[len(scales) // 2:])
        if scales[-1] < 1.0 or (drops > 10 and not settled):
            return self.hard("collapsing")
        return self.hard("stable")
