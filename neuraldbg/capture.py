"""Per-step capture: the hooks, the step buffer, and closing a step.

Hooks only keep references and launch device reductions; `close_step` copies everything of the
step to the host in one transfer and hands it to the analyzer (`analyze.py`), which runs the
transition machines, hunts the first non-finite value, feeds the flight recorder and appends to
the run file.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import torch
from torch import nn
from torch.utils.hooks import RemovableHandle

from causal.run import LayerStat
from causal.runfile import RunWriter
from neuraldbg.analyze import Analyzer, RawStep
from neuraldbg.dag_tracker import DagTracker
from neuraldbg.gather import Gather
from neuraldbg.recorder import FlightRecorder
from neuraldbg.stats import (
    ACT_COLUMNS,
    NormGrouper,
    ParamNorms,
    activation_stats,
    first_float,
    iter_tensors,
    moments,
)
from neuraldbg.transitions import TransitionDetector
from neuraldbg.units import Unit

if TYPE_CHECKING:
    from neuraldbg.monitor import NeuralDbg

_LAYER_STATS = tuple(s.value for s in LayerStat)
_ACT_COL = {c: k for k, c in enumerate(ACT_COLUMNS)}


#: Outputs up to this many elements are kept by reference for the non-finite hunt; larger ones
#: (conv feature maps) would stay alive past their use and cost memory traffic, so only a
#: device-side sum (NaN/inf propagate through it) is kept for them.
STASH_MAX_ELEMS = 1 << 18


class StashEntry(NamedTuple):
    """A module output of the current step, kept for the non-finite hunt: by reference when
    small, else as a one-element sum that is non-finite exactly when the output is."""

    name: str
    unit: int  # index into units, -1 for containers and the root
    output: torch.Tensor | None
    version: int  # the output's version counter when the hook saw it (in-place ops bump it)
    args: Any  # the module's positional inputs (only kept with the output)
    module: nn.Module
    flag: torch.Tensor | None = None


    @property
    def module_type(self) -> str:
        return type(self.module).__name__

    @property
    def first_input(self) -> torch.Tensor | None:
        a = self.args
        return a[0] if a and isinstance(a[0], torch.Tensor) else None


def stash_entry(name: str, unit: int, t: torch.Tensor, args: Any,
                module: nn.Module) -> StashEntry:
    if t.numel() <= STASH_MAX_ELEMS:
        return StashEntry(name, unit, t, t._version, args, module)
    return StashEntry(name, unit, None, 0, (), module, t.detach().sum(dtype=torch.float32))


@dataclass(slots=True)
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
    grad_seen: list[bool] = field(default_factory=list)  # per parameter, with `grad_vec`
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
        # gradient norms are written by the hooks straight into one preallocated vector (one
        # view per parameter) when all parameters share a device; else into a dict
        devices = {p.device for p in self.grouper.params}
        self.grad_vec: torch.Tensor | None = None
        self.grad_views: list[torch.Tensor] = []
        if len(devices) == 1:
            self.grad_vec = torch.zeros(len(self.grouper.params), device=devices.pop())
            self.grad_views = [self.grad_vec[k] for k in range(len(self.grouper.params))]
        self.detector = TransitionDetector(dbg.thresholds)
        self.recorder = FlightRecorder(self.names, _LAYER_STATS, dbg.recorder_steps)
        self.active = True
        self.in_forward = False
        self.buf = StepBuffer()
        self.optimizers: dict[int, bool] = {}
        self.bound_optimizer: weakref.ReferenceType[torch.optim.Optimizer] | None = None
        self.weight_buffers: list[torch.Tensor] | None = None
        self.weights_ready = False
        self.dag: DagTracker | None = None
        self.nonfinite_episode = False
        self.escalate_until = -1
        self.last_step: int | None = None  # the last step written to the run file
        self.analyzer = Analyzer(self)
        self._settings_key: tuple[Any, ...] = ()
        self._settings_last: dict[str, str] = {}

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
                t = output if type(output) is torch.Tensor else first_float(output)
                if t is None or not t.is_floating_point():
                    return
                b = self.buf
                dag = self.dag
                if dag is not None and (dag.recording or name not in dag.order):
                    dag.on_call(name, args, output)
                if b.full:
                    b.act.setdefault(idx, []).append(activation_stats(module, t, kind))
                if b.stash_on:
                    b.stash.append(stash_entry(name, idx, t, args, module))
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
            b = self.buf
            if not b.backward_seen:
                b.backward_seen = True
                scale = self._scale_tensor()  # the scale this backward pass used
                if scale is not None:
                    b.scale = scale.detach().reshape(-1)[:1].clone()
            if g.is_sparse:
                b.grad_norms[k] = g.coalesce()._values().norm().float()
            elif self.grad_views and b.grad_seen:
                torch.linalg.vector_norm(g, dtype=torch.float32, out=self.grad_views[k])
                b.grad_seen[k] = True
            else:
                b.grad_norms[k] = torch.linalg.vector_norm(g, dtype=torch.float32)

        return hook

    def _param_grad_norms(self, b: StepBuffer) -> ParamNorms | None:
        """The step's per-parameter gradient norms (from the hooks; a foreach pass when the
        gradients were set without a backward pass through this model)."""
        slots = b.grad_norms
        if self.grad_vec is not None and any(b.grad_seen):
            present = tuple(b.grad_seen)
            if not slots:
                return ParamNorms(self.grad_vec[list(present)] if not all(present)
                                  else self.grad_vec, present)
            vec = self.grad_vec.clone()
            for k, n in slots.items():  # sparse gradients
                vec[k] = n
            present = tuple(p or (k in slots) for k, p in enumerate(present))
            return ParamNorms(vec[list(present)], present)
        if slots:
            present = tuple(k in slots for k in range(len(self.grouper.params)))
            return ParamNorms(torch.stack([slots[k] for k in sorted(slots)]), present)
        return self.grouper.grad_norms()

    def _stash_hook(self, name: str) -> Any:
        def hook(module: nn.Module, args: Any, output: Any) -> None:
            if not self.in_forward or not self.buf.stash_on:
                return
            t = output if type(output) is torch.Tensor else first_float(output)
            if t is not None and t.is_floating_point():
                self.buf.stash.append(stash_entry(name, -1, t, args, module))

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
            x = args[0] if args and type(args[0]) is torch.Tensor else None
            if x is None or not x.is_floating_point():
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
            t = output if type(output) is torch.Tensor else first_float(output)
            if b.stash_on and t is not None and t.is_floating_point():
                b.stash.append(stash_entry("", -1, t, (), module))
            dag = self.dag
            if dag is not None and (dag.recording or dag.dirty):
                grad = any(x.requires_grad for x in iter_tensors(output))
                dag.end_forward(requires_grad=grad)
        except Exception as e:
            self.dbg._internal_error("forward hook of the model", e)

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
        self.buf = StepBuffer(open=True, full=full, stash_on=self.schedule.stash or full,
                              grad_seen=[False] * len(self.grad_views))

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
        self.analyzer.submit(RawStep(
            step=step, host=host, grads_present=grads.present if grads is not None else None,
            weights_present=(wnorm.present, unorm.present)
            if wnorm is not None and unorm is not None else None,
            act_units=act_units, input_sizes=[n for _, n, _ in b.inputs],
            target_sizes=[n for _, n, _ in b.targets],
            float_losses=[float(x) for x in b.losses if not isinstance(x, torch.Tensor)],
            optimizer_stepped=b.optimizer_stepped, full=b.full,
            scaler=self.dbg.scaler is not None, settings=self._settings(b)), b)

    def _settings(self, b: StepBuffer) -> dict[str, str]:
        """Rarely changing settings in force at this step (written only when they change)."""
        opt = self.bound_optimizer() if self.bound_optimizer is not None else None
        lrs = tuple(g.get("lr") for g in opt.param_groups) if opt is not None else ()
        key = (b.amp, id(opt), lrs)
        if key == self._settings_key:
            return self._settings_last
        settings = {"amp_dtype": b.amp}
        if opt is not None:
            settings["optimizer"] = type(opt).__name__
            for i, lr in enumerate(lrs):
                settings[f"lr/{i}"] = repr(float(lr if lr is not None else math.nan))
        self._settings_key, self._settings_last = key, settings
        return settings

    def act_from_stash(self, stash: list[StashEntry]) -> dict[int, list[float]]:
        """Full activation statistics of the current step from the kept outputs (extra sync)."""
        g = Gather()
        rows: dict[int, list[torch.Tensor]] = {}
        for e in stash:
            if e.unit >= 0 and e.output is not None and e.output._version == e.version:
                u = self.units[e.unit]
                rows.setdefault(e.unit, []).append(activation_stats(u.module, e.output, u.kind))
        for i, r in rows.items():
            g.add(str(i), _reduce_act(r))
        return {int(k): v for k, v in g.fetch().items()}

    def finish(self, step: int) -> None:
        """Close the last step, analyse what is queued, store the final recorder window."""
        self.close_step(step, advance=False)
        self.analyzer.drain()
        if len(self.recorder):
            last = int(self.recorder.window(step).steps[-1])
            self.writer.add_window(self.recorder.window(last))
        self.active = False
