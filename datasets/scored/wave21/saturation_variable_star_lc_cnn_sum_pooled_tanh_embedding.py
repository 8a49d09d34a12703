"""Variable-star light-curve classifier: 1D CNN feature extractor, SUM pooling over time, then a tanh embedding layer.

Mechanism: the user pools the per-cadence CNN features with `.sum(dim=-1)` (copied from a
set-function model) instead of a mean. With 300-600 phase-folded cadences the pooled features are
hundreds of times larger than the per-cadence ones, so the pre-activations of the nn.Tanh
embedding are ~+-50-200: every tanh unit sits at +-1, its derivative is ~0, and almost no
gradient reaches the head's input or the CNN. Cross-entropy stays at chance level (stall).

ORIGIN: `embed_act` (the tanh that saturates).
Fix: mean pooling over time (pre-activations of order 1); nothing else changed.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "embed_act"
SOURCE = "Variable-star classification from folded light curves with 1D CNNs (e.g. Aguirre et al. 2019 / Jamal & Bloom 2020 benchmarks); sum-vs-mean pooling into saturating tanh"


class LCClassifier(nn.Module):
    def __init__(self, c, d, ncls, pool):
        super().__init__()
        self.pool = pool
        self.cnn = nn.Sequential(nn.Conv1d(2, c, 7, padding=3), nn.ReLU(), nn.Conv1d(c, c, 7, padding=3), nn.ReLU())
        self.embed = nn.Linear(c, d)
        self.embed_act = nn.Tanh()
        self.head = nn.Linear(d, ncls)

    def forward(self, x):
        h = self.cnn(x)
        h = h.sum(-1) if self.pool == "sum" else h.mean(-1)
        return self.head(self.embed_act(self.embed(h)))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    c = [16, 24, 12][seed % 3]
    d = [32, 16, 24][seed % 3]
    T = [400, 300, 600][seed % 3]
    bs = [32, 24, 32][seed % 3]
    steps = [80, 70, 60][seed % 3]
    lr = [0.05, 0.08, 0.05][seed % 3]
    ncls = 3  # RR Lyrae, eclipsing binary, Cepheid-like
    ph = torch.linspace(0, 1, T)[None]
    batches = []
    for _ in range(steps):
        y = torch.randint(0, ncls, (bs,), generator=g)
        amp = 0.5 + torch.rand(bs, 1, generator=g)
        saw = 1 - ((ph + 0.1 * torch.rand(bs, 1, generator=g)) % 1) * 2         # RR Lyrae sawtooth
        ecl = -amp * (torch.exp(-((ph - 0.25) / 0.03) ** 2) + 0.5 * torch.exp(-((ph - 0.75) / 0.03) ** 2))
        sin = torch.sin(2 * torch.pi * ph + torch.rand(bs, 1, generator=g))
        f = torch.where(y[:, None] == 0, amp * saw, torch.where(y[:, None] == 1, ecl, amp * sin))
        f = f + 0.2 * torch.randn(bs, T, generator=g)
        x = torch.stack([f, ph.expand(bs, T)], 1)
        batches.append((x, y))
    model = LCClassifier(c, d, ncls, "mean" if fixed else "sum")
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=steps)
