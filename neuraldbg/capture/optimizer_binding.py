"""Which optimizer ends the monitored model's steps, and the settings it runs with.

The optimizer step hooks are global: every optimizer in the process calls them. The one that
updates this model's parameters is bound (the latest such one wins: a new optimizer after a
restart); its step closes the monitor's step. Its learning rates, the precision in force and,
with several param groups, which monitored modules each group updates, are the run's settings,
written to the run file only when they change.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Iterable
from typing import Any

import torch

from neuraldbg.capture.watched_units import Unit


class OptimizerBinding:
    """The optimizer bound to one model's parameters, and its settings."""

    def __init__(self, params: Iterable[torch.Tensor], units: list[Unit]) -> None:
        self.param_ids = {id(p) for p in params}
        self.units = units
        # optimizer -> updates this model's parameters (weakly: a freed optimizer's id goes to
        # the next one made, which may be this model's own after a restart)
        self.known: weakref.WeakKeyDictionary[torch.optim.Optimizer, bool] = (
            weakref.WeakKeyDictionary())
        self.ref: weakref.ReferenceType[torch.optim.Optimizer] | None = None
        self._settings_key: tuple[Any, ...] = ()
        self._settings_last: dict[str, str] = {}
        self._groups_key: tuple[Any, ...] = ()
        self._groups_last: dict[str, str] = {}

    @property
    def known_yet(self) -> bool:
        """Whether an optimizer of this model has stepped yet."""
        return self.ref is not None

    def current(self) -> torch.optim.Optimizer | None:
        return self.ref() if self.ref is not None else None

    def bind(self, opt: torch.optim.Optimizer) -> bool:
        """Whether `opt` updates this model's parameters (then it is the one that ends steps)."""
        bound = self.known.get(opt)
        if bound is None:
            bound = any(id(p) in self.param_ids for g in opt.param_groups for p in g["params"])
            self.known[opt] = bound
        if bound and (self.ref is None or self.ref() is not opt):
            self.ref = weakref.ref(opt)
        return bound

    def settings(self, amp: str) -> dict[str, str]:
        """Rarely changing settings in force now (the caller writes only what changed)."""
        opt = self.current()
        lrs = tuple([g.get("lr") for g in opt.param_groups]) if opt is not None else ()
        key = (amp, _same(opt), lrs)
        if key == self._settings_key:
            return self._settings_last
        settings = {"amp_dtype": amp}
        if opt is not None:
            settings["optimizer"] = type(opt).__name__
            for i, lr in enumerate(lrs):
                settings[f"lr/{i}"] = repr(float(lr if lr is not None else math.nan))
            settings.update(self._group_members(opt))
        self._settings_key, self._settings_last = key, settings
        return settings

    def _group_members(self, opt: torch.optim.Optimizer) -> dict[str, str]:
        """With several param groups, which monitored modules each one updates
        (`lr_group/<i>`: their names, space-separated), so that a learning rate too high in one
        group can be traced to its modules. Computed once per optimizer (and group count)."""
        key = (_same(opt), len(opt.param_groups))
        if self._groups_key == key:
            return self._groups_last
        out: dict[str, str] = {}
        if len(opt.param_groups) > 1:
            owner: dict[int, list[str]] = {}
            for u in self.units:
                for p in u.params:
                    owner.setdefault(id(p), []).append(u.name)
            for i, g in enumerate(opt.param_groups):
                names = dict.fromkeys(n for p in g["params"] for n in owner.get(id(p), ()))
                out[f"lr_group/{i}"] = " ".join(names)
        self._groups_key, self._groups_last = key, out
        return out


def _same(opt: torch.optim.Optimizer | None) -> weakref.ReferenceType[Any] | None:
    """A key equal only for the same live optimizer: weak references compare by their objects
    while alive, by themselves once dead (an id would match the next optimizer made there)."""
    return weakref.ref(opt) if opt is not None else None
