"""Live alerts: one WARNING line on logger "neuraldbg" at the first non-finite value and at the
loss's first divergence, with the run file and the command that explains it; nothing on quiet
steps; `on_event` sees every event as it is recorded, and one that raises is dropped."""

from __future__ import annotations

import logging

import pytest
import torch
from helpers import train_monitored
from torch import nn

from causal.schema.run import EventKind
from causal.schema.run_file import load_run
from neuraldbg import NeuralDbg
from neuraldbg.errors import ConfigError, NeuralDbgWarning


def _outlier(step: int, x: torch.Tensor, y: torch.Tensor):
    return (x * float("inf") if step == 25 else x), y


def _model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 8), nn.Tanh(), nn.Linear(8, 1))


def test_the_first_nonfinite_value_is_logged_once_as_it_happens(run_path, caplog) -> None:
    path = run_path()
    with caplog.at_level(logging.WARNING, logger="neuraldbg"):
        train_monitored(_model(), 40, path, make_batch=_outlier, inputs=(16, 16))
    lines = [r.getMessage() for r in caplog.records if r.name == "neuraldbg"]
    born = [m for m in lines if "first non-finite value" in m]
    assert len(born) == 1, lines
    assert "at step 25" in born[0] and path in born[0] and f"neuraldbg diagnose {path}" in born[0]
    assert "input" in born[0]


def test_a_quiet_run_logs_nothing(run_path, caplog) -> None:
    with caplog.at_level(logging.DEBUG, logger="neuraldbg"):
        train_monitored(_model(), 40, run_path(), inputs=(16, 16))
    assert not [r for r in caplog.records if r.name == "neuraldbg"]


def _inf_at_25(model: nn.Module, dbg: NeuralDbg) -> None:
    """40 steps of SGD, an inf input batch at step 25."""
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for step in range(40):
        x = torch.randn(16, 16) * (float("inf") if step == 25 else 1.0)
        opt.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        dbg.record_loss(loss)
        opt.step()


def test_on_event_sees_every_event_and_one_that_raises_is_dropped(run_path) -> None:
    seen = []
    path = run_path()
    model = _model()
    with NeuralDbg(model, path=path, on_event=seen.append) as dbg:
        _inf_at_25(model, dbg)
    assert seen == list(load_run(path).events)
    assert any(ev.kind == EventKind.NONFINITE_ORIGIN for ev in seen)

    def boom(ev):
        raise ValueError("the user's callback")

    model = _model()
    with pytest.warns(NeuralDbgWarning, match=r"on_event=\.\.\.\) raised ValueError"), \
            NeuralDbg(model, path=run_path(), on_event=boom) as dbg:
        _inf_at_25(model, dbg)
    assert len(load_run(dbg.path).series) == 40  # the recording went on


def test_on_event_must_be_callable() -> None:
    with pytest.raises(ConfigError, match="on_event must be a callable"):
        NeuralDbg(_model(), on_event=5)  # type: ignore[arg-type]

