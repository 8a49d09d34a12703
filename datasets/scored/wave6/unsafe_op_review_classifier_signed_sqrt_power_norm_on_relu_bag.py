"""Review classifier with a 'bag of ReLU features' and power normalisation, a trick borrowed from
bilinear pooling / Fisher vectors: each token embedding goes through proj -> F.relu, the token
features are summed over the review, and the pooled vector is passed through a signed square root
sign(x) * sqrt(|x|) (module power_norm) before the linear classifier (RMSprop). The forward pass is
always finite, and at initialisation every pooled feature of a normal 8-60 token review is positive,
so the first steps are calm. But the derivative of sqrt at exactly 0 is inf, and the chain
rule multiplies it by sign(0) = 0 (and d|x|/dx = 0): 0 * inf = NaN. A pooled feature is exactly 0 whenever a ReLU unit is off for every
token of a review: routine for the rare one-to-three-word reviews ('Great!', 'Not worth it'), and
increasingly common on ordinary reviews as training makes some units selective. The first batch with
such a zero (step ~10-30) produces NaN gradients, RMSprop writes NaN into the weights, and every
later loss is NaN. Fix: sqrt(|x| + 1e-6) (an epsilon inside the root); nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "power_norm"
SOURCE = ("signed square-root ('power') normalisation from Perronnin et al. 2010 (improved Fisher vectors) and "
          "Lin et al. 2015 (bilinear CNN), whose implementations add an epsilon; PyTorch forum 'sqrt backward "
          "gives nan at 0'")

VOCAB, T = 400, 60


class SignedSqrt(nn.Module):
    def __init__(self, eps):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        return torch.sign(x) * torch.sqrt(torch.abs(x) + self.eps)


class BagOfReluReviews(nn.Module):
    def __init__(self, eps):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 32, padding_idx=0)
        self.proj = nn.Linear(32, 48)
        self.power_norm = SignedSqrt(eps)
        self.classifier = nn.Linear(48, 2)

    def forward(self, ids, mask):
        h = F.relu(self.proj(self.embed(ids))) * mask.unsqueeze(-1).float()
        pooled = h.sum(dim=1)
        return self.classifier(self.power_norm(pooled))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    polarity = torch.randn(VOCAB, generator=g) * (torch.rand(VOCAB, generator=g) < 0.15)

    def sample(B):
        lens = torch.randint(8, T + 1, (B,), generator=g)
        short = torch.rand(B, generator=g) < 0.002
        lens = torch.where(short, torch.randint(1, 4, (B,), generator=g), lens)
        ids = torch.randint(1, VOCAB, (B, T), generator=g)
        mask = torch.arange(T)[None] < lens[:, None]
        ids = ids * mask
        score = (polarity[ids] * mask).sum(1)
        y = (score + 0.3 * torch.randn(B, generator=g) > 0).long()
        return (ids, mask), y

    steps = 200
    batches = [sample(32) for _ in range(steps)]
    model = BagOfReluReviews(eps=1e-6 if fixed else 0.0)
    opt = torch.optim.RMSprop(model.parameters(), lr=3e-3)
    return dict(model=model, optimizer=opt, loss_fn=lambda out, y: F.cross_entropy(out, y),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
