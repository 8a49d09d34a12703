"""The built-in root causes, one file each (the catalogue in docs/diagnosis.md)."""

from causal.causes.bad_init import BadInit
from causal.causes.data_outlier import DataOutlier
from causal.causes.dead_relu import DeadRelu
from causal.causes.fp16_overflow import Fp16Overflow
from causal.causes.lr_too_high import LrTooHigh
from causal.causes.saturation import Saturation
from causal.causes.unsafe_op import UnsafeOp
from causal.causes.unscaled_inputs import UnscaledInputs

BUILTIN_CAUSES = (Saturation, LrTooHigh, BadInit, DataOutlier, Fp16Overflow, UnsafeOp,
                  DeadRelu, UnscaledInputs)

__all__ = ["BUILTIN_CAUSES"]
