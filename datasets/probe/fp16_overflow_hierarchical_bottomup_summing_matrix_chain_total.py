"""Hierarchical retail forecaster (48 stores -> 4 regions -> chain total) under fp16 autocast.
A global MLP forecasts each store's next week in units; coherent forecasts for all nodes are
made bottom-up, y_all = S @ y_bottom, a matmul autocast runs in float16. Stores (~2k/day) and
regions fit in fp16, but once the model has learned the level the chain total (~90k/day)
passes 65504: the aggregate is inf and so is the loss. fixed=True runs only the S @ y_bottom
aggregation in fp32 (autocast disabled there); everything else is unchanged.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "reconcile"
SOURCE = ("Bottom-up coherent hierarchical forecasting y = S b (Hyndman & Athanasopoulos, FPP3 ch.11; "
          "HierE2E, Rangapuram et al. 2021; Nixtla HierarchicalForecast), trained with torch.autocast "
          "float16: the PyTorch AMP docs warn that ops producing values beyond the fp16 range (65504) "
          "overflow and should run in float32; totals of a retail chain exceed that range")

L, H, R, K = 28, 7, 4, 12          # lookback, horizon, regions, stores per region
N = R * K


def summing_matrix():
    S = torch.zeros(1 + R + N, N)
    S[0] = 1.0                                   # chain total
    for r in range(R):
        S[1 + r, r * K:(r + 1) * K] = 1.0        # region totals
    S[1 + R:] = torch.eye(N)                     # stores
    return S


class Reconcile(nn.Module):
    """Bottom-up aggregation of store forecasts to every node of the hierarchy."""

    def __init__(self, fixed):
        super().__init__()
        self.register_buffer("S", summing_matrix())
        self.fixed = fixed

    def forward(self, bottom):                   # (B, N, H)
        if self.fixed:
            with torch.autocast("cpu", enabled=False):
                return torch.matmul(self.S, bottom.float())
        return torch.matmul(self.S, bottom)


class GlobalStoreForecaster(nn.Module):
    def __init__(self, fixed, d=64):
        super().__init__()
        self.store_emb = nn.Embedding(N, 8)
        self.mlp = nn.Sequential(nn.Linear(L + 8 + 7, d), nn.ReLU(),
                                 nn.Linear(d, d), nn.ReLU(),
                                 nn.Linear(d, H))
        self.reconcile = Reconcile(fixed)

    def forward(self, hist, dow):                # hist (B, N, L) in units; dow (B, 7)
        B = hist.shape[0]
        nu = 1.0 + hist.mean(-1, keepdim=True)   # DeepAR-style scale
        z = torch.cat([hist / nu,
                       self.store_emb.weight.expand(B, N, 8),
                       dow[:, None, :].expand(B, N, 7)], -1)
        bottom = self.mlp(z) * nu                # store forecasts in units
        return self.reconcile(bottom)            # (B, 1+R+N, H)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    T = 400
    t = torch.arange(T)
    level = torch.exp(torch.randn(N, 1, generator=g) * 0.3 + math.log(1900.0))
    dow_shape = torch.tensor([-0.6, -0.3, -0.2, 0.0, 0.3, 1.0, 0.6])
    weekly = 1.0 + 0.25 * (dow_shape[None] + 0.2 * torch.randn(N, 7, generator=g))
    trend = 1.0 + 0.0004 * torch.randn(N, 1, generator=g) * t
    y = level * weekly[:, t % 7] * trend * (1.0 + 0.05 * torch.randn(N, T, generator=g))
    S = summing_matrix()
    Y = S @ y                                    # every node of the hierarchy
    node_scale = Y.mean(1)                       # per-node scale for a scale-free loss

    def loss_fn(out, target):                    # mean scaled absolute error over all nodes
        return ((out - target).abs() / node_scale[None, :, None]).mean()

    B, steps = 8, 200
    batches = []
    for _ in range(steps):
        t0 = torch.randint(0, T - L - H, (B,), generator=g)
        idx = t0[:, None] + torch.arange(L + H)
        hist = y[:, idx].permute(1, 0, 2)[:, :, :L].contiguous()
        target = Y[:, idx].permute(1, 0, 2)[:, :, L:].contiguous()
        dow = F.one_hot((t0 + L) % 7, 7).float()
        batches.append(((hist, dow), target))

    model = GlobalStoreForecaster(fixed)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.float16, scaler=None)
