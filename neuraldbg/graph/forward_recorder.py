"""The layer DAG from one real forward pass: forward hooks feed `ForwardGraphRecorder`, which
follows `grad_fn` chains and tensor identity back to earlier units (for models torch.fx cannot
trace: data-dependent control flow, Hugging Face models...), or, for a pass that runs part of
the model without gradients (reentrant activation checkpointing), the values themselves
(`dag_provenance.Provenance`).
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import networkx as nx
import torch

from causal.schema.run import LayerGraph
from neuraldbg.capture.watched_units import Unit
from neuraldbg.graph.assembly import _assemble, _finish, _node_key
from neuraldbg.graph.provenance import Provenance

#: How deep `_flatten_tensors` looks into nested outputs (tuples of dicts of lists...).
_MAX_NESTING = 6

# ---------------------------------------------------------------- autograd / provenance


def _flatten_tensors(obj: Any, out: list[torch.Tensor], depth: int = 0) -> list[torch.Tensor]:
    """Tensors inside nested tuples, lists and mappings (a transformers ModelOutput is a dict)."""
    if isinstance(obj, torch.Tensor):
        out.append(obj)
    elif depth < _MAX_NESTING:
        if isinstance(obj, Mapping):
            values: Iterable[Any] = obj.values()
        elif isinstance(obj, (tuple, list)):
            values = obj
        else:
            return out
        for v in values:
            _flatten_tensors(v, out, depth + 1)
    return out


class ForwardGraphRecorder:
    """Builds the layer DAG from one real forward pass, fed by the caller's forward hooks.

    Call `record` from every unit's forward hook, in call order; `graph()` then follows each
    call's output `grad_fn` chain back to the latest earlier call that produced a node on it,
    and links calls whose inputs are (by identity) earlier calls' outputs. The recorder keeps
    references to the recorded outputs until `clear()`, so drop it once the graph is built.

    With `provenance` (a `Provenance` mode active during the pass), a call is linked to the
    earlier calls its output's values come from (or, when nothing is known of its output, its
    inputs'), gradients or not; `grad_fn` chains and identity then only link calls of which
    it knows nothing (values made by a custom autograd Function it cannot see). `no_grad_seen`
    says whether a call ran with gradients off (its links may be missing without provenance).
    """

    def __init__(self, units: Sequence[Unit], provenance: Provenance | None = None) -> None:
        self.units = list(units)
        self.provenance = provenance
        self.no_grad_seen = False
        self._prov_edges: set[tuple[int, int]] = set()
        self._unit_names = {u.name for u in self.units}
        self._calls: list[str] = []
        self._outputs: list[list[torch.Tensor]] = []
        self._grad_fns: list[list[Any]] = []
        self._by_tensor: dict[int, int] = {}  # id(output tensor) -> latest call index
        self._identity_edges: set[tuple[int, int]] = set()
        # calls whose outputs have no autograd history (a frozen layer fed by the input) and
        # that no later call took by identity yet: nothing leads back to them
        self._orphans: set[int] = set()

    def __len__(self) -> int:
        return len(self._calls)

    def clear(self) -> None:
        """Forget the recorded calls (and release the tensors they held)."""
        self._calls.clear()
        self._outputs.clear()
        self._grad_fns.clear()
        self._by_tensor.clear()
        self._identity_edges.clear()
        self._orphans.clear()
        self._prov_edges.clear()

    def record(
        self,
        unit_name: str,
        inputs: tuple[Any, ...],
        output: Any,
        kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        """Record one call of unit `unit_name`: its inputs (and kwargs) and its output."""
        if unit_name not in self._unit_names:
            raise ValueError(f"not a unit of this recorder: {unit_name!r}")
        c = len(self._calls)
        ins = _flatten_tensors(inputs, [])
        if kwargs:
            _flatten_tensors(kwargs, ins)
        for t in ins:
            p = self._by_tensor.get(id(t))
            if p is not None:
                self._identity_edges.add((p, c))
                self._orphans.discard(p)
        # a layer called inside this unit's own code whose output has no autograd history (a
        # frozen base layer inside a LoRA wrapper, fed by the input): what it returned went
        # into this unit's output, as the grad_fn chain shows when its input requires grad
        inside = unit_name + "."
        held = {p for p in self._orphans if self._calls[p].startswith(inside)}
        self._identity_edges.update((p, c) for p in held)
        self._orphans -= held
        outs = _flatten_tensors(output, [])
        fns: list[Any] = []
        for t in outs:
            fn = t.grad_fn  # read now: a later in-place op replaces it
            if fn is not None and all(fn is not f for f in fns):
                fns.append(fn)
        if not torch.is_grad_enabled():
            self.no_grad_seen = True
        prov = self.provenance
        if prov is not None:
            src = prov.sources(outs) or prov.sources(ins)
            self._prov_edges.update((p, c) for p in src)
            for t in outs:
                prov.tag(t, c)
        self._calls.append(unit_name)
        self._outputs.append(outs)
        self._grad_fns.append(fns)
        for t in outs:
            self._by_tensor[id(t)] = c
        if outs and not fns:
            self._orphans.add(c)

    def _grad_edges(self) -> set[tuple[int, int]]:
        made_by: dict[int, list[int]] = {}  # id(grad_fn) -> call indices that output it
        for c, fns in enumerate(self._grad_fns):
            for fn in fns:
                made_by.setdefault(id(fn), []).append(c)
        edges: set[tuple[int, int]] = set()
        for c, fns in enumerate(self._grad_fns):
            queue: deque[Any] = deque(fns)
            seen = {id(fn) for fn in fns}
            while queue:
                fn = queue.popleft()
                earlier = [p for p in made_by.get(id(fn), ()) if p < c]
                if earlier:
                    edges.add((earlier[-1], c))
                    continue
                if type(fn).__name__ == "AccumulateGrad":
                    continue
                for nxt, _ in fn.next_functions:
                    if nxt is not None and id(nxt) not in seen:
                        seen.add(id(nxt))
                        queue.append(nxt)
        return edges

    def graph(self, previous: LayerGraph | None = None) -> LayerGraph:
        """The recorded pass as a `LayerGraph` (method "autograd", or "provenance" when the
        values were followed), unioned with `previous`."""
        edges = self._grad_edges() | self._identity_edges
        method = "autograd"
        if self.provenance is not None:
            method = "provenance"
            linked = {c for _, c in self._prov_edges}  # calls provenance knows the sources of
            edges = self._prov_edges | {e for e in edges if e[1] not in linked}
        current = _assemble(method, self.units, self._calls, edges, [])
        if previous is None:
            return current
        if not previous.nodes:  # a placeholder (e.g. the note of a failed fx trace): keep notes
            notes = tuple(dict.fromkeys(previous.notes + current.notes))
            return LayerGraph(current.method, current.nodes, current.edges, notes)
        return _union(previous, current, self.units)


def _union(previous: LayerGraph, current: LayerGraph, units: Sequence[Unit]) -> LayerGraph:
    """Union two graphs of the same model, dropping new edges that would close a cycle."""
    g = nx.DiGraph()
    g.add_nodes_from(n.name for n in (*previous.nodes, *current.nodes))
    g.add_edges_from((*previous.edges, *current.edges))
    notes = list(dict.fromkeys(previous.notes + current.notes))
    if not nx.is_directed_acyclic_graph(g):  # passes disagree: add edges one by one, oldest first
        g.remove_edges_from(list(g.edges))
        dropped = 0
        for a, b in (*previous.edges, *current.edges):
            if g.has_edge(a, b):
                continue
            if a == b or nx.has_path(g, b, a):
                dropped += 1
            else:
                g.add_edge(a, b)
        notes.append(f"dropped {dropped} edge(s) that would close a cycle across passes")
    old = {n.name: n for n in previous.nodes}
    new = {n.name: n for n in current.nodes}
    module_of = {n.name: n.module for n in (*previous.nodes, *current.nodes)}
    ran = {name for name, n in (*old.items(), *new.items()) if n.ran}
    order = _merged_order(
        [n.name for n in sorted(previous.nodes, key=_node_key) if n.ran and n.order >= 0],
        [n.name for n in sorted(current.nodes, key=_node_key) if n.ran and n.order >= 0],
    )
    return _finish(current.method, units, g, module_of, order, ran, notes,
                   extra={**old, **new})


def _merged_order(first: Sequence[str], second: Sequence[str]) -> dict[str, int]:
    """One execution order consistent with both passes' orders when they agree."""
    rank = {name: (i, 0) for i, name in enumerate(first)}
    for i, name in enumerate(second):
        rank.setdefault(name, (i, 1))
    chains = nx.DiGraph()
    chains.add_nodes_from(rank)
    for chain in (first, second):
        chains.add_edges_from(itertools.pairwise(chain))
    if nx.is_directed_acyclic_graph(chains):
        seq = list(nx.lexicographical_topological_sort(chains, key=lambda n: (*rank[n], n)))
    else:
        seq = sorted(rank, key=lambda n: (*rank[n], n))
    return {name: i for i, name in enumerate(seq)}
