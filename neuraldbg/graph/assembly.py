"""Shared assembly of the layer DAG: from unit-level data-flow edges to a `LayerGraph` (quotient
by module, depths, the order nodes ran in). Used by both builders
(`neuraldbg.graph.builders.trace_fx` and
`neuraldbg.graph.forward_recorder.ForwardGraphRecorder`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import networkx as nx

from causal.schema.run import LayerGraph, LayerNode
from neuraldbg.capture.watched_units import Unit

#: Sort key for nodes that never ran (after every real order index).
_NEVER = 1 << 62
#: Longest note kept from an exception message.
_NOTE_CHARS = 160



# ---------------------------------------------------------------- shared assembly


def _one_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= _NOTE_CHARS else line[: _NOTE_CHARS - 3] + "..."


def _quotient(
    n_calls: int, call_edges: Iterable[tuple[int, int]], key: Sequence[Any]
) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_nodes_from(key[i] for i in range(n_calls))
    g.add_edges_from((key[a], key[b]) for a, b in call_edges)
    return g


def _depths(g: nx.DiGraph) -> dict[str, int]:
    """Longest path length from any source (sources have depth 0)."""
    depth: dict[str, int] = {}
    for v in nx.topological_sort(g):
        depth[v] = max((depth[u] + 1 for u in g.predecessors(v)), default=0)
    return depth


def _finish(
    method: str,
    units: Sequence[Unit],
    g: nx.DiGraph,
    module_of: Mapping[str, str],
    order: Mapping[str, int],
    ran: set[str],
    notes: Sequence[str],
    extra: Mapping[str, LayerNode] | None = None,
) -> LayerGraph:
    """Turn a node-level DiGraph into a sorted `LayerGraph`; every unit becomes a node."""
    by_name = {u.name: u for u in units}
    for u in units:
        g.add_node(u.name)
    assert nx.is_directed_acyclic_graph(g), "layer graph must be acyclic"
    depth = _depths(g)
    nodes = []
    for name in g.nodes:
        module = module_of.get(name, name)
        unit = by_name.get(module)
        gain: float | None = None
        if unit is not None:
            module_type, params, kind = unit.module_type, unit.param_count, str(unit.kind)
            gain = unit.weight_gain
        elif extra is not None and name in extra:
            old = extra[name]
            module_type, params, kind = old.module_type, old.param_count, old.activation_kind
            gain = old.weight_gain
        else:
            module_type, params, kind = "", 0, "other"
        is_ran = name in ran
        nodes.append(
            LayerNode(
                name=name,
                module=module,
                module_type=module_type,
                param_count=params,
                depth=depth[name],
                order=order.get(name, -1) if is_ran else -1,
                ran=is_ran,
                activation_kind=kind,
                weight_gain=gain,
            )
        )
    return _sorted_graph(method, nodes, g.edges, notes)


def _node_key(n: LayerNode) -> tuple[int, str]:
    return (n.order if n.ran and n.order >= 0 else _NEVER, n.name)


def _sorted_graph(
    method: str,
    nodes: Iterable[LayerNode],
    edges: Iterable[tuple[str, str]],
    notes: Sequence[str],
) -> LayerGraph:
    ordered = sorted(nodes, key=_node_key)
    rank = {n.name: i for i, n in enumerate(ordered)}
    es = sorted({(a, b) for a, b in edges}, key=lambda e: (rank[e[0]], rank[e[1]]))
    return LayerGraph(method=method, nodes=tuple(ordered), edges=tuple(es), notes=tuple(notes))


def _assemble(
    method: str,
    units: Sequence[Unit],
    calls: Sequence[str],
    call_edges: set[tuple[int, int]],
    notes: list[str],
) -> LayerGraph:
    """Group call sites (in call order) into nodes: one per module unless that makes a cycle.

    `calls[i]` is the module name of call site i; `call_edges` are (earlier, later) call pairs,
    so the call-level graph is acyclic and merging is only refused when it closes a cycle.
    """
    sites: dict[str, list[int]] = {}
    for i, m in enumerate(calls):
        sites.setdefault(m, []).append(i)
    key: list[Any] = [(m, i) for i, m in enumerate(calls)]
    split: list[str] = []
    for m, idx in sites.items():
        if len(idx) < 2:
            key[idx[0]] = m
            continue
        trial = list(key)
        for i in idx:
            trial[i] = m
        if nx.is_directed_acyclic_graph(_quotient(len(calls), call_edges, trial)):
            key = trial
        else:
            split.append(m)
            for k, i in enumerate(idx):
                key[i] = m if k == 0 else f"{m}#{k}"
    if split:
        shown = ", ".join(split[:3]) + (f" (+{len(split) - 3} more)" if len(split) > 3 else "")
        notes.append(f"call sites kept apart to stay acyclic: {shown}")
    g = _quotient(len(calls), call_edges, key)
    module_of: dict[str, str] = {}
    first: dict[str, int] = {}
    for i, m in enumerate(calls):
        module_of.setdefault(key[i], m)
        first.setdefault(key[i], i)
    dense = {name: k for k, name in enumerate(sorted(first, key=first.__getitem__))}
    return _finish(method, units, g, module_of, dense, set(first), notes)
