"""The monitor: `with NeuralDbg(model) as dbg:` watches every layer and writes the run file.

The stateful shell around pure pieces: statistics (`stats`), transition detection
(`transitions`), the flight recorder (`recorder`), the layer DAG (`dag`) and the run file
(`causal.schema.run_file`). It owns every hook and removes them all in `finally`.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import os
import platform
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from torch import nn
from torch.optim.optimizer import (
    register_optimizer_step_post_hook,
    register_optimizer_step_pre_hook,
)
from torch.utils.hooks import RemovableHandle

from causal.schema.run import Event, Run
from causal.schema.run_file import RunWriter
from neuraldbg.alerts import LiveAlerts
from neuraldbg.capture import copy_safety
from neuraldbg.capture.sharded import is_sharded
from neuraldbg.capture.step_clock import StepClock
from neuraldbg.capture.tensor_stats import iter_tensors
from neuraldbg.capture.watched_units import dtype_name, find_units, user_root
from neuraldbg.checkpoint import StepLog
from neuraldbg.detect.transitions import Thresholds
from neuraldbg.errors import (
    ConfigError,
    MonitorStateError,
    NonFiniteError,
    RecordError,
    RunFileError,
)
from neuraldbg.reporting import RunReporter
from neuraldbg.schedule import Schedule, resolve
from neuraldbg.step_capture import StepCapture
from neuraldbg.version import __version__

if TYPE_CHECKING:
    from causal.diagnose import Diagnosis

DEFAULT_RUN_DIR = "neuraldbg_runs"
#: What the monitor does at a step's first non-finite value: record it only, also log an alert
#: (the default), or also halt before the update (`NonFiniteError`).
ON_NONFINITE = ("record", "warn", "raise")


def _default_path(model: nn.Module) -> Path:
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path(DEFAULT_RUN_DIR) / f"{stamp}-{type(model).__name__}-{uuid.uuid4().hex[:6]}.ndbg"


def _check_path(path: Path) -> None:
    """Fail at construction, not mid-training, when the run file cannot be written."""
    if path.is_symlink():
        raise RunFileError(f"run file {str(path)!r} is a symbolic link (to "
                           f"{os.readlink(path)!r}): pass the path of a new file, so the run is "
                           "written where you can see it and nothing it points to is created")
    if path.is_dir():
        raise RunFileError(f"run file {str(path)!r} is a directory: pass a file path, such as "
                           f"{str(path / 'run.ndbg')!r}")
    if path.exists():
        raise RunFileError(f"run file {str(path)!r} already exists: pass a new path so no "
                           "recorded run is overwritten")
    parent = path.parent
    probe = parent
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        raise RunFileError(f"cannot write the run file {str(path)!r}: {str(probe)!r} is not a "
                           "writable directory. Pass NeuralDbg(..., path=...) in a writable place")


def _distributed() -> dict[str, int]:
    """The process's torch.distributed rank and world size (nothing outside a process group)."""
    dist = torch.distributed
    if dist.is_available() and dist.is_initialized():
        return {"rank": dist.get_rank(), "world_size": dist.get_world_size()}
    return {}


def _measurable(t: torch.Tensor) -> bool:
    """A target tensor whose values the monitor can measure."""
    return t.device.type != "meta" and not t.is_complex()


def _describe(error: BaseException) -> str:
    """'Type: message' of the user's exception, even when its `__str__` fails."""
    try:
        text = str(error)
    except Exception:
        text = "(its message cannot be read)"
    return f"{type(error).__name__}: {text}"


class NeuralDbg:
    """Watch a model while it trains; `dbg.run` is the recorded run, `load_run` reads it back.

    threshold_vanishing / threshold_exploding: absolute limits on a layer's gradient norm
    (a threshold relative to each layer's own baseline applies too). path: the run file
    (default: a new file under ./neuraldbg_runs/). scaler: a GradScaler whose scale is recorded.
    preset: "light", "standard" or "full", or a `Schedule`. on_event: called with each `Event`
    as it is recorded. The step advances by itself on each optimizer step; setting `dbg.step`
    labels steps explicitly. The first non-finite value and the loss's first divergence are
    logged as they happen (logger "neuraldbg", WARNING; `neuraldbg.alerts`). on_nonfinite:
    "warn" (that log line), "record" (no line) or "raise" (also `NonFiniteError` from the
    optimizer's step, before the non-finite update is applied). scene_max_mb: the size limit
    of the failing step's scene saved beside the run file (`neuraldbg.scene`; 0: none).
    checkpoint_every: keep the weights every N steps and the batches since, so that the scene
    can replay the steps before a failure (`neuraldbg.checkpoint`; 0, the default: off).
    """

    def __init__(
        self,
        model: nn.Module,
        *,
        threshold_vanishing: float = 1e-6,
        threshold_exploding: float = 1e3,
        path: str | os.PathLike[str] | None = None,
        scaler: Any = None,
        preset: str | Schedule = "standard",
        recorder_steps: int = 32,
        thresholds: Thresholds | None = None,
        on_event: Callable[[Event], object] | None = None,
        on_nonfinite: str = "warn",
        scene_max_mb: float = 512.0,
        checkpoint_every: int = 0,
    ) -> None:
        if not isinstance(model, nn.Module):
            raise ConfigError(
                f"NeuralDbg needs a torch.nn.Module, got {type(model).__name__}: pass the model "
                "itself (not its parameters, output or optimizer)"
            )
        lazy = [n for n, p in user_root(model).named_parameters()
                if isinstance(p, nn.parameter.UninitializedParameter)]
        if lazy:
            raise ConfigError(
                f"the model has lazy modules whose parameters do not exist yet ({lazy[0]!r}"
                f"{f' and {len(lazy) - 1} more' if len(lazy) > 1 else ''}): run one forward "
                "pass with a dummy batch before NeuralDbg(model) (and before creating the "
                "optimizer), as torch.nn.LazyModuleMixin asks"
            )
        # FSDP2 / tensor parallel: statistics of this rank's shards (`capture.sharded`)
        self._sharded = sum(1 for p in user_root(model).parameters() if is_sharded(p))
        for name, v in (("threshold_vanishing", threshold_vanishing),
                        ("threshold_exploding", threshold_exploding)):
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v) \
                    or v <= 0:
                raise ConfigError(f"{name} must be a positive finite number, got {v!r}")
        if threshold_vanishing >= threshold_exploding:
            raise ConfigError(
                f"threshold_vanishing ({threshold_vanishing:g}) must be below threshold_exploding "
                f"({threshold_exploding:g}); e.g. threshold_vanishing=1e-6, threshold_exploding=1e3"
            )
        if scaler is not None and not hasattr(scaler, "get_scale"):
            raise ConfigError(
                f"scaler must be a torch.amp.GradScaler (got {type(scaler).__name__}); pass "
                "scaler=None when not using one"
            )
        if on_nonfinite not in ON_NONFINITE:
            raise ConfigError(f"on_nonfinite must be one of {', '.join(map(repr, ON_NONFINITE))}"
                              f", got {on_nonfinite!r}")
        if isinstance(scene_max_mb, bool) or not isinstance(scene_max_mb, (int, float)) \
                or not math.isfinite(scene_max_mb) or scene_max_mb < 0:
            raise ConfigError(f"scene_max_mb must be a number >= 0 (0: save no scene), got "
                              f"{scene_max_mb!r}")
        if isinstance(checkpoint_every, bool) or not isinstance(checkpoint_every, int) \
                or checkpoint_every < 0:
            raise ConfigError(f"checkpoint_every must be an int >= 0 (0: no checkpoint), got "
                              f"{checkpoint_every!r}")
        if on_event is not None and not callable(on_event):
            raise ConfigError(f"on_event must be a callable taking an Event, got "
                              f"{type(on_event).__name__}")
        if isinstance(recorder_steps, bool) or not isinstance(recorder_steps, int) \
                or recorder_steps < 1:
            raise ConfigError(f"recorder_steps must be an int >= 1, got {recorder_steps!r}")
        try:
            self.thresholds = thresholds or Thresholds(
                vanishing=float(threshold_vanishing), exploding=float(threshold_exploding)
            )
        except ValueError as e:
            raise ConfigError(str(e)) from e
        self.schedule = resolve(preset)
        self.preset = preset if isinstance(preset, str) else "custom"
        self.model = model
        self.scaler = scaler
        self.recorder_steps = recorder_steps
        self.on_event = on_event
        self.on_nonfinite = on_nonfinite
        self.scene_max_mb = float(scene_max_mb)
        self.checkpoint_every = checkpoint_every
        if path is not None and not isinstance(path, (str, os.PathLike)):
            raise ConfigError(f"path must be a str or os.PathLike (the run file to write), got "
                              f"{type(path).__name__}: e.g. path='runs/run.ndbg'")
        self.path = Path(path) if path is not None else _default_path(model)
        _check_path(self.path)
        self._clock = StepClock()
        self._writer: RunWriter | None = None
        self._capture: StepCapture | None = None
        self._handles: list[RemovableHandle] = []
        self._reporter = RunReporter()  # warnings and internal errors, kept in the run file
        self._state = "new"

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> NeuralDbg:
        self.start()
        return self

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> None:
        self.close(error=exc)

    def start(self) -> NeuralDbg:
        """Attach hooks and open the run file (what `with` does on entry)."""
        if self._state != "new":
            raise MonitorStateError("a NeuralDbg monitor can be started once: create a new one "
                                    "for another run")
        units = find_units(self.model)
        copy_safety.install()  # torch.save(model) / deepcopy inside the loop copy no hook of ours
        self._writer = RunWriter(self.path, self._meta(units),
                                 on_fault=self._reporter.storage_fault)
        self._reporter.writer = self._writer
        try:
            self._capture = capture = StepCapture(
                self.model, units, self._writer, schedule=self.schedule,
                thresholds=self.thresholds, recorder_steps=self.recorder_steps,
                scaler=self.scaler, clock=self._clock, reporter=self._reporter)
            self._reporter.stop = capture.stop
            capture.analyzer.on_events = LiveAlerts(str(self.path), self._reporter,
                                                    on_event=self.on_event,
                                                    logged=self.on_nonfinite != "record")
            if self.on_nonfinite == "raise":
                capture.halt = self._halt
            capture.scene_max_mb = self.scene_max_mb
            if self.checkpoint_every:
                capture.steplog = StepLog(self.checkpoint_every)
            self._handles = self._capture.attach(self.model)
            self._handles.append(
                register_optimizer_step_pre_hook(self._capture.on_optimizer_pre_step))
            self._handles.append(register_optimizer_step_post_hook(self._capture.on_optimizer_step))
        except BaseException:
            self._remove_hooks()
            self._writer.close(status="failed", error="monitor failed to attach")
            raise
        self._state = "running"
        return self

    def close(self, error: BaseException | None = None) -> None:
        """Flush the last step, remove every hook and close the run file. Never raises: a fault
        of neuraldbg's own (storage included) is a warning, so it can neither stop the user's code
        after the `with` block nor replace the exception the user's code raised."""
        if self._state != "running":
            return
        try:
            assert self._capture is not None
            self._capture.finish(self._clock.value)
        except Exception as e:
            self._reporter.internal_error("closing the run", e)
        finally:
            self._remove_hooks()
            self._state = "closed"
            self._close_writer(error)

    def _close_writer(self, error: BaseException | None) -> None:
        assert self._writer is not None
        try:
            last = self._capture.last_step if self._capture is not None else None
            self._writer.close(status="finished" if error is None else "failed",
                               error=None if error is None else _describe(error),
                               last_step=last, ended=datetime.now(UTC).isoformat())
        except Exception as e:  # the writer absorbs storage faults; anything else is a bug
            self._reporter.internal_error("closing the run file", e)

    def _halt(self, reason: str | None = None) -> None:
        """Stop before the update of a non-finite step: analyse the step now (its origin event
        is written), diagnose the run so far, raise `NonFiniteError` out of `optimizer.step()`
        (or out of the next forward pass, for a GradScaler whose skips never recover)."""
        from causal.diagnose import diagnose

        assert self._capture is not None and self._writer is not None
        step = self._clock.value
        self._capture.close_step(step, advance=False)
        self._capture.analyzer.drain()
        run = self._writer.read()
        diagnosis = diagnose(run)
        origin = run.first_nonfinite
        where = f", born at '{origin.layer_name}'" if origin is not None else ""
        top = diagnosis.top
        why = f"; most likely {top.cause} ({top.confidence:.2f})" if top is not None else ""
        self._capture.halt = None  # once
        what = (f"{reason}{where}{why}. Stopped before the next step" if reason else
                f"step {step} turned non-finite{where}{why}. The update was not applied: the "
                "weights and the optimizer's state are those before it")
        raise NonFiniteError(f"{what}. Run file {self.path}; why: neuraldbg diagnose "
                             f"{self.path}", step, origin, diagnosis)

    def _remove_hooks(self) -> None:
        for h in self._handles:
            h.remove()
        self._handles = []

    def _meta(self, units: list[Any]) -> dict[str, Any]:
        p = next(iter(self.model.parameters()), None)
        return {
            "run_id": uuid.uuid4().hex,
            "created": datetime.now(UTC).isoformat(),
            "status": "running",
            "neuraldbg_version": __version__,
            "torch_version": torch.__version__,
            "python_version": platform.python_version(),
            "model_class": type(self.model).__name__,
            "device": str(p.device) if p is not None else "cpu",
            "param_dtype": dtype_name(p.dtype) if p is not None else None,
            "n_params": sum(q.numel() for q in self.model.parameters()),
            "n_units": len(units),
            "preset": self.preset,
            "recorder_steps": self.recorder_steps,
            "thresholds": dataclasses.asdict(self.thresholds),
            "scaler": type(self.scaler).__name__ if self.scaler is not None else None,
            **_distributed(),
            **({"sharded_params": self._sharded} if self._sharded else {}),
        }

    # ------------------------------------------------------------------ the training loop API
    @property
    def step(self) -> int:
        """The current step label; advances by itself after each optimizer step."""
        return self._clock.value

    @step.setter
    def step(self, value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise RecordError(f"dbg.step must be an int, got {type(value).__name__} {value!r}")
        value = int(value)
        if self._capture is not None and self._state == "running" and value != self._clock.value:
            self._capture.close_step(self._clock.value, advance=False)
        self._clock.value = value

    def record_loss(self, loss: Any, target: Any = None) -> None:
        """Record the step's loss (tensor or float; no host sync) and optionally its targets: a
        tensor, or a tuple, list or dict of them (their floating-point values are measured
        together, as one target)."""
        if self._state != "running" or self._capture is None:
            raise MonitorStateError(
                "record_loss() outside the monitor: call it inside `with NeuralDbg(model) as dbg:`"
            )
        if loss is None:
            raise RecordError("record_loss(None): pass the loss tensor or loss.item()")
        if isinstance(loss, torch.Tensor):
            if loss.numel() != 1:
                raise RecordError(
                    f"record_loss() needs a scalar, got a tensor of shape {tuple(loss.shape)}: "
                    "reduce it first (loss.mean())"
                )
            if loss.is_complex() or loss.dtype == torch.bool:
                raise RecordError(
                    f"record_loss() needs a real-valued loss, got a {dtype_name(loss.dtype)} "
                    "tensor: record the real loss you minimise (e.g. loss.real or loss.abs())"
                )
            if loss.device.type == "meta":
                raise RecordError(
                    "record_loss() got a loss on the meta device, which holds no values: record "
                    "the loss of a model whose parameters are on a real device"
                )
        elif isinstance(loss, bool) or not isinstance(loss, numbers.Real):
            raise RecordError(
                f"record_loss() needs a number or a scalar tensor, got {type(loss).__name__}"
            )
        targets: list[torch.Tensor] = []
        if type(target) is torch.Tensor:  # the common case, every step: no walk
            targets = [target]
        elif target is not None:
            targets = list(iter_tensors(target))
            if not targets:
                raise RecordError(
                    f"record_loss(target=...) needs a tensor, or a tuple, list or dict of them "
                    f"(the ones the loss compares the output with), got "
                    f"{type(target).__name__} without any tensor"
                )
        if targets and not all(_measurable(t) for t in targets):
            targets = [t for t in targets if _measurable(t)]
            self._reporter.warn("record_loss(target=...) got complex or meta-device tensors: "
                                "they are not measured (the loss and the other targets are)")
        self._capture.record_loss(loss, targets)

    @property
    def run(self) -> Run:
        """The run recorded so far: the same object `load_run(dbg.run.path)` returns."""
        if self._writer is None:
            raise MonitorStateError("the monitor has not started: use `with NeuralDbg(model) as "
                                    "dbg:` first")
        if self._state == "running":
            if self._capture is not None:
                self._capture.analyzer.drain()
            return self._writer.read()
        from causal.schema.run_file import load_run

        return load_run(self.path)

    def explain_failure(self) -> Diagnosis:
        """The ranked diagnosis of the run so far: the same as `diagnose(dbg.run)`."""
        from causal.diagnose import diagnose

        return diagnose(self.run)
