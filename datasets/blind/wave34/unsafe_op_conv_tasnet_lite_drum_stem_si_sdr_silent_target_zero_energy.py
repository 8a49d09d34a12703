"""Drum-stem separation with a small Conv-TasNet-style model (learned 1-D conv encoder, a stack
of dilated 1-D conv blocks producing a sigmoid mask, transposed-conv decoder) trained with the
negative scale-invariant SDR (SI-SDR) loss; Adam.

Mechanism: the hand-written SI-SDR projects the estimate onto the target,
alpha = <s_hat, s> / ||s||^2, and returns -10 log10(||alpha s||^2 / ||alpha s - s_hat||^2), with
no epsilon anywhere. Training is calm until a batch contains an excerpt whose drum stem is
digitally silent (a break-down / intro with no drums - common in MUSDB-style data): ||s||^2 = 0,
alpha = 0/0 = NaN, and the loss and every gradient become NaN at that step.

ORIGIN: None - the unsafe operation is the division inside the loss, not a module of the model
(the network output is finite on that batch).

Fix: the usual epsilons - alpha = <s_hat, s> / (||s||^2 + eps) and
10 log10((||alpha s||^2 + eps) / (||alpha s - s_hat||^2 + eps)) - nothing else changes.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = None
SOURCE = ("SI-SDR NaN on silent targets (Le Roux et al. 2019 'SDR - half-baked or well done?' "
          "definition; asteroid / speechbrain issues about NaN SI-SDR on all-zero sources and "
          "the eps fix); Conv-TasNet after Luo & Mesgarani 2019; silent stems in MUSDB18.")


class TasNetLite(nn.Module):
    def __init__(self, n_filt, blocks, win=16):
        super().__init__()
        self.encoder = nn.Conv1d(1, n_filt, win, stride=win // 2, bias=False)
        layers = []
        for b in range(blocks):
            layers += [nn.Conv1d(n_filt, n_filt, 3, padding=2 ** b, dilation=2 ** b), nn.PReLU()]
        self.separator = nn.Sequential(*layers)
        self.mask = nn.Conv1d(n_filt, n_filt, 1)
        self.decoder = nn.ConvTranspose1d(n_filt, 1, win, stride=win // 2, bias=False)

    def forward(self, mix):
        w = F.relu(self.encoder(mix))
        m = torch.sigmoid(self.mask(self.separator(w)))
        return self.decoder(w * m).squeeze(1)


def make_si_sdr(eps):
    def neg_si_sdr(est, target):
        est = est - est.mean(-1, keepdim=True)
        target = target - target.mean(-1, keepdim=True)
        alpha = (est * target).sum(-1, keepdim=True) / ((target ** 2).sum(-1, keepdim=True) + eps)
        proj = alpha * target
        noise = proj - est
        sdr = 10 * torch.log10(((proj ** 2).sum(-1) + eps) / ((noise ** 2).sum(-1) + eps))
        return -sdr.mean()
    return neg_si_sdr


def _batch(g, B, T, silent_idx=None):
    t = torch.arange(T).float()
    drums = torch.zeros(B, T)
    for _ in range(4):
        pos = torch.randint(0, T - 200, (B,), generator=g)
        burst = torch.exp(-torch.arange(200).float() / 30) * torch.randn(B, 200, generator=g)
        idx = pos[:, None] + torch.arange(200)[None]
        drums.scatter_add_(1, idx, burst * 0.5)
    f = 0.03 + 0.05 * torch.rand(B, 1, generator=g)
    other = 0.3 * torch.sin(f * t + 6.28 * torch.rand(B, 1, generator=g)) \
        + 0.15 * torch.sin(2.01 * f * t)
    if silent_idx is not None:
        drums[silent_idx] = 0.0  # drum-free intro: digital silence in the stem
    mix = drums + other
    return mix.unsqueeze(1), drums


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(15000 + seed)
    n_filt = [32, 48, 24][seed % 3]
    blocks = [3, 4, 2][seed % 3]
    B = [8, 6, 12][seed % 3]
    lr = [1e-3, 2e-3, 1e-3][seed % 3]
    steps = 80
    silent_step = [31, 52, 44][seed % 3]
    torch.manual_seed(seed)
    model = TasNetLite(n_filt, blocks)
    batches = []
    for s in range(steps):
        batches.append(_batch(g, B, 2048, silent_idx=(s % B) if s == silent_step else None))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=make_si_sdr(1e-8 if fixed else 0.0),
                batches=batches, steps=steps)
