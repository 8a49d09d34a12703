"""A run, seen in TensorBoard: its per-step scalars, its events as text, and its diagnosis.

    from neuraldbg.integrations.tensorboard import write_run
    write_run(dbg.run, "runs/tb/exp1")        # then: tensorboard --logdir runs/tb

Writes with `torch.utils.tensorboard.SummaryWriter` (tensorboard must be installed; it is not a
dependency of neuraldbg): `neuraldbg/loss` and `neuraldbg/grad_norm` (the global gradient norm)
at each recorded step (non-finite values as TensorBoard shows them), each event as text under
`neuraldbg/events` at its step (one entry per step), and the diagnosis, with the HTML report's
path when one is written, under `neuraldbg/diagnosis` at the last step.
"""

from __future__ import annotations

import math
import os
from collections import defaultdict

from causal.schema.run import Event, Run
from neuraldbg.integrations.summary import summarise

SCALARS = {"loss": "neuraldbg/loss", "grad_norm": "neuraldbg/grad_norm"}


def write_run(run: Run, log_dir: str | os.PathLike[str], report: bool = False) -> str:
    """Write `run` into the TensorBoard log dir `log_dir`; the log dir."""
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError as e:
        raise ImportError("write_run needs tensorboard: pip install tensorboard") from e
    writer = SummaryWriter(log_dir=str(log_dir))
    try:
        for column, tag in SCALARS.items():
            for step, value in run.series.get(column):
                writer.add_scalar(tag, value if math.isfinite(value) else float("nan"), step)
        by_step: dict[int, list[Event]] = defaultdict(list)
        for ev in run.events:
            by_step[ev.step].append(ev)
        for step in sorted(by_step):
            writer.add_text("neuraldbg/events",
                            "  \n".join(f"`{ev.layer_name}`: {ev.from_state} -> {ev.to_state} "
                                        f"({ev.value:.3g})" for ev in by_step[step]), step)
        diagnosis, summary = summarise(run, report)
        last = max([*run.series.steps, *by_step, 0])
        text = "    " + diagnosis.format().replace("\n", "\n    ")  # markdown: preformatted
        if summary.get("neuraldbg/report"):
            text += f"\n\nreport: {summary['neuraldbg/report']}"
        writer.add_text("neuraldbg/diagnosis", text, last)
    finally:
        writer.close()
    return str(log_dir)
