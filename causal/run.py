"""The Run schema: the one contract between capture (`neuraldbg`) and inference (`causal`).

Everything here is plain Python (frozen dataclasses and StrEnums): no torch, so a run file can be
read and diagnosed where torch cannot be imported. Enum values are the stable strings written to
the run file; bump `SCHEMA_VERSION` when the stored shape changes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

SCHEMA_VERSION = 1

#: Pseudo layer names for run-level signals (real module names never contain '<').
LOSS = "<loss>"
INPUT = "<input>"


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
    TARGET_MAX_ABS = "target_max_abs"
    TARGET_MEAN = "target_mean"
    TARGET_STD = "target_std"
    TARGET_NONFINITE = "target_nonfinite"
    GRAD_NORM = "grad_norm"
    SCALER_SCALE = "scaler_scale"
    OPTIMIZER_STEPPED = "optimizer_stepped"
    FULL_STATS = "full_stats"


class ActivationKind(StrEnum):
    """How a layer's output is judged: saturating (tanh, sigmoid...), ReLU family, or other."""

    SATURATING = "saturating"
    RELU = "relu"
    OTHER = "other"


# ---------------------------------------------------------------- float encoding (NaN-safe JSON)


def encode_float(x: float | None) -> float | str | None:
    """A float as JSON-safe value: non-finite values become the strings 'nan', 'inf', '-inf'."""
    if x is None:
        return None
    x = float(x)
    if math.isfinite(x):
        return x
    return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")


def decode_float(x: float | int | str | None) -> float | None:
    """Inverse of `encode_float`."""
    if x is None:
        return None
    return float(x)


def _enc(obj: Any) -> Any:
    """Recursively make an object JSON-safe (non-finite floats as strings)."""
    if isinstance(obj, float):
        return encode_float(obj)
    if isinstance(obj, Mapping):
        return {str(k): _enc(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_enc(v) for v in obj]
    return obj


def same_values(a: Any, b: Any) -> bool:
    """Structural equality where NaN equals NaN (recorded NaNs must survive a round trip)."""
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(same_values(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(same_values(a[k], b[k]) for k in a)
    return bool(a == b)


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
    kind: str
    from_state: str
    to_state: str
    value: float
    metadata: Mapping[str, Any] = field(default_factory=dict, hash=False)

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
            "metadata": _enc(dict(self.metadata)),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Event:
        return cls(
            step=int(d["step"]),
            layer_name=str(d["layer_name"]),
            kind=str(d["kind"]),
            from_state=str(d["from_state"]),
            to_state=str(d["to_state"]),
            value=math.nan if d["value"] is None else float(d["value"]),
            metadata=dict(d.get("metadata") or {}),
        )

    def __str__(self) -> str:
        return (
            f"step {self.step} . {self.layer_name}: {self.from_state} -> {self.to_state}"
            f" ({self.value:.3g})"
        )


@dataclass(frozen=True)
class LayerNode:
    """One node of the layer DAG: a monitored module (or one extra call site of it).

    `name` is unique in the graph; `module` is the qualified module name from
    `model.named_modules()` (they differ only for the second and later call sites of a module
    that could not be merged without a cycle, named `module#k`).
    """

    name: str
    module: str
    module_type: str
    param_count: int
    depth: int = 0
    order: int = -1
    ran: bool = False
    activation_kind: str = ActivationKind.OTHER

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "module": self.module,
            "module_type": self.module_type,
            "param_count": self.param_count,
            "depth": self.depth,
            "order": self.order,
            "ran": self.ran,
            "activation_kind": str(self.activation_kind),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> LayerNode:
        return cls(
            name=str(d["name"]),
            module=str(d.get("module", d["name"])),
            module_type=str(d["module_type"]),
            param_count=int(d["param_count"]),
            depth=int(d.get("depth", 0)),
            order=int(d.get("order", -1)),
            ran=bool(d.get("ran", False)),
            activation_kind=str(d.get("activation_kind", ActivationKind.OTHER)),
        )


@dataclass(frozen=True)
class LayerGraph:
    """The layer DAG: data-flow edges between monitored modules, and how it was built.

    `method` is "fx" (torch.fx.symbolic_trace), "autograd" (one real forward pass, following
    grad_fn chains and tensor identity) or "none" (not built yet, or the model never ran).
    """

    method: str = "none"
    nodes: tuple[LayerNode, ...] = ()
    edges: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = ()

    def to_networkx(self) -> Any:
        """A networkx DiGraph with the node attributes of `LayerNode`."""
        import networkx as nx

        g = nx.DiGraph()
        for n in self.nodes:
            attrs = n.to_dict()
            attrs.pop("name")
            g.add_node(n.name, **attrs)
        g.add_edges_from(self.edges)
        return g

    def node(self, name: str) -> LayerNode | None:
        for n in self.nodes:
            if n.name == name:
                return n
        return None

    def predecessors(self, name: str) -> list[str]:
        return [a for a, b in self.edges if b == name]

    def successors(self, name: str) -> list[str]:
        return [b for a, b in self.edges if a == name]

    def forward_order(self) -> list[str]:
        """Node names in forward (execution) order; nodes that never ran come last."""
        ran = sorted((n for n in self.nodes if n.order >= 0), key=lambda n: n.order)
        rest = [n for n in self.nodes if n.order < 0]
        return [n.name for n in ran] + [n.name for n in rest]

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "nodes": [n.to_dict() for n in self.nodes],
            "edges": [list(e) for e in self.edges],
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> LayerGraph:
        return cls(
            method=str(d.get("method", "none")),
            nodes=tuple(LayerNode.from_dict(n) for n in d.get("nodes", ())),
            edges=tuple((str(a), str(b)) for a, b in d.get("edges", ())),
            notes=tuple(str(s) for s in d.get("notes", ())),
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
            "values": _enc(self.values),
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
        return {"steps": list(self.steps), "columns": _enc(dict(self.columns))}

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

    `meta` holds the schema version, the model class, the monitor's settings and the run status
    ("running", "finished", "failed"). `path` is where the run file lives (None in memory).
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
        for ev in self.events:
            if ev.kind == EventKind.NONFINITE_ORIGIN:
                return ev
        return None

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
            "meta": _enc(dict(self.meta)),
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
    def from_json(cls, text: str) -> Run:
        """Inverse of `to_json`: a run captured elsewhere can be diagnosed the same way."""
        return cls.from_dict(json.loads(text))

