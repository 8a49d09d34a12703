"""Frame-wise F0 regressor (1-D CNN, MSE on standardised log-F0) trained at a classifier's SGD lr.

Mechanism: a CREPE-like pitch model is turned from a 360-bin classifier into a direct regressor:
a Conv1d stack over log-spectrogram frames predicts standardised log-F0 per frame, trained with
MSE.  The trainer keeps the classifier recipe's SGD+momentum lr (0.2-0.4).  For MSE through an
unnormalised ReLU conv stack the sharpness of the loss is far larger than for the saturating
softmax/cross-entropy it was tuned on; lr x sharpness passes the stability limit, each momentum
step overshoots by more than the last, weights and predictions grow geometrically, and within
5-15 steps the loss overflows to inf/NaN.

ORIGIN: None -- the learning rate is the cause; no single module starts it.

Fix: lr 0.01 (same model, data, loss and steps).
"""
import math
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Kim et al. 2018, CREPE (pitch CNN on frames); classifier hyper-parameters reused for a "
          "regression head (Cohen et al. 2021, 'Gradient descent on neural networks typically "
          "occurs at the edge of stability': divergence once lr x sharpness > 2)")


class F0Net(nn.Module):
    def __init__(self, n_bins, ch, depth):
        super().__init__()
        layers, c = [], n_bins
        for i in range(depth):
            layers += [nn.Conv1d(c, ch, 5, padding=2), nn.ReLU()]
            c = ch
        self.body = nn.Sequential(*layers)
        self.head = nn.Conv1d(ch, 1, 1)

    def forward(self, spec):                     # (B, F, T)
        return self.head(self.body(spec)).squeeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(9000 + seed)
    depth = [3, 4, 2][seed % 3]
    ch = [64, 48, 96][seed % 3]
    bs = [16, 12, 24][seed % 3]
    lr = 0.01 if fixed else [0.3, 0.2, 0.4][seed % 3]
    n_bins, T, steps = 64, 40, 150

    bins = torch.arange(n_bins).float()
    batches = []
    for _ in range(steps):
        # slowly varying F0 contour in "bin" units, harmonics at 2x, 3x
        start = 6 + 10 * torch.rand(bs, 1, generator=g)
        slope = 0.1 * torch.randn(bs, 1, generator=g)
        f0 = start + slope * torch.arange(T).float() + 0.5 * torch.sin(
            torch.arange(T).float() / 4 + 6.28 * torch.rand(bs, 1, generator=g))
        f0 = f0.clamp(4.0, 20.0)
        spec = torch.zeros(bs, n_bins, T)
        for k, a in ((1, 1.0), (2, 0.6), (3, 0.4)):
            spec += a * torch.exp(-((bins.view(1, -1, 1) - k * f0.unsqueeze(1)) ** 2) / 2.0)
        spec = (spec - 0.1) / 0.25 + 0.3 * torch.randn(bs, n_bins, T, generator=g)
        y = (torch.log(f0) - math.log(11.0)) / 0.3                   # standardised log-F0
        batches.append((spec, y))

    torch.manual_seed(seed)
    model = F0Net(n_bins, ch, depth)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
