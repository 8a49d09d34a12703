"""Human-activity recognition from a wrist IMU window (6 channels x 128 samples at 50 Hz) with
a small 1-D CNN, global pooling over time, a tanh embedding layer (kept bounded so it can be
int8-quantised for the watch) and a linear classifier, trained with momentum SGD.

Mechanism: the global pooling was written as `h.sum(-1)` (the TFLite-friendly ReduceSum the
author had at hand) instead of a mean over the 112-160 time steps. The pooled ReLU
features are all non-negative and ~T times larger than a mean: ~20-80 per channel. The embedding
Linear therefore feeds tanh pre-activations of tens, every tanh unit sits at +-1 for every
window, its derivative (1 - tanh^2) is ~1e-10, and nothing below the embedding receives
gradient. The classifier only sees an (almost) input-independent +-1 code, so the loss stays at
about ln(number of activities).

ORIGIN: "embed_act", the tanh whose units saturate (the sum-pooled input makes its
pre-activations huge).

Fix: mean pooling over time (smaller pre-activations); the same model, data and optimiser.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "embed_act"
SOURCE = ("sum- vs mean-pooling before a bounded tanh embedding in HAR CNNs (UCI-HAR / "
          "WISDM style 1-D CNN), tanh saturation and vanishing gradients (LeCun et al. 1998 "
          "'Efficient BackProp'; Glorot & Bengio 2010)")


class HARNet(nn.Module):
    def __init__(self, ch, emb, n_cls, mean_pool):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv1d(6, ch, 7, padding=3), nn.ReLU(),
            nn.Conv1d(ch, ch, 5, padding=2), nn.ReLU(),
        )
        self.mean_pool = mean_pool
        self.embed = nn.Linear(ch, emb)
        self.embed_act = nn.Tanh()
        self.classifier = nn.Linear(emb, n_cls)

    def forward(self, x):
        h = self.conv(x)
        h = h.mean(-1) if self.mean_pool else h.sum(-1)
        return self.classifier(self.embed_act(self.embed(h)))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    ch = [32, 40, 48][seed % 3]
    emb = [32, 24, 16][seed % 3]
    T = [128, 160, 112][seed % 3]
    lr = [0.02, 0.02, 0.025][seed % 3]
    bs = [32, 48, 24][seed % 3]
    steps = 150
    n_cls = 6
    model = HARNet(ch, emb, n_cls, mean_pool=fixed)
    # activities: class-specific dominant frequency / axis energy (walk, run, stairs, ...)
    t = torch.arange(T).float() / 50.0
    freq = torch.rand(n_cls, 6, generator=g) * 3 + 0.5
    ampl = torch.rand(n_cls, 6, generator=g) * 1.5 + 0.2
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_cls, (bs,), generator=g)
        ph = torch.rand(bs, 6, 1, generator=g) * 6.28
        x = ampl[y][..., None] * torch.sin(2 * 3.1416 * freq[y][..., None] * t + ph)
        x = x + 0.3 * torch.randn(bs, 6, T, generator=g)
        batches.append((x, y))
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=F.cross_entropy, batches=batches, steps=steps)
