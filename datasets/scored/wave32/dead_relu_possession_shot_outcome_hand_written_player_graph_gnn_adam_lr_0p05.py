"""Will this possession end in a shot? A hand-written message-passing GNN over the 10 outfield
attackers of a tracking frame (nodes: position, velocity, distance to goal; edges: Gaussian
kernel on pairwise distance), kernel-weighted sum aggregation, sum readout, BCE-with-logits, Adam.

Mechanism: Adam at lr 0.05-0.06 (ten times the usual 5e-3 "to converge faster") moves every
weight and bias by ~lr per step in the sign of its first gradients; within ~10 steps most units
of the ReLU message and update layers are pushed far negative.  Their pre-activations are then
< 0 for every node of every frame, the ReLUs output exact zeros, no gradient reaches their weights again, and the logit collapses to
the head bias: the loss sits at ~log 2 (balanced labels) with every value finite - a stall.

ORIGIN: ``msg1`` - the first ReLU message layer is where units die first (its biases receive
the largest early updates, summed over all edges); once it is dead everything downstream only
sees zeros.

Fix: LeakyReLU(0.1) in the input/message/update layers (same lr, optimiser and data); the leak
keeps a gradient flowing so units pushed negative recover.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "msg1"
SOURCE = ("Known pattern: large Adam/SGD learning rates kill ReLU units in GNN/MLP layers ('dying "
          "ReLU', CS231n notes; Lu et al. 2019 'Dying ReLU and initialization'); LeakyReLU is "
          "the standard remedy.")


class PlayerGraphNet(nn.Module):
    def __init__(self, d_in, hidden, leaky):
        super().__init__()
        self.act = (lambda t: F.leaky_relu(t, 0.1)) if leaky else F.relu
        self.inp = nn.Linear(d_in, hidden)
        self.msg1 = nn.Linear(2 * hidden, hidden)
        self.upd1 = nn.Linear(2 * hidden, hidden)
        self.msg2 = nn.Linear(2 * hidden, hidden)
        self.upd2 = nn.Linear(2 * hidden, hidden)
        self.head = nn.Linear(hidden, 1)

    def _layer(self, h, adj, msg, upd):
        n = h.shape[1]
        hi = h.unsqueeze(2).expand(-1, -1, n, -1)
        hj = h.unsqueeze(1).expand(-1, n, -1, -1)
        m = self.act(msg(torch.cat([hi, hj], -1)))            # (B, N, N, H)
        agg = (adj.unsqueeze(-1) * m).sum(2)                   # kernel-weighted sum
        return self.act(upd(torch.cat([h, agg], -1)))

    def forward(self, x, adj):
        h = self.act(self.inp(x))
        h = self._layer(h, adj, self.msg1, self.upd1)
        h = self._layer(h, adj, self.msg2, self.upd2)
        return self.head(h.sum(1)).squeeze(-1)


def _data(g, n, N=10):
    pos = torch.rand(n, N, 2, generator=g) * torch.tensor([52.5, 68.0]) + torch.tensor([52.5, 0.0])
    vel = 2.0 * torch.randn(n, N, 2, generator=g)
    goal = torch.tensor([105.0, 34.0])
    dgoal = (pos - goal).norm(dim=-1, keepdim=True)
    toward = -((pos - goal) * vel).sum(-1, keepdim=True) / dgoal
    x = torch.cat([(pos - 78.75) / 15.0 * torch.tensor([1.0, 0.75]), vel / 2.0,
                   (dgoal - 30) / 12.0, toward / 2.0], -1)
    d = torch.cdist(pos, pos)
    adj = torch.exp(-(d / 10.0) ** 2) * (1 - torch.eye(N))
    score = (torch.exp(-dgoal.squeeze(-1) / 12.0) * (1 + toward.squeeze(-1).clamp(min=0))).sum(1)
    y = (score > score.median()).float()
    return x, adj, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(5000 + seed)
    hidden = [32, 24, 24][seed % 3]
    lr = [0.05, 0.05, 0.06][seed % 3]
    bs = [32, 24, 40][seed % 3]
    steps = 120
    model = PlayerGraphNet(6, hidden, leaky=fixed)
    x, adj, y = _data(g, bs * steps)
    batches = [((x[i * bs:(i + 1) * bs], adj[i * bs:(i + 1) * bs]), y[i * bs:(i + 1) * bs])
               for i in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches,
                steps=steps)
