"""Conditional Neural Process (Garnelo et al. 2018) meta-learning sinusoid
functions: a ReLU encoder embeds every (x, y) context pair, the embeddings are
mean-aggregated into one task representation r, and a ReLU decoder predicts
y at the target x's from [r, x].  Trained with MSE on the predictive mean.

Mechanism: the user set Adam's lr to 0.2 ("the loss was decreasing too slowly
at 1e-3").  On the first steps Adam moves every weight and bias by ~lr; the
MSE gradient early on asks the representation to shrink, so the biases of the
encoder's last layer are driven far negative, and because that layer's input
is itself a non-negative ReLU output, its pre-activation ends up negative for
every context pair of every task.  The encoder's output ReLU (``encoder.5``)
dies (85-95% of its units output exactly 0 for all inputs), r becomes a
(nearly) constant, the decoder can only fit the *average* function (which is ~0 for
uniformly random phases), and the loss sits at the sinusoids' variance.

ORIGIN: ``encoder.5`` -- the ReLU at the encoder output, whose units die and make
the task representation input-independent.

Fix: Adam at lr=3e-3 (same model, tasks, batches).
"""
import math

import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "encoder.5"
SOURCE = ("Garnelo et al. 2018 'Conditional Neural Processes' (deepmind/neural-processes "
          "1-D regression notebook); 'NP loss plateaus, representation all zeros' reports "
          "after raising Adam's learning rate")


class CNP(nn.Module):
    def __init__(self, hidden, r_dim):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Linear(2, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden), nn.ReLU(),
            nn.Linear(hidden, r_dim), nn.ReLU(),
        )
        self.decoder = nn.Sequential(
            nn.Linear(r_dim + 1, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden), nn.ReLU(),
            nn.Linear(hidden, 1),
        )

    def forward(self, cx, cy, tx):              # (B, Nc, 1), (B, Nc, 1), (B, Nt, 1)
        r = self.encoder(torch.cat([cx, cy], dim=-1)).mean(dim=1, keepdim=True)
        r = r.expand(-1, tx.shape[1], -1)
        return self.decoder(torch.cat([r, tx], dim=-1))


def _tasks(g, steps, bsz, n_ctx, n_tgt):
    batches = []
    for _ in range(steps):
        amp = 0.5 + 1.5 * torch.rand(bsz, 1, 1, generator=g)
        phase = 2 * math.pi * torch.rand(bsz, 1, 1, generator=g)
        cx = (2 * torch.rand(bsz, n_ctx, 1, generator=g) - 1) * math.pi
        tx = (2 * torch.rand(bsz, n_tgt, 1, generator=g) - 1) * math.pi
        batches.append(((cx, amp * torch.sin(cx + phase), tx), amp * torch.sin(tx + phase)))
    return batches


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(hidden=64, r_dim=64, bsz=16, n_ctx=10, n_tgt=20, lr=0.2, steps=150),
        dict(hidden=48, r_dim=32, bsz=24, n_ctx=6, n_tgt=16, lr=0.2, steps=170),
        dict(hidden=96, r_dim=64, bsz=12, n_ctx=15, n_tgt=25, lr=0.15, steps=140),
    ][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(300 + seed)
    model = CNP(cfg["hidden"], cfg["r_dim"])
    lr = 3e-3 if fixed else cfg["lr"]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batches = _tasks(g, cfg["steps"], cfg["bsz"], cfg["n_ctx"], cfg["n_tgt"])
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches,
                steps=cfg["steps"])
