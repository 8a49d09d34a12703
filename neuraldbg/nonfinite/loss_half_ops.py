"""What the loss computed after the model, read from its autograd graph: the ops that ran in
half precision there.

A value born non-finite in the loss under float16 is an overflow when the loss itself did its
arithmetic in float16 (an `exp` of similarities over a temperature, a sum of exponentials, a
matmul): inf appears there, and inf / inf or inf - inf turns it into NaN within the same
loss. The graph's nodes outlive the backward pass (only their saved tensors are freed), and
each records the dtype of the value it produced, so this is read after the fact, on the one
step that needs it. The walk stops at the model's output.
"""

from __future__ import annotations

from typing import Any

#: Dtypes that count as half precision.
_HALF = frozenset({"torch.float16", "torch.bfloat16"})
#: How many graph nodes the walk visits at most (a loss is a few dozen ops).
MAX_NODES = 256


def half_ops(loss_node: Any, output_nodes: set[Any]) -> list[str] | None:
    """Names of the ops between the loss and the model's output (`output_nodes`: the
    grad_fn of each model output) whose result was half precision ("Exp", "Sum", "Mm"...),
    sorted; None when the graph cannot be read (no grad_fn, or torch without node
    metadata)."""
    if loss_node is None:
        return None
    found: set[str] = set()
    seen: set[int] = set()
    stack = [loss_node]
    while stack and len(seen) < MAX_NODES:
        node = stack.pop()
        if node is None or id(node) in seen or node in output_nodes:
            continue
        seen.add(id(node))
        try:
            meta = node._input_metadata
            nexts = node.next_functions
        except (AttributeError, RuntimeError):
            return None
        if meta and str(getattr(meta[0], "dtype", "")) in _HALF:
            found.add(_op_name(node))
        stack.extend(fn for fn, _ in nexts if fn is not None)
    found.discard("AccumulateGrad")
    found.discard("ToCopy")  # autocast's casts: not arithmetic
    return sorted(found)


def _op_name(node: Any) -> str:
    """ExpBackward0 -> Exp."""
    name = type(node).__name__
    for suffix in ("Backward0", "Backward1", "Backward"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name
