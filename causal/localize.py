"""Where on the layer DAG: cause versus effect for transitions that happen together, and the
layers at the ends of the graph (the ones that read the inputs, the ones that predict).

When several connected layers change regime in the same step, the origin is decided from the
graph and the signal's direction: activations flow forward, so the most upstream layer is the
cause; gradients flow backward, so the most downstream one is. Magnitude breaks ties (the
largest jump over the layer's own baseline leads).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from causal.run import Event, Run
from causal.views import forward_order

_BACKWARD_KINDS = {"grad", "grad_finite"}


def _depth(run: Run) -> dict[str, int]:
    depth = {n.name: n.depth for n in run.dag.nodes}
    order = forward_order(run)
    return {k: depth.get(k, order.get(k, 0)) for k in set(depth) | set(order)}


def _jump(ev: Event) -> float:
    base = ev.metadata.get("baseline") if isinstance(ev.metadata, dict) else None
    value = abs(ev.value) if math.isfinite(ev.value) else math.inf
    if isinstance(base, (int, float)) and base > 0:
        return value / base
    return value


def first_cause(run: Run, events: Sequence[Event]) -> tuple[Event | None, str]:
    """The event that leads among `events` (the earliest step first), and a note when other
    layers transitioned in the same step ("upstream coupling: ... is the cause, ... follow")."""
    if not events:
        return None, ""
    step = min(e.step for e in events)
    same = [e for e in events if e.step == step]
    if len(same) == 1:
        return same[0], ""
    depth = _depth(run)
    backward = all(e.kind in _BACKWARD_KINDS for e in same)

    def key(e: Event) -> tuple[float, float]:
        d = depth.get(e.layer_name, 0)
        return (-d if backward else d, -_jump(e))

    lead = min(same, key=key)
    others = [e.layer_name for e in same if e is not lead]
    shown = ", ".join(others[:4]) + (" ..." if len(others) > 4 else "")
    where = "downstream" if backward else "upstream"
    direction = "gradients flow backward" if backward else "activations flow forward"
    verb = "follows" if len(others) == 1 else "follow"
    note = (f"{where} coupling at step {step}: {lead.layer_name} is the cause, {shown} "
            f"{verb} ({direction})")
    return lead, note


def input_layer(run: Run) -> str | None:
    """The first layer that reads the inputs: the first source of the layer DAG that ran."""
    dag = run.dag
    for n in dag.forward_order():
        if (node := dag.node(n)) is not None and node.ran and not dag.predecessors(n):
            return n
    return None


def output_layer(run: Run) -> str | None:
    """The layer whose output the loss compares with the targets: the last sink of the layer
    DAG that ran, preferring one with weights. A root with parameters of its own (a policy's
    log-std) ends the forward after its children: then the layers that feed it predict."""
    dag = run.dag
    ran = [n for n in dag.forward_order() if (node := dag.node(n)) is not None and node.ran]
    sinks = [n for n in ran if not dag.successors(n)]
    if sinks == [""] and (feeding := [n for n in ran if n in dag.predecessors("")]):
        sinks = feeding
    weighted = [n for n in sinks if (node := dag.node(n)) is not None and node.param_count > 0]
    chosen = weighted or sinks
    return chosen[-1] if chosen else None
