"""The exception tree of the inference side. `NeuralDbgError` is the one root of every error
neuraldbg raises on purpose (the capture side's are in `neuraldbg.errors`); messages name the
problem and the fix.

    NeuralDbgError
    +-- ArgumentError    a public function got an argument it cannot use (the message says which)
    +-- RunFileError     a run file cannot be written or read
    +-- SymptomError     a symptom is ill-defined, or a distribution is not one
    +-- CauseError       a cause node is ill-defined
    +-- RegistryError    a registration is refused
    +-- NetworkError     the network cannot be built from the registry
    +-- FitError         observations, a fitted-parameters file or a registry do not fit together
"""

from __future__ import annotations

__all__ = ["ArgumentError", "CauseError", "FitError", "NetworkError", "NeuralDbgError",
           "RegistryError", "RunFileError", "SymptomError"]


class NeuralDbgError(Exception):
    """Base of every error neuraldbg raises on purpose."""


class ArgumentError(NeuralDbgError, TypeError):
    """A public function got an argument of a type it cannot use; the message names the fix."""


class RunFileError(NeuralDbgError, OSError):
    """A run file cannot be written or read."""


class SymptomError(NeuralDbgError, ValueError):
    """A symptom is ill-defined, or a distribution over its states is not a distribution."""


class CauseError(NeuralDbgError, ValueError):
    """A cause node is ill-defined (name, prior, likelihoods); the message names the fix."""


class RegistryError(NeuralDbgError, ValueError):
    """A cause or symptom cannot be registered; the message names the fix."""


class NetworkError(NeuralDbgError, ValueError):
    """The Bayesian network cannot be built from the registry; the message names the node."""


class FitError(NeuralDbgError, ValueError):
    """Observations, a fitted-parameters file or a registry do not fit together."""
