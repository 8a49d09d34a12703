"""Contrastive Predictive Coding (van den Oord et al. 2018) on 1-D sensor signals: a strided
Conv1d encoder gives latents z_t, a causal Conv1d context network gives c_t, and a bilinear
head W_k scores f_k = exp(z_{t+k}^T W_k c_t), exactly the density-ratio form of the paper.
The loss is written the way the paper's equation reads, -log(f_pos / sum_j f_j), with an
explicit exp. Training runs under float16 autocast with no scaler: the bilinear scores come
out of a half-precision matmul and stay in half, so once training has sharpened them past
~11.1, exp() passes 65504, f becomes inf and inf/inf gives NaN: a calm run that turns non-finite
mid-way. Fixed: the same code under bfloat16 autocast (same exponent range as float32)."""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = "predictor"
SOURCE = ("van den Oord et al. 2018 'Representation Learning with Contrastive Predictive Coding' "
          "(f_k = exp(z^T W_k c)); 'CPC / InfoNCE loss NaN with AMP fp16' reports")


class CPC(nn.Module):
    def __init__(self, d=32, k_ahead=2):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv1d(1, d, 4, stride=2, padding=1), nn.ReLU(),
            nn.Conv1d(d, d, 4, stride=2, padding=1))
        self.context = nn.Conv1d(d, d, 4)            # causal: left-padded in forward
        self.predictor = nn.Linear(d, d, bias=False)  # W_k for k = k_ahead
        self.k = k_ahead

    def forward(self, x):
        z = self.encoder(x)                             # B, d, T
        c = torch.relu(self.context(F.pad(z, (3, 0))))   # B, d, T
        B, d, T = z.shape
        t = T // 2
        pred = self.predictor(c[:, :, t])               # B, d  (W_k c_t)
        targets = z[:, :, t + self.k]                   # B, d ; other batch items are negatives
        scores = pred @ targets.t()                     # B x B bilinear scores z^T W c
        return scores


def cpc_loss(scores, _y):
    f = torch.exp(scores)                               # density ratios, as in the paper
    pos = torch.diagonal(f)
    return -torch.log(pos / f.sum(1)).mean()


def _signals(g, n, L=64):
    t = torch.arange(L).float()
    freq = 0.1 + 0.5 * torch.rand(n, 1, generator=g)
    ph = 2 * math.pi * torch.rand(n, 1, generator=g)
    amp = 0.5 + torch.rand(n, 1, generator=g)
    chirp = 0.004 * torch.randn(n, 1, generator=g)
    x = amp * torch.sin((freq + chirp * t) * t + ph) + 0.1 * torch.randn(n, L, generator=g)
    return x[:, None, :]


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(7000 + seed)
    model = CPC()
    steps, bs = 200, 64
    batches = [(_signals(g, bs), None) for _ in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    return dict(model=model, optimizer=opt, loss_fn=cpc_loss, batches=batches, steps=steps,
                amp_dtype=torch.bfloat16 if fixed else torch.float16, scaler=None)
