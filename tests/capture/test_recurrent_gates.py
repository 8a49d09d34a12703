"""Gates of fused recurrent modules (nn.LSTM, nn.GRU, nn.RNN and cells): recomputed exactly,
credited to the module on full-statistics steps."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

from causal.causes.saturation import Saturation
from causal.run_queries import layer_series
from causal.schema.run import ActivationKind, LayerStat
from neuraldbg import NeuralDbg
from neuraldbg.capture.recurrent_gates import MAX_SEQUENCES, gate_row, is_fused_recurrent

torch.set_num_threads(1)


def _reference(module: nn.Module, x: torch.Tensor) -> float:
    """Saturated fraction of every gate, by the textbook equations, one step at a time
    (x: (T, B, F), zero initial states)."""
    sat = total = 0

    def count(act: str, y: torch.Tensor) -> None:
        nonlocal sat, total
        sat += int(((y.abs() > 0.99) if act == "tanh" else ((y < 0.01) | (y > 0.99))).sum())
        total += y.numel()

    dirs = 2 if module.bidirectional else 1
    inp = x
    for layer in range(module.num_layers):
        outs = []
        for d in range(dirs):
            sfx = f"_l{layer}" + ("_reverse" if d else "")
            w_ih, w_hh = getattr(module, "weight_ih" + sfx), getattr(module, "weight_hh" + sfx)
            b_ih, b_hh = getattr(module, "bias_ih" + sfx), getattr(module, "bias_hh" + sfx)
            w_hr = getattr(module, "weight_hr" + sfx, None)
            size = w_hr.shape[0] if w_hr is not None else module.hidden_size
            h = torch.zeros(x.shape[1], size)
            c = torch.zeros(x.shape[1], module.hidden_size)
            hs = []
            for t in (range(x.shape[0]) if d == 0 else reversed(range(x.shape[0]))):
                gi, gh = inp[t] @ w_ih.t() + b_ih, h @ w_hh.t() + b_hh
                if isinstance(module, nn.LSTM):
                    i, f, g, o = (gi + gh).chunk(4, -1)
                    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
                    for gate in (i, f, o):
                        count("sigmoid", gate)
                    count("tanh", g)
                    c = f * c + i * g
                    h = o * c.tanh()
                    h = h @ w_hr.t() if w_hr is not None else h
                elif isinstance(module, nn.GRU):
                    r = (gi[:, :module.hidden_size * 1] + gh[:, :module.hidden_size]).sigmoid()
                    z = (gi.chunk(3, -1)[1] + gh.chunk(3, -1)[1]).sigmoid()
                    n = (gi.chunk(3, -1)[2] + r * gh.chunk(3, -1)[2]).tanh()
                    count("sigmoid", r)
                    count("sigmoid", z)
                    count("tanh", n)
                    h = (1 - z) * n + z * h
                else:
                    h = (gi + gh).tanh()
                    count("tanh", h)
                hs.append(h)
            outs.append(torch.stack(hs if d == 0 else hs[::-1]))
        inp = torch.cat(outs, -1)
    return sat / total


def _scaled(module: nn.Module, factor: float) -> nn.Module:
    with torch.no_grad():
        for p in module.parameters():
            p.mul_(factor)
    return module


def test_the_gates_of_fused_recurrent_modules_are_recomputed_exactly() -> None:
    torch.manual_seed(0)
    x = torch.randn(7, 5, 4) * 2  # (T, B, F)
    for cls in (nn.LSTM, nn.GRU, nn.RNN):
        for kw in ({}, {"num_layers": 2, "bidirectional": True}):
            module = _scaled(cls(4, 6, **kw), 3.0)
            with torch.no_grad():
                want = _reference(module, x)
            got = gate_row(module, (x,))
            assert got is not None
            assert 0.05 < want < 0.95  # a case that tests something
            assert abs(float(got[0]) - want) < 1e-6, (cls, kw)
            assert torch.isnan(got[1:]).all()  # zero and dead fractions do not apply
            # batch_first gives the same on the transposed input
            bf = _scaled(cls(4, 6, batch_first=True, **kw), 1.0)
            bf.load_state_dict(module.state_dict())
            assert abs(float(gate_row(bf, (x.transpose(0, 1),))[0]) - want) < 1e-6
    # LSTM with projections
    module = _scaled(nn.LSTM(4, 6, proj_size=3, num_layers=2), 3.0)
    with torch.no_grad():
        want = _reference(module, x)
    assert abs(float(gate_row(module, (x,))[0]) - want) < 1e-6


def test_packed_sequences_count_only_their_real_steps() -> None:
    torch.manual_seed(1)
    x = torch.randn(3, 6, 4) * 2
    lengths = torch.tensor([6, 3, 2])
    for cls in (nn.LSTM, nn.GRU, nn.RNN):
        module = _scaled(cls(4, 5, batch_first=True, bidirectional=True, num_layers=2), 3.0)
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        got = float(gate_row(module, (packed,))[0])
        # each sequence alone, weighted by its length: the same pool of gates
        alone = [float(gate_row(module, (x[b:b + 1, :n],))[0]) for b, n in
                 enumerate(lengths.tolist())]
        want = sum(a * n for a, n in zip(alone, lengths.tolist(), strict=True)) / 11
        assert abs(got - want) < 1e-6, cls


def test_cells_and_what_is_covered() -> None:
    torch.manual_seed(2)
    cell = nn.LSTMCell(4, 5)
    with torch.no_grad():
        cell.bias_ih.zero_()
        cell.bias_hh.zero_()
        cell.bias_ih[:5] = -30  # input gates shut, forget gates open: half the gates pinned
        cell.bias_ih[5:10] = 30
    assert float(gate_row(cell, (torch.randn(3, 4) * 0.1,))[0]) == 0.5
    assert float(gate_row(cell, (torch.randn(4) * 0.1, None))[0]) == 0.5  # unbatched
    for module in (nn.GRUCell(4, 5), nn.RNNCell(4, 5), nn.LSTM(4, 5), nn.GRU(4, 5)):
        assert is_fused_recurrent(module)
        assert gate_row(module, (torch.randint(0, 3, (2, 4)),)) is None  # not a float input
    assert gate_row(nn.GRU(4, 5), (torch.randn(3, 0, 4),)) is None  # an empty batch: no gates
    # a second argument that is not a state of the module (a subclass's lengths) counts as none
    gru, x = _scaled(nn.GRU(4, 5), 3.0), torch.randn(3, 2, 4)
    assert torch.equal(gate_row(gru, (x, torch.tensor([3, 2])))[0], gate_row(gru, (x,))[0])
    assert not is_fused_recurrent(nn.RNN(4, 5, nonlinearity="relu"))  # its output is its ReLU
    assert not is_fused_recurrent(nn.Linear(4, 5))
    # a large batch: only the first MAX_SEQUENCES sequences are recomputed
    module = nn.GRU(4, 5)
    x = torch.randn(3, MAX_SEQUENCES + 8, 4)
    x[:, MAX_SEQUENCES:] *= 1000  # saturating, but past the recomputed slice
    assert float(gate_row(module, (x,))[0]) == float(gate_row(module, (x[:, :MAX_SEQUENCES],))[0])


class _Tagger(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(5, 8, batch_first=True, num_layers=2)
        self.head = nn.Linear(8, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.lstm(x)[0][:, -1])


def _monitored(model: nn.Module, tmp_path: object, steps: int = 4) -> object:
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    g = torch.Generator().manual_seed(0)
    with NeuralDbg(model, path=f"{tmp_path}/run.ndbg") as dbg:
        for _ in range(steps):
            loss = model(torch.randn(4, 10, 5, generator=g)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            dbg.record_loss(loss)
            opt.step()
    return dbg.run


def test_the_monitor_credits_gate_saturation_to_the_recurrent_module(tmp_path: object) -> None:
    torch.manual_seed(0)
    model = _Tagger()
    with torch.no_grad():  # input gates shut and forget gates open in both layers
        for layer in range(2):
            b = getattr(model.lstm, f"bias_ih_l{layer}")
            b[:8], b[8:16] = -30.0, 30.0
    run = _monitored(model, tmp_path)
    kinds = {n.name: n.activation_kind for n in run.dag.nodes}
    assert kinds["lstm"] == ActivationKind.SATURATING
    assert kinds["head"] == ActivationKind.OTHER
    sat = [v for _, v in layer_series(run, LayerStat.ACT_SATURATED)["lstm"]]
    assert sat and min(sat) >= 0.5
    # reported as its gates, with fixes for gates (not "use a ReLU there")
    hyp = Saturation().hypothesis(run, 0.9)
    assert hyp.layer == "lstm"
    assert hyp.description.startswith("Gate saturation in 'lstm' (LSTM) (50% of its gates")
    assert "gates of 'lstm' (LSTM) sit at 0 or 1" in hyp.fixes[0]
    assert not any("ReLU" in f for f in hyp.fixes)
    # a default-initialised one: its gates are far from their bounds
    torch.manual_seed(0)
    healthy = _monitored(_Tagger(), tmp_path / "h")  # type: ignore[operator]
    sat = [v for _, v in layer_series(healthy, LayerStat.ACT_SATURATED)["lstm"]]
    assert sat and max(sat) < 0.05


def test_a_relu_rnn_is_measured_as_relu_units(tmp_path: object) -> None:
    """A ReLU nn.RNN has no gate; its output is its (last layer's) ReLUs: zero and dead
    fractions, as for an nn.ReLU."""

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.rnn = nn.RNN(5, 8, nonlinearity="relu", batch_first=True)
            self.head = nn.Linear(8, 3)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.head(self.rnn(x)[0][:, -1])

    torch.manual_seed(0)
    model = Net()
    with torch.no_grad():
        model.rnn.bias_ih_l0[:4] = -50.0  # half the units never fire
    run = _monitored(model, tmp_path)
    assert {n.name: n.activation_kind for n in run.dag.nodes}["rnn"] == ActivationKind.RELU
    dead = [v for _, v in layer_series(run, LayerStat.ACT_DEAD)["rnn"]]
    assert dead and min(dead) >= 0.5
