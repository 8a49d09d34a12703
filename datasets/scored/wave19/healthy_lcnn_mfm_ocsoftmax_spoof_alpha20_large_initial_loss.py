"""Healthy: LCNN (max-feature-map) anti-spoofing countermeasure trained with OC-Softmax.

What looks alarming: OC-Softmax (Zhang et al. 2021) scores an utterance by the cosine between
its embedding and a learned bona-fide direction and applies softplus(alpha * margin gap)
with alpha=20 and margins m0=0.9 (bona fide) / m1=0.2 (spoof). At initialisation cosines are
near 0, so every bona-fide utterance costs ~softplus(20 * 0.9) = 18 nats: the first losses are
~8-10, gradients are 20x larger than with a plain softmax, and the loss bounces as the share
of bona-fide utterances in a batch changes. In addition, max-feature-map units pass gradient to
only one half of their input channels (the other half gets an exact zero gradient), so half of
every conv's output channels look "dead" in any batch.

Why it is healthy: the scale is the margin loss's design (alpha is a fixed temperature on a
bounded cosine), the cosine is bounded so nothing can blow up, and MFM's zero-gradient half
changes from input to input. The loss falls by an order of magnitude.

ORIGIN: None (healthy run).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Lavrentyeva et al. 2019 LCNN (max-feature-map) ASVspoof countermeasure; "
          "Zhang, Jiang & Duan 2021 'One-class learning towards synthetic voice spoofing "
          "detection' (OC-Softmax, alpha=20, m0=0.9, m1=0.2) on LFCC features")


class MFM(nn.Module):
    def forward(self, x):
        a, b = x.chunk(2, dim=1)
        return torch.max(a, b)


class LCNN(nn.Module):
    def __init__(self, c, emb_dim, n_coef, n_frames):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(1, 2 * c, 5, padding=2), MFM(), nn.MaxPool2d(2),
            nn.Conv2d(c, 2 * c, 1), MFM(), nn.BatchNorm2d(c),
            nn.Conv2d(c, 2 * (c + c // 2), 3, padding=1), MFM(), nn.MaxPool2d(2),
            nn.BatchNorm2d(c + c // 2),
            nn.Conv2d(c + c // 2, 2 * (c + c // 2), 1), MFM(), nn.BatchNorm2d(c + c // 2),
            nn.Conv2d(c + c // 2, 4 * c, 3, padding=1), MFM(), nn.MaxPool2d(2),
        )
        flat = 2 * c * (n_coef // 8) * (n_frames // 8)
        self.fc = nn.Sequential(nn.Dropout(0.3), nn.Linear(flat, 2 * emb_dim), MFM())
        self.center = nn.Parameter(torch.randn(emb_dim))

    def forward(self, x):
        h = self.body(x).flatten(1)
        emb = self.fc(h)
        # OC-Softmax score: cosine to the learned bona-fide direction
        return F.normalize(emb, dim=1) @ F.normalize(self.center, dim=0)


class OCSoftmaxLoss(nn.Module):
    def __init__(self, m_real=0.9, m_fake=0.2, alpha=20.0):
        super().__init__()
        self.m_real, self.m_fake, self.alpha = m_real, m_fake, alpha

    def forward(self, score, label):  # label 0 = bona fide, 1 = spoof
        gap = torch.where(label == 0, self.m_real - score, score - self.m_fake)
        return F.softplus(self.alpha * gap).mean()


def _lfcc(g, n, n_coef, n_frames, p_spoof):
    y = (torch.rand(n, generator=g) < p_spoof).long()
    base = torch.randn(n, 1, n_coef, 1, generator=g) / (1 + torch.arange(n_coef).float().view(1, 1, -1, 1))
    drift = 0.3 * torch.randn(n, 1, n_coef, n_frames, generator=g).cumsum(-1) / n_frames ** 0.5
    x = 3.0 * base + drift + 0.3 * torch.randn(n, 1, n_coef, n_frames, generator=g)
    # vocoded speech: over-smoothed high-order cepstra and a frame-periodic artefact
    hi = torch.arange(n_coef) >= n_coef // 2
    art = 0.8 * torch.sin(torch.arange(n_frames).float() * 2.1).view(1, 1, 1, -1)
    xs = x.clone()
    xs[:, :, hi] = 0.3 * x[:, :, hi] + art
    x = torch.where(y.view(-1, 1, 1, 1).bool(), xs, x)
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(10000 + seed)
    cfg = [
        dict(c=16, emb=32, n_coef=40, n_frames=32, bs=32, lr=1e-3, steps=70, p_spoof=0.5),
        dict(c=12, emb=24, n_coef=32, n_frames=48, bs=24, lr=2e-3, steps=60, p_spoof=0.7),
        dict(c=8, emb=16, n_coef=48, n_frames=24, bs=48, lr=5e-4, steps=90, p_spoof=0.4),
    ][seed % 3]
    model = LCNN(cfg["c"], cfg["emb"], cfg["n_coef"], cfg["n_frames"])
    batches = [_lfcc(g, cfg["bs"], cfg["n_coef"], cfg["n_frames"], cfg["p_spoof"])
               for _ in range(cfg["steps"])]
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=optimizer, loss_fn=OCSoftmaxLoss(), batches=batches,
                steps=cfg["steps"])
