"""The monitor's `TorchFunctionMode`s are entered in one hook and left in another: leaving one
must not pop a mode the user (or another library) pushed after it."""

from __future__ import annotations

from torch.overrides import TorchFunctionMode, _get_current_function_mode_stack


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
