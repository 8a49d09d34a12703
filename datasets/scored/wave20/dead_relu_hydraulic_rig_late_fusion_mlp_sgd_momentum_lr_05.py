"""Condition monitoring of a hydraulic test rig (UCI 'Condition monitoring of hydraulic
systems', Helwig et al. 2015): a late-fusion MLP with one ReLU branch for pressure/motor-power
cycle statistics and one for temperature/flow/vibration statistics, concatenated and fed to a
ReLU fusion layer and a 4-way cooler/valve condition classifier.

Mechanism: the user trains with SGD momentum 0.9 and lr 0.5 (taken from a BN-equipped
image recipe); the model has no normalisation.  The loss first drops, then within a few dozen
steps the momentum-amplified oversized updates drive the biases and weights of the fusion
layer so far negative that its ReLU outputs are zero for every cycle (100% dead units); no gradient flows back to either branch and the classifier is left predicting the
class prior: cross-entropy stalls at ~ln(4).

ORIGIN: `fusion.1`, the ReLU of the fusion layer, where the units die first.

Fix: lr 0.02 (same optimizer and momentum).
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "fusion.1"
SOURCE = "UCI hydraulic-system condition monitoring (Helwig 2015) MLP baselines; dying ReLU after too-large SGD+momentum steps (CS231n notes: 'as much as 40% of your network can be dead' with a high learning rate)"

_CFG = {0: dict(h=64, lr=0.5, bs=32, steps=80),
        1: dict(h=96, lr=0.8, bs=48, steps=100),
        2: dict(h=48, lr=0.6, bs=24, steps=70)}


class LateFusion(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.pressure = nn.Sequential(nn.Linear(12, h), nn.ReLU())
        self.thermal = nn.Sequential(nn.Linear(10, h), nn.ReLU())
        self.fusion = nn.Sequential(nn.Linear(2 * h, h), nn.ReLU())
        self.cls = nn.Linear(h, 4)

    def forward(self, p, t):
        return self.cls(self.fusion(torch.cat([self.pressure(p), self.thermal(t)], 1)))


def _batch(g, n):
    y = torch.randint(0, 4, (n,), generator=g)
    cp = torch.randn(4, 12, generator=torch.Generator().manual_seed(11))
    ct = torch.randn(4, 10, generator=torch.Generator().manual_seed(12))
    p = cp[y] * 0.8 + torch.randn(n, 12, generator=g)
    t = ct[y] * 0.8 + torch.randn(n, 10, generator=g)
    return (p, t), y


def build(seed: int, fixed: bool = False) -> dict:
    c = _CFG[seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(41 + seed)
    model = LateFusion(c["h"])
    opt = torch.optim.SGD(model.parameters(), lr=0.02 if fixed else c["lr"], momentum=0.9)
    batches = [_batch(g, c["bs"]) for _ in range(c["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=c["steps"])
