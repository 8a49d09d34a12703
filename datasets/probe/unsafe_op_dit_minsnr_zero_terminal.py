"""Tiny DiT (patchified transformer with adaLN-Zero timestep conditioning) trained as an epsilon-
prediction diffusion model with Min-SNR-gamma loss weighting, on a noise schedule rescaled to zero
terminal SNR (Lin et al. 2023).  The weighting divides by SNR: w = min(snr, gamma) / snr.  At the
last timestep alphas_cumprod == 0, so snr == 0 and w = 0/0 = NaN.  Training is calm until the first
batch that samples t = T-1; that NaN loss poisons every weight through AdamW.
fixed=True: the loss clamps snr with clamp_min(1e-8) before dividing (weight 1 at zero SNR)."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = None
SOURCE = ("diffusers train_text_to_image.py Min-SNR weighting (Hang et al. 2023) combined with "
          "rescale_betas_zero_snr (Lin et al. 2023): 'snr is 0 at the final timestep -> NaN loss'; "
          "diffusers later added mse_loss_weights[snr == 0] = 1.0")

IMG, PATCH, DIM, HEADS, DEPTH, NT = 8, 2, 64, 4, 2, 1000
GAMMA = 5.0


def zero_terminal_snr_alphas_cumprod():
    betas = torch.linspace(1e-4, 0.02, NT, dtype=torch.float64)
    ab_sqrt = torch.cumprod(1 - betas, 0).sqrt()
    a0, aT = ab_sqrt[0].clone(), ab_sqrt[-1].clone()
    ab_sqrt = (ab_sqrt - aT) * a0 / (a0 - aT)        # Lin et al. 2023, Algorithm 1
    return (ab_sqrt ** 2).float()                     # last entry is exactly 0


def timestep_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000) * torch.arange(half, dtype=torch.float32) / half)
    args = t.float()[:, None] * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


class DiTBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1 = nn.LayerNorm(DIM, elementwise_affine=False, eps=1e-6)
        self.attn = nn.MultiheadAttention(DIM, HEADS, batch_first=True)
        self.norm2 = nn.LayerNorm(DIM, elementwise_affine=False, eps=1e-6)
        self.mlp = nn.Sequential(nn.Linear(DIM, 4 * DIM), nn.GELU(approximate="tanh"), nn.Linear(4 * DIM, DIM))
        self.adaLN_modulation = nn.Sequential(nn.SiLU(), nn.Linear(DIM, 6 * DIM))
        nn.init.zeros_(self.adaLN_modulation[1].weight)
        nn.init.zeros_(self.adaLN_modulation[1].bias)

    def forward(self, x, c):
        sh1, sc1, g1, sh2, sc2, g2 = self.adaLN_modulation(c).unsqueeze(1).chunk(6, dim=-1)
        h = self.norm1(x) * (1 + sc1) + sh1
        x = x + g1 * self.attn(h, h, h, need_weights=False)[0]
        h = self.norm2(x) * (1 + sc2) + sh2
        return x + g2 * self.mlp(h)


class TinyDiT(nn.Module):
    def __init__(self):
        super().__init__()
        n_tok = (IMG // PATCH) ** 2
        self.patch_embed = nn.Linear(PATCH * PATCH, DIM)
        self.pos = nn.Parameter(torch.randn(1, n_tok, DIM) * 0.02)
        self.t_embed = nn.Sequential(nn.Linear(DIM, DIM), nn.SiLU(), nn.Linear(DIM, DIM))
        self.blocks = nn.ModuleList([DiTBlock() for _ in range(DEPTH)])
        self.final_norm = nn.LayerNorm(DIM, elementwise_affine=False, eps=1e-6)
        self.final_mod = nn.Sequential(nn.SiLU(), nn.Linear(DIM, 2 * DIM))
        self.final = nn.Linear(DIM, PATCH * PATCH)
        for lin in (self.final_mod[1], self.final):
            nn.init.zeros_(lin.weight)
            nn.init.zeros_(lin.bias)

    def forward(self, x_t, t):  # x_t: (B, 1, IMG, IMG)
        B, g = x_t.shape[0], IMG // PATCH
        p = x_t.reshape(B, g, PATCH, g, PATCH).permute(0, 1, 3, 2, 4).reshape(B, g * g, PATCH * PATCH)
        x = self.patch_embed(p) + self.pos
        c = self.t_embed(timestep_embedding(t, DIM))
        for blk in self.blocks:
            x = blk(x, c)
        sh, sc = self.final_mod(c).unsqueeze(1).chunk(2, dim=-1)
        out = self.final(self.final_norm(x) * (1 + sc) + sh)
        return out.reshape(B, g, g, PATCH, PATCH).permute(0, 1, 3, 2, 4).reshape(B, 1, IMG, IMG)


def make_loss(alphas_cumprod, fixed):
    def loss_fn(eps_pred, target):
        # target packs the true noise (flattened) and the sampled timestep in the last column
        eps = target[:, :-1].reshape_as(eps_pred)
        t = target[:, -1].long()
        ab = alphas_cumprod[t]
        snr = ab / (1 - ab)
        if fixed:
            snr = snr.clamp_min(1e-8)
        w = torch.minimum(snr, torch.full_like(snr, GAMMA)) / snr   # Min-SNR-gamma, epsilon target
        per_sample = F.mse_loss(eps_pred.float(), eps, reduction="none").mean(dim=(1, 2, 3))
        return (w * per_sample).mean()
    return loss_fn


def _images(gen, n):
    yy, xx = torch.meshgrid(torch.linspace(0, 1, IMG), torch.linspace(0, 1, IMG), indexing="ij")
    out = torch.zeros(n, 1, IMG, IMG)
    for _ in range(2):  # sum of two random gratings
        th = math.pi * torch.rand(n, 1, 1, generator=gen)
        f = 1.0 + 2.0 * torch.rand(n, 1, 1, generator=gen)
        ph = 2 * math.pi * torch.rand(n, 1, 1, generator=gen)
        out[:, 0] += torch.cos(2 * math.pi * f * (xx * torch.cos(th) + yy * torch.sin(th)) + ph)
    return out / 2


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    model = TinyDiT()
    ac = zero_terminal_snr_alphas_cumprod()
    gen = torch.Generator().manual_seed(seed)
    steps, bs = 200, 32
    batches = []
    for _ in range(steps):
        x0 = _images(gen, bs)
        t = torch.randint(0, NT, (bs,), generator=gen)
        eps = torch.randn(bs, 1, IMG, IMG, generator=gen)
        ab = ac[t].view(bs, 1, 1, 1)
        x_t = ab.sqrt() * x0 + (1 - ab).sqrt() * eps
        batches.append(((x_t, t), torch.cat([eps.flatten(1), t.float().unsqueeze(1)], dim=1)))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.0)
    return dict(model=model, optimizer=opt, loss_fn=make_loss(ac, fixed), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
