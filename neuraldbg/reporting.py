"""How the capture's parts report what goes wrong without stopping training: one small interface,
`Reporter`, that the monitor implements with `RunReporter` (a warning once per message, kept in
the run file's meta so the diagnosis can repeat it; an internal error stops recording)."""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from collections.abc import Callable
from types import FrameType
from typing import Protocol

import torch

from causal.schema.run_file import RunWriter
from neuraldbg.errors import NeuralDbgWarning


class Reporter(Protocol):
    """What a collaborator of the monitor may report."""

    def warn(self, message: str) -> None:
        """A misuse the monitor sees but cannot mend (training goes on)."""

    def storage_fault(self, message: str) -> None:
        """The run file cannot be written any more: recording stops, training goes on."""

    def internal_error(self, where: str, error: BaseException) -> None:
        """A bug in neuraldbg: recording stops, training goes on, the run keeps what it has."""


def user_stacklevel() -> int:
    """The `stacklevel` of the innermost caller outside neuraldbg and torch (a hook runs deep
    inside `loss.backward()`: the warning points at the user's line)."""
    inside = (os.path.dirname(__file__), os.path.dirname(torch.__file__))
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(inside):
        frame, level = frame.f_back, level + 1
    return level


class RunReporter:
    """The monitor's `Reporter`: warns once per message and keeps the messages in the run file;
    an internal error also calls `stop` (the capture stops recording)."""

    def __init__(self) -> None:
        self.warned: list[str] = []
        self.writer: RunWriter | None = None
        self.stop: Callable[[], None] | None = None

    def warn(self, message: str) -> None:
        if message in self.warned:
            return
        self.warned.append(message)
        warnings.warn(message, NeuralDbgWarning, stacklevel=user_stacklevel())
        if self.writer is not None:
            with contextlib.suppress(Exception):
                self.writer.set_meta(warnings=list(self.warned))

    def storage_fault(self, message: str) -> None:
        """The run file cannot be written any more (the writer stops writing): warn once, keep it
        in the status line, stop recording."""
        warnings.warn(message, NeuralDbgWarning, stacklevel=user_stacklevel())
        if self.stop is not None:
            self.stop()

    def internal_error(self, where: str, error: BaseException) -> None:
        warnings.warn(
            f"neuraldbg stopped recording after an internal error in {where}: "
            f"{type(error).__name__}: {error}. Training continues; the run file keeps what was "
            "recorded.",
            NeuralDbgWarning,
            stacklevel=user_stacklevel(),
        )
        if self.writer is not None:
            with contextlib.suppress(Exception):
                self.writer.set_meta(internal_error=f"{where}: {type(error).__name__}: {error}")
        if self.stop is not None:
            self.stop()
