"""Audio style (timbre/texture) transfer in the Ulyanov & Lebedev style: a small conv net maps
a content log-magnitude spectrogram (frequency bins as channels, frames as time) to an output
spectrogram; the loss is content MSE plus a style loss between Gram matrices of features from a
fixed random 1-D conv layer (wide filters, ReLU). Training runs under fp16 autocast.

Mechanism: the Gram matrix G = F F^T is computed with a batched matmul over 512-640 frames of
non-negative ReLU features (~5-15 each) and only then divided by the number of frames. Under fp16
autocast the matmul output is half precision, and its raw entries (sum over frames of products,
~1e5) pass 65504: G contains inf, the style loss is inf/NaN from the first step. There is no
GradScaler involved - the forward value itself overflows.

ORIGIN: None - the overflowing op is the Gram matmul inside the style loss, not a module of the
trained network (the network's own activations stay small).

Fix: compute the style features and the Gram matrix in fp32 (autocast disabled for the loss's
Gram, output cast to float) - the network still runs in fp16 autocast, nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = None
SOURCE = ("Ulyanov & Lebedev 2016 'Audio texture synthesis and style transfer' (random-weight "
          "conv features, Gram-matrix style loss); Gram/style losses overflowing in fp16 mixed "
          "precision (recurring NVIDIA Apex / PyTorch AMP forum reports: 'style loss inf with "
          "amp', fixed by computing the Gram in float32).")

N_BINS = 128


class TimbreNet(nn.Module):
    def __init__(self, ch, k):
        super().__init__()
        self.inp = nn.Conv1d(N_BINS, ch, k, padding=k // 2)
        self.mid = nn.Conv1d(ch, ch, k, padding=k // 2)
        self.outp = nn.Conv1d(ch, N_BINS, 1)

    def forward(self, x):
        h = F.relu(self.inp(x))
        h = F.relu(self.mid(h))
        return x + self.outp(h)


class StyleLoss:
    def __init__(self, n_filters, fp32_gram, style_weight):
        g = torch.Generator().manual_seed(99)
        self.w = torch.randn(n_filters, N_BINS, 11, generator=g) * (2.0 / (N_BINS * 11)) ** 0.5 * 8
        self.fp32_gram = fp32_gram
        self.style_weight = style_weight

    def gram(self, s):
        feats = F.relu(F.conv1d(s, self.w.to(s.dtype), padding=5))
        G = torch.bmm(feats, feats.transpose(1, 2))
        return G / feats.shape[-1]

    def __call__(self, out, target):
        content, style_gram = target
        c = F.mse_loss(out.float(), content)
        if self.fp32_gram:
            with torch.autocast("cpu", enabled=False):
                G = self.gram(out.float())
        else:
            G = self.gram(out)
        s = F.mse_loss(G.float(), style_gram) / style_gram.pow(2).mean()
        return c + self.style_weight * s


def _spec(g, B, T, bright):
    f = torch.arange(N_BINS).float()[None, :, None]
    env = torch.exp(-f / bright)
    act = (torch.rand(B, 1, T, generator=g) < 0.3).float() * (0.5 + torch.rand(B, 1, T, generator=g))
    mag = env * act + 0.05 * torch.rand(B, N_BINS, T, generator=g)
    return torch.log1p(20 * mag)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(14000 + seed)
    ch = [32, 48, 64][seed % 3]
    k = [3, 5, 3][seed % 3]
    T = [512, 576, 640][seed % 3]
    B = [4, 2, 3][seed % 3]
    lr = [1e-3, 5e-4, 1e-3][seed % 3]
    steps = 40
    torch.manual_seed(seed)
    model = TimbreNet(ch, k)
    loss_fn = StyleLoss(64, fp32_gram=fixed, style_weight=1.0)
    style = _spec(g, 1, T, bright=60.0)
    style_gram = loss_fn.gram(style).detach()
    batches = []
    for _ in range(steps):
        content = _spec(g, B, T, bright=12.0)
        batches.append((content, (content, style_gram.expand(B, -1, -1).contiguous())))
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=torch.float16)
