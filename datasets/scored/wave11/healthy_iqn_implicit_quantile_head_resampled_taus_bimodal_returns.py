"""Healthy run: an Implicit Quantile Network (IQN, Dabney et al. 2018) head fitted offline to a
bimodal return distribution. The state goes through an MLP, each sampled quantile fraction tau goes
through a cosine embedding cos(pi * i * tau), i = 0..63, and a ReLU layer; the two are multiplied
and decoded to the tau-quantile of the return. Every step draws fresh taus (they are part of the
batch), and the quantile-Huber loss compares 8 predicted quantiles with 8 return samples per state.
What looks alarming is normal here: the loss is noisy from step to step because the taus change
every batch, the logged value never gets near zero (the returns are genuinely random, so the pinball
loss has a large irreducible floor), and nothing forces the predicted quantiles of neighbouring taus
to be monotone. The run is fine: the loss roughly halves or better and settles on the floor set by
the return noise."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("IQN (Dabney et al., ICML 2018) cosine tau embedding and quantile Huber loss; distributional "
          "RL losses have a noise floor and per-batch resampled tau")

NS, NT, NM, EMB = 6, 8, 8, 64


class IQNHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.psi = nn.Sequential(nn.Linear(NS, EMB), nn.ReLU(), nn.Linear(EMB, EMB), nn.ReLU())
        self.phi = nn.Linear(64, EMB)
        self.out = nn.Sequential(nn.Linear(EMB, EMB), nn.ReLU(), nn.Linear(EMB, 1))
        self.register_buffer("i_pi", math.pi * torch.arange(64, dtype=torch.float32))

    def forward(self, s, taus):                                    # s: [B, NS], taus: [B, NT]
        h = self.psi(s)                                             # [B, EMB]
        e = F.relu(self.phi(torch.cos(taus.unsqueeze(-1) * self.i_pi)))   # [B, NT, EMB]
        return self.out(h.unsqueeze(1) * e).squeeze(-1), taus      # quantiles [B, NT]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2018 + seed)
    a, m1, m2 = (torch.randn(NS, generator=g) for _ in range(3))
    steps, B = 200, 64
    batches = []
    for _ in range(steps):
        s = torch.randn(B, NS, generator=g)
        pi = torch.sigmoid(s @ a)
        mu1, mu2 = 1.0 + s @ m1 / 2, -1.5 + s @ m2 / 2
        comp = torch.rand(B, NM, generator=g) < pi[:, None]
        z = torch.where(comp, mu1[:, None] + 0.3 * torch.randn(B, NM, generator=g),
                        mu2[:, None] + 0.6 * torch.randn(B, NM, generator=g))
        taus = torch.rand(B, NT, generator=g)
        batches.append(((s, taus), z))
    model = IQNHead()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, eps=0.01 / 32)

    def loss_fn(out, z):
        q, taus = out
        u = z.unsqueeze(1) - q.unsqueeze(2)                               # [B, NT, NM]
        huber = torch.where(u.abs() <= 1.0, 0.5 * u ** 2, u.abs() - 0.5)
        w = (taus.unsqueeze(2) - (u.detach() < 0).float()).abs()
        return (w * huber).mean(2).sum(1).mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
