"""NeuralDbg(on_nonfinite="raise") stops before the bad update: `NonFiniteError` out of the
optimizer's step, with the origin and the diagnosis; the weights and the optimizer's state are
those before it; the run file is closed as failed. "record" logs nothing, "warn" logs."""

from __future__ import annotations

import copy
import logging

import pytest
import torch
from torch import nn

from causal.schema.run_file import load_run
from neuraldbg import NeuralDbg, NonFiniteError
from neuraldbg.errors import ConfigError


def _model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))


def _batch(step: int, bad_at: int) -> torch.Tensor:
    x = torch.randn(16, 8, generator=torch.Generator().manual_seed(step))
    return x * float("inf") if step == bad_at else x


def _train(dbg: NeuralDbg, model: nn.Module, opt: torch.optim.Optimizer, steps: int,
           bad_at: int) -> None:
    """The plain loop, the batch of step `bad_at` non-finite."""
    for step in range(steps):
        opt.zero_grad()
        loss = model(_batch(step, bad_at=bad_at)).pow(2).mean()
        loss.backward()
        dbg.record_loss(loss)
        opt.step()


@pytest.mark.parametrize("micro", [1, 3], ids=["plain", "accumulation"])
def test_raise_stops_before_the_bad_update(run_path, micro) -> None:
    model = _model()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    path = run_path()
    before = None
    with pytest.raises(NonFiniteError) as info, \
            NeuralDbg(model, path=path, on_nonfinite="raise") as dbg:
        for step in range(30):
            opt.zero_grad()
            for m in range(micro):
                loss = model(_batch(step * micro + m, bad_at=12 * micro + micro - 1)).pow(2).mean()
                loss.backward()
                dbg.record_loss(loss)
            before = (copy.deepcopy(model.state_dict()), copy.deepcopy(opt.state_dict()))
            opt.step()
    err = info.value
    assert err.step == 12 and err.origin is not None and err.origin.step == 12
    assert err.diagnosis.top is not None and "neuraldbg diagnose" in str(err)
    assert before is not None
    for k, v in model.state_dict().items():  # the update was not applied
        assert torch.equal(v, before[0][k])
    assert opt.state_dict()["state"].keys() == before[1]["state"].keys()
    for k, state in opt.state_dict()["state"].items():
        assert torch.equal(state["exp_avg"], before[1]["state"][k]["exp_avg"])
    run = load_run(path)
    assert run.meta["status"] == "failed" and "NonFiniteError" in run.meta["error"]
    assert run.first_nonfinite is not None and run.first_nonfinite.step == 12


def test_record_logs_nothing_and_warn_logs(run_path, caplog) -> None:
    for mode, lines in (("record", 0), ("warn", 1)):
        caplog.clear()
        model = _model()
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        with caplog.at_level(logging.WARNING, logger="neuraldbg"), \
                NeuralDbg(model, path=run_path(), on_nonfinite=mode) as dbg:
            _train(dbg, model, opt, steps=20, bad_at=8)
        said = [r for r in caplog.records if "first non-finite" in r.getMessage()]
        assert len(said) == lines, mode


def test_a_scaler_skipping_an_inf_step_does_not_raise(run_path) -> None:
    model = _model()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cpu", init_scale=3e38)  # overflows: the scaler skips
    with NeuralDbg(model, path=run_path(), scaler=scaler, on_nonfinite="raise") as dbg:
        for step in range(10):
            opt.zero_grad()
            loss = model(_batch(step, bad_at=-1) * 100).pow(2).mean() * 1e3
            scaler.scale(loss).backward()
            dbg.record_loss(loss)
            scaler.step(opt)
            scaler.update()
    assert scaler.get_scale() < 3e38  # it did skip, and nothing was raised


def test_on_nonfinite_must_be_known() -> None:
    with pytest.raises(ConfigError, match="on_nonfinite must be one of"):
        NeuralDbg(_model(), on_nonfinite="stop")


def test_the_first_failing_step_leaves_its_scene(run_path) -> None:
    from neuraldbg.scene import scene_path

    model = _model()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    path = run_path()
    with NeuralDbg(model, path=path) as dbg:  # the default, "warn": training goes on
        for step in range(20):
            x = _batch(step, bad_at=8)
            y = torch.zeros(16, 1)
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            dbg.record_loss(loss, target=y)
            if step == 8:
                before = copy.deepcopy(model.state_dict())
            opt.step()
    scene = torch.load(scene_path(path), weights_only=True)
    assert scene["step"] == 8 and scene["left_out"] == []
    assert torch.isinf(scene["inputs"][0]["args"][0]).any()  # the batch that did it
    assert torch.equal(scene["targets"][0], torch.zeros(16, 1))
    for k, v in before.items():  # the weights before the update
        assert torch.equal(scene["model_state"][k], v)
    assert scene["learning_rates"] == [0.01] and scene["autocast_dtype"] == "none"
    assert scene["rng"]["cpu"].dtype == torch.uint8


def test_a_scene_keeps_what_fits(run_path) -> None:
    from neuraldbg.scene import scene_path

    model = _model()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    path = run_path()
    with NeuralDbg(model, path=path, scene_max_mb=0.001) as dbg:
        _train(dbg, model, opt, steps=12, bad_at=5)
    scene = torch.load(scene_path(path), weights_only=True)
    assert "inputs" in scene and "model_state" not in scene
    assert any(part.startswith("model_state") for part in scene["left_out"])


def test_a_scaler_whose_skips_never_recover_halts(run_path) -> None:
    from neuraldbg.step_capture import SCALER_SKIP_LIMIT

    model = _model()
    with torch.no_grad():
        model[0].weight.fill_(float("inf"))  # every step's gradients are non-finite
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cpu")
    path = run_path()
    steps = 0
    with pytest.raises(NonFiniteError, match=f"skipped the last {SCALER_SKIP_LIMIT} steps"), \
            NeuralDbg(model, path=path, scaler=scaler, on_nonfinite="raise") as dbg:
        for step in range(60):
            opt.zero_grad()
            loss = model(_batch(step, bad_at=-1)).pow(2).mean()
            scaler.scale(loss).backward()
            dbg.record_loss(loss)
            scaler.step(opt)
            scaler.update()
            steps += 1
    assert SCALER_SKIP_LIMIT <= steps < SCALER_SKIP_LIMIT + 3
    assert load_run(path).meta["status"] == "failed"
