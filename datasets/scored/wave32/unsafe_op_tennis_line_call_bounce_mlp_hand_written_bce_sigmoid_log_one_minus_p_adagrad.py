"""Electronic line calling: is the ball IN or OUT? An MLP takes the triangulated bounce estimate
(position relative to the nearest line, contact-ellipse size, ball speed and spin at impact,
camera residuals) and outputs an IN probability through a sigmoid; the loss is a hand-written
binary cross-entropy  -[y log p + (1 - y) log(1 - p)];  Adagrad.

Mechanism: the task is almost separable (the signed distance to the line decides most calls),
so the logits keep growing while the loss falls smoothly - a calm run.  Once a logit passes
~17, sigmoid(z) rounds to exactly 1.0 in float32; log(1 - p) = log(0) = -inf, and even for a
correctly labelled ball (y = 1) the term (1 - y) * log(1 - p) is 0 * -inf = NaN (and +inf when
the label is 0).  The loss turns NaN mid-run, at a step that depends on the data and lr.

ORIGIN: ``prob`` - the Sigmoid module whose output rounds to exactly 1.0 (or 0.0) and feeds the
unguarded log.

Fix: clamp the probability to [1e-7, 1 - 1e-7] before the logs (same model, data, optimiser
and steps).
"""
import torch
import torch.nn as nn

CAUSE = "unsafe_op"
ORIGIN = "prob"
SOURCE = ("Known pattern: hand-written BCE on sigmoid outputs gives NaN/inf once p saturates to "
          "exactly 0 or 1 (PyTorch BCELoss docs clamp log outputs to >= -100 for this reason; "
          "'loss becomes nan after some epochs, manual binary cross entropy' threads).")


class LineCallMLP(nn.Module):
    def __init__(self, d_in, width, depth):
        super().__init__()
        layers, d = [], d_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        layers.append(nn.Linear(d, 1))
        self.net = nn.Sequential(*layers)
        self.prob = nn.Sigmoid()

    def forward(self, x):
        return self.prob(self.net(x)).squeeze(-1)


def make_loss(eps):
    def bce(p, y):
        if eps > 0:
            p = p.clamp(eps, 1 - eps)
        return -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()
    return bce


def _data(g, n):
    dist_mm = 60 * torch.randn(n, generator=g)                   # signed distance to line (+ = in)
    ellipse = 1 + 0.3 * torch.rand(n, generator=g)
    speed = torch.randn(n, generator=g)
    spin = torch.randn(n, generator=g)
    resid = 0.3 * torch.rand(n, generator=g)
    # the ball is IN if any part of the contact ellipse touches the line
    y = (dist_mm + 8 * ellipse > 0).float()
    x = torch.stack([dist_mm / 60, ellipse, speed, spin, resid,
                     0.5 * torch.randn(n, generator=g), 0.5 * torch.randn(n, generator=g)], 1)
    return x, y


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(13000 + seed)
    width = [32, 64, 48][seed % 3]
    depth = [2, 3, 2][seed % 3]
    lr = [0.1, 0.06, 0.08][seed % 3]
    bs = [64, 32, 48][seed % 3]
    steps = 250
    model = LineCallMLP(7, width, depth)
    x, y = _data(g, bs * steps)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    opt = torch.optim.Adagrad(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=make_loss(1e-7 if fixed else 0.0),
                batches=batches, steps=steps)
