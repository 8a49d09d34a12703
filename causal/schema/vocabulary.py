"""The stable vocabulary of a run: signal kinds, states, directions, statistic names.

Enum values are the strings written to the run file; renaming one is a schema change.
"""

from __future__ import annotations

from enum import StrEnum

#: Pseudo layer names for run-level signals (real module names never contain '<').
LOSS = "<loss>"
INPUT = "<input>"

#: The run file's meta key that says where the run's targets came from (`TargetsSource`).
TARGETS_META = "targets"


class EventKind(StrEnum):
    """Which signal an event is about."""

    GRAD = "grad"
    ACTIVATION = "activation"
    GRAD_FINITE = "grad_finite"
    ACTIVATION_FINITE = "activation_finite"
    LOSS = "loss"
    LOSS_FINITE = "loss_finite"
    INPUT_FINITE = "input_finite"
    NONFINITE_ORIGIN = "nonfinite_origin"


class State(StrEnum):
    """Regimes of the per-layer and run-level state machines (`from_state` / `to_state`)."""

    GRAD_VANISHING = "grad_vanishing"
    GRAD_HEALTHY = "grad_healthy"
    GRAD_EXPLODING = "grad_exploding"
    ACTIVATION_HEALTHY = "activation_healthy"
    ACTIVATION_SATURATED = "activation_saturated"
    ACTIVATION_DEAD = "activation_dead"
    ACTIVATION_EXPLODING = "activation_exploding"
    GRAD_FINITE = "grad_finite"
    GRAD_INF = "grad_inf"
    GRAD_NAN = "grad_nan"
    ACTIVATION_FINITE = "activation_finite"
    ACTIVATION_INF = "activation_inf"
    ACTIVATION_NAN = "activation_nan"
    LOSS_FINITE = "loss_finite"
    LOSS_INF = "loss_inf"
    LOSS_NAN = "loss_nan"
    INPUT_FINITE = "input_finite"
    INPUT_INF = "input_inf"
    INPUT_NAN = "input_nan"
    LOSS_STEADY = "loss_steady"
    LOSS_SPIKE = "loss_spike"
    LOSS_DIVERGING = "loss_diverging"
    LOSS_PLATEAU = "loss_plateau"
    FINITE = "finite"
    INF = "inf"
    NAN = "nan"


class TargetsSource(StrEnum):
    """Where the targets the monitor measured came from. Absent from a run's meta: none were
    seen, or the run was recorded before the monitor said (read as `FOUND`, the weaker)."""

    GIVEN = "given"  # record_loss(loss, target=y), or the labels a model computing its loss got
    FOUND = "found"  # saved by the loss's graph beside the model's output: the labels, or a
    # value the loss computed from them (a normalised target, a divisor): not the data itself


class Direction(StrEnum):
    """Where the first non-finite value was born."""

    INPUT = "input"
    FORWARD = "forward"
    LOSS = "loss"
    BACKWARD = "backward"


class LayerStat(StrEnum):
    """Per-layer statistics kept by the flight recorder (columns of a `Window`)."""

    ACT_MAX_ABS = "act_max_abs"
    ACT_MEAN = "act_mean"
    ACT_STD = "act_std"
    ACT_SATURATED = "act_saturated_frac"
    ACT_ZERO = "act_zero_frac"
    ACT_DEAD = "act_dead_frac"
    ACT_NONFINITE = "act_nonfinite"
    ACT_HEADROOM = "act_headroom"
    GRAD_NORM = "grad_norm"
    WEIGHT_NORM = "weight_norm"
    UPDATE_RATIO = "update_ratio"


class StepStat(StrEnum):
    """Per-step run-level scalars (columns of `Run.series`)."""

    LOSS = "loss"
    INPUT_MAX_ABS = "input_max_abs"
    INPUT_MEAN = "input_mean"
    INPUT_STD = "input_std"
    INPUT_NONFINITE = "input_nonfinite"
    # the smallest value of the batch (finite batches): where data leave the sign they had
    INPUT_MIN = "input_min"
    TARGET_MAX_ABS = "target_max_abs"
    TARGET_MEAN = "target_mean"
    TARGET_STD = "target_std"
    TARGET_NONFINITE = "target_nonfinite"
    TARGET_MIN = "target_min"
    # the entropy of the class labels seen so far, pooled over the steps with full statistics
    # (nats, Chao-Shen coverage-adjusted): the loss of a model that predicts only their
    # frequencies
    TARGET_ENTROPY = "target_entropy"
    GRAD_NORM = "grad_norm"
    SCALER_SCALE = "scaler_scale"
    OPTIMIZER_STEPPED = "optimizer_stepped"
    FULL_STATS = "full_stats"


class ActivationKind(StrEnum):
    """How a layer's output is judged: saturating (tanh, sigmoid...), ReLU family, or other."""

    SATURATING = "saturating"
    RELU = "relu"
    OTHER = "other"
