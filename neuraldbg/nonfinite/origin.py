"""Hunt the first non-finite value: which layer, and was it born in the input, forward, loss or
backward pass.

Called once per non-finite episode, on the step where a value first turns inf or NaN. Forward
origins come from the step's kept module outputs in hook order (inner modules finish first, so the
first non-finite output is the innermost module that produced it); backward origins are the
module whose backward pass produced a non-finite gradient when the step's passes can be run
again (`backward_birth.py`), else the non-finite parameter gradients first in backward order
(latest in forward order).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Protocol

import torch

from causal.schema.run import (
    INPUT,
    LOSS,
    Direction,
    Event,
    EventKind,
    LayerStat,
    NonFiniteOrigin,
    State,
)
from neuraldbg.capture.host_transfer import Gather
from neuraldbg.capture.model_io import ArgNames, call_tensors
from neuraldbg.capture.sharded import local
from neuraldbg.capture.step_buffer import StashEntry, StepBuffer
from neuraldbg.capture.step_values import BatchStats
from neuraldbg.capture.tensor_stats import ACT_COLUMNS, nonfinite_count
from neuraldbg.capture.watched_units import Unit
from neuraldbg.nonfinite.float32_rerun import rerun_in_float32
from neuraldbg.nonfinite.loss_half_ops import half_ops


class OriginSite(Protocol):
    """What the hunt reads off the capture: its units, their names, the model's argument
    names, the layers' forward order and a step's kept module outputs."""

    units: list[Unit]
    names: list[str]
    arg_names: ArgNames

    @property
    def layer_order(self) -> dict[str, int]: ...

    def stash_entries(self, b: StepBuffer) -> list[StashEntry]: ...


_NF = ACT_COLUMNS.index(LayerStat.ACT_NONFINITE)
_NAN = ACT_COLUMNS.index("act_has_nan")


def nonfinite_origin(step: int, layer: str, direction: Direction, count: float, has_nan: bool,
                     **facts: Any) -> Event:
    """A `nonfinite_origin` event whose metadata are the `NonFiniteOrigin` facts given (a fact
    that is None is not established)."""
    return _with_facts(Event(step=step, layer_name=layer, kind=EventKind.NONFINITE_ORIGIN,
                             from_state=State.FINITE, to_state=State.NAN if has_nan else State.INF,
                             value=float(count)), NonFiniteOrigin(direction=direction, **facts))


def _with_facts(ev: Event, facts: NonFiniteOrigin) -> Event:
    return Event(ev.step, ev.layer_name, ev.kind, ev.from_state, ev.to_state, ev.value,
                 facts.to_metadata())


def forward_origin(site: OriginSite, step: int, b: StepBuffer) -> Event | None:
    """First kept module output with a non-finite value, in hook (completion) order."""
    if not b.stash:
        return None
    stash = site.stash_entries(b)
    g = Gather()
    for k, e in enumerate(stash):
        if e.output is None:  # a large output: only its sum was kept
            assert e.flag is not None
            dev = e.flag.device
            g.add(f"f{k}", torch.stack([e.flag.reshape(()), *(f.to(dev) for f in _flags(e.rest))]
                                       ).sum())
            continue
        dev = e.output.device
        parts = [e.output.detach(), *(r.detach() for r in e.rest)]
        g.add(f"o{k}", torch.stack([
            torch.stack([(~torch.isfinite(x)).sum().float().to(dev) for x in parts]).sum(),
            torch.stack([torch.isnan(x).any().float().to(dev) for x in parts]).amax()]))
        inputs = e.float_inputs
        if inputs:
            g.add(f"i{k}", torch.stack([(~torch.isfinite(x.detach())).sum().float().to(dev)
                                        for x in inputs]).sum())
    host = g.fetch()  # the second sync of this step; only on the step a value turns non-finite
    for k, e in enumerate(stash):
        if f"f{k}" in host:
            total = host[f"f{k}"][0]
            if math.isfinite(total):
                continue
            count, has_nan, exact = 1.0, math.isnan(total), False  # count unknown
            inputs_finite: bool | None = True  # every earlier output was finite
        else:
            count, nan_flag = host[f"o{k}"]
            if count <= 0:
                continue
            has_nan, exact = nan_flag > 0, True
            inputs_finite = _inputs_finite(host, k)
        inner = None
        if inputs_finite is False:
            # no earlier module output was non-finite, yet this module's input is: the value
            # was born in an enclosing module's own code, between its submodules' calls
            # (a functional matmul, softmax or log in a forward()); blame that module
            j = _enclosing(stash, k)
            inner = e.name if j is not None else None
            while j is not None:
                k, e = j, stash[j]
                if e.name == "":  # the model's own arguments: the batch was checked before
                    # the forward pass, its other arguments are checked now
                    came_in = argument_origin(site, step, b)
                    if came_in is not None:
                        return came_in
                    inputs_finite = True
                    break
                inputs_finite = _inputs_finite(host, k)
                if inputs_finite is not False:
                    break
                j = _enclosing(stash, k)
        unit = site.units[e.unit] if e.unit >= 0 else None
        scale = _input_scale(e.float_inputs) if inputs_finite else {}
        rerun = None
        if b.amp == "float16" and inputs_finite and e.args:
            rerun = rerun_in_float32(e.module, e.args)  # overflow, or unsafe in any precision?
        return nonfinite_origin(step, e.name, Direction.FORWARD, count, has_nan,
                                module_type=e.module_type, inputs_finite=inputs_finite,
                                has_params=bool(unit.params) if unit is not None else None,
                                exact=True, count_exact=exact, first_seen_in=inner,
                                replayed=b.replayed or None,
                                fp32_finite=None if rerun is None else rerun.finite,
                                fp32_max_abs=None if rerun is None else rerun.max_abs,
                                **scale)
    return None


def _input_scale(inputs: list[torch.Tensor]) -> dict[str, float]:
    """How large and how degenerate the (finite) inputs of the module where a value was born
    were: an overflow follows from large inputs, 0/0 or sqrt(0) from exact zeros, and most of
    all from vectors (along the last dimension) that are zero as a whole: a padding token's
    features, an empty capsule. Read for that one module, in one more transfer on that step."""
    if not inputs:
        return {}
    dev = inputs[0].device
    parts, n, n_rows = [], 0, 0
    for x in (t.detach() for t in inputs):
        zero = x == 0
        vectors = zero.reshape(-1, x.shape[-1]) if x.dim() and x.shape[-1] else zero.reshape(-1, 1)
        top = x.abs().amax().float() if x.numel() else torch.zeros((), device=x.device)
        parts.append(torch.stack([top, zero.sum().float(), vectors.all(-1).sum().float()]
                                 ).to(dev))
        n, n_rows = n + x.numel(), n_rows + vectors.shape[0]
    stats = torch.stack(parts)
    top_abs, zeros, zero_rows = torch.cat([stats[:, :1].amax(0), stats[:, 1:].sum(0)]).tolist()
    return {"input_max_abs": top_abs, "input_zero_frac": zeros / n if n else 0.0,
            "input_zero_rows": zero_rows / n_rows if n_rows else 0.0}


def _loss_inputs(site: OriginSite, b: StepBuffer) -> dict[str, Any]:
    """For a value born in the loss: the unit that produced the model's output (the same
    storage), and how many output values sit exactly on 0 or 1, where log, log(1 - p),
    division and their gradients break. Empty when the outputs were not kept."""
    stash = site.stash_entries(b)
    roots = [e for e in stash if e.name == "" and e.output is not None]
    if not roots:
        return {}
    out = roots[-1].output
    assert out is not None
    ptr = out.untyped_storage().data_ptr()
    producer = next((e for e in reversed(stash) if e.unit >= 0 and e.name != ""
                     and e.output is not None
                     and e.output.untyped_storage().data_ptr() == ptr), None)
    if producer is None:
        return {}
    o = out.detach()
    counts = torch.stack([(o == 0).sum(), (o == 1).sum()]).tolist()  # the hunt step only
    return {"output_layer": producer.name, "output_zeros": int(counts[0]),
            "output_ones": int(counts[1]), "output_numel": o.numel()}


def argument_origin(site: OriginSite, step: int, b: StepBuffer) -> Event | None:
    """A non-finite value that came into the model with one of its arguments other than the
    measured batch (a second positional input, a context set, a conditioning tensor; masks
    left out, whose -inf is by design): born in the input, as a non-finite batch is."""
    for args, kwargs in b.model_args:
        for name, t in call_tensors(args, kwargs, site.arg_names):
            count, has_nan = nonfinite_count([t.detach()])
            if count > 0:
                return nonfinite_origin(step, INPUT, Direction.INPUT, count, has_nan,
                                        tensor="input", argument=name)
    return None


def _flags(rest: tuple[torch.Tensor, ...]) -> list[torch.Tensor]:
    """One-element sums of the other outputs (non-finite exactly when the tensor is)."""
    return [r.detach().sum(dtype=torch.float32) for r in rest]


def _inputs_finite(host: dict[str, list[float]], k: int) -> bool | None:
    return None if f"i{k}" not in host else host[f"i{k}"][0] == 0


def _enclosing(stash: list[StashEntry], k: int) -> int | None:
    """The innermost module enclosing stash entry k: the first later entry (modules complete
    after their submodules) whose name is a prefix of k's (the root, "", encloses all)."""
    name = stash[k].name
    for j in range(k + 1, len(stash)):
        other = stash[j].name
        if other == "" or name.startswith(other + "."):
            return j
    return None


def _backward_origin(site: OriginSite, step: int, grads: list[float]) -> Event | None:
    """The non-finite parameter gradient first in backward order (latest in forward order)."""
    bad = [i for i in range(len(site.units)) if not math.isfinite(grads[i])]
    if not bad:
        return None
    order = site.layer_order

    def forward_pos(i: int) -> int:
        return order.get(site.names[i], -1)

    i = max(bad, key=forward_pos)
    unit = site.units[i]
    grads_t = [local(p.grad) for p in unit.params if p.grad is not None and not p.grad.is_sparse]
    has_nan = math.isnan(grads[i])
    count = 1.0
    if grads_t:
        count, has_nan = nonfinite_count(grads_t)
    return nonfinite_origin(step, unit.name, Direction.BACKWARD, count, has_nan,
                            module_type=unit.module_type, layers_nonfinite=len(bad), exact=True)


def origin_event(site: OriginSite, step: int, b: StepBuffer, loss: float | None,
                 inp: BatchStats | None, tgt: BatchStats | None, grads: list[float] | None,
                 act: dict[int, list[float]], scaler_skipped: bool) -> Event:
    """The `nonfinite_origin` event for the step where the run first turned non-finite."""
    extra: dict[str, Any] = {"scaler_skipped": True} if scaler_skipped else {}
    for label, vals in (("input", inp), ("target", tgt)):
        if vals is not None and vals.nonfinite > 0:
            return nonfinite_origin(step, INPUT, Direction.INPUT, vals.nonfinite,
                                    vals.has_nan > 0, tensor=label, **extra)
    ev = b.forward_origin if b.hunted else forward_origin(site, step, b)
    if ev is not None:
        return _with_facts(ev, dataclasses.replace(ev.birth, **extra))
    if act:  # activations seen non-finite on a full step while outputs were not kept
        for i in sorted(act, key=lambda i: site.layer_order.get(site.names[i], 1 << 30)):
            if act[i][_NF] > 0:
                return nonfinite_origin(step, site.names[i], Direction.FORWARD, act[i][_NF],
                                        act[i][_NAN] > 0, module_type=site.units[i].module_type,
                                        exact=False, **extra)
    if loss is not None and not math.isfinite(loss):
        return nonfinite_origin(step, LOSS, Direction.LOSS, 1.0, math.isnan(loss),
                                exact=bool(b.stash), **extra, **_loss_inputs(site, b),
                                loss_half_ops=half_ops(b.loss_node, set(b.output_nodes)))
    if grads is not None:
        ev = b.backward_origin or _backward_origin(site, step, grads)
        if ev is not None:
            return _with_facts(ev, dataclasses.replace(ev.birth, **extra))
    return nonfinite_origin(step, LOSS, Direction.LOSS, 1.0, True, exact=False, **extra)
