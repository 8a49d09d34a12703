"""Activations applied as functions (torch.tanh, x.sigmoid(), F.relu) are watched like
activation modules: inside a unit they are that unit's; in a container's code they belong to
the unit whose output they were applied to."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.overrides import _get_current_function_mode_stack

from causal.diagnose import diagnose
from causal.run_queries import layer_series
from causal.schema.run import ActivationKind, LayerStat
from neuraldbg import NeuralDbg
from neuraldbg.capture.functional_activations import RELU_FUNCS, SATURATING_FUNCS


class Gate(nn.Module):
    """WaveNet's gated unit, tanh(f) * sigmoid(g), written with functions (no parameters)."""

    def forward(self, h):
        f, g = h.chunk(2, dim=-1)
        return torch.tanh(f) * g.sigmoid()


class GatedNet(nn.Module):
    def __init__(self, gate_bias: float) -> None:
        super().__init__()
        self.proj = nn.Linear(8, 32)
        with torch.no_grad():
            self.proj.bias[16:] = gate_bias  # the gate half: sigmoid(-8) ~ 3e-4, shut
        self.gate = Gate()
        self.head = nn.Linear(16, 1)

    def forward(self, x):
        return self.head(self.gate(self.proj(x)))


class FunctionalMLP(nn.Module):
    """ReLUs applied in the container's own forward."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1, self.fc2, self.out = nn.Linear(8, 32), nn.Linear(32, 32), nn.Linear(32, 1)

    def forward(self, x):
        return self.out(F.relu(self.fc2(torch.relu(self.fc1(x)))))


def _batches(n: int, seed: int = 0) -> list[tuple[torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(16, 8, generator=g), torch.randn(16, 1, generator=g)) for _ in range(n)]


def _train(model, data, dbg=None, lr=0.01):
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for x, y in data:
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        if dbg is not None:
            dbg.record_loss(loss)
        opt.step()


def _node(run, name):
    node = run.dag.node(name)
    assert node is not None, name
    return node


def test_a_shut_functional_gate_is_a_saturated_unit(run_path):
    torch.manual_seed(0)
    model = GatedNet(gate_bias=-8.0)
    with NeuralDbg(model, path=run_path()) as dbg:
        _train(model, _batches(60), dbg)
    run = dbg.run
    assert _node(run, "gate").activation_kind == ActivationKind.SATURATING
    sat = [v for _, v in layer_series(run, LayerStat.ACT_SATURATED)["gate"]]
    assert sat and min(sat) > 0.45  # the gate half is saturated, the tanh half is not
    assert any(e.layer_name == "gate" and e.to_state == "activation_saturated"
               for e in run.events)
    hyps = diagnose(run)
    assert hyps[0].cause == "saturation" and hyps[0].layer == "gate"


def test_an_open_functional_gate_is_not_saturated(run_path):
    torch.manual_seed(0)
    model = GatedNet(gate_bias=0.0)
    with NeuralDbg(model, path=run_path()) as dbg:
        _train(model, _batches(20), dbg)
    run = dbg.run
    assert _node(run, "gate").activation_kind == ActivationKind.SATURATING
    sat = [v for _, v in layer_series(run, LayerStat.ACT_SATURATED)["gate"]]
    assert sat and max(sat) < 0.1
    assert not any(e.to_state == "activation_saturated" for e in run.events)


class TanhGELU(nn.Module):
    """GPT-2's "gelu_new" (Hugging Face NewGELUActivation), written with torch.tanh."""

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


class QuickGELU(nn.Module):
    """CLIP's x * sigmoid(1.702 x)."""

    def forward(self, x):
        return x * torch.sigmoid(1.702 * x)


class GRUCell(nn.Module):
    """A hand-written GRU cell: its output mixes tanh and the previous state, within (-1, 1)."""

    def __init__(self, d: int) -> None:
        super().__init__()
        self.d = d

    def forward(self, gates):
        r, z, n = gates.chunk(3, dim=-1)
        h = torch.zeros_like(n)
        r, z = torch.sigmoid(r), torch.sigmoid(z)
        return (1 - z) * torch.tanh(n * r) + z * h


@pytest.mark.parametrize("act", [TanhGELU, QuickGELU])
def test_a_self_gated_activation_is_not_a_saturating_unit(run_path, act):
    """Large inputs saturate the tanh/sigmoid inside, but the output grows with the input:
    nothing saturates. Before, every GPT-2 MLP read as saturated."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), act(), nn.Linear(32, 1))
    with torch.no_grad():
        model[0].weight.mul_(20.0)  # pre-activations of tens: the inner switch is saturated
    with NeuralDbg(model, path=run_path()) as dbg:
        _train(model, _batches(8), dbg, lr=1e-4)
    run = dbg.run
    assert _node(run, "1").activation_kind == ActivationKind.OTHER
    sat = [v for _, v in layer_series(run, LayerStat.ACT_SATURATED).get("1", [])]
    assert all(math.isnan(v) for v in sat)
    assert not any(e.to_state == "activation_saturated" for e in run.events)


def test_a_hand_written_cell_within_its_functions_range_is_saturating(run_path):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 48), GRUCell(16), nn.Linear(16, 1))
    with torch.no_grad():
        model[0].weight.mul_(30.0)
    with NeuralDbg(model, path=run_path()) as dbg:
        _train(model, _batches(8), dbg, lr=1e-4)
    run = dbg.run
    assert _node(run, "1").activation_kind == ActivationKind.SATURATING
    sat = [v for _, v in layer_series(run, LayerStat.ACT_SATURATED)["1"]]
    assert sat and max(sat) > 0.5


class ClampMLP(nn.Module):
    """ReLUs written as clamps (`h.clamp(min=0)`, a clipped ReLU `clamp(0, 1)`), and a clamp
    of values without gradients (a distance mask) that is no activation."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1, self.fc2, self.out = nn.Linear(8, 32), nn.Linear(32, 32), nn.Linear(32, 1)

    def forward(self, x):
        mask = (torch.arange(32.0) - 16.0).clamp(min=0)  # a position mask, no gradients
        h = self.fc1(x).clamp(min=0) + 0.0 * mask
        return self.out(torch.clamp(self.fc2(h), 0, 1))


@pytest.mark.parametrize("net", ["FunctionalMLP", "ClampMLP"])
def test_relus_in_a_containers_code_belong_to_the_unit_they_follow(run_path, net):
    """F.relu, torch.relu, and ReLUs written as clamps alike."""
    torch.manual_seed(0)
    model = globals()[net]()
    with torch.no_grad():
        model.fc2.bias.fill_(-100.0)  # every fc2 unit is off for every input: dead
    with NeuralDbg(model, path=run_path()) as dbg:
        _train(model, _batches(10), dbg)
    run = dbg.run
    for name in ("fc1", "fc2"):
        assert _node(run, name).activation_kind == ActivationKind.RELU
    assert _node(run, "out").activation_kind == ActivationKind.OTHER
    dead = layer_series(run, LayerStat.ACT_DEAD)
    assert [v for _, v in dead["fc2"]] and all(v == 1.0 for _, v in dead["fc2"])
    assert all(v < 0.5 for _, v in dead["fc1"])
    assert all(math.isnan(v) for _, v in dead.get("out", []))


def test_only_a_clamp_at_zero_of_values_with_gradients_is_a_relu():
    from neuraldbg.capture.functional_activations import equivalent_module

    w = torch.randn(4, requires_grad=True)
    data = torch.randn(4)
    assert isinstance(equivalent_module(torch.clamp, (w,), {"min": 0}), nn.ReLU)
    assert isinstance(equivalent_module(torch.Tensor.clamp_min, (w, 0.0), {}), nn.ReLU)
    assert isinstance(equivalent_module(torch.clip, (w, 0, 6.0), {}), nn.ReLU)
    assert equivalent_module(torch.clamp, (data,), {"min": 0}) is None  # data, no gradients
    assert equivalent_module(torch.clamp, (w,), {"min": -1.0, "max": 1.0}) is None
    assert equivalent_module(torch.clamp, (w,), {"min": 0, "max": 0}) is None
    assert equivalent_module(torch.clamp, (w,), {"max": 0}) is None


def test_activation_modules_are_not_counted_twice(run_path):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))
    with NeuralDbg(model, path=run_path(), preset="full") as dbg:
        _train(model, _batches(4), dbg)
    run = dbg.run
    assert _node(run, "0").activation_kind == ActivationKind.OTHER  # nn.Tanh measures itself
    assert _node(run, "1").activation_kind == ActivationKind.SATURATING


@pytest.mark.parametrize("preset", ["standard", "full"])
def test_watching_functional_activations_changes_no_numerics(run_path, preset):
    def build():
        torch.manual_seed(3)
        return nn.Sequential(GatedNet(gate_bias=-1.0), nn.Dropout(0.1))

    data = _batches(30, seed=1)
    plain = build()
    torch.manual_seed(5)
    _train(plain, data)
    watched = build()
    torch.manual_seed(5)
    with NeuralDbg(watched, path=run_path(), preset=preset) as dbg:
        _train(watched, data, dbg)
    for (n, a), b in zip(plain.state_dict().items(), watched.state_dict().values(), strict=True):
        assert torch.equal(a, b), n
    assert not _get_current_function_mode_stack()


def test_a_forward_that_raises_leaves_no_function_mode_behind(run_path):
    class Fails(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = nn.Linear(8, 1)

        def forward(self, x):
            h = torch.tanh(self.lin(x))
            if x.shape[0] == 3:
                raise ValueError("bad batch")
            return h

    model = Fails()
    with NeuralDbg(model, path=run_path(), preset="full") as dbg:
        _train(model, _batches(2), dbg)
        with pytest.raises(ValueError, match="bad batch"):
            model(torch.randn(3, 8))
        _train(model, _batches(2), dbg)  # training goes on; the next step cleans up
        assert not _get_current_function_mode_stack()
    assert not _get_current_function_mode_stack()
    assert _node(dbg.run, "lin").activation_kind == ActivationKind.SATURATING


def test_every_spelling_of_an_activation_is_known():
    x = torch.randn(4)
    for f in (torch.tanh, torch.Tensor.tanh, F.tanh, torch.sigmoid, torch.Tensor.sigmoid,
              F.sigmoid, torch.special.expit, F.hardtanh, F.softsign, F.hardsigmoid):
        assert f in SATURATING_FUNCS, f
        f(x)
    for f in (torch.relu, torch.Tensor.relu, F.relu, F.relu6):
        assert f in RELU_FUNCS, f
        f(x)


class HyperNet(nn.Module):
    """A hypernetwork makes the weights of a tanh layer that the container applies itself:
    torch.tanh(F.linear(x, W)), no module between them."""

    def __init__(self, scale: float) -> None:
        super().__init__()
        self.embed = nn.Linear(4, 8)
        self.hyper = nn.Linear(8, 16 * 8)
        with torch.no_grad():
            self.hyper.weight.mul_(scale)
        self.head = nn.Linear(16, 1)

    def forward(self, x):
        w = self.hyper(self.embed(x[:1, :4])).view(16, 8)
        return self.head(torch.tanh(F.linear(x, w)))


def test_an_activation_of_values_made_in_a_containers_code_belongs_to_their_source(run_path):
    torch.manual_seed(0)
    model = HyperNet(scale=50.0)  # generated weights far too large: the tanh saturates
    with NeuralDbg(model, path=run_path()) as dbg:
        _train(model, _batches(5), dbg)
    run = dbg.run
    assert _node(run, "hyper").activation_kind == ActivationKind.SATURATING
    assert _node(run, "embed").activation_kind == ActivationKind.OTHER
    sat = [v for _, v in layer_series(run, LayerStat.ACT_SATURATED)["hyper"]]
    assert sat and min(sat) > 0.5
