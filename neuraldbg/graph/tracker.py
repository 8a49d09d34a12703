"""Keeps a run's layer DAG current while training.

torch.fx once at attach; when tracing fails (data-dependent control flow, Hugging Face models),
the graph is recorded from real forward passes: every forward while new layers keep appearing,
then stop after `QUIET_FORWARDS` forwards without a new one (a later newcomer is recorded on
the next forward). Edges are merged over passes, since a branch only shows the path taken.
fx stops at every unit, so the layers inside a unit that owns parameters itself are out of its
sight: when one of them runs, the graph is recorded from forward passes too.
A recorded pass in which a layer ran with gradients off (reentrant activation checkpointing)
has no `grad_fn` chains through that part: the graph is recorded again, from scratch, with the
values followed (`dag_provenance.Provenance`), and that graph replaces the first one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from torch import nn

from causal.schema.run import LayerGraph
from neuraldbg.capture.watched_units import Unit
from neuraldbg.graph.builders import (
    DagTraceError,
    ForwardGraphRecorder,
    dag_with_updates,
    trace_fx,
    with_kinds,
)
from neuraldbg.graph.provenance import Provenance

QUIET_FORWARDS = 3


class DagTracker:
    """The layer DAG of one monitored model, and the first-call order of its layers."""

    def __init__(self, model: nn.Module, units: Sequence[Unit],
                 write: Callable[[LayerGraph], None], follow_values: bool = True) -> None:
        self.units = list(units)
        self._can_follow_values = follow_values  # False: a compiled model (no function mode)
        self._write = write
        self.kinds: dict[str, str] = {}  # activation kinds learnt while running (by layer)
        self.order: dict[str, int] = {}  # layer name -> first-call order over the run
        self._recorder: ForwardGraphRecorder | None = None
        self._quiet = 0
        self._new_this_forward = False
        self._dirty = False
        self._follow_values = False  # record with `Provenance` (a pass ran without gradients)
        self._restart = False  # the next recorded pass replaces the graph instead of adding to it
        self._provenance: Provenance | None = None  # active during a recorded pass
        try:
            self.graph = trace_fx(model, self.units)
            self._from_forward = False
        except DagTraceError as e:
            self.graph = LayerGraph(method="none", notes=(f"fx trace failed: {str(e)[:200]}",))
            self._from_forward = True
        self.write(self.graph)

    def write(self, graph: LayerGraph) -> None:
        """Store `graph`, with the activation kinds learnt so far."""
        if self.kinds:
            graph = with_kinds(graph, self.kinds)
        self._write(graph)

    def set_kind(self, layer: str, kind: str) -> None:
        """Layer `layer` was seen applying a saturating or ReLU-family function in its own
        code: store the graph with that activation kind."""
        self.kinds[layer] = kind
        self.graph = with_kinds(self.graph, self.kinds)
        self._write(self.graph)

    @property
    def dirty(self) -> bool:
        """A layer ran for the first time and the stored graph does not show it yet."""
        return self._dirty

    @property
    def recording(self) -> bool:
        """Whether the current forward is being recorded (every layer call must be reported)."""
        return self._recorder is not None

    def begin_forward(self) -> None:
        self.abort_forward()
        self._new_this_forward = False
        record = self._from_forward and (
            self.graph.method == "none" or self._quiet < QUIET_FORWARDS or self._dirty)
        if record and self._follow_values:
            self._provenance = Provenance()
            self._provenance.start()
        self._recorder = ForwardGraphRecorder(self.units, self._provenance) if record else None

    def abort_forward(self) -> None:
        """Stop following values (a recorded pass ended, or raised before its end)."""
        prov, self._provenance = self._provenance, None
        if prov is not None:
            prov.stop()

    def on_call(self, name: str, args: Any, output: Any) -> None:
        if name not in self.order:
            self.order[name] = len(self.order)
            self._new_this_forward = self._dirty = True
        if self._recorder is not None:
            self._recorder.record(name, args, output)

    def end_forward(self, requires_grad: bool) -> None:
        """Merge this forward into the graph when it showed something new."""
        self.abort_forward()
        rec, self._recorder = self._recorder, None
        if rec is not None and rec.no_grad_seen and self._can_follow_values \
                and not self._follow_values:
            # part of this pass left no grad_fn chains: follow the values from the next pass
            self._follow_values = self._restart = True
            self._quiet = -1  # (counted up to 0 below) record at least QUIET_FORWARDS more
        # the first pass that followed the values replaces what was recorded without
        replace = rec is not None and self._restart and rec.provenance is not None
        if rec is not None and (self._new_this_forward or self.graph.method == "none" or replace):
            previous = self.graph
            if replace:
                self._restart = False
                previous = LayerGraph(method="none", notes=(
                    *self.graph.notes,
                    "layers ran with gradients off (reentrant activation checkpointing, or "
                    "no_grad inside forward): the graph follows the values"))
            self.graph = rec.graph(previous)
            if not requires_grad:  # no grad_fn chains: identity edges only, record again
                self.graph = LayerGraph(method="none", nodes=self.graph.nodes,
                                        edges=self.graph.edges, notes=self.graph.notes)
            self._dirty = False
            self.write(self.graph)
        elif self._dirty and not self._from_forward:
            hidden = self._hidden_by_fx()
            if hidden:  # fx took their parent unit as one call: record from forward passes
                self._from_forward = True  # (still dirty: the next forward is recorded)
                self.graph = LayerGraph(method="none", notes=(
                    *self.graph.notes,
                    f"fx traced {len(hidden)} layer(s) that ran as part of another layer "
                    f"({', '.join(hidden[:3])}{', ...' if len(hidden) > 3 else ''}): the graph "
                    "is recorded from real forward passes instead"))
            else:
                self.graph = dag_with_updates(self.graph, set(self.order))
                self._dirty = False
            self.write(self.graph)
        self._quiet = 0 if self._new_this_forward else self._quiet + 1

    def _hidden_by_fx(self) -> list[str]:
        """Layers that ran but have no place in the fx graph: they were called inside a unit
        that owns parameters itself (a block with a layer-scale gamma, a GIN layer's eps),
        which fx traces as a single call."""
        return [n.name for n in self.graph.nodes if n.order < 0 and n.name in self.order]
