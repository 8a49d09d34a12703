"""The host side of a closed step: triage, the state machines, the flight recorder, the run file.

Per-step Python runs right after the training step, when the CPU caches are full of the model's
tensors, and costs several times what it costs warm. So a quiet step is only triaged (a few
vectorised checks) and queued; the queue is analysed in batches of `BATCH` steps, in step order,
which produces exactly the events an immediate analysis would. A step that triage flags (a
non-finite value, a gradient or loss far from its recent scale, an input outlier, a machine
that left its healthy regime recently) is analysed at once, while its module outputs are still
at hand for the non-finite hunt and for full statistics of that very step. A regime that stays
abnormal with nothing new is queued too (`Analyzer.settled`); a change the queue finds
escalates from the step it is found at. A recurrence (a machine re-entering a regime it entered
twice lately, `TransitionDetector.recurrence`) is recorded but does not escalate.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from causal.schema.run import Event, LayerStat, State, StepStat
from causal.schema.run_file import RunWriter
from neuraldbg.capture.step_buffer import StepBuffer
from neuraldbg.capture.step_values import BatchStats, RawStep
from neuraldbg.capture.tensor_stats import (
    ACT_COLUMNS,
    NormGrouper,
    nonfinite_count,
    stats_from_moments,
)
from neuraldbg.detect.flight_recorder import FlightRecorder
from neuraldbg.detect.transitions import Thresholds, TransitionDetector
from neuraldbg.detect.triage import Triage
from neuraldbg.nonfinite.origin import OriginSite, origin_event
from neuraldbg.schedule import SETTLE_SAMPLES, Schedule

BATCH = 32
INITIAL_STEPS = 3  # the first steps' window is always stored
_MAX_WINDOWS = 256
_LAYER_STATS = tuple(s.value for s in LayerStat)
_NF = ACT_COLUMNS.index(LayerStat.ACT_NONFINITE)
_HEALTHY = {State.GRAD_HEALTHY, State.ACTIVATION_HEALTHY, State.LOSS_STEADY, State.LOSS_PLATEAU,
            State.GRAD_FINITE, State.ACTIVATION_FINITE, State.LOSS_FINITE, State.INPUT_FINITE}


@dataclass
class HostStep:
    """Everything about one closed step that lives on the host (after the one sync)."""

    step: int
    loss: float | None
    inp: BatchStats | None
    tgt: BatchStats | None
    grads: list[float] | None  # per unit (0.0 when not observed)
    grad_total: float | None  # the global gradient norm
    observed: list[bool]
    act: dict[int, list[float]]  # unit index -> ACT_COLUMNS values (full-statistics steps)
    cols: dict[str, tuple[np.ndarray, np.ndarray]]  # recorder columns: (values, observed)
    scale: float | None
    scaler_skip: bool
    optimizer_stepped: bool
    full: bool
    settings: dict[str, str] = field(default_factory=dict)
    label_entropy: float | None = None  # of the labels pooled so far (full steps)

    @property
    def nonfinite(self) -> bool:
        if self.loss is not None and not math.isfinite(self.loss):
            return True
        if (self.inp and self.inp.nonfinite > 0) or (self.tgt and self.tgt.nonfinite > 0):
            return True
        if self.grads is not None and not (all(math.isfinite(v) for v in self.grads)
                                           and math.isfinite(self.grad_total or 0.0)):
            return True
        return any(v[_NF] > 0 for v in self.act.values())


class AnalysisSite(OriginSite, Protocol):
    """What the analyzer reads off the capture (it writes nothing there)."""

    kinds: list[str]
    grouper: NormGrouper

    @property
    def current_step(self) -> int: ...

    def act_from_stash(self, b: StepBuffer) -> dict[int, list[float]]: ...


class Analyzer:
    """Runs the state machines over closed steps (in order) and writes what they find to the
    run file. Owns the detection state the capture asks about: the transition detector, the
    flight recorder, whether a non-finite episode is under way (`nonfinite_episode`) and until
    which step every step takes full statistics (`escalate_until`)."""

    def __init__(self, site: AnalysisSite, writer: RunWriter, *, thresholds: Thresholds,
                 recorder_steps: int, schedule: Schedule) -> None:
        self.site = site
        self.writer = writer
        # told of every batch of events once written (the monitor's live alerts)
        self.on_events: Callable[[list[Event]], None] | None = None
        self.schedule = schedule
        self.detector = TransitionDetector(thresholds)
        self.recorder = FlightRecorder(site.names, _LAYER_STATS, recorder_steps)
        self.triage = Triage(self.detector.thresholds)
        self.pending: list[RawStep] = []
        self.windows_written = 0
        self.analysed = 0
        self.settings: dict[str, str] = {}
        self.nonfinite_episode = False  # the run is non-finite since an analysed step
        self.escalate_until = -1  # full statistics on every step up to this one

    def quiet_for(self, step: int) -> int:
        """Steps since the last event of any machine that is not a recurrence (the run's length
        if none yet)."""
        last = self.detector.last_news
        return step - last if last is not None else step

    def settled(self, step: int) -> bool:
        """Some machine is outside its healthy regime, and none changed regime (recurrences
        aside) for `SETTLE_SAMPLES` x abnormal_every steps (a layer whose gradients stay under the
        vanishing limit, or over the exploding one). Until it settles, each step is analysed at
        once, while its module outputs are at hand; once settled, its steps are queued like
        healthy ones, and a gradient above the absolute limit no longer makes a step urgent (it
        would make every step so: a layer newly crossing it is an event the queue finds, and a
        non-finite value stays urgent)."""
        return self.detector.abnormal() and self.quiet_for(step) >= (
            SETTLE_SAMPLES * self.schedule.abnormal_every)

    def finish(self, step: int) -> None:
        """Analyse what is queued and store the final recorder window (the run is closing)."""
        self.drain()
        if len(self.recorder):
            last = int(self.recorder.window(step).steps[-1])
            self.writer.add_window(self.recorder.window(last))

    def at_once(self, urgent: bool, settled: bool) -> bool:
        """Whether a step the triage judged (`urgent`) is analysed now rather than queued:
        urgent, or some machine left its healthy regime and has not settled
        (`settled`)."""
        return urgent or (self.detector.abnormal() and not settled)

    def submit(self, raw: RawStep, live: StepBuffer,
               verdict: tuple[bool, bool] | None = None, settled: bool | None = None) -> None:
        """Queue a quiet step; analyse a flagged one at once (with its live buffer).
        `verdict` and `settled`: the triage's (urgent, alarm) and `settled`, when
        the caller already asked them."""
        if settled is None:
            settled = self.settled(raw.step)
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
        values = raw.values
        grouper = self.site.grouper
        loss = values.loss if values.loss is not None else (
            float(np.mean(raw.float_losses)) if raw.float_losses else None)
        scale = values.scale
        cols: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        grad_vals: list[float] | None = None
        grad_total: float | None = None
        observed: list[bool] = []
        if raw.grads_index is not None and values.grads is not None:
            vals = values.grads
            if math.inf in vals and live is not None:
                vals = grouper.refine(vals, raw.grads_index)
            per_unit, obs, total = grouper.group(vals, raw.grads_index)
            if scale is not None and scale > 0:  # record unscaled gradients
                per_unit, total = per_unit / scale, total / scale
            observed = obs.tolist()
            grad_vals = np.where(obs, per_unit, 0.0).tolist()
            grad_total = float(total)
            cols[LayerStat.GRAD_NORM] = (per_unit, obs)
        if raw.weights_index is not None and values.weight_norms is not None \
                and values.update_norms is not None:
            w, has, _ = grouper.group(values.weight_norms, raw.weights_index[0])
            u, _, _ = grouper.group(values.update_norms, raw.weights_index[1])
            with np.errstate(divide="ignore", invalid="ignore"):
                cols[LayerStat.WEIGHT_NORM] = (w, has)
                cols[LayerStat.UPDATE_RATIO] = (u / w, has)
        width = len(ACT_COLUMNS)
        act = {i: values.act[k * width:(k + 1) * width] for k, i in enumerate(raw.act_units)}
        self.add_act_columns(cols, act)
        return HostStep(
            step=raw.step, loss=loss,
            inp=_batch_stats(raw.input_sizes, values.inputs, live.inputs if live else None),
            tgt=_batch_stats(raw.target_sizes, values.targets, live.targets if live else None),
            grads=grad_vals, grad_total=grad_total, observed=observed, act=act, cols=cols,
            scale=scale,
            scaler_skip=raw.scaler and not raw.optimizer_stepped,
            optimizer_stepped=raw.optimizer_stepped, full=raw.full, settings=raw.settings,
            label_entropy=values.label_entropy,
        )

    def _analyse(self, hs: HostStep, live: StepBuffer | None, alarm: bool) -> list[Event]:
        """Run the machines over one step, write the step and its events; returns the events."""
        site, det, step = self.site, self.detector, hs.step
        n = len(site.units)
        events: list[Event] = []
        nonfinite_now = hs.nonfinite
        inp, tgt = hs.inp, hs.tgt
        events += det.observe_input(
            step, (inp.nonfinite if inp else 0.0) + (tgt.nonfinite if tgt else 0.0),
            bool((inp and inp.has_nan > 0) or (tgt and tgt.has_nan > 0)))
        if hs.loss is not None:
            events += det.observe_loss(step, hs.loss)
        grads = hs.grads
        total_finite = math.isfinite(hs.grad_total or 0.0)
        if grads is not None and not (hs.scaler_skip and not total_finite):
            events += det.observe_grads(
                step, {site.names[i]: grads[i] for i in range(n) if hs.observed[i]})
        abnormal = alarm or nonfinite_now or any(
            str(e.to_state) not in _HEALTHY and not det.recurrence(e) for e in events)
        act = hs.act
        if abnormal and not act and live is not None and live.stash:
            act = site.act_from_stash(live)
            self.add_act_columns(hs.cols, act)
        if act:
            events += det.observe_activations(
                step,
                {site.names[i]: dict(zip(ACT_COLUMNS, v, strict=True)) for i, v in act.items()},
                {site.names[i]: site.kinds[i] for i in act},
            )
        if nonfinite_now and not self.nonfinite_episode:
            self.nonfinite_episode = True
            if live is not None:
                events.insert(0, origin_event(site, step, live, hs.loss, inp, tgt, grads, act,
                                              hs.scaler_skip))
        elif not nonfinite_now:
            self.nonfinite_episode = False
        self.recorder.push(step, hs.cols)
        self.analysed += 1
        if events:
            window = None
            if self.windows_written < _MAX_WINDOWS:
                window = self.recorder.window(step)
                self.windows_written += 1
            self.writer.add_events(events, window)
            if self.on_events is not None:
                self.on_events(events)
        elif self.analysed == INITIAL_STEPS:
            # the run's first steps are evidence (activation scale against depth at step 0,
            # the first update ratios): keep them even when nothing happens there
            self.writer.add_window(self.recorder.window(step))
        if abnormal:  # something new: every step in detail for a while, from the step that
            # showed it, or from now when the queue found it only later
            self.escalate_until = max(self.escalate_until, max(step, site.current_step)
                                      + self.schedule.escalate_steps)
        self._write_step(hs)
        return events

    def add_act_columns(self, cols: dict[str, tuple[np.ndarray, np.ndarray]],
                        act: dict[int, list[float]]) -> None:
        """Recorder columns of the activation statistics (fractions only where they apply)."""
        if not act:
            return
        n, kinds = len(self.site.units), self.site.kinds
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
        row: dict[str, float | None] = {
            "loss": hs.loss,
            "grad_norm": hs.grad_total,
            "scaler_scale": hs.scale,
            "optimizer_stepped": 1.0 if hs.optimizer_stepped else 0.0,
            "full_stats": 1.0 if hs.full else 0.0,
        }
        for prefix, vals in (("input", hs.inp), ("target", hs.tgt)):
            if vals is not None:
                row.update({f"{prefix}_max_abs": vals.max_abs, f"{prefix}_mean": vals.mean,
                            f"{prefix}_std": vals.std, f"{prefix}_nonfinite": vals.nonfinite})
                if math.isfinite(vals.min):
                    row[f"{prefix}_min"] = vals.min
        if hs.label_entropy is not None and math.isfinite(hs.label_entropy):
            row[StepStat.TARGET_ENTROPY] = hs.label_entropy
        writer = self.writer
        writer.add_step(hs.step, row)
        for k, v in hs.settings.items():
            if self.settings.get(k) != v:
                self.settings[k] = v
                writer.add_setting(hs.step, k, v)
        writer.maybe_flush()


def _batch_stats(sizes: list[int], moments: tuple[list[float], ...],
                 live: list[tuple[Any, int, Any]] | None) -> BatchStats | None:
    """A step's input (or target) batches as one `BatchStats`. The exact non-finite count needs
    the tensors (a second sync), only when a batch is non-finite."""
    if not sizes:
        return None
    max_abs, mean, std, lo, finite = stats_from_moments(list(moments), sizes)
    if finite:
        return BatchStats(max_abs, mean, std, 0.0, 0.0, lo)
    if live:
        count, has_nan = nonfinite_count([t for _, _, t in live])
        return BatchStats(max_abs, mean, std, count, float(has_nan))
    return BatchStats(max_abs, mean, std, 1.0, 1.0)


def _applicable(stat: str, kind: str) -> bool:
    from causal.schema.run import ActivationKind

    if stat == LayerStat.ACT_SATURATED:
        return kind == ActivationKind.SATURATING
    if stat in (LayerStat.ACT_ZERO, LayerStat.ACT_DEAD):
        return kind == ActivationKind.RELU
    return True
