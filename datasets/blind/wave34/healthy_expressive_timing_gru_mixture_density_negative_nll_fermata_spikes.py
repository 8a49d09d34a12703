"""Expressive-performance timing model: a GRU reads score features of each note (metrical
position, duration, pitch contour, phrase-end flag) and a mixture-density head (3 Gaussians)
predicts the performed onset deviation (in beats) of the next note; loss is the mixture NLL;
Adam with per-element gradient clamping (tensor hooks).

Healthy, but looks alarming to a naive monitor: deviations are small (std ~0.03 beat), so the
densities are >> 1 and the NLL becomes negative early and keeps decreasing (to about -2.5 to -3);
a few batches contain fermatas / ritardandi at phrase ends (deviations of 0.5-1.5 beats, real
data, not corrupt), which make the loss spike by several nats for one step before it returns to
trend. Log-sum-exp over mixture components and a softplus-floored sigma keep everything finite.

ORIGIN: None (healthy run).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Mixture density networks (Bishop 1994) for expressive timing as in Maezawa et al. "
          "2019 / VirtuosoNet (Jeong et al. 2019) style performance rendering; negative "
          "continuous NLL and heavy-tailed fermata deviations are expected in such data.")

K = 3


class TimingMDN(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.gru = nn.GRU(6, hidden, batch_first=True)
        self.mdn = nn.Linear(hidden, 3 * K)

    def forward(self, x):
        h, _ = self.gru(x)
        return self.mdn(h)


def mdn_nll(out, y):
    logit_pi, mu, s = out.split(K, dim=-1)
    sigma = F.softplus(s) + 1e-3
    y = y.unsqueeze(-1)
    logp = -0.5 * ((y - mu) / sigma) ** 2 - torch.log(sigma) - 0.5 * math.log(2 * math.pi)
    return -torch.logsumexp(F.log_softmax(logit_pi, -1) + logp, -1).mean()


def _batch(g, B, T, fermata):
    pos = torch.randint(0, 4, (B, T), generator=g).float()
    dur = torch.randint(1, 4, (B, T), generator=g).float() / 2
    contour = torch.randn(B, T, generator=g)
    phrase_end = (torch.arange(T)[None] % 8 == 7).float().expand(B, T)
    x = torch.stack([pos / 3, dur, contour, phrase_end, torch.sin(pos * math.pi / 2),
                     torch.cos(pos * math.pi / 2)], -1)
    dev = 0.02 * (pos == 0).float() - 0.01 * dur + 0.015 * contour.clamp(-1, 1)
    dev = dev + 0.04 * phrase_end + 0.01 * torch.randn(B, T, generator=g)
    if fermata:
        dev = dev + phrase_end * (0.5 + torch.rand(B, T, generator=g))
    return x, dev


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(17000 + seed)
    hidden = [32, 48, 64][seed % 3]
    B = [16, 24, 12][seed % 3]
    lr = [3e-3, 2e-3, 4e-3][seed % 3]
    steps = 200
    spikes = {[37, 61, 52][seed % 3], [113, 97, 140][seed % 3]}
    torch.manual_seed(seed)
    model = TimingMDN(hidden)
    batches = [_batch(g, B, 32, s in spikes) for s in range(steps)]
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    for p in model.parameters():  # per-element gradient clamping via hooks
        p.register_hook(lambda gr: gr.clamp(-5.0, 5.0))
    return dict(model=model, optimizer=opt, loss_fn=mdn_nll, batches=batches, steps=steps)
