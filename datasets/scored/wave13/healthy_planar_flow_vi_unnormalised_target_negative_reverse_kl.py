"""HEALTHY: planar normalising flow (Rezende & Mohamed 2015) fitted by variational inference
to an *unnormalised* 2-D target density exp(-U(z)) (the paper's ring / "U1"-style energies),
loss = E_{z0~N(0,I)}[ log q0(z0) - sum_k log|1 + u_k^T psi_k(z_{k-1})| + U(z_K) ].

What looks alarming but is fine:
- the objective is KL(q || p) - log Z with an unknown log Z, so it crosses zero and goes
  *negative* (ring/wave targets, log Z > 0); there is no "0 = perfect" reference and the
  banana run plateaus above its (unknown) optimum because 8 planar layers are too few;
- the log-det terms log|1 + u^T psi| are individually large and of both signs, and the
  invertibility reparametrisation u_hat = u + (m(w^T u) - w^T u) w / ||w||^2 is active;
- the energy U contains steep walls (the ring's radial term), so the first steps move
  samples a lot and the loss drops by several units in a few dozen steps, then a long slow
  tail as the flow wraps mass around the ring;
- samples z0 are fresh every step, so the curve is noisy.

ORIGIN: None (healthy run).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Planar flows for variational inference on unnormalised 2-D energies (Rezende & "
          "Mohamed 2015, 'Variational Inference with Normalizing Flows', Fig. 3 targets)")


class PlanarLayer(nn.Module):
    def __init__(self, dim, g):
        super().__init__()
        self.w = nn.Parameter(torch.randn(dim, generator=g) * 0.1)
        self.u = nn.Parameter(torch.randn(dim, generator=g) * 0.1)
        self.b = nn.Parameter(torch.zeros(1))

    def forward(self, z):
        wu = self.w @ self.u
        u_hat = self.u + (F.softplus(wu) - 1 - wu) * self.w / (self.w @ self.w)
        lin = z @ self.w + self.b
        z_new = z + u_hat * torch.tanh(lin)[:, None]
        psi = (1 - torch.tanh(lin) ** 2)[:, None] * self.w
        logdet = torch.log((1 + psi @ u_hat).abs() + 1e-8)
        return z_new, logdet


class PlanarFlow(nn.Module):
    def __init__(self, dim, K, g):
        super().__init__()
        self.layers = nn.ModuleList([PlanarLayer(dim, g) for _ in range(K)])

    def forward(self, z0):
        log_q0 = -0.5 * (z0 ** 2).sum(1) - z0.shape[1] * 0.5 * math.log(2 * math.pi)
        z, sum_logdet = z0, torch.zeros(z0.shape[0])
        for layer in self.layers:
            z, ld = layer(z)
            sum_logdet = sum_logdet + ld
        return z, log_q0 - sum_logdet


def make_energy(kind):
    def ring(z):  # U1-like: ring of radius 2 with two modes along x
        r = z.norm(dim=1)
        a = 0.5 * ((r - 2) / 0.4) ** 2
        b = -torch.log(torch.exp(-0.5 * ((z[:, 0] - 2) / 0.6) ** 2)
                       + torch.exp(-0.5 * ((z[:, 0] + 2) / 0.6) ** 2) + 1e-12)
        return a + b

    def wave(z):  # U2-like: sinusoidal ridge
        w1 = torch.sin(2 * math.pi * z[:, 0] / 4)
        return 0.5 * ((z[:, 1] - w1) / 0.4) ** 2 + 0.05 * z[:, 0] ** 2

    def banana(z):
        return 0.5 * (z[:, 0] / 1.5) ** 2 + 0.5 * ((z[:, 1] - 0.5 * z[:, 0] ** 2 + 1.5) / 0.3) ** 2

    return {"ring": ring, "wave": wave, "banana": banana}[kind]


def make_reverse_kl(energy):
    def loss_fn(out, _unused):
        z, log_qz = out
        return (log_qz + energy(z)).mean()
    return loss_fn


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(kind="ring", K=16, bs=256, lr=1e-2, steps=200),
           dict(kind="wave", K=24, bs=128, lr=5e-3, steps=180),
           dict(kind="banana", K=8, bs=256, lr=1e-2, steps=150)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(17 + seed)
    model = PlanarFlow(2, cfg["K"], g)
    batches = []
    for _ in range(cfg["steps"]):
        z0 = torch.randn(cfg["bs"], 2, generator=g)
        batches.append((z0, torch.zeros(cfg["bs"])))
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=make_reverse_kl(make_energy(cfg["kind"])),
                batches=batches, steps=cfg["steps"])
