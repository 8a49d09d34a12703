"""Healthy: 6-DOF GraspNet-style conditional VAE grasp sampler.  An object encoder
(per-point MLP + max-pool) conditions both the encoder q(z | object, grasp) and the decoder
p(grasp | object, z); the grasp is a 3-D position + 4-D quaternion.  Loss = reconstruction
MSE + beta_t * KL with a linear KL-annealing schedule (beta from 0 to 1 over the first half
of training, step counter kept inside the loss).

Why it looks alarming but is fine: while beta ramps up the total loss rises for a while
(the KL term that was free at beta=0 starts to be paid), and the KL itself grows at first
as the encoder starts using z.  After the ramp the loss comes down again well below its
start; nothing diverges.
"""
import torch
import torch.nn as nn

CAUSE = "healthy"
ORIGIN = None
SOURCE = "6-DOF GraspNet (Mousavian et al. 2019) VAE sampler; KL annealing making the total loss rise mid-training discussed in VAE training threads"


class GraspCVAE(nn.Module):
    def __init__(self, d, zd):
        super().__init__()
        self.obj = nn.Sequential(nn.Linear(3, d), nn.ReLU(), nn.Linear(d, d), nn.ReLU())
        self.enc = nn.Sequential(nn.Linear(d + 7, d), nn.ReLU(), nn.Linear(d, 2 * zd))
        self.dec = nn.Sequential(nn.Linear(d + zd, d), nn.ReLU(), nn.Linear(d, 7))
        self.zd = zd

    def forward(self, pts, grasp, eps):
        o = self.obj(pts).max(dim=1).values
        mu, logvar = self.enc(torch.cat([o, grasp], -1)).chunk(2, -1)
        z = mu + torch.exp(0.5 * logvar) * eps
        return self.dec(torch.cat([o, z], -1)), mu, logvar


def _batch(g, B, N, zd):
    centre = torch.randn(B, 1, 3, generator=g)
    pts = centre + 0.3 * torch.randn(B, N, 3, generator=g)
    side = torch.randint(0, 2, (B, 1), generator=g).float() * 2 - 1   # grasp from either side
    pos = centre[:, 0] + side * torch.tensor([[0.5, 0.0, 0.0]])
    quat = torch.cat([torch.cos(side * 0.7), torch.zeros(B, 2), torch.sin(side * 0.7)], -1)
    grasp = torch.cat([pos, quat], -1)
    eps = torch.randn(B, zd, generator=g)
    return (pts, grasp, eps), grasp


def build(seed: int, fixed: bool = False) -> dict:
    d, zd, lr, B = [(64, 2, 3e-3, 32), (48, 4, 3e-3, 24), (64, 2, 2e-3, 48)][seed % 3]
    torch.manual_seed(seed)
    model = GraspCVAE(d, zd)
    g = torch.Generator().manual_seed(10000 + seed)
    steps = 150
    batches = [_batch(g, B, 32, zd) for _ in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    state = {"t": 0}
    warm = steps // 2

    def loss_fn(out, grasp):
        rec, mu, logvar = out
        beta = min(1.0, state["t"] / warm)
        state["t"] += 1
        recon = ((rec - grasp) ** 2).sum(-1).mean()
        kl = (-0.5 * (1 + logvar - mu ** 2 - logvar.exp())).sum(-1).mean()
        return recon + beta * kl

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps)
