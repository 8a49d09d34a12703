"""Triage: the cheap every-step checks that decide whether a closed step is analysed at once
(while its module outputs are at hand) or queued with the quiet ones (`analyzer.Analyzer`)."""

from __future__ import annotations

import math

from causal.schema.run import LayerStat
from neuraldbg.capture.step_values import RawStep
from neuraldbg.capture.tensor_stats import ACT_COLUMNS
from neuraldbg.detect.transitions import Thresholds

_NF = ACT_COLUMNS.index(LayerStat.ACT_NONFINITE)


class Triage:
    """Cheap every-step checks that decide whether a step is analysed at once.

    `urgent`: analyse now, with the step's module outputs at hand (a non-finite value, a
    gradient above the absolute limit, a loss 3x its recent level, an input outlier). `alarm`:
    a cheap signal is abnormal by itself (non-finite, input outlier), which turns on full
    statistics. The state machines decide everything else, in step order.
    """

    def __init__(self, thresholds: Thresholds) -> None:
        self.cfg = thresholds
        self.loss_level: float | None = None
        self.input_scale: tuple[float, int] = (0.0, 0)

    def input_outlier(self, max_abs: float) -> bool:
        """max|x| 10x its recent scale (EMA of log10 over normal batches)."""
        if not math.isfinite(max_abs) or max_abs <= 0:
            return False
        lx = math.log10(max_abs)
        base, n = self.input_scale
        outlier = n >= 5 and lx > base + 1.0
        if not outlier:
            self.input_scale = (lx if n == 0 else base + 0.1 * (lx - base), n + 1)
        return outlier

    def check(self, raw: RawStep, grad_limit: bool = True) -> tuple[bool, bool]:
        """(urgent, alarm) for one step, from its fetched values only (`grad_limit`: as for
        `verdict`)."""
        values = raw.values
        nonfinite = not raw.finite or not all(math.isfinite(x) for x in raw.float_losses)
        if raw.act_units:
            width = len(ACT_COLUMNS)
            nonfinite = nonfinite or any(
                values.act[k * width + _NF] > 0 for k in range(len(raw.act_units)))
        input_max_abs = None
        if values.inputs:
            first = values.inputs[0]
            input_max_abs = max(abs(first[0]), abs(first[1]))
        loss = values.loss if values.loss is not None else (
            raw.float_losses[-1] if raw.float_losses else None)
        grad_max = max(values.grads) if values.grads is not None else None
        return self.verdict(nonfinite, input_max_abs, loss, grad_max, grad_limit)

    def verdict(self, nonfinite: bool, input_max_abs: float | None, loss: float | None,
                grad_max: float | None, grad_limit: bool = True) -> tuple[bool, bool]:
        """(urgent, alarm) from a step's values (and the triage's running levels, which it
        moves: call once per step, in step order). `grad_limit`: whether a gradient above the
        absolute limit makes the step urgent (not while an abnormal regime has settled:
        `Analyzer.settled`)."""
        alarm = nonfinite
        if input_max_abs is not None and self.input_outlier(input_max_abs):
            alarm = True
        urgent = alarm
        if loss is not None and math.isfinite(loss):
            level = self.loss_level
            if level is not None and loss > 3.0 * abs(level) + 1e-12:
                urgent = True
            self.loss_level = loss if level is None else level + 0.1 * (loss - level)
        if grad_limit and grad_max is not None and grad_max > self.cfg.exploding:
            urgent = True
        return urgent, alarm
