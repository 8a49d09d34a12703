"""The float32 re-run of the module where the first non-finite value was born, under float16
autocast: finite there means the half format overflowed, non-finite means an unsafe op."""

from __future__ import annotations

import torch
from helpers import train_monitored
from torch import nn

from causal.run_queries import first_origin
from neuraldbg.nonfinite.float32_rerun import rerun_in_float32


class Gram(nn.Module):
    """x x^T / d, then a row normalisation: an inf in the float16 product comes out as NaN."""

    def __init__(self, scale: float, at: int) -> None:
        super().__init__()
        self.scale, self.at, self.calls = scale, at, 0

    def forward(self, x):
        self.calls += 1
        s = self.scale if self.calls > self.at else 1.0
        g = (x * s) @ (x * s).transpose(0, 1) / x.shape[1]
        return g / g.norm(dim=1, keepdim=True)


class LogAfter(nn.Module):
    """log(x - 10): NaN from step `at` on, in any precision."""

    def __init__(self, at: int) -> None:
        super().__init__()
        self.at, self.calls = at, 0

    def forward(self, x):
        self.calls += 1
        return torch.log(x - 10.0) if self.calls > self.at else x


def _train(model, path, steps=8):
    return train_monitored(model, steps, path, targets=(16, 16), amp=torch.float16)


def test_an_overflow_inside_a_module_is_finite_in_float32(run_path):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), nn.BatchNorm1d(8), Gram(scale=300.0, at=4))
    run = _train(model, run_path("gram"))
    origin = first_origin(run)
    assert origin is not None and origin.layer_name == "2" and origin.step == 4
    assert origin.to_state == "nan"  # the inf of the product is hidden by the normalisation
    assert origin.metadata["fp32_finite"] is True
    assert 0 < origin.metadata["fp32_max_abs"] <= 1.0 + 1e-6


def test_an_unsafe_op_stays_non_finite_in_float32(run_path):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), LogAfter(at=3))
    run = _train(model, run_path("log"))
    origin = first_origin(run)
    assert origin is not None and origin.layer_name == "1"
    assert origin.metadata["fp32_finite"] is False


def test_the_rerun_leaves_buffers_and_the_rng_as_they_were():
    torch.manual_seed(0)
    block = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4), nn.Dropout(0.5)).train()
    x = torch.randn(8, 4)
    stats = [b.clone() for b in block.buffers()]
    state = torch.get_rng_state()
    out = rerun_in_float32(block, (x.half(),))
    assert out is not None and out.finite
    assert all(torch.equal(a, b) for a, b in zip(stats, block.buffers(), strict=True))
    assert torch.equal(state, torch.get_rng_state())


def test_no_answer_without_inputs_for_half_weights_or_weights_already_stepped():
    assert rerun_in_float32(nn.Linear(2, 2), ()) is None
    assert rerun_in_float32(nn.Linear(2, 2).half(), (torch.randn(1, 2).half(),)) is None
    stepped = nn.Linear(2, 2)
    with torch.no_grad():
        stepped.weight[0, 0] = float("nan")
    assert rerun_in_float32(stepped, (torch.randn(1, 2),)) is None
