"""Brain-alignment training: a small CNN is trained so that its penultimate representation of a
batch of images matches the representational geometry of a recorded V4/IT-like population
(spike counts summed over a 300 ms window), with a linear-CKA (HSIC) loss (Kornblith et al. 2019)
plus a category cross-entropy. The whole forward pass and loss run under fp16 autocast.

Mechanism: the CKA is written with batch Gram matrices, K = X X^T and L = Y Y^T, and
HSIC = sum(Kc * Lc). Autocast runs the matmuls in float16. The neural responses are raw spike
counts for 160-256 neurons (tens of spikes each), so the entries of L = Y Y^T are ~1e5, beyond
float16's 65504: L contains inf from the very first step, the centred Gram has inf - inf = NaN and
the loss is NaN. (A GradScaler could not help: the overflow is in the forward pass.)

ORIGIN = None: the overflow happens in the loss's Gram-matrix matmul on the targets, not inside
any module of the model.

Fix: compute the CKA in float32 (autocast disabled and .float() inside the loss), keeping fp16
autocast for the CNN. Same model, data, optimiser and steps.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = None
SOURCE = ("Kornblith et al. 2019 linear CKA; brain-alignment / neural-similarity regularised CNNs "
          "(Li et al. 2019 'Learning from brains how to regularize machines', Federer et al. 2020); "
          "reports of CKA/HSIC returning inf/NaN under torch.autocast float16")


class CNN(nn.Module):
    def __init__(self, ch, feat, n_cls):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, ch, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(ch, 2 * ch, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(2),
            nn.Flatten(), nn.Linear(8 * ch, feat), nn.ReLU())
        self.head = nn.Linear(feat, n_cls)

    def forward(self, x):
        f = self.features(x)
        return f, self.head(f)


def gram_centered(Z):
    K = Z @ Z.T
    n = K.shape[0]
    H = torch.eye(n, dtype=K.dtype) - 1.0 / n
    return H @ K @ H


def linear_cka(X, Y):
    Kc, Lc = gram_centered(X), gram_centered(Y)
    hsic = (Kc * Lc).sum()
    return hsic / ((Kc * Kc).sum().sqrt() * (Lc * Lc).sum().sqrt())


def make_loss(fp32_cka, w):
    def loss_fn(out, target):
        f, logits = out
        counts, labels = target
        if fp32_cka:
            with torch.autocast("cpu", enabled=False):
                cka = linear_cka(f.float(), counts.float())
        else:
            cka = linear_cka(f, counts)
        return F.cross_entropy(logits, labels) + w * (1.0 - cka)
    return loss_fn


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(14000 + seed)
    n_neur = [192, 160, 256][seed % 3]
    ch = [8, 12, 8][seed % 3]
    bs = [32, 48, 40][seed % 3]
    lr = [4e-3, 3e-3, 4e-3][seed % 3]
    n_cls, size, steps = 6, 16, 150
    protos = torch.randn(n_cls, 1, size, size, generator=g)
    tuning = torch.rand(n_cls, n_neur, generator=g) * 40 + 5  # mean spikes per window
    batches = []
    for _ in range(steps):
        c = torch.randint(0, n_cls, (bs,), generator=g)
        x = protos[c] + 0.8 * torch.randn(bs, 1, size, size, generator=g)
        counts = torch.poisson(tuning[c], generator=g)
        batches.append((x, (counts, c)))
    torch.manual_seed(seed)
    model = CNN(ch, 64, n_cls)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=make_loss(fixed, 1.0), batches=batches,
                steps=steps, amp_dtype=torch.float16, scaler=None)
