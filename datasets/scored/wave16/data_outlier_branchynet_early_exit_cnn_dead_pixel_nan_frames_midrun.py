"""BranchyNet-style early-exit CNN hit by one batch of frames with NaN dead-pixel fill.

Mechanism: a small early-exit classifier (BranchyNet: a conv trunk with two side exits
and a final exit, trained on the weighted sum of the three exits' cross-entropies, as is
done so the early exits can be used for on-device early termination) is trained on
standardised 16x16 sensor frames.  The frames come from a camera pipeline in which
defective pixels of one capture session were written as NaN (the vendor's "invalid
pixel" fill) and the session slipped into the training shards; every other batch is
clean.  At the step that batch is drawn, the NaN pixels propagate through the first
convolution into BatchNorm's batch statistics, every exit's logits and the loss become
NaN, the backward pass writes NaN into every parameter (and the BN running stats) and the
run never recovers.

ORIGIN: None.  Nothing in the model is wrong; the failure is a property of one batch of
data (it enters at the input and contaminates all modules at once).

Fix: filter the corrupt rows out of that batch (keep only frames with finite pixels),
as a data-validation step would; all other batches are unchanged.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("BranchyNet: Fast Inference via Early Exiting (Teerapittayanon et al. 2016); common report: "
          "'loss becomes nan suddenly mid-epoch' traced to NaN-filled invalid pixels in a few images")


def conv_bn(cin, cout, stride):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())


class ExitHead(nn.Module):
    def __init__(self, cin, n_cls, hidden):
        super().__init__()
        self.conv = nn.Conv2d(cin, hidden, 3, 1, 1)
        self.fc = nn.Linear(hidden, n_cls)

    def forward(self, x):
        x = F.relu(self.conv(x))
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


class BranchyNet(nn.Module):
    def __init__(self, w, n_cls):
        super().__init__()
        self.stage1 = conv_bn(1, w, 1)
        self.exit1 = ExitHead(w, n_cls, w)
        self.stage2 = nn.Sequential(conv_bn(w, 2 * w, 2), conv_bn(2 * w, 2 * w, 1))
        self.exit2 = ExitHead(2 * w, n_cls, w)
        self.stage3 = nn.Sequential(conv_bn(2 * w, 4 * w, 2), conv_bn(4 * w, 4 * w, 1))
        self.final = nn.Linear(4 * w, n_cls)

    def forward(self, x):
        h1 = self.stage1(x)
        h2 = self.stage2(h1)
        h3 = self.stage3(h2)
        return self.exit1(h1), self.exit2(h2), self.final(F.adaptive_avg_pool2d(h3, 1).flatten(1))


class MultiExitLoss(nn.Module):
    def __init__(self, weights):
        super().__init__()
        self.weights = weights
        self.ce = nn.CrossEntropyLoss()

    def forward(self, outs, y):
        return sum(w * self.ce(o, y) for w, o in zip(self.weights, outs))


def make_frames(y, g, n_cls, size=16):
    """Oriented gratings with class-dependent angle and random phase, plus sensor noise."""
    b = y.shape[0]
    coords = torch.linspace(-1, 1, size)
    yy, xx = torch.meshgrid(coords, coords, indexing="ij")
    ang = y.float() * math.pi / n_cls + 0.15 * torch.randn(b, generator=g)
    phase = torch.rand(b, generator=g) * 2 * math.pi
    proj = xx[None] * torch.cos(ang)[:, None, None] + yy[None] * torch.sin(ang)[:, None, None]
    img = torch.sin(5.0 * proj + phase[:, None, None]) + 0.8 * torch.randn(b, size, size, generator=g)
    return (img / img.std()).unsqueeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(w=8, bs=32, steps=90, bad=37, opt="adam", lr=2e-3),
           dict(w=12, bs=48, steps=80, bad=52, opt="sgd", lr=0.05),
           dict(w=6, bs=24, steps=110, bad=71, opt="adam", lr=3e-3)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(77 + seed)
    n_cls = 6
    batches = []
    for step in range(cfg["steps"]):
        y = torch.randint(0, n_cls, (cfg["bs"],), generator=g)
        x = make_frames(y, g, n_cls)
        if step == cfg["bad"]:
            # capture session with NaN-filled dead pixels: a third of the frames, ~2% of pixels
            rows = torch.arange(cfg["bs"]) % 3 == 0
            dead = torch.rand(x.shape, generator=g) < 0.02
            x[rows] = torch.where(dead[rows], torch.full_like(x[rows], float("nan")), x[rows])
            if fixed:
                keep = torch.isfinite(x).flatten(1).all(1)
                x, y = x[keep], y[keep]
        batches.append((x, y))
    model = BranchyNet(cfg["w"], n_cls)
    if cfg["opt"] == "adam":
        opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    else:
        opt = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9, weight_decay=5e-4)
    return dict(model=model, optimizer=opt, loss_fn=MultiExitLoss([0.5, 0.5, 1.0]), batches=batches,
                steps=cfg["steps"])
