"""The inference side of neuraldbg: reads a Run and reasons about it. Never imports torch."""

from causal.errors import NeuralDbgError, RunFileError
from causal.run import Event, LayerGraph, Run
from causal.runfile import load_run

__all__ = ["Event", "LayerGraph", "NeuralDbgError", "Run", "RunFileError", "load_run"]
