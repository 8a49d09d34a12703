"""The layer DAG: data-flow edges between a model's units (see `neuraldbg.capture.watched_units`).

Two builders give the same `LayerGraph` shape. `trace_fx` reads the graph statically with
`torch.fx`; when that fails (data-dependent control flow, Hugging Face models...) a
`ForwardGraphRecorder` fed by forward hooks of one real forward pass follows `grad_fn` chains and
tensor identity back to earlier units. `build_dag` tries the first and falls back to the second.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.fx
from torch import nn

from causal.schema.run import LayerGraph, LayerNode
from neuraldbg.capture.state_preservation import preserved
from neuraldbg.capture.watched_units import Unit, find_units
from neuraldbg.errors import DagTraceError
from neuraldbg.graph.assembly import _assemble, _one_line, _sorted_graph
from neuraldbg.graph.forward_recorder import ForwardGraphRecorder

__all__ = [
    "DagTraceError",
    "ForwardGraphRecorder",
    "build_dag",
    "dag_with_updates",
    "trace_fx",
]


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

# ---------------------------------------------------------------- helpers


def dag_with_updates(graph: LayerGraph, ran: set[str]) -> LayerGraph:
    """`graph` with the nodes named in `ran` (node or module names) marked as having run."""
    nodes = [
        n if n.ran or (n.name not in ran and n.module not in ran) else _replace_ran(n)
        for n in graph.nodes
    ]
    return _sorted_graph(graph.method, nodes, graph.edges, graph.notes)


def with_kinds(graph: LayerGraph, kinds: dict[str, str]) -> LayerGraph:
    """`graph` with the activation kinds of the layers named in `kinds` replaced."""
    nodes = []
    for n in graph.nodes:
        kind = kinds.get(n.name, kinds.get(n.module))
        if kind is not None and kind != n.activation_kind:
            d = n.to_dict()
            d["activation_kind"] = kind
            n = LayerNode.from_dict(d)
        nodes.append(n)
    return LayerGraph(graph.method, tuple(nodes), graph.edges, graph.notes)


def _replace_ran(n: LayerNode) -> LayerNode:
    d = n.to_dict()
    d["ran"] = True
    return LayerNode.from_dict(d)


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
    try:
        with preserved(model):
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
    return LayerGraph(dag.method, dag.nodes, dag.edges, (reason, *dag.notes))


def _hook(recorder: ForwardGraphRecorder, name: str) -> Callable[..., None]:
    def hook(module: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> None:
        recorder.record(name, args, out, kwargs)

    return hook
