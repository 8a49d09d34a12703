"""The failing step re-run from its scene: dropping rows finds an outlier row by index, float32
confirms an fp16 overflow, anomaly mode names an unsafe op's line; `neuraldbg confirm` writes
what it found and `diagnose` reports it. The user's live model is never touched."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import torch
from torch import nn

from causal.diagnose import diagnose
from causal.schema.run_file import load_run
from neuraldbg import NeuralDbg
from neuraldbg.cli import main as cli_main
from neuraldbg.replay import replay
from neuraldbg.scene import scene_path


def make_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))


def mse(out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return nn.functional.mse_loss(out, y)


def log_loss(out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return -torch.log(torch.relu(out)).mean()  # log(0) once an output is clipped to 0


def _train(path: str, model: nn.Module, loss_fn, batch, steps: int = 12,
           amp: torch.dtype | None = None) -> nn.Module:
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with NeuralDbg(model, path=path) as dbg:
        for step in range(steps):
            x, y = batch(step)
            opt.zero_grad()
            with torch.autocast("cpu", dtype=amp or torch.bfloat16, enabled=amp is not None):
                loss = loss_fn(model(x), y)
            loss.backward()
            dbg.record_loss(loss, target=y)
            opt.step()
    return model


def _batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(step)
    return torch.randn(16, 8, generator=g), torch.randn(16, 1, generator=g)


def test_dropping_rows_finds_the_outlier_row(run_path) -> None:
    def outlier(step):
        x, y = _batch(step)
        if step == 6:
            x[11] = 1e30  # one corrupt row
            y[11] = 1e30
        return x, y

    path = run_path()
    model = _train(path, make_model(), mse, outlier)
    live = copy.deepcopy(model.state_dict())
    found = replay(scene_path(path), model, mse)
    assert found[0].removes_failure is False  # it fails again
    rows = next(f for f in found if f.name.startswith("drop rows"))
    assert rows.name == "drop rows [11] of 16" and rows.confirms == "data_outlier"
    assert "1e+30" in rows.detail
    for k, v in model.state_dict().items():  # the live model untouched
        torch.testing.assert_close(v, live[k], rtol=0, atol=0, equal_nan=True)


class _ExpHead(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.exp(self.lin(x)).sum(dim=1, keepdim=True)  # fp16: past 65504 at 11.1


def test_float32_confirms_an_fp16_overflow(run_path) -> None:
    def rising(step):
        x, y = _batch(step)
        return x * (1.0 + 3.0 * (step >= 6)), y

    torch.manual_seed(0)
    model = _ExpHead()
    with torch.no_grad():
        model.lin.weight.fill_(0.4)
    path = run_path()
    _train(path, model, mse, rising, amp=torch.float16)
    found = replay(scene_path(path), _ExpHead, mse)  # a factory: a new model
    fp32 = next(f for f in found if f.name.startswith("the step in float32"))
    assert fp32.removes_failure and fp32.confirms == "fp16_overflow"


def test_anomaly_mode_names_the_unsafe_ops_line(run_path, tmp_path: Path, capsys) -> None:
    def batch(step):
        x, y = _batch(step)
        return (x - 100.0 if step == 5 else x.abs()), y  # outputs clipped to 0 at step 5

    path = run_path()
    _train(path, make_model(), log_loss, batch)
    found = replay(scene_path(path), make_model, log_loss)
    op = next(f for f in found if f.name.startswith("the op"))
    assert "log" in op.detail and "test_replay.py" in op.detail, op.detail
    assert op.confirms == "unsafe_op", found
    # the command line: the same, written beside the run, and reported by diagnose
    (tmp_path / "user_code.py").write_text(
        "import torch\nfrom torch import nn\n"
        "def make_model():\n    torch.manual_seed(0)\n"
        "    return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))\n"
        "def log_loss(out, y):\n    return -torch.log(torch.relu(out)).mean()\n")
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert cli_main(["confirm", path, "--model", "user_code:make_model",
                         "--loss", "user_code:log_loss"]) == 0
    finally:
        os.chdir(here)
    out = capsys.readouterr().out
    assert "-> confirms unsafe_op" in out and "written to" in out
    report = diagnose(load_run(path)).format()
    assert "confirmed by intervention: the op (every torch call watched" in report
    from causal.html_report import render

    assert "confirmed by intervention" in render(load_run(path))


def test_a_tenth_of_the_lr_confirms_a_too_high_lr(run_path) -> None:
    def task(step):
        x, _ = _batch(step)
        return x, x[:, :1] * 3.0 - x[:, 1:2]  # a learnable target

    path = run_path()
    model = make_model()
    opt = torch.optim.SGD(model.parameters(), lr=1.5)
    with NeuralDbg(model, path=path, checkpoint_every=5) as dbg:
        for step in range(60):
            x, y = task(step)
            opt.zero_grad()
            loss = mse(model(x), y)
            loss.backward()
            dbg.record_loss(loss, target=y)
            opt.step()
    scene = torch.load(scene_path(path), weights_only=True)
    assert scene["checkpoint"]["steps"][-1]["step"] == scene["step"]
    found = replay(scene_path(path), make_model, mse)
    lr = found[-1]
    assert lr.name == "lr/10 over the steps before" and lr.removes_failure, lr
    assert lr.confirms == "lr_too_high" and "finite at a tenth of it" in lr.detail


def test_without_a_checkpoint_the_lr_is_not_tried(run_path) -> None:
    def outlier(step):
        x, y = _batch(step)
        if step == 4:
            x[2] = float("inf")
        return x, y

    path = run_path()
    _train(path, make_model(), mse, outlier)
    lr = replay(scene_path(path), make_model, mse)[-1]
    assert lr.detail.startswith("not tried: no checkpoint") and lr.confirms is None
