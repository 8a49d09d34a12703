"""Where on the layer DAG: cause versus effect for transitions that happen together, and the
layers at the ends of the graph (the ones that read the inputs, the ones that predict).

When several connected layers change regime in the same step, the origin is decided from the
graph and the signal's direction: activations flow forward, so the most upstream layer is the
cause; gradients flow backward, so the most downstream one is. Magnitude breaks ties (the
largest jump over the layer's own baseline leads).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from causal.run_queries import forward_order, layer_series
from causal.schema.run import LOSS, Direction, Event, EventKind, LayerStat, Run, State

_BACKWARD_KINDS = {EventKind.GRAD, EventKind.GRAD_FINITE}


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


#: Layers that look rows up by id: they read no value of the batch, so no scale either.
LOOKUPS = frozenset({"Embedding", "EmbeddingBag"})


def input_layer(run: Run, step: int | None = None) -> str | None:
    """The layer that reads the input batch's values: a source of the layer DAG that ran that
    is no embedding lookup (ids have no scale; a model fed ids and dense features reads their
    scale where the features enter; None when only lookups are sources: the values then enter
    through the model's own code). With several, the one whose outputs at
    `step` (the run's first recorded step by default) stood out most from its own before
    (non-finite first, then the largest jump of max|a|, then the largest max|a| when nothing
    came before): a batch read by several layers (an image and a diffusion timestep, two
    towers' inputs) shows its bad values where they enter. Else the first in forward order."""
    dag = run.dag
    values = [n for n in dag.forward_order()
              if (node := dag.node(n)) is not None and node.ran and not dag.predecessors(n)
              and node.module_type not in LOOKUPS]
    if len(values) < 2:
        return values[0] if values else None
    if step is None:
        step = run.series.steps[0] if run.series.steps else 0
    scale = layer_series(run, LayerStat.ACT_MAX_ABS, until=step)
    bad = layer_series(run, LayerStat.ACT_NONFINITE, until=step)
    best: tuple[float, str] | None = None
    for n in values:
        if any(s == step and v > 0 for s, v in bad.get(n, ())):
            return n
        at = [v for s, v in scale.get(n, ()) if s == step and math.isfinite(v)]
        before = [v for s, v in scale.get(n, ()) if s < step and math.isfinite(v)]
        if not at:
            continue
        score = at[0] / max(statistics.median(before), 1e-30) if before else at[0]
        if best is None or score > best[0]:
            best = (score, n)
    return best[1] if best is not None else values[0]


def output_layers(run: Run) -> list[str]:
    """The layers that predict: the sinks of the layer DAG that ran, those with weights when
    any has them, in forward order. A root with parameters of its own (a policy's log-std) ends
    the forward after its children: then the layers that feed it predict."""
    dag = run.dag
    ran = [n for n in dag.forward_order() if (node := dag.node(n)) is not None and node.ran]
    sinks = [n for n in ran if not dag.successors(n)]
    if sinks == [""] and (feeding := [n for n in ran if n in dag.predecessors("")]):
        sinks = feeding
    weighted = [n for n in sinks if (node := dag.node(n)) is not None and node.param_count > 0]
    return weighted or sinks


def output_layer(run: Run) -> str | None:
    """The layer whose output the loss compares with the targets: the last of
    `output_layers`."""
    chosen = output_layers(run)
    return chosen[-1] if chosen else None


def loss_input_layer(run: Run, origin: Event) -> str | None:
    """For a value born in the loss, forward or backward (sqrt'(0) = inf on a distance of 0):
    the layer whose output the loss's op took, the one the monitor saw produce the model's
    output on that step, else the model's only output layer (of several, the only one whose
    gradient turned non-finite on that step); None when several heads could have fed it, or
    for a value born elsewhere."""
    birth = origin.birth
    if birth.direction == Direction.LOSS:
        if birth.output_layer:
            return birth.output_layer
    elif not (birth.direction == Direction.BACKWARD and origin.layer_name == LOSS):
        return None
    heads = output_layers(run)
    if len(heads) > 1 and birth.direction == Direction.BACKWARD:
        hit = {e.layer_name for e in run.events
               if e.kind == EventKind.GRAD_FINITE and e.step == origin.step
               and e.to_state in (State.GRAD_NAN, State.GRAD_INF)}
        heads = [h for h in heads if h in hit]
    return heads[0] if len(heads) == 1 and heads[0] != "" else None


#: The note of a failure placed by `own_code_inputs`.
OWN_CODE_NOTE = ("it was born in the model's own forward code, between submodules: the layer "
                 "named is the one whose output that code took")


def own_code_inputs(run: Run, origin: Event) -> list[str]:
    """For a value born in the forward pass in the model's own code, between submodules (a sum
    pool, an exp, an outer product written in `forward`): the layers whose outputs that code
    took, the layer DAG's predecessors of the submodule that first saw the value as input, else
    the layers whose outputs the code returned (the edges into the root). Empty for a value
    born in a layer, or where the graph does not say."""
    if origin.birth.direction != Direction.FORWARD or origin.layer_name != "":
        return []
    seen = origin.birth.first_seen_in
    fed = run.dag.predecessors(seen) if seen else run.dag.predecessors("")
    return [n for n in fed if n != ""]
