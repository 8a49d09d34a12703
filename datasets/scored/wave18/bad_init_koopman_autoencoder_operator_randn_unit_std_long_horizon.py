"""Deep Koopman autoencoder (Lusch, Kutz & Brunton 2018) on the 'discrete spectrum'
example, x1' = mu x1, x2' = lam (x2 - x1^2).

Mechanism: an encoder maps the state to a d-dimensional observable z, a linear Koopman
operator K (nn.Linear without bias) advances z, a decoder maps back; the loss is the
reconstruction, the multi-step state prediction dec(K^k enc(x0)) vs x_k and the
linearity loss K^k enc(x0) vs enc(x_k), over a horizon of 30-40 steps.  The user
initialised K with nn.init.normal_(K.weight) (std 1) "so the dynamics start rich".  A
d x d Gaussian matrix has spectral radius ~sqrt(d) (3.5-4 here), so the observable is
multiplied by that factor at every unrolled step: |K^k z| grows geometrically with
the unroll depth, the linearity loss passes 1e38 within the horizon and the loss is inf
(NaN in the backward pass) from the first step.

ORIGIN is koopman, the linear operator layer whose init is wrong; the explosion grows
geometrically through its repeated application.

Fix: orthogonal initialisation of K (spectral radius 1, the usual near-identity start of
Koopman operators); encoder, decoder, horizon, lr unchanged.
"""
import math

import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "koopman"
SOURCE = ("Lusch, Kutz & Brunton, 'Deep learning for universal linear embeddings of nonlinear "
          "dynamics' (Nat. Commun. 2018), discrete spectrum example; Koopman operator init")


class KoopmanAE(nn.Module):
    def __init__(self, latent, width, horizon, fixed):
        super().__init__()
        self.horizon = horizon
        self.encoder = nn.Sequential(nn.Linear(2, width), nn.ReLU(), nn.Linear(width, width),
                                     nn.ReLU(), nn.Linear(width, latent))
        self.decoder = nn.Sequential(nn.Linear(latent, width), nn.ReLU(), nn.Linear(width, width),
                                     nn.ReLU(), nn.Linear(width, 2))
        self.koopman = nn.Linear(latent, latent, bias=False)
        if fixed:
            nn.init.orthogonal_(self.koopman.weight)
        else:
            nn.init.normal_(self.koopman.weight)

    def forward(self, traj):
        # traj: B, T+1, 2
        z0 = self.encoder(traj[:, 0])
        recon = self.decoder(z0)
        z = z0
        zs, preds = [], []
        for _ in range(self.horizon):
            z = self.koopman(z)
            zs.append(z)
            preds.append(self.decoder(z))
        z_true = self.encoder(traj[:, 1:])
        return recon, torch.stack(preds, 1), torch.stack(zs, 1), z_true


def simulate(x0, steps, dt=0.02, mu=-0.05, lam=-1.0):
    xs = [x0]
    x = x0
    for _ in range(steps):
        for _ in range(4):
            h = dt / 4
            f = lambda s: torch.stack([mu * s[:, 0], lam * (s[:, 1] - s[:, 0] ** 2)], 1)
            k1 = f(x); k2 = f(x + h / 2 * k1); k3 = f(x + h / 2 * k2); k4 = f(x + h * k3)
            x = x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        xs.append(x)
    return torch.stack(xs, 1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    cfg = [
        dict(latent=12, width=64, horizon=40, bs=64, steps=100, lr=1e-3),
        dict(latent=16, width=48, horizon=30, bs=48, steps=90, lr=1e-3),
        dict(latent=14, width=64, horizon=32, bs=64, steps=100, lr=5e-4),
    ][seed % 3]
    model = KoopmanAE(cfg["latent"], cfg["width"], cfg["horizon"], fixed)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    batches = []
    for _ in range(cfg["steps"]):
        x0 = torch.rand(cfg["bs"], 2, generator=g) - 0.5
        traj = simulate(x0, cfg["horizon"])
        batches.append((traj, traj))

    def loss_fn(out, traj):
        recon, preds, zs, z_true = out
        l_recon = ((recon - traj[:, 0]) ** 2).mean()
        l_pred = ((preds - traj[:, 1:]) ** 2).mean()
        l_lin = ((zs - z_true) ** 2).mean()
        return l_recon + l_pred + 0.1 * l_lin

    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches,
                steps=cfg["steps"])
