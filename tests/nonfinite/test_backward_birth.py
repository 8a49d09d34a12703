"""A value born in the backward pass is traced to the module whose backward produced it
(`neuraldbg/nonfinite/backward_birth.py`), by running the step again, without changing the run."""

from __future__ import annotations

import pytest
import torch
from helpers import train_monitored
from torch import nn

from causal.schema.run import LOSS, Direction
from neuraldbg import NeuralDbg


class GuardedSqrt(nn.Module):
    """where(x > 0, sqrt(x), 0): a finite forward whose backward is 0/0 = NaN at x == 0 (the
    unselected branch is differentiated too)."""

    def forward(self, x):
        return torch.where(x > 0, torch.sqrt(x), torch.zeros_like(x))


class GuardedBlock(nn.Module):
    """A container (not a unit) whose own code holds the guarded sqrt, after its Linear."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        h = self.lin(x)
        return torch.where(h > 0, torch.sqrt(h), torch.zeros_like(h))


def _zero_unit(layer: nn.Linear) -> None:
    """Make output unit 0 of `layer` exactly 0 for every input."""
    with torch.no_grad():
        layer.weight[0].zero_()
        layer.bias[0] = 0.0


def train(model, steps, path, preset="standard", loss_fn=None, plain=False):
    return train_monitored(model, steps, None if plain else path, preset=preset, loss_fn=loss_fn)


@pytest.mark.parametrize("preset", ["standard", "light", "full"])
def test_parameter_free_module_downstream_of_the_nan_gradients_is_the_origin(run_path, preset):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 8), GuardedSqrt(),
                          nn.Linear(8, 1))
    _zero_unit(model[2])
    run = train(model, 3, run_path(), preset=preset)
    ev = run.first_nonfinite
    assert (ev.step, ev.layer_name, ev.metadata["direction"]) == (0, "3", Direction.BACKWARD)
    assert ev.to_state == "nan" and ev.metadata["module_type"] == "GuardedSqrt"
    assert ev.metadata["layers_nonfinite"] == 2  # layers 0 and 2 got the NaN gradients
    assert ev.value >= 1


def test_with_batchnorm_whose_running_statistics_its_backward_saves(run_path):
    """BatchNorm saves its running statistics for backward: the replayed pass is
    differentiated before they are put back (else autograd refuses the graph)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8), nn.Tanh(), nn.Linear(8, 8),
                          GuardedSqrt(), nn.Linear(8, 1))
    _zero_unit(model[3])
    run = train(model, 3, run_path())
    ev = run.first_nonfinite
    assert (ev.step, ev.layer_name, ev.metadata["direction"]) == (0, "4", Direction.BACKWARD)
    assert ev.metadata["replayed"] and ev.metadata["layers_nonfinite"] == 3


def test_born_in_a_containers_own_code_names_the_container(run_path):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), GuardedBlock(), nn.Linear(8, 1))
    _zero_unit(model[2].lin)
    run = train(model, 2, run_path())
    ev = run.first_nonfinite
    assert (ev.layer_name, ev.metadata["direction"]) == ("2", Direction.BACKWARD)
    assert ev.metadata["module_type"] == "GuardedBlock"


def test_a_value_born_in_the_losss_backward_is_the_losss(run_path):
    """sqrt(0 * out) in the loss: finite loss, NaN gradient from the loss's own backward. The
    model's backward with a stand-in gradient is finite, so nothing inside it is blamed."""
    def loss_fn(out, y):
        return torch.sqrt((out * 0.0).pow(2).sum()) + nn.functional.mse_loss(out, y)

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1))
    run = train(model, 2, run_path(), loss_fn=loss_fn)
    ev = run.first_nonfinite
    assert (ev.step, ev.layer_name, ev.metadata["direction"]) == (0, LOSS, Direction.BACKWARD)
    assert ev.metadata["replayed"] and ev.metadata["layers_nonfinite"] == 2
    assert ev.to_state == "nan" and ev.value >= 1


def test_a_stand_in_gradient_that_reproduces_only_part_of_the_step_names_nothing(run_path):
    """The model's backward makes some layers non-finite, the loss's others: the stand-in does
    not reproduce the real set, so the parameter-gradient origin stands."""
    def loss_fn(out, y):  # the loss's backward also poisons the head through the output
        return torch.sqrt((out * 0.0).pow(2).sum()) + nn.functional.mse_loss(out, y)

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 8), GuardedSqrt(),
                          nn.Linear(8, 1))
    _zero_unit(model[2])
    run = train(model, 2, run_path(), loss_fn=loss_fn)
    ev = run.first_nonfinite
    assert (ev.layer_name, ev.metadata["direction"]) == ("4", Direction.BACKWARD)
    assert "replayed" not in ev.metadata


def test_following_a_backward_born_value_leaves_the_run_unchanged(run_path):
    """Dropout draws from the RNG: a replay that left it moved would change the next steps."""
    def build():
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.3), nn.Linear(8, 8),
                              GuardedSqrt(), nn.Linear(8, 1))
        _zero_unit(model[2])
        return model

    plain, watched = build(), build()
    train(plain, 4, None, plain=True)
    rng_plain = torch.get_rng_state()
    run = train(watched, 4, run_path())
    assert torch.equal(torch.get_rng_state(), rng_plain)
    assert run.first_nonfinite.layer_name == "3"
    for a, b in zip(plain.state_dict().values(), watched.state_dict().values(), strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0, equal_nan=True)


def test_gradient_accumulation_born_in_the_second_micro_batch(run_path):
    """Two forward/backward passes per step; the second one's backward is where it happens."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), GuardedSqrt(), nn.Linear(8, 1))
    with torch.no_grad():  # positive pre-activations, except unit 0 on an all-zero batch
        model[0].weight.uniform_(0.1, 1.0)
        model[0].bias.fill_(0.1)
        model[0].bias[0] = 0.0
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(0)
    with NeuralDbg(model, path=run_path()) as dbg:
        for step in range(6):
            dbg.step = step
            opt.zero_grad()
            for micro in range(2):
                x = torch.rand(16, 8, generator=g) + 0.1
                if step == 4 and micro == 1:
                    x = torch.zeros(16, 8)
                loss = model(x).pow(2).mean()
                loss.backward()
                dbg.record_loss(loss)
            opt.step()
    ev = dbg.run.first_nonfinite
    assert (ev.step, ev.layer_name, ev.metadata["direction"]) == (4, "1", Direction.BACKWARD)
    assert ev.metadata["replayed"]
