"""The inference side of neuraldbg: reads a Run and reasons about it. Never imports torch."""

from causal.cause import CauseNode
from causal.diagnose import diagnose
from causal.errors import NeuralDbgError, RunFileError
from causal.hypothesis import Hypothesis, Localization
from causal.registry import register_cause, register_symptom
from causal.run import Event, LayerGraph, Run
from causal.runfile import load_run
from causal.symptom import Symptom

__all__ = [
    "CauseNode", "Event", "Hypothesis", "LayerGraph", "Localization", "NeuralDbgError", "Run",
    "RunFileError", "Symptom", "diagnose", "load_run", "register_cause", "register_symptom",
]
