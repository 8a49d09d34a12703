"""The calibration map's fit: `sigmoid(a * logit(p) + b)` on the top posterior, against "the
top-ranked cause is the true one" (see `causal.calibration.fit` for what it is fitted on and why the
default is a temperature, b = 0)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from causal.calibration.parameters import EPS, Calibration, FitError, _logit

#: Standard deviation of the Gaussian prior on the calibration's (a - 1) and b.
CALIBRATION_PRIOR_SD = 2.0


def top_cause(post: Mapping[str, float]) -> tuple[str | None, float]:
    """The rank-1 cause and its posterior (ties broken by name, as `diagnose` ranks them)."""
    if not post:
        return None, 0.0
    name, p = min(post.items(), key=lambda kv: (-kv[1], kv[0]))
    return name, float(p)


def log_loss(confidences: Sequence[float], correct: Sequence[bool]) -> float:
    """Mean negative log-likelihood of `correct` under `confidences` (clipped to [EPS, 1-EPS])."""
    total = 0.0
    for c, y in zip(confidences, correct, strict=True):
        c = min(max(float(c), EPS), 1.0 - EPS)
        total -= math.log(c) if y else math.log1p(-c)
    return total / len(confidences) if confidences else 0.0


def fit_calibration(top_posteriors: Sequence[float], correct: Sequence[bool],
                    method: str = "platt") -> Calibration:
    """Fit `sigmoid(a * logit(p) + b)` to P(top cause is the true one), by scipy's L-BFGS-B.

    Objective: the summed log-loss plus a Gaussian prior on (a - 1, b) with standard deviation
    `CALIBRATION_PRIOR_SD`. `method` is "platt" (a and b) or "temperature" (b = 0). With no
    observations, or only right or only wrong ones and "temperature", the fit still has a
    finite optimum thanks to the prior.
    """
    import numpy as np
    from scipy.optimize import minimize

    if method not in ("platt", "temperature"):
        raise FitError(f"calibration method {method!r}: use 'platt' or 'temperature'")
    n = len(top_posteriors)
    if n != len(correct):
        raise FitError("top_posteriors and correct must have the same length")
    if n == 0:
        return Calibration("identity")
    x = np.array([_logit(p) for p in top_posteriors], dtype=float)
    y = np.array([1.0 if c else 0.0 for c in correct], dtype=float)
    var = CALIBRATION_PRIOR_SD ** 2

    def objective(theta: Any) -> tuple[float, Any]:
        a, b = float(theta[0]), (float(theta[1]) if method == "platt" else 0.0)
        z = a * x + b
        # log(1 + e^z) - y z, stable; gradient (sigmoid(z) - y) * dz
        nll = float(np.sum(np.logaddexp(0.0, z) - y * z))
        s = 1.0 / (1.0 + np.exp(-z))
        ga = float(np.sum((s - y) * x)) + (a - 1.0) / var
        value = nll + ((a - 1.0) ** 2 + b ** 2) / (2.0 * var)
        if method == "platt":
            gb = float(np.sum(s - y)) + b / var
            return value, np.array([ga, gb])
        return value, np.array([ga])

    x0 = np.array([1.0, 0.0] if method == "platt" else [1.0])
    bounds = [(1e-3, 100.0), (-20.0, 20.0)] if method == "platt" else [(1e-3, 100.0)]
    res = minimize(objective, x0, jac=True, method="L-BFGS-B", bounds=bounds)
    a = float(res.x[0])
    b = float(res.x[1]) if method == "platt" else 0.0
    cal = Calibration(method, a, b, n)
    before = log_loss(list(top_posteriors), list(correct))
    after = log_loss([cal(p) for p in top_posteriors], list(correct))
    return Calibration(method, a, b, n, before, after)
