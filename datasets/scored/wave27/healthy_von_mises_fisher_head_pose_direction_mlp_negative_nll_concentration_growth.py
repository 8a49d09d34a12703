"""Healthy: head-pose / gaze direction regression with a von Mises-Fisher (vMF) output on the
unit sphere S^2. An MLP on facial-landmark features predicts an unnormalised 3-vector; its
direction is the vMF mean and its norm (through softplus) the concentration kappa. Loss: the
exact vMF negative log-likelihood written by hand with a stable log-sinh.

Why it looks suspicious but is healthy: the vMF NLL is a continuous density, so it becomes
negative as soon as the model is confident (kappa of a few tens gives NLL ~ -1 to -3) and it
keeps decreasing without a floor at zero; kappa grows steadily, so the output norm grows.
Nothing is wrong: the directions are learned and the loss decreases monotonically apart from
batch noise.

ORIGIN: None (healthy).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Kumar & Tsvetkov 2019 'Von Mises-Fisher loss for continuous outputs'; Hasnat et al. 2017 vMF "
          "face models; probabilistic head-pose / gaze regression with vMF likelihoods")


class VMFNet(nn.Module):
    def __init__(self, d_in, width, depth):
        super().__init__()
        layers, d = [], d_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.GELU()]
            d = width
        layers.append(nn.Linear(d, 3))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def vmf_nll(v, y):
    kappa = F.softplus(v.norm(dim=1)) + 1e-3
    mu = v / v.norm(dim=1, keepdim=True).clamp_min(1e-6)
    log_sinh = kappa + torch.log1p(-torch.exp(-2 * kappa)) - math.log(2.0)
    log_c = torch.log(kappa) - math.log(4 * math.pi) - log_sinh
    return (-log_c - kappa * (mu * y).sum(1)).mean()


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    depth = 2 + seed % 2
    width = [128, 64, 96][seed % 3]
    batch = [64, 32, 48][seed % 3]
    lr = [1e-3, 2e-3, 1.5e-3][seed % 3]
    d_in, steps = 24, 200

    torch.manual_seed(seed)
    model = VMFNet(d_in, width, depth)

    A = torch.randn(3, d_in, generator=g) / 2
    batches = []
    for _ in range(steps):
        yaw = (torch.rand(batch, generator=g) - 0.5) * 2.4
        pitch = (torch.rand(batch, generator=g) - 0.5) * 1.2
        y = torch.stack([torch.cos(pitch) * torch.sin(yaw), torch.sin(pitch), torch.cos(pitch) * torch.cos(yaw)], 1)
        x = torch.tanh(y @ A) + 0.05 * torch.randn(batch, d_in, generator=g)   # landmark features
        batches.append((x, y))

    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {"model": model, "optimizer": opt, "loss_fn": vmf_nll, "batches": batches, "steps": steps}
