"""The first non-finite value: exact step, layer and direction (input, forward, loss, backward)."""

from __future__ import annotations

import pytest
import torch
from helpers import train_monitored
from torch import nn

from causal.schema.run import INPUT, LOSS, Direction, EventKind, LayerStat
from neuraldbg import NeuralDbg


class LogAfter(nn.Module):
    """log(x) from step `at` on: NaN for negative inputs, born in a parameterless op."""

    def __init__(self, at: int) -> None:
        super().__init__()
        self.at, self.calls = at, 0

    def forward(self, x):
        self.calls += 1
        return torch.log(x) if self.calls > self.at else x


class Block(nn.Module):
    """A container (not a unit): a Linear plus a functional op that blows up when `on`."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.on = False

    def forward(self, x):
        h = self.lin(x)
        return h / torch.zeros_like(h) if self.on else h


def train(model, steps, path, preset="standard", make_batch=None, loss_fn=None):
    return train_monitored(model, steps, path, preset=preset, make_batch=make_batch,
                           loss_fn=loss_fn, record_target=True)


@pytest.mark.parametrize("preset", ["standard", "full"])
def test_forward_born_nan_in_a_parameterless_module(run_path, preset):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), LogAfter(at=7), nn.Linear(8, 8),
                          nn.Tanh(), nn.Linear(8, 1))
    run = train(model, 12, run_path(), preset=preset)
    ev = run.first_nonfinite
    assert ev is not None
    assert (ev.step, ev.layer_name, ev.metadata["direction"]) == (7, "2", Direction.FORWARD)
    assert ev.to_state == "nan"
    assert ev.metadata["inputs_finite"] is True
    assert ev.metadata["module_type"] == "LogAfter"
    assert ev.metadata["exact"] is True
    assert ev.value > 0
    # the origin event comes first among the events of that step, and only once per episode
    assert next(e.kind for e in run.events if e.step == 7) == EventKind.NONFINITE_ORIGIN
    assert len(run.events_of(EventKind.NONFINITE_ORIGIN)) == 1
    # full statistics of the failing step itself were recorded
    window = run.window_at(7)
    assert window is not None and 7 in window.steps
    assert window.series("3", LayerStat.ACT_NONFINITE)[-1] == (7, 128.0)


def test_forward_born_inside_a_container_names_the_container(run_path):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), Block(), nn.Linear(8, 1))

    def switch(step, x, y):
        model[2].on = step >= 4
        return x, y

    run = train(model, 8, run_path(), make_batch=switch)
    ev = run.first_nonfinite
    assert (ev.step, ev.layer_name, ev.metadata["direction"]) == (4, "2", Direction.FORWARD)
    assert ev.metadata["module_type"] == "Block"
    assert ev.metadata["inputs_finite"] is True


def test_inf_born_before_nan_is_reported_as_inf(run_path):
    class Overflow(nn.Module):
        def forward(self, x):
            return x * 1e38 * 1e38  # inf for |x| large enough, finite zeros stay finite

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), Overflow(), nn.Linear(8, 1))
    run = train(model, 3, run_path())
    ev = run.first_nonfinite
    assert (ev.step, ev.layer_name, ev.to_state) == (0, "1", "inf")


def test_a_forward_born_value_says_how_large_and_how_degenerate_its_inputs_were(run_path):
    """An overflow follows from large inputs (exp of 100), 0/0 or sqrt(0) from exact zeros:
    the origin records the largest finite |input| of the module where the value was born, the
    share of its input values that were exactly zero, and the share of its input vectors
    (along the last dimension) that were zero as a whole."""

    class ExpAfter(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.on = False

        def forward(self, x):
            return torch.exp(x * 100.0) if self.on else x

    class UnitNorm(nn.Module):
        def forward(self, x):
            return x / x.norm(dim=-1, keepdim=True)  # 0/0 on an all-zero row

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), ExpAfter(), nn.Linear(8, 1))

    def switch(step, x, y):
        model[1].on = step >= 2
        return x, y

    ev = train(model, 4, run_path(), make_batch=switch).first_nonfinite
    assert (ev.step, ev.layer_name, ev.to_state) == (2, "1", "inf")
    assert ev.metadata["input_max_abs"] > 0.5 and ev.metadata["input_zero_frac"] == 0.0
    assert ev.metadata["input_zero_rows"] == 0.0

    model = nn.Sequential(nn.Linear(8, 8, bias=False), UnitNorm(), nn.Linear(8, 1))

    def zero_rows(step, x, y):
        if step == 3:
            x = x.clone()
            x[:4] = 0.0  # padding rows: the bias-free Linear keeps them at zero
        return x, y

    ev = train(model, 5, run_path(), make_batch=zero_rows).first_nonfinite
    assert (ev.step, ev.layer_name, ev.to_state) == (3, "1", "nan")
    assert ev.metadata["input_zero_frac"] == pytest.approx(0.25)
    assert ev.metadata["input_zero_rows"] == pytest.approx(0.25)  # 4 of 16 rows, whole
    assert 0.0 < ev.metadata["input_max_abs"] < 100.0


def test_input_born(run_path):
    def poison(step, x, y):
        if step == 5:
            x = x.clone()
            x[3, 2] = float("nan")
        return x, y

    model = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1))
    run = train(model, 9, run_path(), make_batch=poison)
    ev = run.first_nonfinite
    assert (ev.step, ev.layer_name, ev.metadata["direction"]) == (5, INPUT, Direction.INPUT)
    assert ev.value == 1.0 and ev.to_state == "nan"
    assert any(e.to_state == "input_nan" and e.step == 5 for e in run.events)


class Conditioned(nn.Module):
    """A model given its batch and a second tensor (a context set, a conditioning signal)
    that it only reads through a Linear of its own, and an additive mask."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 8), nn.Tanh())
        self.ctx = nn.Linear(4, 8)
        self.head = nn.Linear(8, 1)

    def forward(self, x, context, attn_mask):
        return self.head(self.body(x) + self.ctx(context).mean(0) + attn_mask.amax())


@pytest.mark.parametrize("preset", ["standard", "full"])
def test_a_nan_in_another_argument_than_the_batch_is_input_born(run_path, preset):
    """The batch is measured every step; a NaN that came in with another argument is found
    when the hunt reaches the model's own inputs: born in the input, with the argument's
    name, not in the model. A mask's -inf is by design and is left out."""
    torch.manual_seed(0)
    model = Conditioned()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    g = torch.Generator().manual_seed(0)
    mask = torch.tensor([0.0, float("-inf")])
    with NeuralDbg(model, path=run_path(), preset=preset) as dbg:
        for step in range(8):
            x, y = torch.randn(16, 8, generator=g), torch.randn(16, 1, generator=g)
            context = torch.randn(5, 4, generator=g)
            if step == 6:
                context[2, 1] = float("nan")
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x, context, mask), y)
            loss.backward()
            dbg.record_loss(loss)
            opt.step()
    ev = dbg.run.first_nonfinite
    assert (ev.step, ev.layer_name, ev.metadata["direction"]) == (6, INPUT, Direction.INPUT)
    assert ev.metadata["argument"] == "context" and ev.to_state == "nan"


def test_target_born_is_input(run_path):
    def poison(step, x, y):
        if step == 3:
            y = y.clone()
            y[0, 0] = float("inf")
        return x, y

    model = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1))
    run = train(model, 5, run_path(), make_batch=poison)
    ev = run.first_nonfinite
    assert (ev.step, ev.metadata["direction"], ev.metadata["tensor"]) == (
        3, Direction.INPUT, "target")


def test_loss_born(run_path):
    def log_loss(out, y):
        return torch.log(out - out.detach().max() - 0.0).mean()  # log(0) = -inf at the max

    model = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1))
    run = train(model, 2, run_path(), loss_fn=log_loss)
    ev = run.first_nonfinite
    assert (ev.step, ev.layer_name, ev.metadata["direction"]) == (0, LOSS, Direction.LOSS)


@pytest.mark.parametrize("preset", ["standard", "full"])
def test_a_loss_born_value_says_which_ops_the_loss_ran_in_half_precision(run_path, preset):
    """A contrastive loss written by hand under float16 autocast: exp(similarity / 0.01)
    overflows, inf / inf is NaN. The origin names the loss's own float16 ops (Exp, Mm, Sum),
    not the model's (Addmm); the same loss in float32 ran none in half precision."""
    def contrastive(out, y):
        sim = out @ out.T / 0.01
        e = torch.exp(sim)
        return -torch.log(e.diagonal() / e.sum(1)).mean()

    def run_once(amp):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 16))
        with NeuralDbg(model, path=run_path(), preset=preset) as dbg:
            x = torch.randn(16, 8) * (4.0 if amp else 40.0)
            with torch.autocast("cpu", dtype=torch.float16, enabled=amp):
                loss = contrastive(model(x), None)
            loss.backward()
            dbg.record_loss(loss)
        return dbg.run.first_nonfinite

    half = run_once(True)
    assert (half.layer_name, half.to_state) == (LOSS, "nan")
    ops = set(half.metadata["loss_half_ops"])
    assert {"Exp", "Mm", "Sum"} <= ops and "Addmm" not in ops, ops
    full = run_once(False)
    assert full.layer_name == LOSS and full.metadata["loss_half_ops"] == []


class SqrtAbs(nn.Module):
    """sqrt(|x|): finite forward at x == 0, NaN backward (sign(0) * inf)."""

    def forward(self, x):
        return torch.sqrt(x.abs())


def test_backward_born_origin_is_the_module_whose_backward_did_it(run_path):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 4), SqrtAbs(), nn.Linear(4, 4), nn.Tanh(),
                          nn.Linear(4, 1))
    with torch.no_grad():  # unit 0 of the first layer outputs exact zeros
        model[0].weight[0].zero_()
        model[0].bias[0] = 0.0
    run = train(model, 2, run_path())
    ev = run.first_nonfinite
    assert (ev.step, ev.metadata["direction"]) == (0, Direction.BACKWARD)
    assert ev.layer_name == "1"  # sqrt's backward at 0; the NaN gradient lands in layer 0
    assert ev.metadata["replayed"] and ev.metadata["has_params"] is False
    assert ev.to_state == "nan"
    first = [e for e in run.events if e.step == 0]
    assert any(e.to_state == "grad_nan" and e.layer_name == "0" for e in first)
    assert not any(e.to_state == "grad_nan" and e.layer_name in ("2", "4") for e in first)


def test_several_layers_non_finite_in_one_step_origin_is_first_in_forward_order(run_path):
    def poison(step, x, y):
        return (x * float("inf") if step == 2 else x), y

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 8), nn.Linear(8, 1))
    run = train(model, 4, run_path(), make_batch=poison)
    assert run.first_nonfinite.metadata["direction"] == Direction.INPUT
    with_weights = nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 8), nn.Linear(8, 1))
    with torch.no_grad():
        with_weights[2].weight.fill_(3e38)
    run = train(with_weights, 2, run_path())
    ev = run.first_nonfinite
    assert (ev.layer_name, ev.metadata["direction"]) == ("2", Direction.FORWARD)


class BigLog(nn.Module):
    """log(x) on a large feature map (more elements than the stash keeps by reference)."""

    def __init__(self) -> None:
        super().__init__()
        self.on = False

    def forward(self, x):
        return torch.log(x) if self.on else x


def test_forward_origin_in_a_large_output_kept_only_as_a_sum(run_path):
    from neuraldbg.step_capture import STASH_MAX_ELEMS

    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.Tanh(), BigLog(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 1))
    g = torch.Generator().manual_seed(0)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with NeuralDbg(model, path=run_path()) as dbg:
        for step in range(6):
            model[2].on = step >= 4
            x = torch.randn(8, 3, 64, 64, generator=g)
            assert STASH_MAX_ELEMS < 8 * 16 * 64 * 64
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), torch.zeros(8, 1))
            loss.backward()
            dbg.record_loss(loss)
            opt.step()
    ev = dbg.run.first_nonfinite
    assert (ev.step, ev.layer_name, ev.metadata["direction"]) == (4, "2", Direction.FORWARD)
    assert ev.to_state == "nan" and ev.metadata["count_exact"] is False
