"""The typed facts of a `nonfinite_origin` event: where and how a run's first non-finite value
was born. The capture builds one (`NonFiniteOrigin(direction=..., ...)`, a misspelt fact is a
TypeError) and stores it as the event's metadata; readers get it back with `Event.birth`, never
by string keys."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from causal.schema.vocabulary import Direction

__all__ = ["NonFiniteOrigin"]


@dataclass(frozen=True)
class NonFiniteOrigin:
    """Facts a hunt established (None: not established, or does not apply).

    direction: input, forward, loss or backward pass. module_type / has_params: the module it
    was born in. inputs_finite: that module's inputs were finite (born in the module itself).
    exact / count_exact: found from the values themselves (not inferred), with an exact count.
    first_seen_in: the submodule whose inputs first showed it (born between submodules).
    replayed: found by running the step again. fp32_finite / fp32_max_abs: the module re-run in
    float32 on the same inputs (finite there: a half-precision overflow). input_max_abs /
    input_zero_frac / input_zero_rows: how large and how degenerate the module's inputs were.
    tensor / argument: for an input-born value, "input" or "target" and the model's argument.
    scaler_skipped: a GradScaler skipped the step. output_layer / output_zeros / output_ones /
    output_numel: for a loss-born value, the layer that produced the model's output and how many
    of its values sat exactly on 0 and 1. loss_half_ops: the loss's ops that ran in half
    precision. layers_nonfinite: layers whose gradients were non-finite. born_in: a note on where
    (e.g. "the loss's backward").
    """

    direction: Direction | None = None
    module_type: str | None = None
    has_params: bool | None = None
    inputs_finite: bool | None = None
    exact: bool | None = None
    count_exact: bool | None = None
    first_seen_in: str | None = None
    replayed: bool | None = None
    fp32_finite: bool | None = None
    fp32_max_abs: float | None = None
    input_max_abs: float | None = None
    input_zero_frac: float | None = None
    input_zero_rows: float | None = None
    tensor: str | None = None
    argument: str | None = None
    scaler_skipped: bool | None = None
    output_layer: str | None = None
    output_zeros: int | None = None
    output_ones: int | None = None
    output_numel: int | None = None
    loss_half_ops: tuple[str, ...] | None = None
    layers_nonfinite: int | None = None
    born_in: str | None = None

    def to_metadata(self) -> dict[str, Any]:
        """The facts established, as the event's JSON-safe metadata."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value is None:
                continue
            if f.name == "direction":
                value = str(value)
            elif f.name == "loss_half_ops":
                value = list(value)
            out[f.name] = value
        return out

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any]) -> NonFiniteOrigin:
        """The facts in an event's metadata (keys it does not know are left out; a value of the
        wrong type reads as not established)."""
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            raw = metadata.get(f.name)
            if raw is None:
                continue
            values[f.name] = _typed(f.name, str(f.type), raw)
        return cls(**{k: v for k, v in values.items() if v is not None})


def _typed(name: str, kind: str, raw: Any) -> Any:
    if name == "direction":
        try:
            return Direction(str(raw))
        except ValueError:
            return None
    if name == "loss_half_ops":
        return tuple(str(x) for x in raw) if isinstance(raw, list | tuple) else None
    if kind.startswith("bool"):
        return raw if isinstance(raw, bool) else None
    if kind.startswith("int"):
        return int(raw) if isinstance(raw, int | float) and not isinstance(raw, bool) else None
    if kind.startswith("float"):
        if isinstance(raw, str) and raw in ("nan", "inf", "-inf"):  # non-finite, as stored
            return float(raw)
        return float(raw) if isinstance(raw, int | float) and not isinstance(raw, bool) else None
    return str(raw)
