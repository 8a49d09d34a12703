"""Spoken-digit recogniser (FSDD-style) on MFCC images: a small plain CNN -- three
Conv2d+ReLU stages with max-pooling, a dense ReLU layer and a softmax over 10 digits.
No batch normalisation, no residual connections.  Trained with Nesterov SGD.

Bug: the optimiser settings were copied from the torchvision ResNet recipe (lr 0.1 per
32 examples, linearly scaled with the batch size, momentum 0.9, nesterov) which relies on BatchNorm and residual paths to tolerate such a
step size.  In this plain BN-free CNN the first steps overshoot; the momentum-amplified
updates drive the third conv stage's filters and biases negative for every utterance, it
outputs exact zeros, nothing below it receives a gradient and nothing above it a
non-zero input.  The logits reduce to the output bias and the cross entropy settles
at ~ln(10) for the rest of the run.

ORIGIN: `features.7` -- the ReLU of the third conv stage, which goes completely silent
first (20-40 steps in); the dense ReLU above it dies next, having only zeros as input.

Fix: a learning rate suited to a BN-free plain CNN (4x smaller, same linear scaling).
"""
import math
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "features.7"
SOURCE = ("Free Spoken Digit Dataset MFCC-CNN tutorials; torchvision ResNet training recipe "
          "(SGD lr 0.1, momentum 0.9, nesterov) reused for a BN-free plain CNN; dying-ReLU "
          "'stuck at 2.30 loss' reports")


class DigitCNN(nn.Module):
    def __init__(self, n_mfcc, frames, c, hidden):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, c, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(c, 2 * c, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(2 * c, 2 * c, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(2 * c * (n_mfcc // 8) * (frames // 8), hidden),
                                        nn.ReLU(), nn.Linear(hidden, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


def _utts(g, n, n_mfcc, frames, protos):
    y = torch.randint(0, 10, (n,), generator=g)
    shift = torch.randint(-3, 4, (n,), generator=g)
    x = torch.stack([torch.roll(protos[int(c)], int(s), dims=1) for c, s in zip(y, shift)])
    x = x * (0.8 + 0.4 * torch.rand(n, 1, 1, generator=g)) + 0.6 * torch.randn(n, n_mfcc, frames, generator=g)
    x = (x - x.mean(dim=2, keepdim=True)) / (x.std(dim=2, keepdim=True) + 1e-5)  # per-utterance CMVN
    return x[:, None], y


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(n_mfcc=16, frames=48, c=16, hidden=64, bs=48, steps=80),
           dict(n_mfcc=24, frames=40, c=12, hidden=48, bs=24, steps=90),
           dict(n_mfcc=16, frames=64, c=16, hidden=96, bs=32, steps=70)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(3030 + seed)
    # digit "templates": formant-like smooth trajectories in the cepstral domain
    protos = torch.randn(10, cfg["n_mfcc"], cfg["frames"] // 8, generator=g)
    protos = torch.nn.functional.interpolate(protos[:, None], size=(cfg["n_mfcc"], cfg["frames"]),
                                             mode="bilinear", align_corners=False)[:, 0] * 1.5
    model = DigitCNN(cfg["n_mfcc"], cfg["frames"], cfg["c"], cfg["hidden"])
    # recipe: lr 0.1 at batch 32, scaled linearly with the batch size
    lr = 0.1 * cfg["bs"] / 32
    opt = torch.optim.SGD(model.parameters(), lr=lr / 4 if fixed else lr, momentum=0.9, nesterov=True,
                          weight_decay=1e-4)
    batches = [_utts(g, cfg["bs"], cfg["n_mfcc"], cfg["frames"], protos) for _ in range(cfg["steps"])]
    return dict(model=model, optimizer=opt, loss_fn=nn.CrossEntropyLoss(), batches=batches,
                steps=cfg["steps"])
