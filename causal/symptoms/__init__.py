"""The built-in symptoms: each a named discrete node with a few states and a Run -> state map."""

from causal.symptoms.data import HalfPrecision, InputOutlier, InputScale, ScalerScale
from causal.symptoms.failure import LossJump, LossPattern, NonfiniteBirth, Onset, Outcome
from causal.symptoms.layers import (
    DeadUnits,
    GradDepth,
    GradRegime,
    InitDepthTrend,
    Saturation,
    UpdateRatio,
    WeightScale,
)
from causal.symptoms.loss_level import LossVsTrivial
from causal.symptoms.optimizer import LrLevel

BUILTIN_SYMPTOMS = (
    NonfiniteBirth, Onset, LossPattern, LossJump, GradRegime, Saturation, DeadUnits, InitDepthTrend,
    UpdateRatio, GradDepth, InputOutlier, InputScale, HalfPrecision, ScalerScale, Outcome,
    LrLevel, LossVsTrivial, WeightScale,
)

__all__ = ["BUILTIN_SYMPTOMS"]
