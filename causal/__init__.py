"""The inference side of neuraldbg: reads a Run and reasons about it. Never imports torch."""

from causal.causes.base import CauseNode
from causal.diagnose import REPORT_THRESHOLD, Diagnosis, diagnose
from causal.errors import NeuralDbgError, RunFileError
from causal.hypothesis import Hypothesis, Localization
from causal.registry import register_cause, register_symptom
from causal.schema.run import Event, LayerGraph, Run
from causal.schema.run_file import load_run
from causal.symptoms.base import Symptom

__all__ = [
    "REPORT_THRESHOLD", "CauseNode", "Diagnosis", "Event", "Hypothesis", "LayerGraph",
    "Localization", "NeuralDbgError", "Run", "RunFileError", "Symptom", "diagnose", "load_run",
    "register_cause", "register_symptom",
]
