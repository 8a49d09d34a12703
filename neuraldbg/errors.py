"""The capture side's exceptions and its warning. Every error neuraldbg raises on purpose is a
`NeuralDbgError` (the root lives in `causal.errors`, so the torch-free side shares it); messages
name the problem and the fix.

    NeuralDbgError
    +-- ConfigError         a monitor setting is invalid (at construction, never mid-training)
    +-- RecordError         a value handed to the monitor cannot be recorded
    +-- MonitorStateError   the monitor used outside its lifetime
    +-- NonFiniteError      a step turned non-finite and NeuralDbg(on_nonfinite="raise") halted it
    +-- ScenarioError       a scenario file breaks the contract
    +-- SuiteError          a suite directory is missing or empty
    +-- DagTraceError       torch.fx cannot trace the model (caught: the DAG is recorded instead)
    +-- (causal.errors)     ArgumentError, RunFileError, CauseError, SymptomError, RegistryError,
                            NetworkError, FitError
"""

from __future__ import annotations

from typing import Any

from causal.errors import ArgumentError, NeuralDbgError, RunFileError

__all__ = [
    "ArgumentError",
    "ConfigError",
    "DagTraceError",
    "MonitorStateError",
    "NeuralDbgError",
    "NeuralDbgWarning",
    "NonFiniteError",
    "RecordError",
    "RunFileError",
    "ScenarioError",
    "SuiteError",
]


class ConfigError(NeuralDbgError, ValueError):
    """A monitor setting is invalid (raised at construction, never mid-training)."""


class RecordError(NeuralDbgError, ValueError):
    """A value handed to the monitor (`record_loss`, `step`) cannot be recorded."""


class MonitorStateError(NeuralDbgError, RuntimeError):
    """The monitor was used outside its lifetime (before `__enter__` or after `__exit__`)."""


class NonFiniteError(NeuralDbgError, FloatingPointError):
    """Raised from the optimizer's pre-step hook under `NeuralDbg(on_nonfinite="raise")`: the
    step's loss or gradients are non-finite, and the update was not applied (the weights and
    the optimizer's state are those before it). `step`, `origin` (the event recording where
    the first non-finite value was born, or None) and `diagnosis` (the run's, at that step)."""

    def __init__(self, message: str, step: int, origin: Any, diagnosis: Any) -> None:
        super().__init__(message)
        self.step = step
        self.origin = origin
        self.diagnosis = diagnosis


class ScenarioError(NeuralDbgError, ValueError):
    """A scenario file does not follow the contract; the message names the file and the fix."""


class SuiteError(NeuralDbgError, ValueError):
    """A suite directory is missing or holds no scenario files; the message says what to pass."""


class DagTraceError(NeuralDbgError, RuntimeError):
    """torch.fx could not trace the model (the layer DAG is then recorded from a real pass)."""


class NeuralDbgWarning(UserWarning):
    """neuraldbg saw a misuse it cannot mend, or hit an internal problem and stopped recording
    part of the run (never raised: training goes on)."""
