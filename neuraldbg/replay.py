"""Replay the failing step from its scene and test the ranked causes by intervention.

`replay(scene, model, loss_fn)` re-runs the step a run's first non-finite value came from
(`RUN.scene.pt`, `neuraldbg.scene`) on a copy of the model loaded with the weights before its
update, and tries the interventions that test each cause, keeping those that remove the failure:

- the batch: rows dropped, bisecting to the rows that produce the non-finite value (their
  indices and extremes); the step finite without them confirms `data_outlier`;
- the precision: the step in float32, without autocast; finite confirms `fp16_overflow`;
- the op: the step re-run with every torch call watched (and, for a value born in the backward
  pass, under `torch.autograd.detect_anomaly`), paid once instead of every step: the first op
  that turned finite values non-finite and the user's source line that called it (`unsafe_op`
  is confirmed when no other intervention removes the failure and the op is named);
- the update: the steps from the last checkpoint the monitor kept (`NeuralDbg(checkpoint_every=
  N)`, `neuraldbg.checkpoint`) replayed at the lr and at a tenth of it; a failure the lr
  reproduces and a tenth removes confirms `lr_too_high` (without a checkpoint, `confirm` says
  it was not tried rather than guess).

The user's live model is never touched (a copy, or a new one from a factory). `neuraldbg
confirm RUN --model module:factory
--loss module:fn` runs it from the command line and writes `RUN.confirm.json`, which
`diagnose` then reports (`Diagnosis.confirmed_by`).
"""

from __future__ import annotations

import contextlib
import copy
import json
import math
import re
import time
import traceback
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from causal.confirmation import confirm_path
from neuraldbg.errors import NeuralDbgError

LossFn = Callable[[Any, Any], torch.Tensor]


@dataclass(frozen=True)
class Intervention:
    """What one intervention did to the failing step."""

    name: str
    removes_failure: bool
    detail: str
    confirms: str | None = None
    seconds: float = 0.0  # what the intervention took, its re-runs included


def _model_of(model: nn.Module | Callable[[], nn.Module]) -> nn.Module:
    """The model given, or a new one from the factory given."""
    base = model() if callable(model) and not isinstance(model, nn.Module) else model
    if not isinstance(base, nn.Module):
        raise NeuralDbgError(f"replay needs a model or a factory returning one, got "
                             f"{type(base).__name__}")
    return base


class _Step:
    """The failing step, re-runnable on a fresh copy of the pre-update weights."""

    def __init__(self, scene: dict[str, Any], model: nn.Module | Callable[[], nn.Module],
                 loss_fn: LossFn) -> None:
        if not scene.get("inputs"):
            raise NeuralDbgError("the scene holds no inputs (left out: "
                                 f"{scene.get('left_out')}): nothing to replay")
        if scene.get("sharded"):
            raise NeuralDbgError(
                "the scene holds this rank's shards of a sharded model (FSDP2's fully_shard or "
                "tensor parallelism), not whole weights, so the step cannot be re-run in one "
                "process: replay it on an unsharded copy loaded from a full checkpoint "
                "(torch.distributed.checkpoint), with this scene's inputs and targets")
        self.model = copy.deepcopy(_model_of(model))  # never the user's live model
        self.state = scene.get("model_state")
        self.loss_fn = loss_fn
        call = scene["inputs"][0]
        self.args, self.kwargs = list(call["args"]), dict(call["kwargs"])
        targets = scene.get("targets") or []
        self.target = targets[0] if targets else None
        amp = scene.get("autocast_dtype", "none")
        self.amp = None if amp in (None, "none") else getattr(torch, amp)
        self.rng = (scene.get("rng") or {}).get("cpu")

    def batch_size(self) -> int | None:
        first = next((a for a in self.args if isinstance(a, torch.Tensor) and a.dim()), None)
        return None if first is None else int(first.shape[0])

    def run(self, rows: Sequence[int] | None = None, amp: bool = True,
            anomaly: bool = False, watch: TorchFunctionMode | None = None
            ) -> tuple[bool, str]:
        """(finite, detail): the step's loss and gradients, on the rows given."""
        model = self.model
        if self.state is not None:
            model.load_state_dict(self.state)
        model.zero_grad(set_to_none=True)
        if self.rng is not None:
            torch.set_rng_state(self.rng)
        n = self.batch_size()
        index = None if rows is None else torch.tensor(list(rows), dtype=torch.long)

        def take(x: Any) -> Any:
            if index is not None and isinstance(x, torch.Tensor) and x.dim() \
                    and x.shape[0] == n:
                return x.index_select(0, index)
            return x

        args = [take(a) for a in self.args]
        kwargs = {k: take(v) for k, v in self.kwargs.items()}
        target = take(self.target)
        enabled = amp and self.amp is not None
        with torch.autograd.set_detect_anomaly(anomaly, check_nan=True), \
                torch.autocast("cpu", dtype=self.amp or torch.bfloat16, enabled=enabled), \
                watch if watch is not None else contextlib.nullcontext():
            out = model(*args, **kwargs)
            loss = self.loss_fn(out, target)
        try:
            loss.backward()
        except RuntimeError as e:
            return False, str(e).splitlines()[0]
        return _finite(loss, model), f"loss {float(loss.detach().float()):.4g}"


def _finite(loss: torch.Tensor, model: nn.Module) -> bool:
    """Whether a step's loss and the gradients its backward pass left are all finite."""
    return math.isfinite(float(loss.detach().float())) and all(
        bool(torch.isfinite(p.grad).all()) for p in model.parameters() if p.grad is not None)


def _bad_rows(step: _Step, rows: list[int]) -> list[int]:
    """The smallest set of rows bisection finds that still makes the step non-finite."""
    while len(rows) > 1:
        half = len(rows) // 2
        left, right = rows[:half], rows[half:]
        if not step.run(left)[0]:
            rows = left
        elif not step.run(right)[0]:
            rows = right
        else:
            break  # the failure needs rows from both halves (batch statistics): keep them
    return rows


class _FirstNonFinite(TorchFunctionMode):
    """Notes the first torch call whose inputs are finite and whose output is not, with the
    user's line that made it."""

    def __init__(self) -> None:
        super().__init__()
        self.found: tuple[str, str] | None = None

    def __torch_function__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        name = getattr(func, "__name__", str(func))
        if self.found is None and name not in ("__get__", "__set__") \
                and _any_nonfinite(out) and not _any_nonfinite((args, kwargs)):
            self.found = (name, _user_line())
        return out


def _any_nonfinite(obj: Any) -> bool:
    if isinstance(obj, torch.Tensor):
        return obj.is_floating_point() and bool(obj.numel()) and not bool(
            torch.isfinite(obj).all())
    if isinstance(obj, dict):
        return any(_any_nonfinite(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return any(_any_nonfinite(v) for v in obj)
    return False


def _user_line() -> str:
    frames = [f for f in traceback.extract_stack()
              if "/torch/" not in f.filename and "/neuraldbg/" not in f.filename]
    return f"{frames[-1].filename}:{frames[-1].lineno} ({(frames[-1].line or '').strip()})" \
        if frames else ""


def _row_sizes(step: _Step, n: int) -> list[float]:
    """Each row's largest |value| over the floating-point inputs and targets (inf if any is
    not finite)."""
    parts = [t for t in (*step.args, *step.kwargs.values(), step.target)
             if isinstance(t, torch.Tensor) and t.dim() and t.shape[0] == n
             and t.is_floating_point()]
    if not parts:
        return []
    inf = float("inf")
    rows = torch.stack([p.reshape(n, -1).abs().nan_to_num(nan=inf, posinf=inf).amax(1).float()
                        for p in parts]).amax(0)
    return [float(v) for v in rows]


def _anomaly(step: _Step) -> tuple[str | None, str]:
    """The op that first turned a finite value non-finite, and the user's source line of its
    call: in the forward pass (every call watched), else in the backward pass (anomaly mode)."""
    watch = _FirstNonFinite()
    step.run(watch=watch)
    if watch.found is not None:
        return watch.found
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, detail = step.run(anomaly=True)
    trace = "\n".join(str(w.message) for w in caught)
    op = re.search(r"Function '(\w+)' returned nan", detail) or re.search(
        r"Error detected in (\w+)", trace)
    frames = re.findall(r'File "([^"]+)", line (\d+), in (\S+)\n\s+(.+)', trace)
    user = [f for f in frames if "/torch/" not in f[0] and "/neuraldbg/" not in f[0]]
    line = f"{user[-1][0]}:{user[-1][1]} ({user[-1][3].strip()})" if user else ""
    return (op.group(1) if op else None), line


def replay(scene: dict[str, Any] | str | Path, model: nn.Module | Callable[[], nn.Module],
           loss_fn: LossFn) -> list[Intervention]:
    """Re-run the scene's step and try each intervention (see the module docstring)."""
    loaded: dict[str, Any] = scene if isinstance(scene, dict) else torch.load(
        scene, weights_only=True)
    step = _Step(loaded, model, loss_fn)
    clock = _Clock()
    finite, detail = step.run()
    found = [Intervention("the step as recorded", finite,
                          f"{'finite' if finite else 'non-finite'} again ({detail})",
                          seconds=clock.lap())]
    if finite:
        return found  # it does not fail again: nothing to test
    n = step.batch_size()
    if n and n > 1:
        bad = _bad_rows(step, list(range(n)))
        rest = [i for i in range(n) if i not in bad]
        cleared = bool(rest) and step.run(rest)[0]
        sizes = _row_sizes(step, n)
        worst = max(sizes[i] for i in bad) if sizes else None
        usual = sorted(sizes[i] for i in rest)[len(rest) // 2] if sizes and rest else None
        # rows that break the step but look like the others point at the op, not the data
        extreme = worst is not None and (not math.isfinite(worst) or usual is None
                                         or worst > 10 * max(usual, 1e-12))
        look = "" if worst is None else (
            f"; max|x| there {worst:.3g}" + (f", {usual:.3g} in a usual row" if usual else "")
            + ("" if extreme else ": ordinary rows, so the op rather than the data"))
        found.append(Intervention(
            f"drop rows {bad} of {n}", cleared,
            f"the step is {'finite' if cleared else 'still non-finite'} without them{look}",
            "data_outlier" if cleared and extreme and len(bad) < n else None, clock.lap()))
    if step.amp is not None:
        ok, detail = step.run(amp=False)
        found.append(Intervention("the step in float32 (autocast off)", ok,
                                  f"{'finite' if ok else 'still non-finite'} ({detail})",
                                  "fp16_overflow" if ok else None, clock.lap()))
    op, line = _anomaly(step)
    op_seconds = clock.lap()
    confirmed = any(i.confirms for i in found)
    lr = _lr_tenth(loaded, model, loss_fn, step.amp, confirmed)
    # the op is the cause only when nothing else removes the failure: ops overflow on the
    # values a corrupt batch, half precision or a too high lr hands them
    found.append(Intervention(
        "the op (every torch call watched, then anomaly mode)", False,
        f"the first op to turn finite values non-finite: {op or 'none named'}"
        + (f", called from {line}" if line else ""),
        "unsafe_op" if op and line and not confirmed and not lr.removes_failure else None,
        op_seconds))
    found.append(lr)
    return found


def _lr_tenth(scene: dict[str, Any], model: nn.Module | Callable[[], nn.Module],
              loss_fn: LossFn, amp: torch.dtype | None, other: bool) -> Intervention:
    """The steps from the last checkpoint to the failing one, at the lr and at a tenth of it:
    a failure the lr reproduces and a tenth removes confirms `lr_too_high`."""
    name = "lr/10 over the steps before"
    ck = scene.get("checkpoint")
    if not ck or not ck.get("steps"):
        return Intervention(name, False, "not tried: no checkpoint in the scene (keep one with "
                            "NeuralDbg(checkpoint_every=N))")
    module, _, cls_name = str(ck.get("optimizer_class", "")).rpartition(".")
    cls = getattr(torch.optim, cls_name, None) if module.startswith("torch.optim") else None
    if cls is None:
        return Intervention(name, False, f"not tried: cannot rebuild the optimizer "
                            f"{ck.get('optimizer_class')!r} (torch.optim's only)")
    clock = _Clock()
    base = _model_of(model)

    def run(scale: float) -> int | None:
        """The first step whose loss or gradients are non-finite (None: all finite)."""
        net = copy.deepcopy(base)
        net.load_state_dict(ck["model_state"])
        opt = cls(net.parameters())
        opt.load_state_dict(ck["optimizer_state"])
        for group in opt.param_groups:
            group["lr"] *= scale
        torch.set_rng_state(ck["rng"])
        for entry in ck["steps"]:
            call = entry["inputs"][0]
            target = entry["targets"][0] if entry["targets"] else None
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cpu", dtype=amp or torch.bfloat16, enabled=amp is not None):
                loss = loss_fn(net(*call["args"], **call["kwargs"]), target)
            loss.backward()
            if not _finite(loss, net):
                return int(entry["step"])
            opt.step()
        return None

    at_lr, at_tenth = run(1.0), run(0.1)
    span = f"steps {ck['steps'][0]['step']}-{ck['steps'][-1]['step']} from the checkpoint"
    if at_lr is None:
        return Intervention(name, False, f"not conclusive: {span} stay finite at the lr too",
                            seconds=clock.lap())
    cleared = at_tenth is None
    return Intervention(
        name, cleared, f"{span}: non-finite at step {at_lr} at the lr, "
        + ("finite at a tenth of it" if cleared else f"still non-finite at a tenth (step "
                                                      f"{at_tenth})"),
        "lr_too_high" if cleared and not other else None, clock.lap())


class _Clock:
    """Seconds since the last lap."""

    def __init__(self) -> None:
        self.last = time.perf_counter()

    def lap(self) -> float:
        now = time.perf_counter()
        took, self.last = now - self.last, now
        return took


def write_confirmation(run_path: str | Path, found: Sequence[Intervention]) -> Path:
    """Write what `replay` found beside the run (`diagnose` reports it)."""
    out = confirm_path(run_path)
    out.write_text(json.dumps([asdict(i) for i in found], indent=2))
    return out
