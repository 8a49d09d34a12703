"""A classifier whose hidden ReLUs are all dead outputs one value for every example: its loss
settles at the labels' entropy and the run is reported failing, with the dead layer and the
sentence that says it learned nothing; the same classifier alive learns and stays healthy."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from causal.html_report import render
from neuraldbg import NeuralDbg, diagnose


def _classifier(run_path, hidden_bias: float):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                          nn.Linear(32, 4))
    with torch.no_grad():
        model[2].bias.fill_(hidden_bias)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(0)
    w = torch.randn(8, 4, generator=g)
    with NeuralDbg(model, path=run_path()) as dbg:
        for _ in range(80):
            x = torch.randn(32, 8, generator=g)
            y = (x @ w).argmax(1)
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            dbg.record_loss(loss)
            opt.step()
    return diagnose(dbg.run)


def test_a_dead_classifier_at_the_labels_entropy_is_failing_with_its_dead_layer(run_path):
    d = _classifier(run_path, -20.0)
    assert not d.healthy, d.format()
    top = d.hypotheses[0]
    assert top.cause == "dead_relu" and top.layer == "3", d.format()
    assert d.evidence["loss_vs_trivial"]["at_trivial"] == 1.0
    assert "where a model that ignores its inputs ends" in d.format(), d.format()
    page = render(d.run, d)  # the HTML report says it too, and draws the level on the loss
    assert "the model learned nothing from its inputs" in page
    assert "a model ignoring its inputs" in page


def test_the_same_classifier_alive_learns_below_it_and_is_healthy(run_path):
    d = _classifier(run_path, 0.0)
    assert d.healthy, d.format()
    assert d.evidence["loss_vs_trivial"]["below"] == 1.0
    assert "targets seen as class labels only" not in d.format()
    assert "learned nothing" not in render(d.run, d)
