"""The monitor on real architectures: every layer recorded, a layer DAG with the right method."""

from __future__ import annotations

import math

import networkx as nx
import pytest
import torch
from torch import nn

from causal.schema.run import LayerStat
from neuraldbg import NeuralDbg, diagnose


def fit(model, make_batch, loss_fn, path, steps=4, preset="full"):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    with NeuralDbg(model, path=path, preset=preset) as dbg:
        for step in range(steps):
            x, y = make_batch(step)
            opt.zero_grad()
            out = model(*x) if isinstance(x, tuple) else model(x)
            loss = loss_fn(out, y)
            loss.backward()
            dbg.record_loss(loss)
            opt.step()
    run = dbg.run
    assert len(run.series) == steps
    assert nx.is_directed_acyclic_graph(run.dag.to_networkx())
    diagnosis = diagnose(run)  # a short healthy run of any architecture is diagnosed healthy
    assert diagnosis.healthy, diagnosis.format()
    return run


def grads_seen(run) -> set[str]:
    w = run.windows[-1]
    return {layer for layer in w.layers if w.series(layer, LayerStat.GRAD_NORM)}


def test_cnn(run_path):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10))
    run = fit(model, lambda s: (torch.randn(8, 3, 16, 16), torch.randint(0, 10, (8,))),
              nn.functional.cross_entropy, run_path())
    assert run.dag.method == "fx"
    assert ("0", "1") in run.dag.edges and ("7", "8") in run.dag.edges
    assert {"0", "1", "4", "8"} <= grads_seen(run)
    dead = run.windows[-1].series("2", LayerStat.ACT_DEAD)
    assert dead and 0.0 <= dead[-1][1] <= 1.0


class GRUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(50, 16)
        self.rnn = nn.GRU(16, 32, batch_first=True)
        self.head = nn.Linear(32, 50)

    def forward(self, idx):
        out, _ = self.rnn(self.emb(idx))
        return self.head(out[:, -1])


def test_gru_with_embedding(run_path):
    torch.manual_seed(0)
    run = fit(GRUNet(), lambda s: (torch.randint(0, 50, (4, 12)), torch.randint(0, 50, (4,))),
              nn.functional.cross_entropy, run_path())
    assert ("emb", "rnn") in run.dag.edges and ("rnn", "head") in run.dag.edges
    assert {"emb", "rnn", "head"} <= grads_seen(run)
    # token ids are categories: no scale is recorded for them (nor for class labels)
    assert all(math.isnan(v) for _, v in run.series.get("input_max_abs"))


class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b, self.c = nn.Linear(8, 8), nn.Linear(8, 8), nn.Linear(8, 1)

    def forward(self, x):
        h = self.a(x) if x.sum() > 0 else self.b(x)
        return self.c(torch.relu(h))


def test_data_dependent_control_flow_merges_paths_over_steps(run_path):
    torch.manual_seed(0)
    run = fit(Branchy(), lambda s: ((1 if s % 2 else -1) * torch.rand(4, 8), torch.zeros(4, 1)),
              nn.functional.mse_loss, run_path(), steps=4)
    assert run.dag.method == "autograd"
    assert {("a", "c"), ("b", "c")} <= set(run.dag.edges)
    assert run.dag.node("a").ran and run.dag.node("b").ran


def test_transformer_encoder(run_path):
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True, dropout=0.1)
    model = nn.Sequential(nn.TransformerEncoder(layer, 2, enable_nested_tensor=False),
                          nn.Linear(32, 1))
    run = fit(model, lambda s: (torch.randn(4, 10, 32), torch.randn(4, 10, 1)),
              nn.functional.mse_loss, run_path())
    assert run.dag.method in ("fx", "autograd")
    names = {n.name for n in run.dag.nodes}
    assert "0.layers.0.self_attn" in names and "0.layers.1.linear2" in names
    assert "0.layers.0.self_attn" in grads_seen(run)
    assert not run.dag.node("0.layers.0.self_attn.out_proj").ran  # used functionally
    assert "0.layers.0.self_attn.out_proj" in grads_seen(run)  # ...but its gradient is there


def test_tiny_gpt2(run_path):
    transformers = pytest.importorskip("transformers")
    cfg = transformers.GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=100,
                                  n_positions=32)
    torch.manual_seed(0)
    model = transformers.GPT2LMHeadModel(cfg)

    def loss_fn(out, y):
        return nn.functional.cross_entropy(out.logits.reshape(-1, 100), y.reshape(-1))

    def batch(step):
        idx = torch.randint(0, 100, (2, 16))
        return idx, idx

    run = fit(model, batch, loss_fn, run_path(), steps=3)
    assert run.dag.method == "autograd"
    assert ("transformer.ln_f", "lm_head") in run.dag.edges
    preds = set(run.dag.predecessors("transformer.h.1.ln_1"))
    assert "transformer.h.0.attn.resid_dropout" in preds and "transformer.h.0.mlp.dropout" in preds
    seen = grads_seen(run)
    assert {"transformer.wte", "transformer.h.0.attn.c_attn", "transformer.h.1.mlp.c_proj"} <= seen
