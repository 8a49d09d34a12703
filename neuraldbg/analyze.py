"""The host side of a closed step: triage, the state machines, the flight recorder, the run file.

Per-step Python runs right after the training step, when the CPU caches are full of the model's
tensors, and costs several times what it costs warm. So a quiet step is only triaged (a few
vectorised checks) and queued; the queue is analysed in batches of `BATCH` steps, in step order,
which produces exactly the events an immediate analysis would. A step that triage flags (a
non-finite value, a gradient or loss far from its recent scale, an input outlier, a machine
that left its healthy regime recently) is analysed at once, while its module outputs are still
at hand for the non-finite hunt and for full statistics of that very step. A regime that stays
abnormal with nothing new is queued too (`StepCapture.settled`); a change the queue finds
escalates from the step it is found at. A recurrence (a machine re-entering a regime it entered
twice lately, `TransitionDetector.recurrence`) is recorded but does not escalate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from causal.run import Event, LayerStat
from neuraldbg.nonfinite import origin_event
from neuraldbg.stats import ACT_COLUMNS, nonfinite_count, stats_from_moments
from neuraldbg.transitions import Thresholds

if TYPE_CHECKING:
    from neuraldbg.capture import StepBuffer, StepCapture

BATCH = 32
INITIAL_STEPS = 3  # the first steps' window is always stored
_MAX_WINDOWS = 256
_LAYER_STATS = tuple(s.value for s in LayerStat)
_NF = ACT_COLUMNS.index(LayerStat.ACT_NONFINITE)
_HEALTHY = {"grad_healthy", "activation_healthy", "loss_steady", "loss_plateau", "grad_finite",
            "activation_finite", "loss_finite", "input_finite"}


@dataclass
class HostStep:
    """Everything about one closed step that lives on the host (after the one sync)."""

    step: int
    loss: float | None
    inp: list[float] | None  # [max|x|, mean, std, non-finite count, has NaN]
    tgt: list[float] | None
    grads: list[float] | None  # per unit (0.0 when not observed), then the global norm
    observed: list[bool]
    act: dict[int, list[float]]  # unit index -> ACT_COLUMNS values (full-statistics steps)
    cols: dict[str, tuple[np.ndarray, np.ndarray]]  # recorder columns: (values, observed)
    scale: float | None
    scaler_skip: bool
    optimizer_stepped: bool
    full: bool
    settings: dict[str, str] = field(default_factory=dict)

    @property
    def nonfinite(self) -> bool:
        if self.loss is not None and not math.isfinite(self.loss):
            return True
        if (self.inp and self.inp[3] > 0) or (self.tgt and self.tgt[3] > 0):
            return True
        if self.grads is not None and not all(math.isfinite(v) for v in self.grads):
            return True
        return any(v[_NF] > 0 for v in self.act.values())


@dataclass
class RawStep:
    """A closed step as fetched from the device, before any host-side analysis."""

    step: int
    host: dict[str, list[float]]
    finite: bool  # every scalar of `host` (all but "act", "wnorm", "unorm") is finite
    grads_index: list[int] | None  # the parameter of each value of host["grads"]
    weights_index: tuple[list[int], list[int]] | None  # the same for "wnorm" and "unorm"
    act_units: list[int]
    input_sizes: list[int]
    target_sizes: list[int]
    float_losses: list[float]
    optimizer_stepped: bool
    full: bool
    scaler: bool
    settings: dict[str, str]


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
        host = raw.host
        nonfinite = not raw.finite or not all(math.isfinite(x) for x in raw.float_losses)
        if raw.act_units:
            width = len(ACT_COLUMNS)
            nonfinite = nonfinite or any(
                host["act"][k * width + _NF] > 0 for k in range(len(raw.act_units)))
        input_max_abs = None
        if "in0" in host:
            input_max_abs = max(abs(host["in0"][0]), abs(host["in0"][1]))
        loss = host["loss"][0] if "loss" in host else (
            raw.float_losses[-1] if raw.float_losses else None)
        grad_max = max(host["grads"]) if "grads" in host else None
        return self.verdict(nonfinite, input_max_abs, loss, grad_max, grad_limit)

    def verdict(self, nonfinite: bool, input_max_abs: float | None, loss: float | None,
                grad_max: float | None, grad_limit: bool = True) -> tuple[bool, bool]:
        """(urgent, alarm) from a step's values (and the triage's running levels, which it
        moves: call once per step, in step order). `grad_limit`: whether a gradient above the
        absolute limit makes the step urgent (not while an abnormal regime has settled:
        `StepCapture.settled`)."""
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


class Analyzer:
    """Runs the state machines over closed steps (in order) and writes what they find."""

    def __init__(self, cap: StepCapture) -> None:
        self.cap = cap
        self.triage = Triage(cap.detector.thresholds)
        self.pending: list[RawStep] = []
        self.windows_written = 0
        self.analysed = 0
        self.settings: dict[str, str] = {}

    def at_once(self, urgent: bool, settled: bool) -> bool:
        """Whether a step the triage judged (`urgent`) is analysed now rather than queued:
        urgent, or some machine left its healthy regime and has not settled
        (`StepCapture.settled`)."""
        return urgent or (self.cap.detector.abnormal() and not settled)

    def submit(self, raw: RawStep, live: StepBuffer,
               verdict: tuple[bool, bool] | None = None, settled: bool | None = None) -> None:
        """Queue a quiet step; analyse a flagged one at once (with its live buffer).
        `verdict` and `settled`: the triage's (urgent, alarm) and `StepCapture.settled`, when
        the caller already asked them."""
        if settled is None:
            settled = self.cap.settled(raw.step)
        urgent, alarm = verdict if verdict is not None else self.triage.check(
            raw, grad_limit=not settled)
        if raw.act_units or self.at_once(urgent, settled):
            self.drain()
            self._analyse(self.to_host(raw, live), live, alarm)
        else:
            self.queue(raw)

    def queue(self, step: RawStep) -> None:
        """Queue a step the triage found quiet; analyse the queue once it is full."""
        self.pending.append(step)
        if len(self.pending) >= BATCH:
            self.drain()

    def drain(self) -> None:
        """Analyse every queued step, in order."""
        pending, self.pending = self.pending, []
        for raw in pending:
            self._analyse(self.to_host(raw, None), None, False)

    def to_host(self, raw: RawStep, live: StepBuffer | None) -> HostStep:
        """Group parameter norms into layers, split statistics, unscale gradients."""
        cap, host = self.cap, raw.host
        grouper = cap.grouper
        loss = host["loss"][0] if "loss" in host else (
            float(np.mean(raw.float_losses)) if raw.float_losses else None)
        scale = host["scale"][0] if "scale" in host else None
        cols: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        grad_vals: list[float] | None = None
        observed: list[bool] = []
        if raw.grads_index is not None:
            vals = host["grads"]
            if math.inf in vals and live is not None:
                vals = grouper.refine(vals, raw.grads_index)
            per_unit, obs, total = grouper.group(vals, raw.grads_index)
            if scale is not None and scale > 0:  # record unscaled gradients
                per_unit, total = per_unit / scale, total / scale
            observed = obs.tolist()
            grad_vals = np.where(obs, per_unit, 0.0).tolist()
            grad_vals.append(total)
            cols[LayerStat.GRAD_NORM] = (per_unit, obs)
        if raw.weights_index is not None:
            w, has, _ = grouper.group(host["wnorm"], raw.weights_index[0])
            u, _, _ = grouper.group(host["unorm"], raw.weights_index[1])
            with np.errstate(divide="ignore", invalid="ignore"):
                cols[LayerStat.WEIGHT_NORM] = (w, has)
                cols[LayerStat.UPDATE_RATIO] = (u / w, has)
        width = len(ACT_COLUMNS)
        act = {i: host["act"][k * width:(k + 1) * width] for k, i in enumerate(raw.act_units)}
        self.add_act_columns(cols, act)
        return HostStep(
            step=raw.step, loss=loss,
            inp=_batch_stats(raw.input_sizes, host, "in", live.inputs if live else None),
            tgt=_batch_stats(raw.target_sizes, host, "tg", live.targets if live else None),
            grads=grad_vals, observed=observed, act=act, cols=cols, scale=scale,
            scaler_skip=raw.scaler and not raw.optimizer_stepped,
            optimizer_stepped=raw.optimizer_stepped, full=raw.full, settings=raw.settings,
        )

    def _analyse(self, hs: HostStep, live: StepBuffer | None, alarm: bool) -> None:
        cap, det, step = self.cap, self.cap.detector, hs.step
        n = len(cap.units)
        events: list[Event] = []
        nonfinite_now = hs.nonfinite
        inp, tgt = hs.inp, hs.tgt
        events += det.observe_input(
            step, (inp[3] if inp else 0.0) + (tgt[3] if tgt else 0.0),
            bool((inp and inp[4] > 0) or (tgt and tgt[4] > 0)))
        if hs.loss is not None:
            events += det.observe_loss(step, hs.loss)
        grads = hs.grads
        if grads is not None and not (hs.scaler_skip and not math.isfinite(grads[n])):
            events += det.observe_grads(
                step, {cap.names[i]: grads[i] for i in range(n) if hs.observed[i]})
        abnormal = alarm or nonfinite_now or any(
            str(e.to_state) not in _HEALTHY and not det.recurrence(e) for e in events)
        act = hs.act
        if abnormal and not act and live is not None and live.stash:
            act = cap.act_from_stash(live)
            self.add_act_columns(hs.cols, act)
        if act:
            events += det.observe_activations(
                step,
                {cap.names[i]: dict(zip(ACT_COLUMNS, v, strict=True)) for i, v in act.items()},
                {cap.names[i]: cap.kinds[i] for i in act},
            )
        if nonfinite_now and not cap.nonfinite_episode:
            cap.nonfinite_episode = True
            if live is not None:
                events.insert(0, origin_event(cap, step, live, hs.loss, inp, tgt, grads, act,
                                              hs.scaler_skip))
        elif not nonfinite_now:
            cap.nonfinite_episode = False
        cap.recorder.push(step, hs.cols)
        self.analysed += 1
        if events:
            window = None
            if self.windows_written < _MAX_WINDOWS:
                window = cap.recorder.window(step)
                self.windows_written += 1
            cap.writer.add_events(events, window)
        elif self.analysed == INITIAL_STEPS:
            # the run's first steps are evidence (activation scale against depth at step 0,
            # the first update ratios): keep them even when nothing happens there
            cap.writer.add_window(cap.recorder.window(step))
        if abnormal:  # something new: every step in detail for a while, from the step that
            # showed it, or from now when the queue found it only later
            cap.escalate_until = max(cap.escalate_until,
                                     max(step, cap.dbg.step) + cap.schedule.escalate_steps)
        self._write_step(hs)

    def add_act_columns(self, cols: dict[str, tuple[np.ndarray, np.ndarray]],
                        act: dict[int, list[float]]) -> None:
        """Recorder columns of the activation statistics (fractions only where they apply)."""
        if not act:
            return
        n, kinds = len(self.cap.units), self.cap.kinds
        for k, stat in enumerate(ACT_COLUMNS):
            if stat not in _LAYER_STATS:
                continue
            vals = np.full(n, np.nan)
            mask = np.zeros(n, dtype=bool)
            for i, v in act.items():
                if _applicable(stat, kinds[i]):
                    vals[i], mask[i] = v[k], True
            cols[stat] = (vals, mask)

    def _write_step(self, hs: HostStep) -> None:
        n = len(self.cap.units)
        row: dict[str, float | None] = {
            "loss": hs.loss,
            "grad_norm": hs.grads[n] if hs.grads is not None else None,
            "scaler_scale": hs.scale,
            "optimizer_stepped": 1.0 if hs.optimizer_stepped else 0.0,
            "full_stats": 1.0 if hs.full else 0.0,
        }
        for prefix, vals in (("input", hs.inp), ("target", hs.tgt)):
            if vals is not None:
                row.update({f"{prefix}_max_abs": vals[0], f"{prefix}_mean": vals[1],
                            f"{prefix}_std": vals[2], f"{prefix}_nonfinite": vals[3]})
        writer = self.cap.writer
        writer.add_step(hs.step, row)
        for k, v in hs.settings.items():
            if self.settings.get(k) != v:
                self.settings[k] = v
                writer.add_setting(hs.step, k, v)
        writer.maybe_flush()


def _batch_stats(sizes: list[int], host: dict[str, list[float]], prefix: str,
                 live: list[tuple[Any, int, Any]] | None) -> list[float] | None:
    """[max|x|, mean, std, non-finite count, has NaN] of a step's input (or target) batches.
    The exact count needs the tensors (a second sync), only when a batch is non-finite."""
    if not sizes:
        return None
    max_abs, mean, std, finite = stats_from_moments(
        [host[f"{prefix}{k}"] for k in range(len(sizes))], sizes)
    if finite:
        return [max_abs, mean, std, 0.0, 0.0]
    if live:
        count, has_nan = nonfinite_count([t for _, _, t in live])
        return [max_abs, mean, std, count, float(has_nan)]
    return [max_abs, mean, std, 1.0, 1.0]


def _applicable(stat: str, kind: str) -> bool:
    from causal.run import ActivationKind

    if stat == LayerStat.ACT_SATURATED:
        return kind == ActivationKind.SATURATING
    if stat in (LayerStat.ACT_ZERO, LayerStat.ACT_DEAD):
        return kind == ActivationKind.RELU
    return True
