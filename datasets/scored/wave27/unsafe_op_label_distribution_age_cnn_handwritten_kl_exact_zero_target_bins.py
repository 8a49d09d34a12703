"""Apparent-age estimation with label distribution learning (DLDL, Gao et al.): a small CNN
predicts a softmax over 81 age bins and is trained with a hand-written KL divergence
``sum t * (log t - log p)`` to a discretised Gaussian label distribution whose width sigma
comes from the annotators' disagreement.

Mechanism: for crowd-labelled faces sigma is 6-10 years and every bin of the Gaussian is a
small positive float32 number, so ``t * log t`` is finite and training is calm. A subset of
the images carries a verified date of birth; for them the pipeline sets sigma = 1. For those
rows the Gaussian ``exp(-(k - age)^2 / 2)`` underflows to exactly 0.0 in float32 for bins more
than ~14 years away, ``log t`` is -inf and ``0 * -inf`` is NaN: the first batch that contains
such a row (its position varies with the seed) turns the loss, and all weights, into NaN.

ORIGIN: None: the NaN is created inside the loss (log of an exact-zero target probability),
not in any module of the network; every module is finite up to that point.

Fix: the 0 log 0 = 0 convention, i.e. ``torch.xlogy(t, t) - t * log p`` (what ``F.kl_div``
does); model, data, optimiser and steps unchanged.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = None
SOURCE = ("Gao et al. 2017 'Deep Label Distribution Learning with Label Ambiguity' (DLDL) and mean-variance "
          "age losses; hand-written KL 'loss becomes nan when target distribution has zeros' (PyTorch forums, "
          "StackOverflow 'KL divergence nan 0*log(0)')")

N_BINS = 81   # ages 0..80


class AgeCNN(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, ch, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(ch, 2 * ch, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(2 * ch * 16, 128), nn.ReLU(), nn.Linear(128, N_BINS))

    def forward(self, x):
        return self.head(self.features(x))


def make_loss(safe):
    def kl_loss(logits, target):
        logp = F.log_softmax(logits, dim=1)
        if safe:
            kl = torch.xlogy(target, target) - target * logp
        else:
            kl = target * (target.log() - logp)
        return kl.sum(1).mean()
    return kl_loss


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    ch = [16, 12, 20][seed % 3]
    batch = [32, 48, 24][seed % 3]
    lr = [1e-3, 2e-3, 1.5e-3][seed % 3]
    first_verified = [40, 65, 25][seed % 3]     # step of the first batch with verified-DOB faces
    steps = 120

    torch.manual_seed(seed)
    model = AgeCNN(ch)

    bins = torch.arange(N_BINS).float()
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, 16), torch.linspace(-1, 1, 16), indexing="ij")
    batches = []
    for step in range(steps):
        age = 5 + 70 * torch.rand(batch, generator=g)
        # "face" images: wrinkle texture frequency and contrast vary with age
        freq = 1.0 + age[:, None, None] / 12.0
        img = torch.sin(freq * xx * 3.0) * torch.cos(freq * yy * 2.0) * (0.3 + age[:, None, None] / 80.0)
        img = img + 0.3 * torch.randn(batch, 16, 16, generator=g)
        sigma = 6.0 + 4.0 * torch.rand(batch, generator=g)          # annotator disagreement
        if step >= first_verified and step % 7 == first_verified % 7:
            sigma[: batch // 4] = 1.0                                # verified date of birth
        t = torch.exp(-(bins[None] - age[:, None]) ** 2 / (2 * sigma[:, None] ** 2))
        t = t / t.sum(1, keepdim=True)
        batches.append((img.unsqueeze(1), t))

    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return {"model": model, "optimizer": opt, "loss_fn": make_loss(safe=fixed), "batches": batches,
            "steps": steps}
