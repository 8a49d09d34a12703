"""Touch input: estimate the finger's pitch and yaw from the raw capacitive image of a touchscreen
(Mayer et al., CHI 2017 style). A small ReLU CNN (conv-ReLU-pool blocks, then a ReLU MLP head)
reads the 16x28 mutual-capacitance frame around the touch (non-negative sensor counts scaled to
[0, ~1]) and regresses standardised (pitch, yaw), Huber loss, Adam.

Mechanism: the optimiser was switched from the reference SGD to Adam but kept the SGD learning
rate (0.05-0.1). Adam's first updates are ~lr * sign(g) for every parameter, 2-5x the initial scale
of the dense-layer weights (fan-in ~1000, weights ~0.03). Because the capacitance images are
non-negative, all incoming weights of a unit move in the sign of that unit's error, so within the
first few steps nearly all ReLU units of the dense head and of the second conv block are pushed to
negative pre-activations for every frame; they then output exactly 0 with zero gradient, and the
survivors cannot carry the task. The prediction collapses to the output bias and the loss stays at
the variance-level Huber loss of the targets: a stall with finite values.

ORIGIN: "features.4", the ReLU of the second conv block: it is the first layer whose units are
all dead (within ~5 steps for every seed), which cuts the gradient path to the first conv block;
the dense-head ReLUs die almost as fast but keep a few survivors.

Fix: Adam at its usual lr 1e-3; model, data and steps unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "features.4"
SOURCE = ("Mayer, Le, Henze, CHI 2017 'Estimating the finger orientation on capacitive touchscreens "
          "using convolutional neural networks'; dying ReLUs when an SGD learning rate is reused with "
          "Adam (sign-like first steps of size lr), CS231n notes on dead ReLUs")

H, W = 16, 28


class FingerOrientationNet(nn.Module):
    def __init__(self, c, hidden):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, c, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(c, 2 * c, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.head = nn.Sequential(nn.Linear(2 * c * (H // 4) * (W // 4), hidden), nn.ReLU(),
                                  nn.Linear(hidden, hidden // 2), nn.ReLU(),
                                  nn.Linear(hidden // 2, 2))

    def forward(self, x):
        return self.head(self.features(x).flatten(1))


def _frames(g, n):
    pitch = 15 + 75 * torch.rand(n, generator=g)        # degrees from the screen plane
    yaw = -90 + 180 * torch.rand(n, generator=g)         # degrees
    cy = 6 + 4 * torch.rand(n, generator=g); cx = 10 + 8 * torch.rand(n, generator=g)
    ys = torch.arange(H).float().view(1, H, 1); xs = torch.arange(W).float().view(1, 1, W)
    # the contact blob elongates along the yaw direction as the finger flattens (low pitch)
    el = 1.0 + 2.5 * torch.cos(torch.deg2rad(pitch))
    a = torch.deg2rad(yaw)
    dx = xs - cx.view(n, 1, 1); dy = ys - cy.view(n, 1, 1)
    u = dx * torch.cos(a).view(n, 1, 1) + dy * torch.sin(a).view(n, 1, 1)
    v = -dx * torch.sin(a).view(n, 1, 1) + dy * torch.cos(a).view(n, 1, 1)
    blob = torch.exp(-(u ** 2) / (2 * (1.3 * el.view(n, 1, 1)) ** 2) - v ** 2 / (2 * 1.3 ** 2))
    # the finger body hovering above the screen adds a weak tail behind the contact point
    tail = 0.25 * torch.exp(-((u + 3 * el.view(n, 1, 1)) ** 2) / 18 - v ** 2 / 4) * (u < 0)
    img = blob + tail + 0.03 * torch.rand(n, H, W, generator=g)  # sensor counts, >= 0
    tgt = torch.stack([(pitch - 52.5) / 21.6, yaw / 52.0], 1)
    return img.unsqueeze(1), tgt


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    c = [8, 12, 16][seed % 3]
    hidden = [128, 96, 160][seed % 3]
    bs = [32, 24, 40][seed % 3]
    steps = 160
    lr = 1e-3 if fixed else [5e-2, 1e-1, 7e-2][seed % 3]
    x, y = _frames(g, steps * bs)
    torch.manual_seed(seed)
    model = FingerOrientationNet(c, hidden)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    return {"model": model, "optimizer": opt, "loss_fn": nn.HuberLoss(delta=1.0), "batches": batches,
            "steps": steps}
