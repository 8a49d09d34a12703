"""neuraldbg: what broke in a PyTorch training run, where, and why.

`import neuraldbg` stays light: the monitor (and torch) load on first use of `NeuralDbg`, so
reading a run file with `load_run` works where torch is not installed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from causal.causes.base import CauseNode
from causal.diagnose import REPORT_THRESHOLD, Diagnosis, diagnose
from causal.hypothesis import Hypothesis, Localization
from causal.registry import register_cause, register_symptom
from causal.schema.run import Event, LayerGraph, Run
from causal.schema.run_file import load_run
from causal.symptoms.base import Symptom
from neuraldbg.errors import (
    ArgumentError,
    ConfigError,
    MonitorStateError,
    NeuralDbgError,
    NeuralDbgWarning,
    NonFiniteError,
    RecordError,
    RunFileError,
)
from neuraldbg.version import __version__ as __version__

if TYPE_CHECKING:
    from neuraldbg.monitor import NeuralDbg
    from neuraldbg.schedule import Schedule, every


__all__ = [
    "REPORT_THRESHOLD",
    "ArgumentError",
    "CauseNode",
    "ConfigError",
    "Diagnosis",
    "Event",
    "Hypothesis",
    "LayerGraph",
    "Localization",
    "MonitorStateError",
    "NeuralDbg",
    "NeuralDbgError",
    "NeuralDbgWarning",
    "NonFiniteError",
    "RecordError",
    "Run",
    "RunFileError",
    "Schedule",
    "Symptom",
    "diagnose",
    "every",
    "load_run",
    "register_cause",
    "register_symptom",
]

_LAZY = {
    "NeuralDbg": "neuraldbg.monitor",
    "Schedule": "neuraldbg.schedule",
    "every": "neuraldbg.schedule",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'neuraldbg' has no attribute {name!r}")
