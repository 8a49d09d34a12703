"""A run written into a TensorBoard log dir reads back with TensorBoard's own reader: the
scalars at their steps, the events as text, the diagnosis at the end."""

from __future__ import annotations

import pytest
import torch
from helpers import train_monitored
from torch import nn

pytest.importorskip("tensorboard")

from tensorboard.backend.event_processing.event_accumulator import (
    EventAccumulator,
)

from neuraldbg.integrations.tensorboard import write_run


def test_a_run_reads_back_from_tensorboards_own_reader(run_path, tmp_path) -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))

    def outlier(step, x, y):
        return (x * 1e30 if step == 20 else x), y

    run = train_monitored(model, 30, run_path(), make_batch=outlier)
    write_run(run, tmp_path / "tb")
    acc = EventAccumulator(str(tmp_path / "tb"), size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    losses = acc.Scalars("neuraldbg/loss")
    assert [e.step for e in losses] == [s for s, _ in run.series.get("loss")]
    assert losses[0].value == pytest.approx(run.series.get("loss")[0][1], rel=1e-6)
    assert len(acc.Scalars("neuraldbg/grad_norm")) == len(run.series.get("grad_norm"))
    tensors = acc.Tensors("neuraldbg/events/text_summary")
    assert tensors and tensors[0].step == min(ev.step for ev in run.events)
    diagnosis = acc.Tensors("neuraldbg/diagnosis/text_summary")
    text = diagnosis[0].tensor_proto.string_val[0].decode()
    assert "data outlier" in text.lower() or "corrupt" in text.lower(), text
