"""DCASE-baseline-style acoustic scene classifier (two Conv2d blocks with large kernels
and max-pooling on log-mel patches, then a dense ReLU layer and a softmax over scenes).

Bug: the published recipe has BatchNorm after every conv and trains with momentum SGD
at lr 0.1.  The user removed the BatchNorm layers (to make the model easy to quantise
for an embedded target) but kept the recipe's learning rate.  Without BN the first
updates are far too large for the raw conv stack: within 10-40 steps the second conv's
filters and biases are thrown so far negative that its ReLU feature maps are zero for
every patch (all channels, all positions).  No gradient flows below the dead layer again, the classifier only
adjusts its output bias, and the loss sits at ~ln(n_scenes) for the rest of training.

ORIGIN: `features.4` -- the ReLU after the second conv: its channels die completely
(the first conv's ReLU stays alive but receives no gradient once everything above it
is zero; the dense ReLU then only sees zeros and dies too).

Fix: an SGD learning rate suited to the BN-free network (~0.005-0.01).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "features.4"
SOURCE = ("DCASE 2017-2019 task 1 acoustic scene classification baselines (Mesaros et al.); "
          "'all activations zero / loss stuck at log(C)' reports after removing BatchNorm but "
          "keeping the BN recipe's SGD learning rate")


class SceneCNN(nn.Module):
    def __init__(self, n_mels, frames, c1, c2, k, hidden, n_classes):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, c1, k, padding=k // 2),
            nn.ReLU(),
            nn.MaxPool2d((4, 4)),
            nn.Conv2d(c1, c2, k, padding=k // 2),
            nn.ReLU(),
            nn.MaxPool2d((2, 4)),
        )
        flat = c2 * (n_mels // 8) * (frames // 16)
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(flat, hidden), nn.ReLU(),
                                        nn.Linear(hidden, n_classes))

    def forward(self, x):
        return self.classifier(self.features(x))


def _patches(g, n, n_mels, frames, n_classes, profiles):
    y = torch.randint(0, n_classes, (n,), generator=g)
    spec = profiles[y][:, :, None].expand(n, n_mels, frames).clone()
    # scene-specific temporal events (e.g. passing cars, birds, footsteps)
    t = torch.arange(frames).float()
    rate = 0.1 + 0.08 * (y % 4).float()
    events = torch.sin(2 * math.pi * rate[:, None] * t + 6.28 * torch.rand(n, 1, generator=g)).clamp(min=0)
    band = ((torch.arange(n_mels)[None, :] // (n_mels // 4)) == (y[:, None] % 4)).float()
    spec = spec + 1.5 * band[:, :, None] * events[:, None, :]
    spec = spec + 0.7 * torch.randn(n, n_mels, frames, generator=g)
    spec = (spec - spec.mean()) / spec.std()
    return spec[:, None], y


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(n_mels=40, frames=64, c1=16, c2=32, k=7, hidden=100, bs=32, steps=70),
           dict(n_mels=32, frames=64, c1=12, c2=24, k=5, hidden=64, bs=24, steps=80),
           dict(n_mels=40, frames=48, c1=16, c2=16, k=7, hidden=100, bs=48, steps=60)][seed % 3]
    n_classes = 10
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(31 + seed)
    profiles = torch.randn(n_classes, cfg["n_mels"], generator=g).cumsum(1) * 0.3
    model = SceneCNN(cfg["n_mels"], cfg["frames"], cfg["c1"], cfg["c2"], cfg["k"], cfg["hidden"], n_classes)
    lr = 0.01 if fixed else 0.1  # 0.1 = the BatchNorm recipe's lr
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=1e-4)
    batches = [_patches(g, cfg["bs"], cfg["n_mels"], cfg["frames"], n_classes, profiles)
               for _ in range(cfg["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=cfg["steps"])
