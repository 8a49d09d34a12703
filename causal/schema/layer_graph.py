"""The layer DAG of a run: monitored modules and the data-flow edges between them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from causal.schema.vocabulary import ActivationKind


@dataclass(frozen=True)
class LayerNode:
    """One node of the layer DAG: a monitored module (or one extra call site of it).

    `name` is unique in the graph; `module` is the qualified module name from
    `model.named_modules()` (they differ only for the second and later call sites of a module
    that could not be merged without a cycle, named `module#k`). `weight_gain`: the scale of its
    weight when the monitor started, rms x sqrt(fan_in) (about 0.58 under PyTorch's default
    init, 0 when zero-initialised; None without a weight or in runs recorded before it was).
    """

    name: str
    module: str
    module_type: str
    param_count: int
    depth: int = 0
    order: int = -1
    ran: bool = False
    activation_kind: str = ActivationKind.OTHER
    weight_gain: float | None = None

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
            "weight_gain": self.weight_gain,
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
            weight_gain=None if d.get("weight_gain") is None else float(d["weight_gain"]),
        )


@dataclass(frozen=True)
class LayerGraph:
    """The layer DAG: data-flow edges between monitored modules, and how it was built.

    `method` is "fx" (torch.fx.symbolic_trace), "autograd" (one real forward pass, following
    grad_fn chains and tensor identity), "provenance" (real forward passes with the values of
    every torch call followed, for a model that runs layers with gradients off, such as
    reentrant activation checkpointing) or "none" (not built yet, or the model never ran).
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
