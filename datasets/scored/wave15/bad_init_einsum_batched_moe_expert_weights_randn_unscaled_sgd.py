"""Top-2 mixture-of-experts regressor whose experts are stored as stacked 3-D
parameters (E, d, h) and applied with torch.einsum (the "batched experts" layout of
Mixtral/megablocks-style code), initialised with a bare torch.randn.

Mechanism: nn.Linear's fan-in scaling is lost when the expert weights are written by
hand as nn.Parameter(torch.randn(E, d, h)). Each expert's up/down projections have
std 1, so one MoE layer multiplies the residual stream by ~sqrt(d*h/2) (~50-90x);
stacked MoE layers compound it geometrically from step 0. The MSE loss starts
astronomically large, the first SGD step is of the same order and the run goes
non-finite within a few steps.

ORIGIN: `layers.0.moe`, the first MoE block whose hand-initialised expert weights
start the blow-up (the router is an ordinary nn.Linear).

Fix: scale the expert weights like nn.Linear / kaiming (std = 1/sqrt(fan_in)).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "layers.0.moe"
SOURCE = ("Batched-expert MoE implementations (einsum over stacked expert weights) where "
          "experts are created with torch.randn without fan-in scaling; cf. issues on "
          "custom MoE layers exploding at init.")


class BatchedMoE(nn.Module):
    def __init__(self, d, h, n_experts, k, fixed):
        super().__init__()
        self.k = k
        self.router = nn.Linear(d, n_experts)
        self.w_in = nn.Parameter(torch.randn(n_experts, d, h))
        self.w_out = nn.Parameter(torch.randn(n_experts, h, d))
        if fixed:
            with torch.no_grad():
                self.w_in.mul_(1.0 / math.sqrt(d))
                self.w_out.mul_(1.0 / math.sqrt(h))

    def forward(self, x):
        probs = F.softmax(self.router(x), dim=-1)          # (B, E)
        topv, topi = probs.topk(self.k, dim=-1)
        gates = torch.zeros_like(probs).scatter(-1, topi, topv / topv.sum(-1, keepdim=True))
        hid = F.gelu(torch.einsum("bd,edh->beh", x, self.w_in))
        out = torch.einsum("beh,ehd->bed", hid, self.w_out)
        return (gates.unsqueeze(-1) * out).sum(1)


class MoEBlock(nn.Module):
    def __init__(self, d, h, n_experts, k, fixed):
        super().__init__()
        self.moe = BatchedMoE(d, h, n_experts, k, fixed)

    def forward(self, x):
        return x + self.moe(x)


class MoERegressor(nn.Module):
    def __init__(self, d_in, d, h, n_layers, n_experts, k, fixed):
        super().__init__()
        self.inp = nn.Linear(d_in, d)
        self.layers = nn.ModuleList([MoEBlock(d, h, n_experts, k, fixed) for _ in range(n_layers)])
        self.out = nn.Linear(d, 1)

    def forward(self, x):
        x = self.inp(x)
        for layer in self.layers:
            x = layer(x)
        return self.out(x).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(d=32, h=64, L=3, E=4, lr=1e-3, bs=32),
           dict(d=24, h=96, L=2, E=6, lr=3e-3, bs=48),
           dict(d=48, h=48, L=3, E=8, lr=1e-3, bs=24)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(77 + seed)
    d_in, steps = 10, 80
    model = MoERegressor(d_in, cfg["d"], cfg["h"], cfg["L"], cfg["E"], 2, fixed)
    w_true = torch.randn(d_in, generator=g)
    batches = []
    for _ in range(steps):
        x = torch.randn(cfg["bs"], d_in, generator=g)
        y = torch.tanh(x @ w_true / 2) + 0.3 * torch.sin(2 * x[:, 0]) + 0.05 * torch.randn(cfg["bs"], generator=g)
        batches.append((x, y))
    opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
