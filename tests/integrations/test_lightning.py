"""A Lightning `trainer.fit` under `NeuralDbgCallback`: bit-identical training, the loss that
training_step returned (gradient accumulation included), the monitor closed at the end or on an
exception, and a submodule named when training_step does not call the module's own forward."""

from __future__ import annotations

import copy
import logging
import warnings

import lightning.pytorch as pl
import pytest
import torch
from torch import nn

from causal.diagnose import diagnose, format_diagnosis, is_healthy
from neuraldbg import load_run
from neuraldbg.integrations.lightning import NeuralDbgCallback


class _Regressor(pl.LightningModule):
    def __init__(self, lr: float, through_forward: bool = True) -> None:
        super().__init__()
        self.lr = lr
        self.through_forward = through_forward
        self.net = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(),
                                 nn.Linear(32, 1))
        self.losses: list[float] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], idx: int) -> torch.Tensor:
        x, y = batch
        out = self(x) if self.through_forward else self.net(x)
        loss = nn.functional.mse_loss(out, y)
        self.losses.append(loss.item())
        return loss

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=self.lr, momentum=0.9)


def _loader() -> torch.utils.data.DataLoader:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(256, 8, generator=g)
    y = x[:, :1] * 2 + 0.1 * torch.randn(256, 1, generator=g)
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=16)


def _fit(module: pl.LightningModule, callbacks: list[pl.Callback], accumulate: int = 1,
         steps: int = 12) -> None:
    trainer = pl.Trainer(max_steps=steps, accelerator="cpu", devices=1, logger=False,
                         enable_checkpointing=False, enable_progress_bar=False,
                         enable_model_summary=False, accumulate_grad_batches=accumulate,
                         callbacks=callbacks)
    trainer.fit(module, _loader())


@pytest.fixture(autouse=True)
def _quiet_lightning():
    logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)
    with warnings.catch_warnings():
        # Lightning's own advice (num_workers, the number of steps per epoch)
        warnings.filterwarnings("ignore", module="lightning")
        warnings.filterwarnings("ignore", message=".*does not have many workers.*")
        yield


@pytest.mark.parametrize("accumulate", [1, 2])
def test_a_fit_is_recorded_with_training_steps_losses(run_path, accumulate):
    torch.manual_seed(0)
    plain = _Regressor(lr=0.01)
    monitored = copy.deepcopy(plain)
    _fit(plain, [], accumulate)
    path = run_path()
    cb = NeuralDbgCallback(path=path)
    _fit(monitored, [cb], accumulate)
    for p, q in zip(plain.parameters(), monitored.parameters(), strict=True):
        assert torch.equal(p, q)
    assert not monitored._forward_pre_hooks and not monitored._forward_hooks
    run = load_run(path)
    assert run.meta["status"] == "finished"
    steps = [monitored.losses[i:i + accumulate] for i in range(0, 12 * accumulate, accumulate)]
    assert [v for _, v in run.series.get("loss")] == pytest.approx(
        [sum(s) / len(s) for s in steps], rel=1e-5)
    assert len(run.series.get("input_max_abs")) == 12
    hyps = diagnose(run)
    assert is_healthy(hyps), format_diagnosis(run, hyps)


def test_a_far_too_high_lr_under_lightning_reads_as_such(run_path):
    torch.manual_seed(0)
    path = run_path()
    callback = NeuralDbgCallback(path=path)
    _fit(_Regressor(lr=3.0), [callback], steps=40)
    run = load_run(path)
    hyps = diagnose(run)
    assert hyps and hyps[0].cause == "lr_too_high", format_diagnosis(run, hyps)
    # the end of fit: the summary the loggers got, and the report beside the run file
    assert callback.summary["neuraldbg/cause"] == "lr_too_high"
    assert callback.summary["neuraldbg/report"] == path.replace(".ndbg", ".html")


def test_a_submodule_named_for_a_training_step_that_skips_forward(run_path):
    torch.manual_seed(0)
    path = run_path()
    module = _Regressor(lr=0.01, through_forward=False)
    _fit(module, [NeuralDbgCallback(path=path, module="net")])
    run = load_run(path)
    assert len(run.series.get("loss")) == 12 and not run.meta.get("warnings")
    with pytest.raises(AttributeError, match="no attribute `model`"):
        _fit(_Regressor(lr=0.01), [NeuralDbgCallback(path=run_path(), module="model")])


class _Crashing(_Regressor):
    def training_step(self, batch, idx):
        if idx == 5:
            raise RuntimeError("data loader broke")
        return super().training_step(batch, idx)


def test_a_fit_that_raises_closes_the_monitor_and_keeps_the_error(run_path):
    torch.manual_seed(0)
    path = run_path()
    module = _Crashing(lr=0.01)
    with pytest.raises(RuntimeError, match="data loader broke"):
        _fit(module, [NeuralDbgCallback(path=path)])
    assert not module._forward_pre_hooks and not module._forward_hooks
    run = load_run(path)
    assert run.meta["status"] == "failed" and "data loader broke" in run.meta["error"]
    assert len(run.series.get("loss")) == 5


def test_a_fit_stops_before_a_non_finite_update(run_path):
    from neuraldbg import NonFiniteError

    torch.manual_seed(0)
    path = run_path()
    module = _Regressor(lr=1e12)
    with pytest.raises(NonFiniteError):
        _fit(module, [NeuralDbgCallback(path=path, on_nonfinite="raise")], steps=40)
    assert all(torch.isfinite(p).all() for p in module.parameters())
    assert load_run(path).meta["status"] == "failed"
