"""The monitor's `TorchFunctionMode`s: entered in one hook and left in another, leaving one must
not pop a mode the user (or another library) pushed after it; and a call they intercept must warn
as it would without them (`call_as_user`)."""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable
from types import FrameType
from typing import Any

import torch
from torch._C import _len_torch_function_stack, _pop_torch_function_stack
from torch.overrides import TorchFunctionMode, _get_current_function_mode_stack, _push_mode


def current_mode() -> TorchFunctionMode | None:
    """The innermost function mode in force, if any."""
    stack = _get_current_function_mode_stack()
    return stack[-1] if stack else None


def leave(mode: TorchFunctionMode) -> bool:
    """Take `mode` off the stack when it is on top. False when a mode pushed later is still on:
    `mode` stays on the stack, and the caller makes it do nothing."""
    if current_mode() is not mode:
        return False
    mode.__exit__(None, None, None)
    return True


def remove(mode: TorchFunctionMode) -> bool:
    """Take `mode` off the stack wherever it is: the modes pushed after it (another monitor's,
    the user's) are put back in their order, so each still leaves as it expects. False when
    `mode` is not on this thread's stack."""
    above: list[TorchFunctionMode] = []
    found = False
    while _len_torch_function_stack() > 0:
        top = _pop_torch_function_stack()
        if top is mode:
            found = True
            break
        above.append(top)
    for m in reversed(above):
        _push_mode(m)
    return found


#: Frames in these directories are not the user's (torch's own, and neuraldbg's).
_NOT_USER = (os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
             os.path.dirname(os.path.abspath(torch.__file__)))


def call_as_user(func: Callable[..., Any], args: Any, kwargs: Any) -> Any:
    """Run a call a mode intercepted. A warning it raises would point at the mode's frame (its
    stacklevel counts from there): each one shown is issued again at the user's line instead,
    under the user's filters and their once-per-line registry. (`warnings.showwarning` is
    swapped, not the filters: changing those would reset every module's once-per-line memory,
    and the user's own warnings would repeat.)"""
    shown: list[tuple[Any, type[Warning]]] = []

    def keep(message: Any, category: type[Warning], *rest: Any, **kw: Any) -> None:
        shown.append((message, category))

    before = warnings.showwarning
    warnings.showwarning = keep
    try:
        return func(*args, **kwargs)
    finally:
        warnings.showwarning = before
        if shown:
            _issue_at_user_line(shown)


def _issue_at_user_line(shown: list[tuple[Any, type[Warning]]]) -> None:
    frame: FrameType | None = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith(_NOT_USER):
        frame = frame.f_back
    if frame is None:
        return
    g = frame.f_globals
    for message, category in shown:
        warnings.warn_explicit(message, category, frame.f_code.co_filename, frame.f_lineno,
                               module=g.get("__name__"),
                               registry=g.setdefault("__warningregistry__", {}),
                               module_globals=g)
