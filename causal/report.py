"""Plain-text views of a run: the first non-finite value and the transitions that led to it.

Torch-free, so `neuraldbg show RUN` works on a machine without torch.
"""

from __future__ import annotations

from causal.schema.run import Direction, Event, EventKind, Run
from causal.schema.safe_text import printable

_BORN = {
    Direction.INPUT: "in the input batch",
    Direction.FORWARD: "in the forward pass",
    Direction.LOSS: "in the loss",
    Direction.BACKWARD: "in the backward pass",
}


def layer_label(run: Run, name: str) -> str:
    """'layers.4 (Tanh)' for modules, the pseudo name for run-level signals."""
    if name.startswith("<"):
        return name
    node = run.dag.node(name)
    if name == "":
        return f"(model) ({run.meta.get('model_class', '?')})"
    return f"{name} ({node.module_type})" if node is not None else name


def describe_origin(run: Run, ev: Event) -> str:
    """One sentence on where the first non-finite value was born."""
    birth = ev.birth
    where = _BORN.get(birth.direction, str(birth.direction)) if birth.direction else "?"
    what = str(ev.to_state)
    text = f"step {ev.step} . {layer_label(run, ev.layer_name)}: first {what} born {where}"
    if ev.value and ev.value >= 1:
        text += f" ({ev.value:.0f} non-finite value{'s' if ev.value != 1 else ''})"
    if birth.first_seen_in:
        text += (f", in its own code between submodules (first seen as the input of "
                 f"{birth.first_seen_in!r})")
    if birth.inputs_finite is True:
        text += "; its inputs were finite"
    elif birth.inputs_finite is False:
        text += "; its inputs were already non-finite"
    if birth.tensor == "target":
        text += "; in the targets" if run.targets_given else (
            "; in a tensor the loss took beside the model's output (the targets, or a value "
            "the loss computed from them)")
    if birth.argument:
        text += f"; in the model's argument {birth.argument!r}, not the measured batch"
    if birth.fp32_finite is True:
        max_abs = birth.fp32_max_abs if birth.fp32_max_abs is not None else float("nan")
        text += (f"; re-run in float32 on the same inputs it is finite (max |output| "
                 f"{max_abs:.3g}): a float16 overflow")
    elif birth.fp32_finite is False:
        text += "; re-run in float32 it is still non-finite: not a float16 range problem"
    if birth.scaler_skipped:
        text += "; the GradScaler skipped this step"
    if birth.replayed:
        text += " [found by running the step's forward pass again, on its own weights and RNG]"
    if birth.exact is False:
        text += " [approximate: outputs were not kept on this step]"
    return text


def format_run(run: Run, max_events: int = 25) -> str:
    """A summary for people: status, the first non-finite value, the transitions before it."""
    meta = run.meta
    n = len(run.series)
    lines = [
        f"run {printable(run.path) if run.path else '(in memory)'}",
        f"  model {meta.get('model_class', '?')} . {meta.get('n_units', '?')} monitored layers"
        f" . {n} steps recorded . status {meta.get('status', '?')}"
        f" . layer graph by {run.dag.method}",
    ]
    if meta.get("internal_error"):
        lines.append(f"  recording stopped after an internal error: {meta['internal_error']}")
    if meta.get("storage_error"):
        lines.append(f"  recording stopped: the run file could not be written "
                     f"({meta['storage_error']})")
    lines += [f"  warning: {w}" for w in meta.get("warnings") or ()]
    origin = run.first_nonfinite
    lines.append("")
    if origin is None:
        lines.append("No non-finite value was recorded.")
    else:
        lines.append("First non-finite value")
        lines.append("  " + describe_origin(run, origin))
    shown = [e for e in run.events if e.kind != EventKind.NONFINITE_ORIGIN]
    if origin is not None:
        shown = [e for e in shown if e.step <= origin.step]
    lines.append("")
    if not shown:
        lines.append("No transitions" + (" before it." if origin is not None else "."))
    else:
        title = "Transitions that led to it" if origin is not None else "Transitions"
        if len(shown) > max_events:  # the onset and the end matter most
            head = max_events // 3
            lines.append(f"{title} ({len(shown)}; the first {head} and the last "
                         f"{max_events - head})")
            picked = [*shown[:head], None, *shown[len(shown) - (max_events - head):]]
        else:
            lines.append(f"{title} ({len(shown)})")
            picked = list(shown)
        for e in picked:
            lines.append("  ..." if e is None else
                         f"  step {e.step} . {layer_label(run, e.layer_name)}: "
                         f"{e.from_state} -> {e.to_state} ({e.value:.3g})")
    return "\n".join(lines)
