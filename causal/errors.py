"""The exception tree. `NeuralDbgError` is the one root; messages name the problem and the fix."""

from __future__ import annotations


class NeuralDbgError(Exception):
    """Base of every error neuraldbg raises on purpose."""


class ConfigError(NeuralDbgError, ValueError):
    """A monitor setting is invalid (raised at construction, never mid-training)."""


class RecordError(NeuralDbgError, ValueError):
    """A value handed to the monitor (`record_loss`, `step`) cannot be recorded."""


class RunFileError(NeuralDbgError, OSError):
    """A run file cannot be written or read."""


class MonitorStateError(NeuralDbgError, RuntimeError):
    """The monitor was used outside its lifetime (before `__enter__` or after `__exit__`)."""
