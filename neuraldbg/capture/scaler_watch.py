"""The GradScaler side of a step: the scale a backward pass used (`scale_tensor`), and, when the
user did not give the monitor their scaler, noticing that one unscaled the gradients
(`MissingScalerCheck`): otherwise gradient norms are recorded scaled and the steps the scaler
skips read as non-finite gradients."""

from __future__ import annotations

from typing import Any, Protocol

import torch

from neuraldbg.capture.step_buffer import StepBuffer
from neuraldbg.reporting import Reporter

#: Optimizer steps on which a scaler the monitor was not given is looked for.
SCALER_CHECKS = 5
NO_SCALER = (
    "neuraldbg: a GradScaler unscaled the gradients before the optimizer's step (they shrank "
    "by exactly {factor:.0f}), but the monitor was not given it, so gradient norms are recorded "
    "as scaled (large) and the steps the scaler skips as non-finite gradients: pass it, "
    "NeuralDbg(model, scaler=scaler) (Hugging Face's Trainer: scaler=trainer.accelerator.scaler).")


def scale_tensor(scaler: Any) -> torch.Tensor | None:
    """The enabled scaler's current scale tensor (read by reference: no sync), else None."""
    if scaler is None or not getattr(scaler, "is_enabled", lambda: True)():
        return None
    s = getattr(scaler, "_scale", None)
    return s if isinstance(s, torch.Tensor) else None


class UnscaleProbe(Protocol):
    def unscaled_by(self, b: StepBuffer) -> float | None: ...


class MissingScalerCheck:
    """On the first `SCALER_CHECKS` optimizer steps of a monitor given no scaler: warn when the
    gradients shrank by an exact power of two since the backward pass (`GradNorms.unscaled_by`)."""

    def __init__(self, scaler: Any, reporter: Reporter) -> None:
        self.left = SCALER_CHECKS if scaler is None else 0
        self.reporter = reporter

    def check(self, grads: UnscaleProbe, b: StepBuffer) -> None:
        self.left -= 1
        try:
            factor = grads.unscaled_by(b)
        except Exception as e:
            self.reporter.internal_error("checking for a GradScaler", e)
            return
        if factor is not None:
            self.left = 0
            self.reporter.warn(NO_SCALER.format(factor=factor))
