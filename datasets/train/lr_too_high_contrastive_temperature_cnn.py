"""CLIP/SimCLR-style contrastive CNN encoder with a learnable temperature parameterised as
logit_scale = exp(t) (t initialised to log(1/0.07), no clamp), the InfoNCE log-softmax written
by hand as s - log(sum(exp(s))), trained with Adam at a learning rate far too high for it. The
positives are easy, so the loss keeps rewarding a larger scale: Adam moves t by ~lr every step,
exp(t) and the similarity logits grow steadily while the loss falls, until mid-run a logit
passes ~88, exp() overflows to inf and the loss turns inf/NaN.
fixed=True: only the Adam learning rate is lowered to a sane value.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("CLIP (Radford et al. 2021) learnable temperature logit_scale = exp(t), which the "
          "authors clip at 100 to prevent training instability; logit growth under a too-high "
          "Adam lr as in Wortsman et al. 2023 'Small-scale proxies for large-scale Transformer "
          "training instabilities'; naive (non-logsumexp) log-softmax in the contrastive head")

SIZE = 12


class Encoder(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.proj = nn.Linear(32, dim)

    def forward(self, x):
        return F.normalize(self.proj(self.conv(x)), dim=-1)


class ContrastiveHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.t = nn.Parameter(torch.tensor(math.log(1 / 0.07)))   # CLIP init, no clamp

    def forward(self, za, zb):
        s = self.t.exp() * za @ zb.t()                              # (B, B) similarity logits
        return s - torch.log(torch.exp(s).sum(-1, keepdim=True))   # hand-written log-softmax


class ContrastiveCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.head = ContrastiveHead()

    def forward(self, xa, xb):
        return self.head(self.encoder(xa), self.encoder(xb))


def _batches(g, steps, B):
    out = []
    for _ in range(steps):
        base = torch.randn(B, 1, SIZE // 3, SIZE // 3, generator=g)
        img = F.interpolate(base, size=(SIZE, SIZE), mode="bilinear", align_corners=False)
        xa = img + 0.3 * torch.randn(B, 1, SIZE, SIZE, generator=g)
        xb = img + 0.3 * torch.randn(B, 1, SIZE, SIZE, generator=g)
        out.append(((xa, xb), torch.arange(B)))
    return out


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(5000 + seed)
    steps = 250
    batches = _batches(g, steps, 32)
    model = ContrastiveCNN()
    lr = 1e-3 if fixed else 3e-2
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=F.nll_loss, batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
