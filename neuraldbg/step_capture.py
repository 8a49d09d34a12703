"""Per-step capture: the hooks and closing a step.

Hooks only keep references and launch device reductions (what they fill is in
`capture/step_buffer.py`);
`close_step` copies everything of the step to the host in one transfer and hands it to the
analyzer (`detect/analyzer.py`), which runs the transition machines, hunts the first non-finite
value,
feeds the flight recorder and appends to the run file. The forward and gradient hooks run for
every module and parameter on every step, so their quiet-step path is kept to a few lines.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.utils.hooks import RemovableHandle

from causal.schema.run import TARGETS_META, ActivationKind, TargetsSource
from causal.schema.run_file import RunWriter
from neuraldbg.capture.forward_calls import forward_call, weights_version
from neuraldbg.capture.forward_state import EMPTY, ForwardState
from neuraldbg.capture.functional_activations import InnerActivations, Row, merge_rows
from neuraldbg.capture.grad_norms import GradNorms
from neuraldbg.capture.host_transfer import Gather
from neuraldbg.capture.model_io import (
    ArgNames,
    batch_input,
    is_class_labels,
    loss_is_share,
    model_labels,
    model_loss,
    model_targets,
    records_model_loss,
)
from neuraldbg.capture.optimizer_binding import OptimizerBinding
from neuraldbg.capture.recurrent_gates import gate_row, is_fused_recurrent
from neuraldbg.capture.scaler_watch import MissingScalerCheck, scale_tensor
from neuraldbg.capture.sharded import local
from neuraldbg.capture.state_preservation import preserved, runs_collectives
from neuraldbg.capture.step_buffer import (
    STASH_MAX_ELEMS,
    RawEntry,
    Slot,
    StashEntry,
    StepBuffer,
    output_entry,
    raw_entry,
    reduce_act,
    stash_entries,
)
from neuraldbg.capture.step_clock import StepClock
from neuraldbg.capture.step_values import FetchedValues, collect, raw_step, step_loss
from neuraldbg.capture.target_watch import TargetWatch
from neuraldbg.capture.tensor_stats import (
    LabelPool,
    NormGrouper,
    activation_stats,
    first_float,
    iter_tensors,
    moments,
)
from neuraldbg.capture.watched_units import Unit, dtype_name, is_compiled, user_root
from neuraldbg.checkpoint import StepLog
from neuraldbg.detect.analyzer import Analyzer
from neuraldbg.detect.transitions import Thresholds
from neuraldbg.graph.tracker import DagTracker
from neuraldbg.nonfinite.backward_birth import backward_birth
from neuraldbg.nonfinite.origin import forward_origin
from neuraldbg.nonfinite.replay import repeatable_calls, run_again
from neuraldbg.reporting import Reporter
from neuraldbg.scene import save_scene, scene_path
from neuraldbg.schedule import Schedule, abnormal_interval

__all__ = ["STASH_MAX_ELEMS", "StashEntry", "StepBuffer", "StepCapture"]

_CLOSED = StepBuffer()  # the buffer between steps: never written (every writer checks `open`)
NO_FORWARD = (
    "neuraldbg: gradients reached the monitored model's parameters, but no call of the model "
    "(model(x)) ran in this step, so its layers' activations, their non-finite values and the "
    "layer graph are not recorded (only a loss passed to dbg.record_loss(loss), with that "
    "step's gradients, is). The loop calls "
    "model.forward(x) directly, a submodule (model.net(x)), or a method other than forward (a "
    "LightningModule's training_step), or ran the forward before the monitor started: call "
    "model(x), or attach the monitor to the module the loop calls, NeuralDbg(model.net).")

NO_LOSS_STEPS = 10
#: Under on_nonfinite="raise", a GradScaler that skips this many steps in a row halts the run.
SCALER_SKIP_LIMIT = 25
NO_LOSS = (
    f"neuraldbg: no loss was recorded in the first {NO_LOSS_STEPS} steps, so the loss's spikes, "
    "divergence and stalls go unseen: call dbg.record_loss(loss) once per step (a tensor, no "
    "sync), or let the model return its loss as `loss` in a dict or ModelOutput, as Hugging "
    "Face models do.")


class StepCapture:
    """Holds the per-step state of one monitor; the monitor owns its lifetime."""

    def __init__(self, model: nn.Module, units: list[Unit], writer: RunWriter, *,
                 schedule: Schedule, thresholds: Thresholds, recorder_steps: int,
                 scaler: Any, clock: StepClock, reporter: Reporter) -> None:
        self.model = model
        self.units = units
        self.writer = writer
        self.schedule = schedule
        self.scaler = scaler
        self.clock = clock
        self.reporter = reporter
        self.targets_source: TargetsSource | None = None  # `_note_targets_source`
        self.names = [u.name for u in units]
        self.kinds = [str(u.kind) for u in units]
        self.grouper = NormGrouper([u.params for u in units])
        # a model in host memory: the step's values are read without a device copy
        self.cpu = all(p.is_cpu for p in self.grouper.params)
        # keep every module output on every step, or only run the forward again when needed
        # (a forward that may run collectives is never run again: see `preserve.runs_collectives`)
        self.can_replay = not runs_collectives(model)
        # the module state a forward changes (generators the modules keep included): what a
        # replayed pass must begin with
        self.fstate = ForwardState(model) if self.can_replay else None
        stash = self.schedule.stash
        self.keep_outputs = (not (self.cpu and self.can_replay)) if stash is None else stash
        self.leaf_hooks: list[tuple[nn.Module, Callable[..., None]]] = []
        self.leaf_handles: list[RemovableHandle] | None = None  # None: not registered now
        self.replaying = False
        self.grads = GradNorms(self)
        self.active = True
        self.in_forward = False
        self.fwd_slow = True  # this forward needs more than the stash (statistics, DAG)
        # during a forward that only keeps outputs: the stash's append (the hooks' fast path)
        self.fast_stash: Callable[[RawEntry], None] | None = None
        self.slots: list[Slot] = []  # every hooked module; stash entries refer to them
        self.root_slot = -1
        self.buf = _CLOSED
        # the optimizer whose step ends this model's steps, and its settings
        self.optimizer = OptimizerBinding(self.grouper.params, units)
        self.weight_buffers: list[torch.Tensor] | None = None
        self.label_pool = LabelPool()  # the class labels seen, for the trivial predictor
        self.weights_ready = False
        self.dag: DagTracker | None = None
        self.last_step: int | None = None  # the last step written to the run file
        # the detection side: triage, the state machines, the flight recorder, escalation
        self.analyzer = Analyzer(self, writer, thresholds=thresholds,
                                 recorder_steps=recorder_steps, schedule=schedule)
        # activations applied as functions inside units, watched on full-statistics steps
        self.inner = InnerActivations(units, self.kinds, self._inner_kind, self._inner_late)
        self.watch_inner = not is_compiled(model)
        # the names of the model's positional arguments, to tell its input batch from masks
        self.arg_names = ArgNames.of(model)
        # whether the user records the loss (record_loss); until then, a loss the model returns
        # itself (`model_io.model_loss`) is the step's loss
        self.user_loss = False
        # whether the loss the user records is the one the model returned (a Hugging Face
        # model's `out.loss`): the model's `labels=` are then the step's targets
        self.model_loss_recorded = False
        self.in_optimizer_step = False  # between the bound optimizer's pre- and post-step hooks
        # called (it raises) before the update of a step whose loss or gradients are non-finite
        self.halt: Callable[..., None] | None = None
        # under a GradScaler: the steps it skipped in a row; a halt due at the next forward
        self.scaler_skips = 0
        self.halt_pending: str | None = None
        # the first failing step's scene (`neuraldbg.scene`): its size limit (0: none saved),
        # and where it went
        self.scene_max_mb = 0.0
        self.scene: Path | None = None
        self.steplog: StepLog | None = None  # NeuralDbg(checkpoint_every=N)
        # the targets the loss takes, while the loop passes none (`capture/target_watch.py`)
        self.target_watch = TargetWatch(self._target_found) if self.watch_inner else None
        # the autocast dtype a model's forward enters by itself (not in force when it is
        # called), learnt on a full-statistics step
        self.inner_amp: str | None = None
        self.lossless: int | None = 0  # steps closed with no loss, until one has one
        # optimizer steps left on which to look for a GradScaler the user did not pass
        self.scaler_check = MissingScalerCheck(scaler, reporter)

    @property
    def layer_order(self) -> dict[str, int]:
        """Layer name -> first-call (forward) order over the run."""
        return self.dag.order if self.dag is not None else {}

    def stash_entries(self, b: StepBuffer) -> list[StashEntry]:
        """The module outputs kept during step `b`, in hook order."""
        return stash_entries(self.slots, b.stash)

    # ------------------------------------------------------------------ attach
    def attach(self, model: nn.Module) -> list[Any]:
        """Register every hook (the caller removes them all in `finally`)."""
        handles: list[Any] = []  # each with .remove()
        # a function mode in a compiled model's forward would break its graphs
        self.dag = DagTracker(model, self.units, self.writer.set_dag,
                              follow_values=self.watch_inner)
        handles.append(model.register_forward_pre_hook(self.on_forward_start, with_kwargs=True))
        unit_of = {id(u.module): i for i, u in enumerate(self.units)}
        seen: set[int] = set()
        root = user_root(model)  # a compiled model's modules under their own names
        for name, module in root.named_modules():
            if id(module) in seen:
                continue
            seen.add(id(module))
            if id(module) in unit_of:
                self.slots.append(Slot(name, unit_of[id(module)], module))
                self.leaf_hooks.append((module, self._unit_hook(len(self.slots) - 1)))
            elif module is not model and module is not root:
                self.slots.append(Slot(name, -1, module))
                self.leaf_hooks.append((module, self._stash_hook(len(self.slots) - 1)))
        self.slots.append(Slot("", -1, model))
        self.root_slot = len(self.slots) - 1
        # always_call: a forward that raises still ends here, so the function modes of a
        # full-statistics pass do not outlive it into the user's own code
        handles.append(model.register_forward_hook(self.on_forward_end, always_call=True))
        for k, p in enumerate(self.grouper.params):
            if p.requires_grad:
                handles.append(p.register_post_accumulate_grad_hook(self.grads.hook(k)))
        self.set_leaf_hooks(True)
        handles.append(_LeafHooksHandle(self))
        if self.schedule.weights(self.clock.value):
            self._copy_weights()
        return handles

    def set_leaf_hooks(self, on: bool) -> None:
        """Register or remove the hooks inside the model (a quiet step runs without them)."""
        if on and self.leaf_handles is None:
            self.leaf_handles = [m.register_forward_hook(h) for m, h in self.leaf_hooks]
        elif not on and self.leaf_handles is not None:
            for h in self.leaf_handles:
                h.remove()
            self.leaf_handles = None

    # ------------------------------------------------------------------ hooks
    def _unit_hook(self, slot: int) -> Any:
        name, idx = self.slots[slot].name, self.slots[slot].unit
        kind = self.units[idx].kind
        gated = is_fused_recurrent(self.units[idx].module)  # gates inside one fused op
        assert self.dag is not None
        order = self.dag.order  # kept (and only ever added to) by the tracker

        def hook(module: nn.Module, args: Any, output: Any) -> None:
            keep = self.fast_stash
            if keep is not None and type(output) is torch.Tensor and name in order:
                if output.is_floating_point():  # a quiet step: keep the output, nothing else
                    keep((slot, output, output._version, args, None, ())
                         if output.numel() <= STASH_MAX_ELEMS else raw_entry(slot, output, args))
                return
            b = self.buf
            if not self.in_forward or not b.open:
                return
            watching = self.inner.active
            try:
                t = output if type(output) is torch.Tensor else first_float(output)
                inner = self.inner.unit_done(idx, t) if watching else None
                if watching:
                    self.inner.pause(True)
                if t is None or not t.is_floating_point():
                    return
                if b.amp == "none" and torch.is_autocast_enabled(t.device.type):
                    # a forward that enters autocast itself (Accelerate, and so Hugging Face's
                    # Trainer, wraps the model's forward in it): seen on full-statistics steps
                    # only, it holds for the steps after them too
                    b.amp = self.inner_amp = dtype_name(torch.get_autocast_dtype(
                        t.device.type))
                if self.fwd_slow or name not in order:
                    dag = self.dag
                    if dag is not None and (dag.recording or name not in order):
                        dag.on_call(name, args, output)
                    if b.full:
                        row = activation_stats(module, t, kind)
                        if gated and (gates := self._gate_row(idx, module, args)) is not None:
                            inner = [*(inner or []), gates]
                        b.act.setdefault(idx, []).append(
                            merge_rows(row, inner) if inner else row)
                if b.stash_on and (entry := output_entry(slot, output, args)) is not None:
                    b.stash.append(entry)
            except Exception as e:
                self.reporter.internal_error(f"forward hook of {name!r}", e)
            finally:
                if watching:
                    self.inner.pause(False)

        return hook

    def _gate_row(self, idx: int, module: nn.Module, args: Any) -> Row | None:
        """The saturated fraction of the gates of a fused recurrent unit's call; the first
        time one is measured, the unit becomes a saturating unit (its DAG node too)."""
        try:
            row = gate_row(module, args)
        except (RuntimeError, ValueError, IndexError, TypeError):
            row = None  # a call it cannot recompute (an input form of a custom subclass):
            # the gates go unmeasured for it, the rest of the step is recorded as ever
        if row is not None and self.kinds[idx] == ActivationKind.OTHER:
            self.kinds[idx] = str(ActivationKind.SATURATING)
            self._inner_kind(idx, ActivationKind.SATURATING)
        return row

    def backward_begins(self) -> None:
        """A backward pass accumulates its first gradient into the model's parameters."""
        b = self.buf
        if not b.open and not self.replaying:
            self.reporter.warn(NO_FORWARD)
        elif b.open and not b.backward_seen:
            b.backward_seen = True
            # the weights' version as this pass saw them (recorded with the forward when kept)
            b.weights_at_backward = b.calls[-1].weights if b.calls else weights_version(
                self.grouper.params)
            scale = scale_tensor(self.scaler)  # the scale this backward pass used
            if scale is not None:
                b.scale = scale.detach().reshape(-1)[0].clone()
                b.scale_version = scale._version

    def _stash_hook(self, slot: int) -> Any:
        def hook(module: nn.Module, args: Any, output: Any) -> None:
            if not self.in_forward or not self.buf.stash_on:
                return
            watching = self.inner.active  # a full step: the hook's own work is not the model's
            if watching:
                self.inner.pause(True)
            try:
                if (entry := output_entry(slot, output, args)) is not None:
                    self.buf.stash.append(entry)
            finally:
                if watching:
                    self.inner.pause(False)

        return hook

    def forward_may_close_step(self) -> bool:
        """Whether a forward pass after a backward one may begin a new step: when no optimizer
        ends steps (not known yet, or a GradScaler may skip its step), unless `_accumulating`."""
        return not self.optimizer.known_yet or self.scaler is not None

    def _new_step(self, b: StepBuffer) -> bool:
        """Whether a forward pass begins a new step although no optimizer step ended the last:
        its backward's gradients were dropped (zeroed or released) with the weights untouched,
        so the loop skipped the update (the step labels then keep counting the loop's steps);
        else where the optimizer cannot end steps (`forward_may_close_step`: a hand-written
        update). Never during an optimizer step (a closure's passes, LBFGS); weights moved by
        other code than the known optimizer's step are a two-pass update (SAM's): one step."""
        if self.in_optimizer_step or not (b.backward_seen or b.losses) or self._accumulating(b):
            return False
        if b.backward_seen and weights_version(self.grouper.params) == b.weights_at_backward:
            return True
        return self.forward_may_close_step()

    def _accumulating(self, b: StepBuffer) -> bool:
        """A forward pass that is another micro-batch of step `b` (gradient accumulation): the
        gradients are as its last backward pass left them (not zeroed, released or replaced:
        `GradNorms.untouched`) and the GradScaler, if any, has not been updated since."""
        if not b.backward_seen or not self.grads.untouched():
            return False
        scale = scale_tensor(self.scaler)
        return scale is None or b.scale_version < 0 or scale._version == b.scale_version

    def on_forward_start(self, module: nn.Module, args: Any, kwargs: Any) -> None:
        if self.replaying:
            return
        if self.halt_pending is not None and self.halt is not None:
            reason, self.halt_pending = self.halt_pending, None
            self.halt(reason)  # raises, before this forward pass begins
        self._end_target_watch()
        if not self.active or not torch.is_grad_enabled():
            self.in_forward = False  # evaluation passes under no_grad are not recorded
            self.fast_stash = None
            return
        try:
            b = self.buf
            if b.open and b.forwards and self._new_step(b):
                self.close_step(self.clock.value, advance=True)
                b = self.buf
            if not b.open:
                b = self._begin_step()
            b.forwards += 1
            b.model_args.append((args, kwargs))
            x = batch_input(args, kwargs, self.arg_names)
            if kwargs and (not self.user_loss or self.model_loss_recorded):
                # a model that computes its own loss: its targets, while that loss is the step's
                b.model_loss_parts |= loss_is_share(kwargs)
                if (y := model_targets(kwargs)) is not None:
                    b.targets.append((moments(y), y.numel(), y))
                    b.model_targets = True
                elif (y := model_labels(kwargs)) is not None:
                    b.labels.append(y)
                    b.model_targets = True
            if x is not None:
                b.inputs.append((moments(x), x.numel(), x))
            else:  # no batch with a scale (ids, labels): the device of any tensor argument
                x = next(iter_tensors((args, kwargs)), None)
            device = "cpu" if x is None or x.is_cpu else x.device.type
            if torch.is_autocast_enabled(device):
                b.amp = dtype_name(torch.get_autocast_dtype(device))
            elif self.inner_amp is not None:  # autocast entered inside the model's forward
                b.amp = self.inner_amp
            dag = self.dag
            assert dag is not None
            dag.begin_forward()
            self.fwd_slow = slow = b.full or dag.recording
            self.fast_stash = b.stash.append if b.stash_on and not slow else None
            if (slow or b.stash_on) != (self.leaf_handles is not None):
                self.set_leaf_hooks(slow or b.stash_on)
            if b.full and self.watch_inner:  # activations applied as functions, too
                self.inner.begin()
            if b.full and self.fstate is not None:
                self.fstate.watch_begin()  # learn what a forward changes
            if not b.stash_on or self.cpu:  # what it takes to run this pass again (to keep
                # its outputs when none were kept; to follow a backward-born value)
                b.calls.append(forward_call(
                    args, kwargs, device, weights_version(self.grouper.params),
                    self.fstate.snapshot() if self.fstate is not None else EMPTY))
            self.in_forward = True
        except Exception as e:
            self.reporter.internal_error("forward pre-hook", e)

    def on_forward_end(self, module: nn.Module, args: Any, output: Any) -> None:
        if self.inner.active:
            self.inner.end()
        if self.fstate is not None and not self.replaying:
            self.fstate.watch_end()
        if not self.in_forward:
            return
        self.in_forward = False
        self.fast_stash = None
        try:
            b = self.buf
            if not self.replaying:
                if type(output) is torch.Tensor:
                    if output.grad_fn is not None:
                        b.output_nodes.append(output.grad_fn)
                else:
                    b.output_nodes += [t.grad_fn for t in iter_tensors(output)
                                       if t.grad_fn is not None]
                    if (loss := model_loss(output)) is not None:
                        b.model_loss_node = loss.grad_fn
                        if not self.user_loss:
                            b.model_losses.append(loss.detach().reshape(()))
                            if b.loss_node is None:
                                b.loss_node = loss.grad_fn
            if b.stash_on and (entry := output_entry(self.root_slot, output, ())) is not None:
                b.stash.append(entry)
            dag = self.dag
            if dag is not None and not self.replaying and (dag.recording or dag.dirty):
                grad = any(x.requires_grad for x in iter_tensors(output))
                dag.end_forward(requires_grad=grad)
            if self.target_watch is not None and not self.replaying and b.open:
                self.target_watch.begin(output)  # until the loss is recorded or the update applied
        except Exception as e:
            self.reporter.internal_error("forward hook of the model", e)

    def on_optimizer_pre_step(self, opt: torch.optim.Optimizer, args: Any,
                              kwargs: Any) -> tuple[Any, Any] | None:
        """Know the optimizer before its first update: one that runs a closure (LBFGS) runs
        several forward passes in one step, which must not each end a step. Under
        `on_nonfinite="raise"`, halt here before a non-finite update; when the step's passes
        run inside it (a closure: Lightning, LBFGS), the closure is returned wrapped, to halt
        after it, still before the update."""
        self._end_target_watch()
        replaced = None
        ours = self.active and self.optimizer.bind(opt)
        if ours:
            self.in_optimizer_step = True
            # args are the step's own: the optimizer first, then the closure if any
            closure = kwargs.get("closure", args[1] if len(args) > 1 else None)
            if closure is not None and (self.halt is not None or self.scene_max_mb
                                        or self.steplog is not None):
                replaced = self._checked_closure(opt, closure, args, kwargs)
            elif closure is None:
                self._before_update(opt)
        if ours and self.scaler_check.left and self.buf.open and self.buf.norm_k:
            self.scaler_check.check(self.grads, self.buf)
        return replaced

    def _before_update(self, opt: torch.optim.Optimizer) -> None:
        """The update is about to be applied: on the run's first non-finite step, save the
        scene (`neuraldbg.scene`) and halt when asked (raises)."""
        b = self.buf
        if self.steplog is not None and b.open:
            self.steplog.before_update(self.clock.value, self.model, opt, b.model_args,
                                       self._scene_targets(b))
        look = self.halt is not None or (self.scene_max_mb and self.cpu and not self.scene)
        if not (look and b.open and self._nonfinite_now(b)):
            return
        if self.scene_max_mb and self.scene is None:
            try:
                self.scene = save_scene(
                    scene_path(self.writer.path), step=self.clock.value, model=self.model,
                    optimizer=opt, model_calls=b.model_args, targets=self._scene_targets(b),
                    amp=b.amp, scaler=self.scaler, max_mb=self.scene_max_mb,
                    checkpoint=self.steplog.export() if self.steplog is not None else None)
            except Exception as e:  # no scene is no reason to stop training
                self.reporter.warn(f"neuraldbg could not save the failing step's scene: "
                                   f"{type(e).__name__}: {e}")
        if self.halt is not None:
            self.in_optimizer_step = False
            self.halt()  # raises: the update is not applied

    @staticmethod
    def _scene_targets(b: StepBuffer) -> list[torch.Tensor]:
        """The step's targets as record_loss was given them, else those the monitor found."""
        return b.given_targets or [t for _, _, t in (*b.targets, *b.found_targets)
                                   if t is not None]

    def _checked_closure(self, opt: torch.optim.Optimizer, closure: Callable[[], Any],
                         args: Any, kwargs: Any) -> tuple[Any, Any]:
        """The optimizer's (args, kwargs) with its closure followed by `_before_update`."""
        def checked() -> Any:
            loss = closure()
            self._before_update(opt)
            return loss

        if "closure" in kwargs:
            return args, {**kwargs, "closure": checked}
        return (args[0], checked, *args[2:]), kwargs

    def _nonfinite_now(self, b: StepBuffer) -> bool:
        """Whether step `b` failed before its update: its loss or the gradients the optimizer
        is about to read hold a non-finite value (looked at in the values: a gradient norm can
        overflow where no value does). Under a GradScaler only the gradients count (it has
        unscaled them by then, and skips a step whose are not finite without calling the
        optimizer). In host memory only looked at when the hunt found something already
        (`hunt_now`); off it, one host sync a step (paid only under
        `NeuralDbg(on_nonfinite="raise")`)."""
        if self.cpu and not b.hunted:
            return False
        if self.scaler is None and b.scale is None:
            if not all(math.isfinite(v) for v in b.float_losses):
                return True
            losses = [t.float().reshape(()) for t in b.losses if isinstance(t, torch.Tensor)]
            if losses and not bool(torch.isfinite(torch.stack(losses)).all()):
                return True
        grads = [local(p.grad) for p in self.grouper.params if p.grad is not None]
        if not grads:
            return False
        return not bool(torch.stack([torch.isfinite(g).all() for g in grads]).all())

    def on_optimizer_step(self, opt: torch.optim.Optimizer, args: Any, kwargs: Any) -> None:
        if not self.active or not self.optimizer.bind(opt):
            return
        self.in_optimizer_step = False
        if self.buf.open:
            self.buf.optimizer_stepped = True
            self.close_step(self.clock.value, advance=True)

    # ------------------------------------------------------------------ the loop API
    def record_loss(self, loss: Any, targets: list[torch.Tensor]) -> None:
        self._end_target_watch()
        if self.target_watch is not None and targets:
            self.target_watch = None  # the loop passes its targets: no need to look again
        if not self.active:
            return
        if not self.buf.open:
            self._begin_step()
        b = self.buf
        # the loss the model returned (`out.loss`, or a share of it): its targets stay the step's
        self.model_loss_recorded = own = records_model_loss(loss, b.model_loss_node)
        if not self.user_loss:  # the user's losses from now on, this step's included
            self.user_loss = True
            b.model_losses.clear()
            b.loss_node = None
        if b.model_targets and not own:  # the user's targets or none
            b.targets.clear()
            b.labels.clear()
            b.model_targets = False
        if isinstance(loss, torch.Tensor):
            if loss.grad_fn is not None:
                b.loss_node = loss.grad_fn
            loss = loss.detach()
            b.losses.append(loss if loss.dim() == 0 else loss.reshape(()))
            # free to read in host memory; either way before the optimizer's update
            nonfinite = self.cpu and loss.is_cpu and not math.isfinite(float(loss))
        else:
            value = float(loss)
            b.losses.append(value)
            b.float_losses.append(value)
            nonfinite = not math.isfinite(value)
        if nonfinite:
            self.hunt_now(b)
        b.given_targets += targets
        for t in targets:  # their union is the step's target (several parts: RL batches)
            if t.numel() and t.is_floating_point():
                b.targets.append((moments(t), t.numel(), t))
            elif is_class_labels(t):
                b.labels.append(t)

    def _end_target_watch(self) -> None:
        """The loss was recorded, the optimizer steps, or a new pass begins: stop looking."""
        if self.target_watch is not None and self.target_watch.on:
            self.target_watch.end()

    def _target_found(self, t: torch.Tensor) -> None:
        b = self.buf
        if b.open and self.active:
            if t.is_floating_point():
                b.found_targets.append((moments(t), t.numel(), t))
            else:
                b.found_labels.append(t)

    def _begin_step(self) -> StepBuffer:
        step = self.clock.value
        sched = self.schedule
        analyzer = self.analyzer
        full = bool(sched.activations(step)) or step <= analyzer.escalate_until or (
            analyzer.detector.abnormal() and step % abnormal_interval(
                sched.abnormal_every, analyzer.quiet_for(step)) == 0)
        self.buf = b = StepBuffer(open=True, full=full, stash_on=self.keep_outputs or full)
        return b

    def stop(self) -> None:
        """Stop recording (after an internal error): hooks stay until the monitor closes, but
        do nothing."""
        self.active = False

    @property
    def current_step(self) -> int:
        """The step label now (the step being captured)."""
        return self.clock.value

    @contextlib.contextmanager
    def looking_away(self) -> Iterator[None]:
        """While the forward passes of a step are run again (to find a backward-born value), the
        hooks ignore them."""
        was = self.replaying, self.in_forward, self.fast_stash
        self.replaying, self.in_forward, self.fast_stash = True, False, None
        try:
            yield
        finally:
            self.replaying, self.in_forward, self.fast_stash = was

    def hunt_now(self, b: StepBuffer) -> None:
        """Step `b` turned non-finite and the weights are still those of its forward passes
        (the caller knows): look for a forward-born value now, on the first step of an
        episode, so that the float32 re-run of its module sees the weights it was born with.
        Without kept outputs, the passes are run again to keep them (`replay.py`). A step
        whose forward was finite while a backward pass ran is run again and differentiated to
        find the module whose backward did it (`backward_birth.py`)."""
        if b.hunted or self.analyzer.nonfinite_episode or not self.active:
            return
        b.hunted = True
        if not b.stash and b.calls and self.can_replay:
            self._replay(b)
        if b.stash:
            b.forward_origin = forward_origin(self, self.clock.value, b)
        if b.forward_origin is None and b.backward_seen and b.calls and self.can_replay:
            b.backward_origin = backward_birth(self, self.clock.value, b)

    def _replay(self, b: StepBuffer) -> None:
        """Keep step `b`'s module outputs by running its forward passes again; none when a
        pass cannot run again."""
        calls = repeatable_calls(b.calls, self.grouper.params)
        if not calls:
            return
        model = self.model
        was = (self.buf, self.in_forward, self.fast_stash, self.fwd_slow,
               self.leaf_handles is not None)
        self.replaying = True
        self.buf, b.stash_on = b, True
        self.set_leaf_hooks(True)
        try:
            with preserved(model):
                for call in calls:
                    self.in_forward, self.fwd_slow, self.fast_stash = True, False, b.stash.append
                    run_again(model, call)
        except Exception:  # a forward that cannot run away from its loop: no outputs
            b.stash.clear()
        finally:
            self.replaying = False
            self.buf, self.in_forward, self.fast_stash, self.fwd_slow, on = was
            b.stash_on = b.replayed = bool(b.stash)
            self.set_leaf_hooks(on)

    def _inner_kind(self, idx: int, kind: str) -> None:
        """Unit `idx` applies a saturating or ReLU-family function in its own code (its entry
        of `kinds` says so now): the layer DAG says so too."""
        if self.dag is not None:
            self.dag.set_kind(self.names[idx], str(kind))

    def _inner_late(self, idx: int, row: Row) -> None:
        """An activation applied to unit `idx`'s output in a container's code."""
        rows = self.buf.act.get(idx)
        if rows:
            rows[-1] = merge_rows(rows[-1], [row])

    def _copy_weights(self) -> None:
        if self.weight_buffers is None:
            self.weight_buffers = self.grouper.alloc_copies()
        self.grouper.copy_weights(self.weight_buffers)
        self.weights_ready = True

    # ------------------------------------------------------------------ closing a step
    def close_step(self, step: int, advance: bool) -> None:
        """Turn the buffered step into statistics, events and rows of the run file."""
        self._end_target_watch()
        if self.inner.active:  # the step's last forward pass raised
            self.inner.end()
        if self.dag is not None:
            self.dag.abort_forward()
        b = self.buf
        if not b.open:
            return
        self.buf = _CLOSED
        try:
            if self.active:
                self._close(step, b)
                self._count_scaler_skip(b)
        except Exception as e:
            self.reporter.internal_error(f"closing step {step}", e)
        finally:
            self.last_step = step
            if advance:
                self.clock.advance()
            if self.active:
                if self.schedule.weights(self.clock.value):
                    self._copy_weights()
                else:
                    self.weights_ready = False

    def _count_scaler_skip(self, b: StepBuffer) -> None:
        """A GradScaler skipping an inf step is normal; skipping `SCALER_SKIP_LIMIT` in a row
        never recovers: under `on_nonfinite="raise"`, halt at the next forward pass."""
        if self.scaler is None or not b.backward_seen:
            return
        self.scaler_skips = 0 if b.optimizer_stepped else self.scaler_skips + 1
        if self.halt is not None and self.scaler_skips == SCALER_SKIP_LIMIT:
            self.halt_pending = (f"the GradScaler skipped the last {SCALER_SKIP_LIMIT} steps in "
                                 "a row (their gradients were not finite at any scale)")

    def _close(self, step: int, b: StepBuffer) -> None:
        self._note_targets_source(b)
        if not b.targets and b.found_targets:
            b.targets = b.found_targets
        if not b.labels and b.found_labels:
            b.labels = b.found_labels
        if self.grads.pending:  # a backward pass that did not reach its end (it raised)
            self.grads.flush(b)
        if self.lossless is not None:  # the steps closed before a loss was first recorded
            if b.losses or b.model_losses:
                self.lossless = None
            else:
                self.lossless += 1
                if self.lossless == NO_LOSS_STEPS:
                    self.reporter.warn(NO_LOSS)
        settings = self.optimizer.settings(b.amp)
        weights = self.weights_ready and self.schedule.weights(step)
        if self.cpu and not weights and queue_quiet(self, step, b, settings):
            return
        raw, finite = collect(self, step, b, settings, weights)
        if not finite and not b.hunted and self.optimizer.known_yet \
                and not b.optimizer_stepped:
            self.hunt_now(b)  # the update was not applied (a GradScaler skipped it)
        self.analyzer.submit(raw, b)

    def _note_targets_source(self, b: StepBuffer) -> None:
        """Keep in the run file's meta where the targets came from (`TARGETS_META`): "given"
        (record_loss's `target=`, or the labels a model computing its own loss was passed) or
        "found" (tensors the loss's graph saved besides the model's output: the labels, or a
        value the loss computed from them). Given once is given for the run."""
        source = TargetsSource.GIVEN if b.targets else \
            TargetsSource.FOUND if b.found_targets else None
        if source is None or self.targets_source in (source, TargetsSource.GIVEN):
            return
        self.targets_source = source
        self.writer.set_meta(**{TARGETS_META: str(source)})

    def act_from_stash(self, b: StepBuffer) -> dict[int, list[float]]:
        """Full activation statistics of step `b` from its kept outputs (extra sync)."""
        g = Gather()
        rows: dict[int, list[torch.Tensor]] = {}
        for e in self.stash_entries(b):
            if e.unit >= 0 and e.output is not None and e.output._version == e.version:
                u = self.units[e.unit]
                rows.setdefault(e.unit, []).append(activation_stats(u.module, e.output, u.kind))
        for i, r in rows.items():
            g.add(str(i), reduce_act(r))
        return {int(k): v for k, v in g.fetch().items()}

    def finish(self, step: int) -> None:
        """Close the last step, analyse what is queued, store the final recorder window."""
        self.close_step(step, advance=False)
        self.analyzer.finish(step)
        self.active = False
        self.grads.release()


def queue_quiet(cap: StepCapture, step: int, b: StepBuffer, settings: dict[str, str]) -> bool:
    """In host memory, triage step `b` from its values directly; a quiet one is queued as
    the values triage read (the median step then pays for no packing, and the step's
    tensors are released at once). False when the step needs the general path (non-finite,
    full statistics, ...)."""
    norms, norm_max = b.norm_vals, b.norm_max  # read by the gradient flush in host memory
    if b.full or b.act or b.stash or b.scale is not None or norms is None or norm_max is None:
        return False
    loss_t = step_loss(b)
    loss_read = float(loss_t) if loss_t is not None else None
    loss = loss_read if loss_read is not None else (
        b.float_losses[-1] if b.float_losses else None)
    moments = [list(map(float, m)) for m, _, _ in (*b.inputs, *b.targets)]
    # every value Gather.finite would check, and the float losses (a sum is finite iff all are)
    total = norm_max + (loss or 0.0) + sum(b.float_losses) + sum(map(sum, moments))
    if not math.isfinite(total):
        return False
    input_max_abs = max(abs(moments[0][0]), abs(moments[0][1])) if b.inputs else None
    settled = cap.analyzer.settled(step)
    verdict = cap.analyzer.triage.verdict(False, input_max_abs, loss, norm_max,
                                          grad_limit=not settled)
    if cap.analyzer.at_once(verdict[0], settled):
        cap.analyzer.submit(collect(cap, step, b, settings, False)[0], b, verdict, settled)
        return True
    # the values `collect` would fetch, as read above (`Gather.fetch` reads each with .item())
    n_in = len(b.inputs)
    values = FetchedValues(loss=loss_read, inputs=tuple(moments[:n_in]),
                           targets=tuple(moments[n_in:]), grads=norms)
    cap.analyzer.queue(raw_step(cap, step, b, settings, values, True, b.norm_k))
    return True


class _LeafHooksHandle:
    """Removes the hooks inside the model, whichever are registered, with the monitor's own."""

    def __init__(self, cap: StepCapture) -> None:
        self.cap = cap

    def remove(self) -> None:
        self.cap.set_leaf_hooks(False)
