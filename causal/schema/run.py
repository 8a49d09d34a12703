"""The Run schema: the one contract between capture (`neuraldbg`) and inference (`causal`).

Everything here is plain Python (frozen dataclasses and StrEnums): no torch, so a run file can be
read and diagnosed where torch cannot be imported. Enum values are the stable strings written to
the run file; bump `SCHEMA_VERSION` when the stored shape changes.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from causal.schema.json_encoding import decode_float, encode_float, encode_json, same_values
from causal.schema.layer_graph import LayerGraph, LayerNode
from causal.schema.nonfinite_origin import NonFiniteOrigin
from causal.schema.safe_text import printable, printable_strings
from causal.schema.vocabulary import (
    INPUT,
    LOSS,
    TARGETS_META,
    ActivationKind,
    Direction,
    EventKind,
    LayerStat,
    State,
    StepStat,
    TargetsSource,
)

SCHEMA_VERSION = 1

__all__ = [
    "INPUT", "LOSS", "SCHEMA_VERSION", "TARGETS_META", "ActivationKind", "Direction", "Event",
    "EventKind", "LayerGraph", "LayerNode", "LayerStat", "NonFiniteOrigin", "Run", "Series",
    "SettingChange", "State", "StepStat", "TargetsSource", "Window", "decode_float",
    "encode_float", "encode_json", "same_values",
]


# ---------------------------------------------------------------- records


@dataclass(frozen=True)
class Event:
    """One regime change of one signal: `layer_name` went `from_state` -> `to_state` at `step`.

    `value` is the statistic that decided the new regime (a gradient norm, a saturated fraction,
    a loss, a non-finite count). `metadata` holds signal-specific facts (thresholds, baseline,
    direction of a non-finite origin, module type).
    """

    step: int
    layer_name: str
    kind: EventKind
    from_state: State
    to_state: State
    value: float
    metadata: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        # the run file and hand-written logs give strings: every event holds the enums
        if type(self.kind) is not EventKind:
            object.__setattr__(self, "kind", EventKind(self.kind))
        if type(self.from_state) is not State:
            object.__setattr__(self, "from_state", State(self.from_state))
        if type(self.to_state) is not State:
            object.__setattr__(self, "to_state", State(self.to_state))

    @functools.cached_property
    def birth(self) -> NonFiniteOrigin:
        """The typed facts of a `nonfinite_origin` event (where and how the value was born);
        every fact is None on other events."""
        return NonFiniteOrigin.from_metadata(self.metadata)


    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Event):
            return NotImplemented
        return (self.step, self.layer_name, self.kind, self.from_state, self.to_state) == (
            other.step, other.layer_name, other.kind, other.from_state, other.to_state
        ) and same_values(self.value, other.value) and same_values(
            dict(self.metadata), dict(other.metadata))

    def __hash__(self) -> int:
        return hash((self.step, self.layer_name, self.kind, self.from_state, self.to_state))

    def to_dict(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "layer_name": self.layer_name,
            "kind": str(self.kind),
            "from_state": str(self.from_state),
            "to_state": str(self.to_state),
            "value": encode_float(self.value),
            "metadata": encode_json(dict(self.metadata)),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Event:
        return cls(
            step=int(d["step"]),
            layer_name=str(d["layer_name"]),
            kind=EventKind(str(d["kind"])),
            from_state=State(str(d["from_state"])),
            to_state=State(str(d["to_state"])),
            value=math.nan if d["value"] is None else float(d["value"]),
            metadata=dict(d.get("metadata") or {}),
        )

    def __str__(self) -> str:
        return (
            f"step {self.step} . {self.layer_name}: {self.from_state} -> {self.to_state}"
            f" ({self.value:.3g})"
        )


@dataclass(frozen=True, eq=False)
class Window:
    """A flight-recorder window: per-layer statistics for the steps up to `end_step`.

    `values[i][j][k]` is statistic `stats[k]` of layer `layers[j]` at step `steps[i]`, or None
    when it was not observed at that step (not scheduled, no parameters, did not run).
    """

    end_step: int
    steps: tuple[int, ...]
    layers: tuple[str, ...]
    stats: tuple[str, ...]
    values: tuple[tuple[tuple[float | None, ...], ...], ...]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Window):
            return NotImplemented
        return (self.end_step, self.steps, self.layers, self.stats) == (
            other.end_step, other.steps, other.layers, other.stats
        ) and same_values(self.values, other.values)

    __hash__ = None  # type: ignore[assignment]

    def series(self, layer: str, stat: str) -> list[tuple[int, float]]:
        """(step, value) pairs of one statistic of one layer, observed steps only."""
        if layer not in self.layers or stat not in self.stats:
            return []
        j, k = self.layers.index(layer), self.stats.index(stat)
        out = []
        for i, s in enumerate(self.steps):
            v = self.values[i][j][k]
            if v is not None:
                out.append((s, v))
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "end_step": self.end_step,
            "steps": list(self.steps),
            "layers": list(self.layers),
            "stats": list(self.stats),
            "values": encode_json(self.values),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Window:
        return cls(
            end_step=int(d["end_step"]),
            steps=tuple(int(s) for s in d["steps"]),
            layers=tuple(str(x) for x in d["layers"]),
            stats=tuple(str(x) for x in d["stats"]),
            values=tuple(
                tuple(tuple(decode_float(v) for v in row) for row in step_rows)
                for step_rows in d["values"]
            ),
        )


@dataclass(frozen=True)
class SettingChange:
    """A rarely changing setting took a new value at `step` (lr per param group, amp dtype...)."""

    step: int
    key: str
    value: str

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "key": self.key, "value": self.value}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SettingChange:
        return cls(step=int(d["step"]), key=str(d["key"]), value=str(d["value"]))


@dataclass(frozen=True, eq=False)
class Series:
    """Per-step run-level scalars: `columns[name][i]` is the value at `steps[i]` (None: unknown)."""

    steps: tuple[int, ...] = ()
    columns: Mapping[str, tuple[float | None, ...]] = field(default_factory=dict, hash=False)

    def __len__(self) -> int:
        return len(self.steps)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Series):
            return NotImplemented
        return self.steps == other.steps and same_values(dict(self.columns), dict(other.columns))

    __hash__ = None  # type: ignore[assignment]

    def get(self, name: str) -> list[tuple[int, float]]:
        """(step, value) pairs of one column, known values only."""
        col = self.columns.get(name, ())
        return [(s, v) for s, v in zip(self.steps, col, strict=False) if v is not None]

    def to_dict(self) -> dict[str, Any]:
        return {"steps": list(self.steps), "columns": encode_json(dict(self.columns))}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Series:
        return cls(
            steps=tuple(int(s) for s in d.get("steps", ())),
            columns={
                str(k): tuple(decode_float(v) for v in col)
                for k, col in (d.get("columns") or {}).items()
            },
        )


@dataclass(frozen=True)
class Run:
    """Everything recorded about one training run; what `diagnose` reads.

    `meta` holds the schema version, the model class, the monitor's settings, the run status
    ("running", "finished", "failed") and where the targets came from (`TARGETS_META`). `path`
    is where the run file lives (None in memory).
    """

    meta: Mapping[str, Any] = field(default_factory=dict, hash=False)
    dag: LayerGraph = field(default_factory=LayerGraph)
    events: tuple[Event, ...] = ()
    series: Series = field(default_factory=Series)
    settings: tuple[SettingChange, ...] = ()
    windows: tuple[Window, ...] = ()
    path: str | None = None

    # -- convenience views used by symptoms and the CLI
    @property
    def first_nonfinite(self) -> Event | None:
        """The event that records where and how the first non-finite value was born."""
        origins = [ev for ev in self.events if ev.kind == EventKind.NONFINITE_ORIGIN]
        return min(origins, key=lambda ev: ev.step) if origins else None

    @property
    def targets_given(self) -> bool:
        """Whether the measured targets are the labels themselves (`TargetsSource.GIVEN`).
        Found in the loss's graph, or not said (older runs), they may be a value the loss
        computed from the labels: a normalised target, a divisor."""
        return self.meta.get(TARGETS_META) == TargetsSource.GIVEN

    def events_of(self, kind: str | Iterable[str]) -> list[Event]:
        kinds = {kind} if isinstance(kind, str) else set(kind)
        return [ev for ev in self.events if ev.kind in kinds]

    def window_at(self, step: int) -> Window | None:
        """The recorder window that ends at `step`, else the first one ending after it."""
        after = [w for w in self.windows if w.end_step >= step]
        return min(after, key=lambda w: w.end_step) if after else None

    def setting(self, key: str, step: int | None = None) -> str | None:
        """The value of a setting in force at `step` (the last one recorded when step is None)."""
        value = None
        for ch in self.settings:
            if ch.key == key and (step is None or ch.step <= step):
                value = ch.value
        return value

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "meta": encode_json(dict(self.meta)),
            "dag": self.dag.to_dict(),
            "events": [e.to_dict() for e in self.events],
            "series": self.series.to_dict(),
            "settings": [c.to_dict() for c in self.settings],
            "windows": [w.to_dict() for w in self.windows],
            "path": self.path,
        }

    def to_json(self, indent: int | None = None) -> str:
        """The run as strict JSON (non-finite floats are written as "nan", "inf", "-inf")."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Run:
        return cls(
            meta=dict(d.get("meta") or {}),
            dag=LayerGraph.from_dict(d.get("dag") or {}),
            events=tuple(Event.from_dict(e) for e in d.get("events", ())),
            series=Series.from_dict(d.get("series") or {}),
            settings=tuple(SettingChange.from_dict(c) for c in d.get("settings", ())),
            windows=tuple(Window.from_dict(w) for w in d.get("windows", ())),
            path=d.get("path"),
        )

    @classmethod
    def from_json(cls, text: str | bytes) -> Run:
        """Inverse of `to_json`: a run captured elsewhere can be diagnosed the same way. Its
        strings are made printable (`safe_text`); a text that is no run is a `RunFileError`."""
        from causal.errors import RunFileError

        try:
            return cls.from_dict(printable_strings(json.loads(text)))
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError,
                OverflowError) as e:
            raise RunFileError(f"not a run exported by Run.to_json ({type(e).__name__}: "
                               f"{printable(str(e))[:200]})") from e

