"""neuraldbg: what broke in a PyTorch training run, where, and why.

`import neuraldbg` stays light: the monitor (and torch) load on first use of `NeuralDbg`, so
reading a run file with `load_run` works where torch is not installed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from causal.cause import CauseNode
from causal.diagnose import diagnose
from causal.errors import (
    ConfigError,
    MonitorStateError,
    NeuralDbgError,
    RecordError,
    RunFileError,
)
from causal.hypothesis import Hypothesis
from causal.registry import register_cause, register_symptom
from causal.run import Event, LayerGraph, Run
from causal.runfile import load_run
from causal.symptom import Symptom

if TYPE_CHECKING:
    from neuraldbg.monitor import NeuralDbg, NeuralDbgWarning
    from neuraldbg.schedule import Schedule, every

__version__ = "0.1.0"

__all__ = [
    "CauseNode",
    "ConfigError",
    "Event",
    "Hypothesis",
    "LayerGraph",
    "MonitorStateError",
    "NeuralDbg",
    "NeuralDbgError",
    "NeuralDbgWarning",
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
    "NeuralDbgWarning": "neuraldbg.monitor",
    "Schedule": "neuraldbg.schedule",
    "every": "neuraldbg.schedule",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'neuraldbg' has no attribute {name!r}")
