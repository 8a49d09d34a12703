"""The monitor's `TorchFunctionMode`s are entered in one hook and left in another: leaving one
must not pop a mode the user (or another library) pushed after it."""

from __future__ import annotations

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
