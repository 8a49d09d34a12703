"""The public API is small and pinned: adding or removing a name is a deliberate change."""

from __future__ import annotations

import causal
import causal.errors
import neuraldbg
import neuraldbg.errors


def test_neuraldbg_all():
    assert sorted(neuraldbg.__all__) == sorted([
        "REPORT_THRESHOLD", "ArgumentError", "CauseNode", "ConfigError", "Diagnosis", "Event",
        "Hypothesis",
        "LayerGraph", "Localization", "MonitorStateError",
        "NeuralDbg", "NeuralDbgError", "NeuralDbgWarning", "NonFiniteError", "RecordError", "Run",
        "RunFileError",
        "Schedule", "Symptom", "diagnose", "every", "load_run", "register_cause",
        "register_symptom",
    ])
    for name in neuraldbg.__all__:
        assert getattr(neuraldbg, name) is not None


def test_causal_all():
    assert sorted(causal.__all__) == sorted([
        "REPORT_THRESHOLD", "CauseNode", "Diagnosis", "Event", "Hypothesis", "LayerGraph",
        "Localization", "NeuralDbgError", "Run", "RunFileError", "Symptom", "diagnose",
        "load_run", "register_cause", "register_symptom"])
    for name in causal.__all__:
        assert getattr(causal, name) is not None


def test_one_exception_root():
    for name in ("ArgumentError", "ConfigError", "MonitorStateError", "RecordError",
                 "RunFileError"):
        assert issubclass(getattr(neuraldbg, name), neuraldbg.NeuralDbgError)
    for module in (neuraldbg.errors, causal.errors):
        for name in module.__all__:
            obj = getattr(module, name)
            if isinstance(obj, type) and issubclass(obj, Exception) \
                    and not issubclass(obj, Warning):
                assert issubclass(obj, neuraldbg.NeuralDbgError), name
