"""LRCN (Donahue et al., CVPR 2015): a per-frame CNN encoder (conv-ReLU, BN-free, as in the
AlexNet-style LRCN encoder), spatially pooled to one feature vector per frame, fed to an
LSTM over time; the last hidden state is classified. Trained with Adam on short clips.

Mechanism: the frame features are pooled with ``feat.sum(dim=(2, 3))`` ("sum pooling keeps
more signal") instead of a mean over the 12x12 positions. The ReLU features of a natural
frame (bright scene background) are non-negative with a large common mean, so every frame
vector is ~144x larger than a mean-pooled one (entries ~50-300) and dominated by the same
direction for every clip. The LSTM's input projection turns that into gate pre-activations
of typically +-50..200 (80-95% of them beyond +-17): most input/forget/output gates sit at
(numerically exactly) 0 or 1 and the candidate tanh at +-1, with nearly the SAME pattern for
every clip. The hidden state carries almost no information about the input, the gradients
through the saturated gates vanish, and the loss stays at log(n_classes).

ORIGIN: ``lstm`` -- the LSTM gate and cell nonlinearities are the saturating units.

Fix: average pooling (``feat.mean(dim=(2, 3))`` / AdaptiveAvgPool2d(1)), which keeps the gate
pre-activations O(1); nothing else changes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "saturation"
ORIGIN = "lstm"
SOURCE = ('LRCN (Donahue et al., CVPR 2015) CNN+LSTM video classifiers; known pattern: '
          'unnormalised (sum-pooled) CNN features saturate the LSTM gates, outputs '
          'identical for all clips, loss stuck at log(C)')


class LRCN(nn.Module):
    def __init__(self, widths, hidden, n_classes, sum_pool):
        super().__init__()
        layers, c = [], 1
        for i, w in enumerate(widths):
            layers += [nn.Conv2d(c, w, 3, padding=1), nn.ReLU(inplace=True)]
            if i == 0:
                layers.append(nn.MaxPool2d(2))
            c = w
        self.encoder = nn.Sequential(*layers)
        for m in self.encoder:
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
                nn.init.zeros_(m.bias)
        self.lstm = nn.LSTM(c, hidden, batch_first=True)
        self.classifier = nn.Linear(hidden, n_classes)
        self.sum_pool = sum_pool

    def forward(self, video):                              # (B, T, 1, H, W)
        b, t = video.shape[:2]
        feat = self.encoder(video.flatten(0, 1))
        feat = feat.sum(dim=(2, 3)) if self.sum_pool else feat.mean(dim=(2, 3))
        out, _ = self.lstm(feat.view(b, t, -1))
        return self.classifier(out[:, -1])


def make_batch(g, bs, T, size, n_classes):
    """Synthetic actions: an actor (bright bar) that swings around a class-specific
    orientation with a class-specific motion (sway / spin / grow / pulse), on a static
    per-clip scene background."""
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, size), torch.linspace(-1, 1, size), indexing="ij")
    scene = F.interpolate(torch.rand(bs, 1, 4, 4, generator=g), size=(size, size), mode="bilinear",
                          align_corners=False)
    video = 0.3 + 0.4 * scene.unsqueeze(1) + 0.05 * torch.randn(bs, T, 1, size, size, generator=g)
    labels = torch.randint(0, n_classes, (bs,), generator=g)
    for i in range(bs):
        c = int(labels[i])
        cy, cx = 0.3 * (torch.rand(2, generator=g) - 0.5)
        base = c * 3.1416 / n_classes + 0.15 * float(torch.randn(1, generator=g))
        for t in range(T):
            phase = t / max(T - 1, 1)
            ang = base + (0.3 * (phase - 0.5) if c % 2 == 0 else -0.3 * (phase - 0.5))
            length = 0.35 + (0.4 * phase if c % 3 == 0 else 0.2)
            thick = 0.1 + 0.05 * (c % 2)
            ca, sa = torch.cos(torch.tensor(ang)), torch.sin(torch.tensor(ang))
            u = (xx - cx) * ca + (yy - cy) * sa
            v = -(xx - cx) * sa + (yy - cy) * ca
            bar = ((u.abs() < length) & (v.abs() < thick)).float()
            video[i, t, 0] += 1.2 * bar
    return video, labels


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [
        dict(widths=(8, 16, 32), hidden=48, lr=2e-3, bs=16, T=6, size=24, steps=90),
        dict(widths=(12, 24, 32), hidden=64, lr=1.5e-3, bs=12, T=6, size=24, steps=100),
        dict(widths=(8, 16, 24, 32), hidden=48, lr=2.5e-3, bs=16, T=5, size=24, steps=90),
    ][seed % 3]
    torch.manual_seed(seed)
    n_classes = 5
    model = LRCN(cfg["widths"], cfg["hidden"], n_classes, sum_pool=not fixed)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    g = torch.Generator().manual_seed(810 + seed)
    batches = [make_batch(g, cfg["bs"], cfg["T"], cfg["size"], n_classes) for _ in range(cfg["steps"])]
    return dict(model=model, optimizer=optimizer, loss_fn=nn.CrossEntropyLoss(), batches=batches, steps=cfg["steps"])
