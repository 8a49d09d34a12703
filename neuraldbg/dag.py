"""The layer DAG: data-flow edges between a model's units (see `neuraldbg.units`).

Two builders give the same `LayerGraph` shape. `trace_fx` reads the graph statically with
`torch.fx`; when that fails (data-dependent control flow, Hugging Face models...) a
`ForwardGraphRecorder` fed by forward hooks of one real forward pass follows `grad_fn` chains and
tensor identity back to earlier units. `build_dag` tries the first and falls back to the second.
"""

from __future__ import annotations

import itertools
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import networkx as nx
import torch
import torch.fx
from torch import nn

from causal.run import LayerGraph, LayerNode
from neuraldbg.units import Unit, find_units

__all__ = [
    "DagTraceError",
    "ForwardGraphRecorder",
    "build_dag",
    "dag_with_updates",
    "trace_fx",
]

#: Sort key for nodes that never ran (after every real order index).
_NEVER = 1 << 62
#: How deep `_flatten_tensors` looks into nested outputs (tuples of dicts of lists...).
_MAX_NESTING = 6
#: Longest note kept from an exception message.
_NOTE_CHARS = 160


class DagTraceError(RuntimeError):
    """torch.fx could not trace the model; the message is the original exception's."""


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
        if unit is not None:
            module_type, params, kind = unit.module_type, unit.param_count, str(unit.kind)
        elif extra is not None and name in extra:
            old = extra[name]
            module_type, params, kind = old.module_type, old.param_count, old.activation_kind
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


# ---------------------------------------------------------------- torch.fx


class _UnitTracer(torch.fx.Tracer):
    """An fx tracer that stops exactly at units (never at the root)."""

    def __init__(self, root: nn.Module, units: Sequence[Unit]) -> None:
        super().__init__()
        self._root = root
        self._unit_ids = {id(u.module) for u in units if u.module is not root}

    def is_leaf_module(self, m: nn.Module, module_qualified_name: str) -> bool:
        return m is not self._root and id(m) in self._unit_ids


def trace_fx(model: nn.Module, units: Sequence[Unit]) -> LayerGraph:
    """The layer DAG read statically by torch.fx; raises `DagTraceError` if tracing fails.

    Edges join each unit call to the nearest unit calls upstream of its inputs, looking through
    functional ops, so skip connections (`x + self.block(x)`) appear.
    """
    tracer = _UnitTracer(model, units)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # proxy-time warnings are about tracing, not the model
            fx_graph = tracer.trace(model)
    except Exception as e:  # fx raises TraceError, TypeError, ValueError, RuntimeError...
        raise DagTraceError(str(e) or type(e).__name__) from e

    unit_names = {u.name for u in units}
    calls: list[str] = []
    call_of: dict[torch.fx.Node, int] = {}
    upstream: dict[torch.fx.Node, frozenset[int]] = {}
    call_edges: set[tuple[int, int]] = set()

    def producers(n: torch.fx.Node) -> frozenset[int]:
        if n in call_of:
            return frozenset((call_of[n],))
        return upstream.get(n, frozenset())

    for n in fx_graph.nodes:  # fx graphs list nodes in topological order
        ups = frozenset().union(*(producers(a) for a in n.all_input_nodes))
        if n.op == "call_module" and str(n.target) in unit_names:
            c = len(calls)
            calls.append(str(n.target))
            call_of[n] = c
            call_edges.update((p, c) for p in ups)
        else:
            upstream[n] = ups
        if n.op == "output" and "" in unit_names:
            # The root owns parameters: its own computation ends the forward, after its children.
            c = len(calls)
            calls.append("")
            call_edges.update((p, c) for p in ups)
    return _assemble("fx", units, calls, call_edges, [])


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
    """

    def __init__(self, units: Sequence[Unit]) -> None:
        self.units = list(units)
        self._unit_names = {u.name for u in self.units}
        self._calls: list[str] = []
        self._outputs: list[list[torch.Tensor]] = []
        self._grad_fns: list[list[Any]] = []
        self._by_tensor: dict[int, int] = {}  # id(output tensor) -> latest call index
        self._identity_edges: set[tuple[int, int]] = set()

    def __len__(self) -> int:
        return len(self._calls)

    def clear(self) -> None:
        """Forget the recorded calls (and release the tensors they held)."""
        self._calls.clear()
        self._outputs.clear()
        self._grad_fns.clear()
        self._by_tensor.clear()
        self._identity_edges.clear()

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
        outs = _flatten_tensors(output, [])
        fns: list[Any] = []
        for t in outs:
            fn = t.grad_fn  # read now: a later in-place op replaces it
            if fn is not None and all(fn is not f for f in fns):
                fns.append(fn)
        self._calls.append(unit_name)
        self._outputs.append(outs)
        self._grad_fns.append(fns)
        for t in outs:
            self._by_tensor[id(t)] = c

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
        """The recorded pass as a `LayerGraph` (method "autograd"), unioned with `previous`."""
        edges = self._grad_edges() | self._identity_edges
        current = _assemble("autograd", self.units, self._calls, edges, [])
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
    return _finish("autograd", units, g, module_of, order, ran, notes, extra={**old, **new})


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


# ---------------------------------------------------------------- helpers


def dag_with_updates(graph: LayerGraph, ran: set[str]) -> LayerGraph:
    """`graph` with the nodes named in `ran` (node or module names) marked as having run."""
    nodes = [
        n if n.ran or (n.name not in ran and n.module not in ran) else _replace_ran(n)
        for n in graph.nodes
    ]
    return _sorted_graph(graph.method, nodes, graph.edges, graph.notes)


def _replace_ran(n: LayerNode) -> LayerNode:
    d = n.to_dict()
    d["ran"] = True
    return LayerNode.from_dict(d)


def _snapshot_buffers(model: nn.Module) -> list[tuple[nn.Module, str, torch.Tensor, torch.Tensor]]:
    snap = []
    for module in model.modules():
        for key, buf in module._buffers.items():
            if buf is not None:
                snap.append((module, key, buf, buf.detach().clone()))
    return snap


def _restore_buffers(snap: list[tuple[nn.Module, str, torch.Tensor, torch.Tensor]]) -> None:
    with torch.no_grad():
        for module, key, buf, saved in snap:
            buf.copy_(saved)
            module._buffers[key] = buf


def build_dag(model: nn.Module, *args: Any, **kwargs: Any) -> LayerGraph:
    """The layer DAG of `model`: torch.fx when it traces, else one real forward on the inputs.

    The fallback forward leaves the model and the RNG streams as they were (buffers such as
    BatchNorm running statistics and the CPU/CUDA generator states are restored).
    """
    units = find_units(model)
    try:
        return trace_fx(model, units)
    except DagTraceError as e:
        cause = type(e.__cause__).__name__ if e.__cause__ is not None else "DagTraceError"
        reason = f"fx trace failed ({cause}): {_one_line(str(e))}"

    recorder = ForwardGraphRecorder(units)
    handles = []
    cpu_rng = torch.get_rng_state()
    cuda_rng = (
        torch.cuda.get_rng_state_all()
        if torch.cuda.is_available() and torch.cuda.is_initialized()
        else None
    )
    buffers = _snapshot_buffers(model)
    try:
        for u in units:
            hook = _hook(recorder, u.name)
            handles.append(u.module.register_forward_hook(hook, with_kwargs=True))
        with torch.enable_grad():
            model(*args, **kwargs)
        dag = recorder.graph()
    finally:
        for h in handles:
            h.remove()
        recorder.clear()
        _restore_buffers(buffers)
        torch.set_rng_state(cpu_rng)
        if cuda_rng is not None:
            torch.cuda.set_rng_state_all(cuda_rng)
    return LayerGraph(dag.method, dag.nodes, dag.edges, (reason, *dag.notes))


def _hook(recorder: ForwardGraphRecorder, name: str) -> Callable[..., None]:
    def hook(module: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> None:
        recorder.record(name, args, out, kwargs)

    return hook
