"""Activations applied as functions inside a module's own code (`torch.tanh(x)`, `F.relu(x)`,
`x.sigmoid()`, a ReLU written `h.clamp(min=0)`): gates, hand-written cells and custom
activation modules never show up as an `nn.Tanh` or `nn.ReLU` module, yet saturate or die all
the same.

On a full-statistics step the monitor runs the forward pass under `ActivationWatch`, a
`TorchFunctionMode` that sees every torch function call. Each call to a saturating or ReLU-family
function yields a row (saturated fraction, zero fraction, dead fraction) for the function's
output, which the monitor credits to the unit that applied it (the innermost unit running) or,
for an activation written in a container's code, to the unit that produced its input. Quiet
steps run without it.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.overrides import TorchFunctionMode, _pop_mode, _push_mode
from torch.utils.hooks import RemovableHandle

from causal.schema.run import ActivationKind, LayerStat
from neuraldbg.capture.function_modes import call_as_user, current_mode, leave
from neuraldbg.capture.tensor_stats import ACT_COLUMNS, activation_fractions
from neuraldbg.capture.watched_units import Unit, activation_kind

Row = torch.Tensor  # (saturated fraction, zero fraction, dead fraction); NaN where not applicable
_SAT = ACT_COLUMNS.index(LayerStat.ACT_SATURATED)  # zero and dead fractions follow it
assert ACT_COLUMNS[_SAT + 1:_SAT + 3] == (LayerStat.ACT_ZERO, LayerStat.ACT_DEAD)


#: Saturating functions (every spelling torch dispatches separately) -> the activation module
#: that computes the same (its saturation thresholds are the modules', `units.saturation_mask`).
SATURATING_FUNCS: dict[Any, nn.Module] = {
    **dict.fromkeys((torch.tanh, torch.Tensor.tanh, torch.tanh_, torch.Tensor.tanh_, F.tanh),
                    nn.Tanh()),
    **dict.fromkeys((torch.sigmoid, torch.Tensor.sigmoid, torch.sigmoid_, torch.Tensor.sigmoid_,
                     F.sigmoid, torch.special.expit), nn.Sigmoid()),
    F.hardtanh: nn.Hardtanh(), F.softsign: nn.Softsign(), F.hardsigmoid: nn.Hardsigmoid(),
}
#: ReLU-family functions (exact zeros for inactive units; ReLU6 dies like a ReLU).
RELU_FUNCS: frozenset[Any] = frozenset({
    torch.relu, torch.Tensor.relu, torch.relu_, torch.Tensor.relu_, F.relu, F.relu_, F.relu6,
})
_RELU = nn.ReLU()
#: Clamps that are a ReLU when their lower bound is 0 (`h.clamp(min=0)`, the clipped ReLU
#: `x.clamp(0, 1)` of NNUE-style nets), on a value that carries gradients: a clamp on data or
#: positions (an ALiBi distance, a decay mask) is no activation.
CLAMP_MIN_FUNCS: frozenset[Any] = frozenset({  # a lower bound only
    torch.clamp_min, torch.Tensor.clamp_min, torch.clamp_min_, torch.Tensor.clamp_min_,
})
CLAMP_FUNCS: frozenset[Any] = CLAMP_MIN_FUNCS | {
    torch.clamp, torch.Tensor.clamp, torch.clamp_, torch.Tensor.clamp_, torch.clip,
    torch.Tensor.clip, torch.Tensor.clip_,
}


def _clamp_is_relu(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether this clamp call computes a (clipped) ReLU of a value with gradients."""
    if not args or not isinstance(args[0], torch.Tensor) or not args[0].requires_grad:
        return False
    lo = args[1] if len(args) > 1 else kwargs.get("min")
    hi = None
    if func not in CLAMP_MIN_FUNCS:
        hi = args[2] if len(args) > 2 else kwargs.get("max")
    return (_is_number(lo) and lo == 0
            and (hi is None or (_is_number(hi) and hi > 0)))


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def equivalent_module(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
                      ) -> nn.Module | None:
    """The activation module that computes what this call of `func` computes, else None."""
    if func in RELU_FUNCS or (func in CLAMP_FUNCS and _clamp_is_relu(func, args, kwargs)):
        return _RELU
    if func is F.hardtanh and (len(args) > 1 or kwargs):  # its own bounds
        lo = kwargs.get("min_val", args[1] if len(args) > 1 else -1.0)
        hi = kwargs.get("max_val", args[2] if len(args) > 2 else 1.0)
        return nn.Hardtanh(float(lo), float(hi))
    return SATURATING_FUNCS.get(func)


def saturation_bound(module: nn.Module) -> float:
    """The largest |value| a saturating activation module can return."""
    if isinstance(module, nn.Hardtanh):
        return max(abs(module.min_val), abs(module.max_val))
    return 1.0


def activation_row(module: nn.Module, y: torch.Tensor) -> Row:
    """(saturated, zero, dead) fractions of one activation output, on its device."""
    return torch.stack(activation_fractions(module, y, activation_kind(module)))


class ActivationWatch(TorchFunctionMode):
    """Calls `seen(module, output, input)` for every saturating or ReLU-family function applied
    while it is active (`module`: the activation module computing the same), and
    `flow(output, args, kwargs)` for every call (where values come from); the calls themselves
    run untouched."""

    def __init__(self, seen: Callable[..., None],
                 flow: Callable[[Any, tuple[Any, ...], dict[str, Any]], None]) -> None:
        super().__init__()
        self.seen, self.flow = seen, flow
        self.paused = False  # the monitor's own work inside the forward pass (its hooks)

    def __torch_function__(self, func: Any, types: Any, args: tuple[Any, ...] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        kwargs = kwargs or {}
        out = call_as_user(func, args, kwargs)
        if self.paused:
            return out
        module = equivalent_module(func, args, kwargs)
        if module is not None and isinstance(out, torch.Tensor) and out.is_floating_point() \
                and out.numel():
            self.seen(module, out, args[0] if args and isinstance(args[0], torch.Tensor) else None)
        self.flow(out, args, kwargs)
        return out


def merge_rows(act: torch.Tensor, rows: list[Row]) -> torch.Tensor:
    """A unit's activation-statistics row with the (saturated, zero, dead) fractions of the
    activations applied inside it: the largest of each (NaN-aware), next to its own."""
    f = torch.stack(rows).to(act.device, act.dtype)
    top = torch.where(torch.isnan(f).all(0), float("nan"), f.nan_to_num(nan=-1.0).amax(0))
    out = act.clone()
    out[_SAT:_SAT + 3] = torch.fmax(act[_SAT:_SAT + 3], top)
    return out


class InnerActivations:
    """Activations applied as functions during one full-statistics forward pass, credited to
    units: the innermost unit running (its forward pre-hooks keep a stack), else the unit its
    input comes from. Values computed in a container's own code (outside every unit) carry the
    unit they come from: of a call's tensor arguments, the one a unit produced last
    (`torch.tanh(F.linear(h, W))` with W made by a hypernetwork unit is that unit's). Units
    that are activation modules themselves (nn.Tanh calls torch.tanh) already measure their own
    output and are skipped.

    A saturating function applied inside a unit makes it a saturating unit only when the
    unit's output stays within that function's range: a gate `tanh(f) * sigmoid(g)` or a cell
    `o * tanh(c)` saturates with it, but a self-gated activation (GPT-2's tanh-approximated
    GELU `0.5 x (1 + tanh(...))`, `x * sigmoid(1.702 x)`, SiLU written by hand) only uses the
    function as a smooth switch and its output grows with its input. Each such unit is checked
    on full-statistics steps (one host read) until its output is once seen outside the range;
    from then on its saturating calls are ignored.

    `kinds` is the monitor's list of the units' activation kinds, updated in place the first
    time a unit is seen applying a saturating or ReLU-family function (ReLU wins over
    saturating, as for modules), when `on_kind(unit, kind)` is called too (with OTHER when a
    unit taken for saturating turns out self-gated); `on_late(unit, row)` when a row arrives
    for a unit whose call has already finished.
    """

    def __init__(self, units: list[Unit], kinds: list[str], on_kind: Callable[[int, str], None],
                 on_late: Callable[[int, Row], None]) -> None:
        self.units = units
        self.native = [u.kind != ActivationKind.OTHER for u in units]
        self.kinds = kinds
        self.on_kind, self.on_late = on_kind, on_late
        self.watch: ActivationWatch | None = None
        self._popped = False  # the watch is off the mode stack while the monitor's hook works
        self.handles: list[RemovableHandle] = []
        self.stack: list[int] = []
        # id(tensor) -> (unit it comes from, production order, the tensor, weakly)
        self.produced: dict[int, tuple[int, int, weakref.ref[torch.Tensor]]] = {}
        self.seq = 0
        self.pending: dict[int, list[Row]] = {}
        # rows of saturating functions applied inside a running unit, kept until its output is
        # checked against their range (the largest |value| they can return)
        self.pending_sat: dict[int, tuple[list[Row], float]] = {}
        self.self_gated: set[int] = set()  # units whose output left the range: not saturating

    @property
    def active(self) -> bool:
        return self.watch is not None

    def begin(self) -> None:
        """Watch the forward pass about to run (with a stack of the units running)."""
        self.end()
        for idx, unit in enumerate(self.units):
            self.handles.append(unit.module.register_forward_pre_hook(self._pre_hook(idx)))
        self.watch = ActivationWatch(self._seen, self._flow)
        self.watch.__enter__()

    def end(self) -> None:
        """Stop watching (also after a forward that raised); drop this pass's references."""
        watch, self.watch = self.watch, None
        if self._popped:  # a hook raised while the watch was off the stack: it stays off
            self._popped = False
        elif watch is not None and not leave(watch):  # a mode pushed after ours is still on:
            watch.paused = True  # ours stays, inert
        for h in self.handles:
            h.remove()
        self.handles.clear()
        self.stack.clear()
        self.produced.clear()
        self.pending.clear()
        self.pending_sat.clear()

    def _pre_hook(self, idx: int) -> Callable[[nn.Module, Any], None]:
        def hook(module: nn.Module, args: Any) -> None:
            self.stack.append(idx)

        return hook

    def unit_done(self, idx: int, output: torch.Tensor | None) -> list[Row] | None:
        """Unit `idx` finished a call (its forward hook): the rows credited to that call."""
        if self.stack and self.stack[-1] == idx:
            self.stack.pop()
        if output is not None:
            self._mark(output, idx)
        rows = self.pending.pop(idx, None)
        sat = self.pending_sat.pop(idx, None)
        if sat is not None and self._within(output, sat[1]):
            self._set_kind(idx, ActivationKind.SATURATING)
            rows = [*(rows or []), *sat[0]]
        elif sat is not None:  # self-gated: the function is a switch, not a bound
            self.self_gated.add(idx)
            if self.kinds[idx] == ActivationKind.SATURATING:
                self._set_kind(idx, ActivationKind.OTHER)
        return rows

    def _within(self, output: torch.Tensor | None, bound: float) -> bool:
        """Whether the unit's output stays within the range of its saturating functions."""
        if output is None or not output.is_floating_point() or not output.numel():
            return False
        watch = self.watch
        paused = watch.paused if watch is not None else False
        if watch is not None:
            watch.paused = True  # the check is the monitor's, not the model's
        try:
            top = float(output.detach().abs().amax())  # one host read, until it is out
        finally:
            if watch is not None:
                watch.paused = paused
        return not top > bound * (1 + 1e-3)  # a NaN output says nothing against it

    def _set_kind(self, idx: int, kind: str) -> None:
        if self.kinds[idx] != ActivationKind.RELU and self.kinds[idx] != kind:
            self.kinds[idx] = kind  # ReLU wins over saturating, as for modules
            self.on_kind(idx, kind)

    def _mark(self, t: torch.Tensor, idx: int) -> None:
        self.seq += 1
        self.produced[id(t)] = (idx, self.seq, weakref.ref(t))

    def _source(self, t: Any) -> tuple[int, int] | None:
        """(unit, order) of the unit tensor `t` comes from, if known."""
        if not isinstance(t, torch.Tensor):
            return None
        hit = self.produced.get(id(t))
        return (hit[0], hit[1]) if hit is not None and hit[2]() is t else None

    def _flow(self, out: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """A call in a container's own code: its outputs come from the unit its latest-produced
        tensor argument came from."""
        if self.watch is None or self.stack:
            return
        found = [src for a in (*args, *kwargs.values())
                 for t in (a if isinstance(a, (list, tuple)) else (a,))
                 if (src := self._source(t)) is not None]
        if not found:
            return
        idx = max(found, key=lambda src: src[1])[0]
        for t in (out if isinstance(out, (list, tuple)) else (out,)):
            if isinstance(t, torch.Tensor) and self._source(t) is None:
                self._mark(t, idx)

    def pause(self, paused: bool) -> None:
        """Stop (or go on) watching: the monitor's own torch calls inside the forward pass are
        neither activations of the model nor where its values come from. The mode leaves the
        stack meanwhile when it is on top, so those calls do not pay for a Python dispatch each
        (a deep model's statistics are thousands of calls); under a mode pushed later it stays
        and only ignores them."""
        watch = self.watch
        if watch is None:
            return
        if paused:
            watch.paused = True
            if not self._popped and current_mode() is watch:
                _pop_mode()
                self._popped = True
        else:
            if self._popped:
                _push_mode(watch)
                self._popped = False
            watch.paused = False

    def _seen(self, module: nn.Module, out: torch.Tensor, x: torch.Tensor | None) -> None:
        if self.watch is None:
            return
        if self.stack:
            idx, running = self.stack[-1], True
        elif (src := self._source(x)) is not None:
            idx, running = src[0], False
        else:
            return
        if self.native[idx]:
            return
        kind = activation_kind(module)
        if running and kind == ActivationKind.SATURATING:
            if idx not in self.self_gated:  # judged when the unit's call ends (unit_done)
                rows, bound = self.pending_sat.get(idx, ([], 0.0))
                self.pending_sat[idx] = ([*rows, activation_row(module, out)],
                                         max(bound, saturation_bound(module)))
            return
        self._set_kind(idx, kind)
        row = activation_row(module, out)
        if running:
            self.pending.setdefault(idx, []).append(row)
        else:
            self.on_late(idx, row)
