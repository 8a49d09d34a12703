"""A monitored model can be pickled, deep-copied and sent to another process.

The monitor's hooks live in the model's hook dictionaries and hold the monitor (its run file's
SQLite connection included), so `torch.save(model)`, `copy.deepcopy(model)` (an EMA or teacher
copy) and a model sent to a worker process would try to copy the monitor too, and fail.
`install()` wraps `nn.Module.__getstate__` (what pickle and deepcopy call) so that a module's
copied state leaves out every hook defined in the `neuraldbg` package: the copy carries no monitor
and no hook of ours, loads where neuraldbg is not installed, and the original stays monitored.
Every other hook, and every module no monitor watches, is copied exactly as before.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from torch import nn

#: The hook dictionaries of `nn.Module` (hook id -> callable).
HOOK_DICTS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")
#: The flags torch keeps per hook id beside them (hook id -> True).
HOOK_FLAGS = ("_forward_hooks_with_kwargs", "_forward_hooks_always_called",
              "_forward_pre_hooks_with_kwargs")
_PACKAGE = __name__.split(".", 1)[0]


def is_monitor_hook(fn: Any) -> bool:
    """Whether a hook callable was defined in this package (a bound method or a closure)."""
    module = getattr(fn, "__module__", None) or ""
    return module == _PACKAGE or module.startswith(_PACKAGE + ".")


def without_monitor_hooks(state: dict[str, Any]) -> dict[str, Any]:
    """A module's state (its `__dict__` copy) with the monitor's hooks left out."""
    dropped: set[int] = set()
    for key in HOOK_DICTS:
        hooks = state.get(key)
        if hooks and any(is_monitor_hook(fn) for fn in hooks.values()):
            dropped.update(k for k, fn in hooks.items() if is_monitor_hook(fn))
            state[key] = OrderedDict((k, fn) for k, fn in hooks.items() if k not in dropped)
    if dropped:
        for key in HOOK_FLAGS:
            flags = state.get(key)
            if flags:
                state[key] = OrderedDict((k, v) for k, v in flags.items() if k not in dropped)
    return state


def _copy_safe(getstate: Callable[[nn.Module], dict[str, Any]]) -> Callable[..., Any]:
    @functools.wraps(getstate)
    def __getstate__(self: nn.Module) -> dict[str, Any]:
        return without_monitor_hooks(getstate(self))

    __getstate__.__neuraldbg_copy_safe__ = True  # type: ignore[attr-defined]
    return __getstate__


def install() -> None:
    """Make module copies leave the monitor's hooks out (idempotent; process-wide)."""
    current = nn.Module.__getstate__
    if not getattr(current, "__neuraldbg_copy_safe__", False):
        nn.Module.__getstate__ = _copy_safe(current)  # type: ignore[method-assign]
