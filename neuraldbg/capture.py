"""Per-step capture: the hooks, the step buffer, and what happens when a step closes.

Hooks only keep references and launch device reductions; `close_step` copies everything of the
step to the host once, runs the transition machines, hunts the first non-finite value, feeds the
flight recorder and appends to the run file.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn
from torch.autograd import Variable
from torch.utils.hooks import RemovableHandle

from causal.run import ActivationKind, Event, LayerStat
from causal.runfile import RunWriter
from neuraldbg.dag_tracker import DagTracker
from neuraldbg.gather import Gather
from neuraldbg.nonfinite import origin_event
from neuraldbg.recorder import FlightRecorder
from neuraldbg.stats import (
    ACT_COLUMNS,
    NormGrouper,
    ParamNorms,
    activation_stats,
    first_float,
    iter_tensors,
    moments,
    nonfinite_count,
    stats_from_moments,
)
from neuraldbg.transitions import TransitionDetector
from neuraldbg.units import Unit

if TYPE_CHECKING:
    from neuraldbg.monitor import NeuralDbg

_LAYER_STATS = tuple(s.value for s in LayerStat)
_ACT_COL = {c: k for k, c in enumerate(ACT_COLUMNS)}
_MAX_WINDOWS = 256
_HEALTHY = {"grad_healthy", "activation_healthy", "loss_steady", "loss_plateau", "grad_finite",
            "activation_finite", "loss_finite", "input_finite"}


@dataclass
class StashEntry:
    """A module output of the current step, kept by reference for the non-finite hunt."""

    name: str
    unit: int  # index into units, -1 for containers and the root
    output: torch.Tensor
    version: int
    first_input: torch.Tensor | None
    module_type: str


@dataclass
class StepBuffer:
    """Everything captured during one step, before it is closed."""

    open: bool = False
    full: bool = False
    stash_on: bool = False
    forwards: int = 0
    backward_seen: bool = False
    optimizer_stepped: bool = False
    losses: list[Any] = field(default_factory=list)
    inputs: list[tuple[torch.Tensor, int, torch.Tensor]] = field(default_factory=list)
    targets: list[tuple[torch.Tensor, int, torch.Tensor]] = field(default_factory=list)
    grad_norms: dict[int, torch.Tensor] = field(default_factory=dict)  # param index -> norm
    scale: torch.Tensor | None = None
    act: dict[int, list[torch.Tensor]] = field(default_factory=dict)
    stash: list[StashEntry] = field(default_factory=list)
    amp: str = "none"


def _reduce_act(rows: list[torch.Tensor]) -> torch.Tensor:
    """Combine the statistics of a module called several times in one forward."""
    if len(rows) == 1:
        return rows[0]
    m = torch.stack(rows)
    mx, mean = m.amax(0), m.mean(0)
    out = mean.clone()
    for c in (LayerStat.ACT_MAX_ABS, LayerStat.ACT_STD, LayerStat.ACT_NONFINITE, "act_has_nan"):
        out[_ACT_COL[c]] = mx[_ACT_COL[c]]
    out[_ACT_COL[LayerStat.ACT_NONFINITE]] = m[:, _ACT_COL[LayerStat.ACT_NONFINITE]].sum()
    out[_ACT_COL[LayerStat.ACT_HEADROOM]] = m[:, _ACT_COL[LayerStat.ACT_HEADROOM]].amin()
    return out


def _batch_stats(parts: list[tuple[torch.Tensor, int, torch.Tensor]], host: dict[str, list[float]],
                 prefix: str) -> list[float] | None:
    """[max|x|, mean, std, non-finite count, has NaN] of a step's input (or target) batches.
    The count needs a second sync, only when a batch holds a non-finite value."""
    if not parts:
        return None
    max_abs, mean, std, finite = stats_from_moments(
        [host[f"{prefix}{k}"] for k in range(len(parts))], [n for _, n, _ in parts])
    if finite:
        return [max_abs, mean, std, 0.0, 0.0]
    count, has_nan = nonfinite_count([t for _, _, t in parts])
    return [max_abs, mean, std, count, float(has_nan)]


def _applicable(stat: str, kind: str) -> bool:
    if stat == LayerStat.ACT_SATURATED:
        return kind == ActivationKind.SATURATING
    if stat in (LayerStat.ACT_ZERO, LayerStat.ACT_DEAD):
        return kind == ActivationKind.RELU
    return True


class StepCapture:
    """Holds the per-step state of one monitor; the monitor owns its lifetime."""

    def __init__(self, dbg: NeuralDbg, units: list[Unit], writer: RunWriter) -> None:
        self.dbg = dbg
        self.units = units
        self.writer = writer
        self.schedule = dbg.schedule
        self.names = [u.name for u in units]
        self.kinds = [str(u.kind) for u in units]
        self.grouper = NormGrouper([u.params for u in units])
        self.param_ids = {id(p) for p in self.grouper.params}
        self.detector = TransitionDetector(dbg.thresholds)
        self.recorder = FlightRecorder(self.names, _LAYER_STATS, dbg.recorder_steps)
        self.active = True
        self.in_forward = False
        self.explicit_steps = False
        self.buf = StepBuffer()
        self.optimizers: dict[int, bool] = {}
        self.bound_optimizer: weakref.ReferenceType[torch.optim.Optimizer] | None = None
        self.weight_buffers: list[torch.Tensor] | None = None
        self.weights_ready = False
        self.dag: DagTracker | None = None
        self.nonfinite_episode = False
        self.escalate_until = -1
        self.windows_written = 0
        self.settings: dict[str, str] = {}
        self.steps_closed = 0
        self.last_step: int | None = None  # the last step written to the run file
        self.input_scale: tuple[float, int] = (0.0, 0)  # EMA of log10 max|x|, count

    @property
    def layer_order(self) -> dict[str, int]:
        """Layer name -> first-call (forward) order over the run."""
        return self.dag.order if self.dag is not None else {}

    # ------------------------------------------------------------------ attach
    def attach(self, model: nn.Module) -> list[RemovableHandle]:
        """Register every hook (the caller removes them all in `finally`)."""
        handles: list[RemovableHandle] = []
        self.dag = DagTracker(model, self.units, self.writer.set_dag)
        handles.append(model.register_forward_pre_hook(self.on_forward_start, with_kwargs=True))
        unit_of = {id(u.module): i for i, u in enumerate(self.units)}
        seen: set[int] = set()
        for name, module in model.named_modules():
            if id(module) in seen:
                continue
            seen.add(id(module))
            if id(module) in unit_of:
                handles.append(module.register_forward_hook(self._unit_hook(unit_of[id(module)])))
            elif module is not model:
                handles.append(module.register_forward_hook(self._stash_hook(name)))
        handles.append(model.register_forward_hook(self.on_forward_end))
        for k, p in enumerate(self.grouper.params):
            if p.requires_grad:
                handles.append(p.register_post_accumulate_grad_hook(self._grad_hook(k)))
        if self.schedule.weights(self.dbg.step):
            self._copy_weights()
        return handles

    # ------------------------------------------------------------------ hooks
    def _unit_hook(self, idx: int) -> Any:
        name, kind = self.names[idx], self.units[idx].kind

        def hook(module: nn.Module, args: Any, output: Any) -> None:
            if not self.in_forward:
                return
            try:
                t = output if isinstance(output, torch.Tensor) else first_float(output)
                if t is None or not t.is_floating_point():
                    return
                b = self.buf
                assert self.dag is not None
                self.dag.on_call(name, args, output)
                if b.full:
                    b.act.setdefault(idx, []).append(activation_stats(module, t, kind))
                if b.stash_on:
                    x = args[0] if args and isinstance(args[0], torch.Tensor) else None
                    b.stash.append(StashEntry(name, idx, t, t._version, x, type(module).__name__))
            except Exception as e:
                self.dbg._internal_error(f"forward hook of {name!r}", e)

        return hook

    def _grad_hook(self, k: int) -> Any:
        """Norm of one parameter's gradient right after backward accumulates it: the gradient
        is still in cache, which makes this far cheaper than a pass over all gradients later."""

        def hook(p: torch.Tensor) -> None:
            g = p.grad
            if not self.active or g is None:
                return
            if g.is_sparse:
                self.buf.grad_norms[k] = g.coalesce()._values().norm()
            else:
                self.buf.grad_norms[k] = torch.linalg.vector_norm(
                    g, dtype=None if g.dtype == torch.float32 else torch.float32)

        return hook

    def _param_grad_norms(self, b: StepBuffer) -> ParamNorms | None:
        """The step's per-parameter gradient norms (from the hooks; a foreach pass when the
        gradients were set without a backward pass through this model)."""
        if b.grad_norms:
            slots = b.grad_norms
            present = tuple(k in slots for k in range(len(self.grouper.params)))
            return ParamNorms(torch.stack([slots[k] for k in sorted(slots)]), present)
        return self.grouper.grad_norms()

    def _stash_hook(self, name: str) -> Any:
        def hook(module: nn.Module, args: Any, output: Any) -> None:
            if not self.in_forward or not self.buf.stash_on:
                return
            t = output if isinstance(output, torch.Tensor) else first_float(output)
            if t is not None and t.is_floating_point():
                x = args[0] if args and isinstance(args[0], torch.Tensor) else None
                self.buf.stash.append(StashEntry(name, -1, t, t._version, x,
                                                 type(module).__name__))

        return hook

    def _close_on_forward(self) -> bool:
        return self.bound_optimizer is None or self.dbg.scaler is not None

    def on_forward_start(self, module: nn.Module, args: Any, kwargs: Any) -> None:
        if not self.active or not torch.is_grad_enabled():
            self.in_forward = False  # evaluation passes under no_grad are not recorded
            return
        try:
            b = self.buf
            if b.open and b.forwards and (b.backward_seen or b.losses) and self._close_on_forward():
                self.close_step(self.dbg.step, advance=True)
            if not self.buf.open:
                self._begin_step()
            b = self.buf
            b.forwards += 1
            x = first_float((args, kwargs))
            if x is None:
                x = next(iter_tensors((args, kwargs)), None)
            if x is not None and x.numel():
                b.inputs.append((moments(x), x.numel(), x))
            if x is not None and torch.is_autocast_enabled(x.device.type):
                b.amp = str(torch.get_autocast_dtype(x.device.type)).replace("torch.", "")
            assert self.dag is not None
            self.dag.begin_forward()
            self.in_forward = True
        except Exception as e:
            self.dbg._internal_error("forward pre-hook", e)

    def on_forward_end(self, module: nn.Module, args: Any, output: Any) -> None:
        if not self.in_forward:
            return
        self.in_forward = False
        try:
            b = self.buf
            tensors = list(iter_tensors(output))
            t = next((x for x in tensors if x.is_floating_point()), None)
            if b.stash_on and t is not None:
                b.stash.append(StashEntry("", -1, t, t._version, None, type(module).__name__))
            g = next((x for x in tensors if x.requires_grad), None)
            if g is not None:
                g.register_hook(self._on_output_grad)
            assert self.dag is not None
            self.dag.end_forward(requires_grad=g is not None)
        except Exception as e:
            self.dbg._internal_error("forward hook of the model", e)

    def _on_output_grad(self, grad: torch.Tensor) -> None:
        Variable._execution_engine.queue_callback(self._on_backward_end)

    def _on_backward_end(self) -> None:
        if not self.active:
            return
        try:
            b = self.buf
            b.backward_seen = True
            scale = self._scale_tensor()
            if scale is not None:
                b.scale = scale.detach().reshape(-1)[:1].clone()
        except Exception as e:
            self.dbg._internal_error("backward callback", e)

    def _scale_tensor(self) -> torch.Tensor | None:
        scaler = self.dbg.scaler
        if scaler is None or not getattr(scaler, "is_enabled", lambda: True)():
            return None
        s = getattr(scaler, "_scale", None)
        return s if isinstance(s, torch.Tensor) else None

    def on_optimizer_step(self, opt: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
        if not self.active:
            return
        bound = self.optimizers.get(id(opt))
        if bound is None:
            bound = any(id(p) in self.param_ids for g in opt.param_groups for p in g["params"])
            self.optimizers[id(opt)] = bound
        if not bound:
            return
        self.bound_optimizer = weakref.ref(opt)
        if self.buf.open:
            self.buf.optimizer_stepped = True
            self.close_step(self.dbg.step, advance=True)

    # ------------------------------------------------------------------ the loop API
    def record_loss(self, loss: Any, target: torch.Tensor | None) -> None:
        if not self.active:
            return
        if not self.buf.open:
            self._begin_step()
        self.buf.losses.append(loss.detach() if isinstance(loss, torch.Tensor) else float(loss))
        if target is not None and target.numel():
            self.buf.targets.append((moments(target), target.numel(), target))

    def _begin_step(self) -> None:
        step = self.dbg.step
        full = bool(self.schedule.activations(step)) or step <= self.escalate_until
        self.buf = StepBuffer(open=True, full=full, stash_on=self.schedule.stash or full)

    def _copy_weights(self) -> None:
        if self.weight_buffers is None:
            self.weight_buffers = self.grouper.alloc_copies()
        self.grouper.copy_weights(self.weight_buffers)
        self.weights_ready = True

    # ------------------------------------------------------------------ closing a step
    def close_step(self, step: int, advance: bool) -> None:
        """Turn the buffered step into statistics, events and rows of the run file."""
        b = self.buf
        if not b.open:
            return
        self.buf = StepBuffer()
        try:
            if self.active:
                self._close(step, b)
        except Exception as e:
            self.dbg._internal_error(f"closing step {step}", e)
        finally:
            self.steps_closed += 1
            self.last_step = step
            if advance:
                self.dbg._advance()
            if self.active:
                if self.schedule.weights(self.dbg.step):
                    self._copy_weights()
                else:
                    self.weights_ready = False

    def _loss_tensor(self, losses: list[Any]) -> torch.Tensor | None:
        tensors = [x for x in losses if isinstance(x, torch.Tensor)]
        if not tensors:
            return None
        if len(losses) == 1:
            return tensors[0]
        dev = tensors[0].device
        vals = [x.float().reshape(()).to(dev) if isinstance(x, torch.Tensor)
                else torch.tensor(float(x), device=dev) for x in losses]
        return torch.stack(vals).mean()

    def _close(self, step: int, b: StepBuffer) -> None:
        g = Gather()
        loss_t = self._loss_tensor(b.losses)
        if loss_t is not None:
            g.add("loss", loss_t)
        for prefix, parts in (("in", b.inputs), ("tg", b.targets)):
            for k, (m, _, _) in enumerate(parts):
                g.add(f"{prefix}{k}", m)
        grads = self._param_grad_norms(b)
        if grads is not None:
            g.add("grads", grads.norms)
        if b.scale is not None:
            g.add("scale", b.scale)
        act_units = sorted(b.act)
        if act_units:
            g.add("act", torch.stack([_reduce_act(b.act[i]).to(b.act[act_units[0]][0].device)
                                      for i in act_units]))
        weights_due = self.weights_ready and bool(self.schedule.weights(step))
        wnorm = unorm = None
        if weights_due and self.weight_buffers is not None:
            wnorm = self.grouper.weight_norms()
            unorm = self.grouper.update_norms(self.weight_buffers)
            if wnorm is not None and unorm is not None:
                g.add("wnorm", wnorm.norms)
                g.add("unorm", unorm.norms)
        host = g.fetch()  # the one host-device synchronisation of the step

        n = len(self.units)
        loss = None
        if "loss" in host:
            loss = host["loss"][0]
        elif b.losses:
            loss = float(np.mean([float(x) for x in b.losses]))
        inp, tgt = _batch_stats(b.inputs, host, "in"), _batch_stats(b.targets, host, "tg")
        grad_vals: list[float] | None = None
        observed: list[bool] = []
        if grads is not None:
            vals = host["grads"]
            if math.inf in vals:
                vals = self.grouper.refine(vals, [p.grad for p in self.grouper.params])
            per_unit, obs, total = self.grouper.group(vals, grads.present)
            if "scale" in host and host["scale"][0] > 0:  # record unscaled gradients
                per_unit, total = per_unit / host["scale"][0], total / host["scale"][0]
            observed = obs.tolist()
            grad_vals = [float(v) if o else 0.0 for v, o in zip(per_unit, obs, strict=True)]
            grad_vals.append(total)
        act = {i: host["act"][k * len(ACT_COLUMNS):(k + 1) * len(ACT_COLUMNS)]
               for k, i in enumerate(act_units)} if act_units else {}
        scaler_skip = self.dbg.scaler is not None and not b.optimizer_stepped

        # per-layer columns for the flight recorder
        cols: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        if grad_vals is not None:
            cols[LayerStat.GRAD_NORM] = (np.array(grad_vals[:n]), np.array(observed, dtype=bool))
        if wnorm is not None and unorm is not None:
            w, has, _ = self.grouper.group(host["wnorm"], wnorm.present)
            u, _, _ = self.grouper.group(host["unorm"], unorm.present)
            with np.errstate(divide="ignore", invalid="ignore"):
                cols[LayerStat.WEIGHT_NORM] = (w, has)
                cols[LayerStat.UPDATE_RATIO] = (u / w, has)
        self._add_act_columns(cols, act)

        events: list[Event] = []
        nonfinite_now = self._nonfinite(loss, inp, tgt, grad_vals, act)
        events += self.detector.observe_input(
            step, (inp[3] if inp else 0.0) + (tgt[3] if tgt else 0.0),
            bool((inp and inp[4] > 0) or (tgt and tgt[4] > 0)))
        if loss is not None:
            events += self.detector.observe_loss(step, loss)
        if grad_vals is not None and not (scaler_skip and not math.isfinite(grad_vals[n])):
            events += self.detector.observe_grads(
                step, {self.names[i]: grad_vals[i] for i in range(n) if observed[i]})
        outlier = inp is not None and self._input_outlier(inp[0])
        abnormal = nonfinite_now or outlier or any(str(e.to_state) not in _HEALTHY
                                                   for e in events)
        if abnormal and not act and b.stash:
            act = self._act_from_stash(b.stash)
            self._add_act_columns(cols, act)
        if act:
            events += self.detector.observe_activations(
                step,
                {self.names[i]: dict(zip(ACT_COLUMNS, v, strict=True)) for i, v in act.items()},
                {self.names[i]: self.kinds[i] for i in act},
            )
        if nonfinite_now and not self.nonfinite_episode:
            self.nonfinite_episode = True
            events.insert(0, origin_event(self, step, b, loss, inp, tgt, grad_vals, act,
                                          scaler_skip))
        elif not nonfinite_now:
            self.nonfinite_episode = False

        self.recorder.push(step, cols)
        if events:
            window = None
            if self.windows_written < _MAX_WINDOWS:
                window = self.recorder.window(step)
                self.windows_written += 1
            self.writer.add_events(events, window)
        if abnormal or self.detector.abnormal():
            self.escalate_until = step + self.schedule.escalate_steps
        self._write_step(step, b, loss, inp, tgt, grad_vals, host)

    def _input_outlier(self, max_abs: float) -> bool:
        """A batch whose max|x| is 10x its recent scale (an EMA of log10 max|x| over normal
        batches): a cheap abnormal signal that turns on full statistics."""
        if not math.isfinite(max_abs) or max_abs <= 0:
            return False
        lx = math.log10(max_abs)
        base, n = self.input_scale
        outlier = n >= 5 and lx > base + 1.0
        if not outlier:
            self.input_scale = (lx if n == 0 else base + 0.1 * (lx - base), n + 1)
        return outlier

    def _nonfinite(self, loss: float | None, inp: list[float] | None, tgt: list[float] | None,
                   grads: list[float] | None, act: dict[int, list[float]]) -> bool:
        if loss is not None and not math.isfinite(loss):
            return True
        if (inp and inp[3] > 0) or (tgt and tgt[3] > 0):
            return True
        if grads is not None and not all(math.isfinite(v) for v in grads):
            return True
        nf = _ACT_COL[LayerStat.ACT_NONFINITE]
        return any(v[nf] > 0 for v in act.values())

    def _add_act_columns(self, cols: dict[str, tuple[np.ndarray, np.ndarray]],
                         act: dict[int, list[float]]) -> None:
        if not act:
            return
        n = len(self.units)
        for k, stat in enumerate(ACT_COLUMNS):
            if stat not in _LAYER_STATS:
                continue
            vals = np.full(n, np.nan)
            mask = np.zeros(n, dtype=bool)
            for i, v in act.items():
                if _applicable(stat, self.kinds[i]):
                    vals[i], mask[i] = v[k], True
            cols[stat] = (vals, mask)

    def _act_from_stash(self, stash: list[StashEntry]) -> dict[int, list[float]]:
        """Full activation statistics of the current step from the kept outputs (extra sync)."""
        g = Gather()
        rows: dict[int, list[torch.Tensor]] = {}
        for e in stash:
            if e.unit >= 0 and e.output._version == e.version:
                u = self.units[e.unit]
                rows.setdefault(e.unit, []).append(activation_stats(u.module, e.output, u.kind))
        for i, r in rows.items():
            g.add(str(i), _reduce_act(r))
        return {int(k): v for k, v in g.fetch().items()}

    def _write_step(self, step: int, b: StepBuffer, loss: float | None, inp: list[float] | None,
                    tgt: list[float] | None, grads: list[float] | None,
                    host: dict[str, list[float]]) -> None:
        n = len(self.units)
        row: dict[str, float | None] = {
            "loss": loss,
            "grad_norm": grads[n] if grads is not None else None,
            "scaler_scale": host["scale"][0] if "scale" in host else None,
            "optimizer_stepped": 1.0 if b.optimizer_stepped else 0.0,
            "full_stats": 1.0 if b.full else 0.0,
        }
        for prefix, vals in (("input", inp), ("target", tgt)):
            if vals is not None:
                row.update({f"{prefix}_max_abs": vals[0], f"{prefix}_mean": vals[1],
                            f"{prefix}_std": vals[2], f"{prefix}_nonfinite": vals[3]})
        self.writer.add_step(step, row)
        settings = {"amp_dtype": b.amp}
        opt = self.bound_optimizer() if self.bound_optimizer is not None else None
        if opt is not None:
            settings["optimizer"] = type(opt).__name__
            for i, group in enumerate(opt.param_groups):
                settings[f"lr/{i}"] = repr(float(group.get("lr", math.nan)))
        for k, v in settings.items():
            if self.settings.get(k) != v:
                self.settings[k] = v
                self.writer.add_setting(step, k, v)
        self.writer.maybe_flush()

    def finish(self, step: int) -> None:
        """Close the last step, store the final recorder window and the final DAG."""
        self.close_step(step, advance=False)
        if len(self.recorder):
            last = int(self.recorder.window(step).steps[-1])
            self.writer.add_window(self.recorder.window(last))
        self.active = False
