"""A non-finite value born in a module's own code between two of its submodules (a functional
log, matmul or softmax in forward()) is blamed on that module, not on the submodule that first
received it."""

from __future__ import annotations

import torch
from helpers import train_monitored
from torch import nn

from causal.diagnose import diagnose
from causal.run_queries import first_origin
from neuraldbg import NeuralDbg


class LogBetween(nn.Module):
    """lin -> log(h - 100) from step `at` on -> out: NaN born in this module's forward."""

    def __init__(self, at: int) -> None:
        super().__init__()
        self.lin, self.out = nn.Linear(8, 8), nn.Linear(8, 4)
        self.at, self.calls = at, 0

    def forward(self, x):
        self.calls += 1
        h = self.lin(x)
        if self.calls > self.at:
            h = torch.log(h - 100.0)
        return self.out(h)


class Attention(nn.Module):
    """Single-head self-attention whose scores overflow float16 from step `at` on."""

    def __init__(self, at: int) -> None:
        super().__init__()
        self.q, self.k, self.v, self.o = (nn.Linear(8, 8) for _ in range(4))
        self.at, self.calls = at, 0

    def forward(self, x):
        self.calls += 1
        scale = 400.0 if self.calls > self.at else 1.0
        scores = (self.q(x) * scale) @ (self.k(x) * scale).transpose(-1, -2)
        return self.o(torch.softmax(scores, dim=-1) @ self.v(x))


def _train(model, path, amp=None, steps=8):
    return train_monitored(model, steps, path, inputs=(4, 6, 8), targets=None, amp=amp,
                           scaler=True, loss_fn=lambda out, _: out.float().pow(2).mean())


def test_a_value_born_between_submodules_is_blamed_on_the_enclosing_module(run_path):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), LogBetween(at=3))
    run = _train(model, run_path("log"))
    origin = first_origin(run)
    assert origin is not None
    assert origin.layer_name == "1" and origin.metadata["first_seen_in"] == "1.out"
    assert origin.metadata["inputs_finite"] is True
    hyps = diagnose(run)
    assert hyps[0].cause == "unsafe_op" and hyps[0].layer == "1"


def test_an_attention_overflow_in_float16_is_blamed_on_the_attention_module(run_path):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), Attention(at=4))
    run = _train(model, run_path("attn"), amp=torch.float16)
    origin = first_origin(run)
    assert origin is not None and origin.layer_name == "1"
    assert origin.metadata["first_seen_in"] == "1.o"
    assert origin.metadata["fp32_finite"] is True
    hyps = diagnose(run)
    assert hyps[0].cause == "fp16_overflow" and hyps[0].layer == "1"


def test_show_says_where_it_was_born_and_what_the_float32_rerun_found(run_path):
    from causal.report import describe_origin

    torch.manual_seed(0)
    run = _train(nn.Sequential(nn.Linear(8, 8), Attention(at=4)), run_path("show"),
                 amp=torch.float16)
    text = describe_origin(run, first_origin(run))
    assert "first seen as the input of '1.o'" in text
    assert "a float16 overflow" in text


class GateWithEntropy(nn.Module):
    """Returns (gate probabilities, their entropy), the entropy written as -(p * log p): once
    `sharp` is large, some p underflow to 0 and 0 * log 0 is NaN, while the probabilities
    themselves stay finite (a second output turns non-finite)."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 4)
        self.sharp = 1.0

    def forward(self, h):
        p = torch.softmax(self.proj(h) * self.sharp, dim=-1)
        return p, -(p * torch.log(p)).sum(-1).mean()


class GatedModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.trunk = nn.Linear(8, 8)
        self.gate = GateWithEntropy()
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        h = torch.tanh(self.trunk(x))
        p, entropy = self.gate(h)
        return (p * self.head(h)).sum(-1), entropy


def _train_gated(model, path, at, steps=8):
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    g = torch.Generator().manual_seed(0)
    with NeuralDbg(model, path=path) as dbg:
        for step in range(steps):
            model.gate.sharp = 1e4 if step >= at else 1.0
            x = torch.randn(16, 8, generator=g)
            opt.zero_grad()
            y, entropy = model(x)
            loss = y.pow(2).mean() + 0.1 * entropy
            loss.backward()
            dbg.record_loss(loss)
            opt.step()
    return dbg.run


def test_a_module_whose_second_output_turns_nonfinite_is_the_origin(run_path):
    # step 1 has full statistics (outputs kept), step 5 is a quiet step (its pass is replayed)
    for at, replayed in ((1, None), (5, True)):
        torch.manual_seed(0)
        run = _train_gated(GatedModel(), run_path("gate"), at)
        origin = first_origin(run)
        assert origin is not None and origin.step == at
        assert origin.layer_name == "gate" and origin.metadata["direction"] == "forward"
        assert origin.metadata["inputs_finite"] is True
        assert origin.metadata.get("replayed") is replayed


class Mix(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 4)

    def forward(self, a, b):
        return self.lin(a) * b


class LogIntoSecondInput(nn.Module):
    """Computes mix(lin(x), log(lin2(x) - 100)): from step `at` on the log, in this module's own
    code, is NaN; it reaches `mix` as its second input while the first stays finite."""

    def __init__(self, at: int) -> None:
        super().__init__()
        self.lin, self.lin2, self.mix = nn.Linear(8, 8), nn.Linear(8, 4), Mix()
        self.at, self.calls = at, 0

    def forward(self, x):
        self.calls += 1
        b = self.lin2(x)
        if self.calls > self.at:
            b = torch.log(b - 100.0)
        return self.mix(self.lin(x), b)


def test_a_nonfinite_second_input_blames_the_enclosing_module(run_path):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), LogIntoSecondInput(at=3))
    run = _train(model, run_path("second"))
    origin = first_origin(run)
    assert origin is not None
    assert origin.layer_name == "1" and origin.metadata["first_seen_in"] == "1.mix"
