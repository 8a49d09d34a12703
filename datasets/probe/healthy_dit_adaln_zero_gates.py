"""Small DiT-style denoiser (patch tokens of 1-D signals, learned position embeddings, sinusoidal
time-step embedding) whose blocks own adaLN-Zero modulation: the gate/shift/scale projection
and the final layer are ZERO-initialised, as in the DiT paper. At step 0 every attention/MLP
branch is gated off, so most weights get exactly zero gradient and the output is all zeros:
it looks like dead units / vanishing gradients, but the gates open within a few steps and the
noise-prediction loss falls steadily. Healthy; fixed=True is the identical run.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = "Peebles & Xie 2023, Scalable Diffusion Models with Transformers (DiT, adaLN-Zero init); facebookresearch/DiT models.py"

L_SIG, PATCH, DIM, HEADS, DEPTH = 64, 8, 64, 4, 3
N_TOK = L_SIG // PATCH


def modulate(x, shift, scale):
    return x * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1)


def timestep_embedding(t, dim, max_period=10000.0):
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(half, dtype=torch.float32) / half)
    args = t[:, None].float() * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


class DiTBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1 = nn.LayerNorm(DIM, elementwise_affine=False, eps=1e-6)
        self.attn = nn.MultiheadAttention(DIM, HEADS, batch_first=True)
        self.norm2 = nn.LayerNorm(DIM, elementwise_affine=False, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(DIM, 4 * DIM), nn.GELU(approximate="tanh"), nn.Linear(4 * DIM, DIM))
        self.adaLN_modulation = nn.Sequential(nn.SiLU(), nn.Linear(DIM, 6 * DIM))
        nn.init.zeros_(self.adaLN_modulation[-1].weight)
        nn.init.zeros_(self.adaLN_modulation[-1].bias)

    def forward(self, x, c):
        sh1, sc1, g1, sh2, sc2, g2 = self.adaLN_modulation(c).chunk(6, dim=-1)
        h = modulate(self.norm1(x), sh1, sc1)
        x = x + g1.unsqueeze(1) * self.attn(h, h, h, need_weights=False)[0]
        x = x + g2.unsqueeze(1) * self.mlp(modulate(self.norm2(x), sh2, sc2))
        return x


class FinalLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(DIM, elementwise_affine=False, eps=1e-6)
        self.adaLN_modulation = nn.Sequential(nn.SiLU(), nn.Linear(DIM, 2 * DIM))
        self.linear = nn.Linear(DIM, PATCH)
        for m in (self.adaLN_modulation[-1], self.linear):
            nn.init.zeros_(m.weight)
            nn.init.zeros_(m.bias)

    def forward(self, x, c):
        shift, scale = self.adaLN_modulation(c).chunk(2, dim=-1)
        return self.linear(modulate(self.norm(x), shift, scale))


class DiT1d(nn.Module):
    def __init__(self):
        super().__init__()
        self.x_embed = nn.Linear(PATCH, DIM)
        self.pos_embed = nn.Parameter(torch.zeros(1, N_TOK, DIM))
        nn.init.normal_(self.pos_embed, std=0.02)
        self.t_embedder = nn.Sequential(nn.Linear(DIM, DIM), nn.SiLU(), nn.Linear(DIM, DIM))
        self.blocks = nn.ModuleList([DiTBlock() for _ in range(DEPTH)])
        self.final = FinalLayer()

    def forward(self, x, t):
        b = x.shape[0]
        h = self.x_embed(x.view(b, N_TOK, PATCH)) + self.pos_embed
        c = self.t_embedder(timestep_embedding(t, DIM))
        for blk in self.blocks:
            h = blk(h, c)
        return self.final(h, c).reshape(b, L_SIG)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = DiT1d()
    n_t = 1000
    betas = torch.linspace(1e-4, 0.02, n_t)
    abar = torch.cumprod(1 - betas, 0)
    grid = torch.linspace(0, 1, L_SIG)
    steps, bs = 150, 32
    batches = []
    for _ in range(steps):
        f = torch.randint(1, 4, (bs, 1), generator=g).float()
        ph = 2 * math.pi * torch.rand(bs, 1, generator=g)
        x0 = torch.sin(2 * math.pi * f * grid[None] + ph)
        t = torch.randint(0, n_t, (bs,), generator=g)
        eps = torch.randn(bs, L_SIG, generator=g)
        a = abar[t][:, None]
        batches.append(((a.sqrt() * x0 + (1 - a).sqrt() * eps, t), eps))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.0)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
