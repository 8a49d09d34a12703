"""Deep Graph Infomax (Velickovic et al. 2019) self-supervised node encoder: a
one-layer GCN encoder, mean-pool + sigmoid readout summary, bilinear
discriminator scoring (node, summary) pairs for the real graph vs a
row-shuffled corruption, BCE-with-logits loss.

Mechanism: the user replaced the paper's PReLU by nn.ReLU and raised Adam's lr
from the reference 1e-3 to 5e-2 or 8e-2 "because DGI trains slowly". The first large
Adam steps push every hidden pre-activation of the encoder negative for all
nodes (real and corrupted); the ReLU outputs are then exactly 0, their gradient is
0, no encoder weight receives gradient again, the summary is sigmoid(0)=0.5, all
discriminator scores equal the bias and the loss sits at log(2): a stall.
ORIGIN is the encoder activation (encoder.act): the units die there.
Fix: a moderate lr 5e-3 (same ReLU, same everything else).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "encoder.act"
SOURCE = "DGI reference implementation (PetarV-/DGI, lr=0.001, PReLU); users swapping in ReLU with a larger lr report the loss stuck at 0.6931"


class GCNEncoder(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.lin = nn.Linear(d, h)
        self.act = nn.ReLU()

    def forward(self, x, a):
        return self.act(a @ self.lin(x))


class DGI(nn.Module):
    def __init__(self, d, h):
        super().__init__()
        self.encoder = GCNEncoder(d, h)
        self.disc = nn.Bilinear(h, h, 1)

    def forward(self, x, a, perm):
        h_pos = self.encoder(x, a)
        h_neg = self.encoder(x[perm], a)
        s = torch.sigmoid(h_pos.mean(0, keepdim=True))
        s = s.expand_as(h_pos)
        return torch.cat([self.disc(h_pos, s), self.disc(h_neg, s)]).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(n=200, d=64, h=64, steps=80), dict(n=160, d=48, h=128, steps=100),
           dict(n=240, d=32, h=48, steps=70)][seed % 3]
    lr = 5e-3 if fixed else [0.05, 0.08, 0.05][seed % 3]
    g = torch.Generator().manual_seed(seed)
    n, c = cfg["n"], 4
    y = torch.randint(0, c, (n,), generator=g)
    p = torch.where(y[:, None] == y[None, :], 0.1, 0.01)
    a = (torch.rand(n, n, generator=g) < p).float()
    a = torch.triu(a, 1); a = a + a.T + torch.eye(n)
    dinv = a.sum(1).rsqrt(); a_hat = dinv[:, None] * a * dinv[None, :]
    x = (torch.rand(n, cfg["d"], generator=g) < 0.1).float() + torch.randn(c, cfg["d"], generator=g)[y].clamp_min(0)
    x = x / x.sum(1, keepdim=True).clamp_min(1)  # row-normalised bag-of-words, as in Cora
    lbl = torch.cat([torch.ones(n), torch.zeros(n)])
    batches = []
    for _ in range(cfg["steps"]):
        perm = torch.randperm(n, generator=g)
        batches.append(((x, a_hat, perm), lbl))
    torch.manual_seed(seed)
    model = DGI(cfg["d"], cfg["h"])
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=nn.BCEWithLogitsLoss(), batches=batches, steps=cfg["steps"])
