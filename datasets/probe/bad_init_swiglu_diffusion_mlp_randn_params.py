"""Norm-free residual MLP noise-predictor (diffusion on 16-d vectors) with sinusoidal time-step
embeddings and SwiGLU blocks that own their weights as raw nn.Parameter(torch.randn(...)), the
way JAX-ported code declares parameters but without the 1/sqrt(fan_in) scale. Each gated block
multiplies two ~sqrt(d)-scaled projections, so the residual stream grows super-geometrically with
depth from step 0 and overflows fp32 in the forward pass.
fixed=True draws the same parameters scaled by 1/sqrt(fan_in) (LeCun/xavier-style init).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "bad_init"
ORIGIN = "blocks.0.mlp"
SOURCE = ("custom modules declaring nn.Parameter(torch.randn(in, out)) without fan-in scaling "
          "(common bug when porting JAX/Flax or paper pseudo-code); TabDDPM-style MLP denoiser")

D, W, H, DEPTH = 16, 64, 128, 6


class SwiGLU(nn.Module):
    def __init__(self, dim, hidden, scaled):
        super().__init__()
        s_in = 1.0 / math.sqrt(dim) if scaled else 1.0
        s_h = 1.0 / math.sqrt(hidden) if scaled else 1.0
        self.w_gate = nn.Parameter(torch.randn(dim, hidden) * s_in)
        self.w_up = nn.Parameter(torch.randn(dim, hidden) * s_in)
        self.w_down = nn.Parameter(torch.randn(hidden, dim) * s_h)

    def forward(self, x):
        return (F.silu(x @ self.w_gate) * (x @ self.w_up)) @ self.w_down


class Block(nn.Module):
    def __init__(self, dim, hidden, scaled):
        super().__init__()
        self.t_proj = nn.Linear(dim, dim)
        self.mlp = SwiGLU(dim, hidden, scaled)

    def forward(self, x, temb):
        return x + self.mlp(x + self.t_proj(temb))


def timestep_embedding(t, dim, max_period=10000.0):
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(half, dtype=torch.float32) / half)
    args = t[:, None].float() * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


class Denoiser(nn.Module):
    def __init__(self, scaled):
        super().__init__()
        self.inp = nn.Linear(D, W)
        self.time_mlp = nn.Sequential(nn.Linear(W, W), nn.SiLU(), nn.Linear(W, W))
        self.blocks = nn.ModuleList([Block(W, H, scaled) for _ in range(DEPTH)])
        self.out = nn.Linear(W, D)

    def forward(self, x_t, t):
        temb = self.time_mlp(timestep_embedding(t, W))
        h = self.inp(x_t)
        for blk in self.blocks:
            h = blk(h, temb)
        return self.out(h)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = Denoiser(scaled=fixed)
    n_t = 200
    betas = torch.linspace(1e-4, 0.02, n_t)
    abar = torch.cumprod(1 - betas, 0)
    centers = torch.randn(6, D, generator=g)
    steps, bs = 150, 64
    batches = []
    for _ in range(steps):
        k = torch.randint(0, 6, (bs,), generator=g)
        x0 = centers[k] + 0.1 * torch.randn(bs, D, generator=g)
        t = torch.randint(0, n_t, (bs,), generator=g)
        eps = torch.randn(bs, D, generator=g)
        a = abar[t][:, None]
        x_t = a.sqrt() * x0 + (1 - a).sqrt() * eps
        batches.append(((x_t, t), eps))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
