"""A monitored model can be saved whole, deep-copied and sent to another process inside the
loop: the copy carries no monitor and no hook of ours, the user's own hooks travel with it, and the
original stays monitored."""

from __future__ import annotations

import copy
import io
import multiprocessing
import pickle
from multiprocessing.reduction import ForkingPickler
from pathlib import Path

import torch
from torch import nn

from causal.schema.run_file import load_run
from neuraldbg import NeuralDbg
from neuraldbg.capture.copy_safety import HOOK_DICTS, is_monitor_hook


def _model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))


def _user_hook(module: nn.Module, args: object, out: torch.Tensor) -> None:
    """A hook of the user's (module level, so it pickles)."""


def _hooks_of_ours(model: nn.Module) -> int:
    return sum(is_monitor_hook(fn) for m in model.modules() for key in HOOK_DICTS
               for fn in getattr(m, key).values())


def _copies(model: nn.Module) -> dict[str, nn.Module]:
    buf = io.BytesIO()
    torch.save(model, buf)
    buf.seek(0)
    return {
        "torch.save": torch.load(buf, weights_only=False),
        "deepcopy": copy.deepcopy(model),
        "pickle": pickle.loads(pickle.dumps(model)),
        "to another process": pickle.loads(bytes(ForkingPickler.dumps(model))),
    }


def _train(model: nn.Module, steps: int, on_step=None, dbg: NeuralDbg | None = None) -> None:
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(0)
    for step in range(steps):
        x, y = torch.randn(8, 4, generator=g), torch.randn(8, 1, generator=g)
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        if dbg is not None:
            dbg.record_loss(loss)
        opt.step()
        if on_step is not None:
            on_step(step)


def test_copies_inside_the_loop_carry_no_monitor_and_keep_user_hooks(run_path) -> None:
    model = _model()
    model[2].register_forward_hook(_user_hook)
    made: dict[str, nn.Module] = {}
    with NeuralDbg(model, path=run_path()) as dbg:
        _train(model, 6, on_step=lambda s: made.update(_copies(model)) if s == 2 else None,
               dbg=dbg)
        assert _hooks_of_ours(model) > 0  # the original is still watched
    assert set(made) == {"torch.save", "deepcopy", "pickle", "to another process"}
    for how, c in made.items():
        assert _hooks_of_ours(c) == 0, how
        assert [fn for fn in c[2]._forward_hooks.values()] == [_user_hook], how
        assert not c._forward_hooks_always_called and not c._forward_pre_hooks_with_kwargs, how
        c(torch.randn(2, 4)).sum().backward()  # the copy trains without the monitor
    # the original kept recording after the copies were made
    run = load_run(dbg.path)
    assert run.series.steps[-1] == 5 and run.meta["status"] == "finished"


def test_a_copy_equals_the_original_and_trains_alone(run_path) -> None:
    model = _model()
    with NeuralDbg(model, path=run_path()) as dbg:
        _train(model, 3, dbg=dbg)
        twin = copy.deepcopy(model)
    for a, b in zip(model.state_dict().values(), twin.state_dict().values(), strict=True):
        assert torch.equal(a, b)
    _train(twin, 2)  # no monitor, no run file touched
    assert load_run(dbg.path).series.steps[-1] == 2


def test_a_monitored_model_is_sent_to_a_spawned_process(run_path, tmp_path: Path) -> None:
    model = _model()
    saved = tmp_path / "from-child.pt"
    with NeuralDbg(model, path=run_path()) as dbg:
        _train(model, 2, dbg=dbg)
        # the child unpickles the model it is sent, then saves it back for this process to read
        proc = multiprocessing.get_context("spawn").Process(target=torch.save,
                                                            args=(model, str(saved)))
        proc.start()
        proc.join(timeout=120)
        assert proc.exitcode == 0
    back = torch.load(saved, weights_only=False)
    assert _hooks_of_ours(back) == 0
    x = torch.ones(1, 4)
    assert torch.equal(back(x), model(x))


def test_modules_no_monitor_watches_copy_as_before() -> None:
    model = _model()
    model[0].register_forward_hook(_user_hook)
    assert copy.deepcopy(model)[0]._forward_hooks.keys() == model[0]._forward_hooks.keys()
