"""Rectified-flow / conditional flow-matching model (Liu et al. 2022; Lipman et al. 2023) for a
6-d tabular density: a SiLU MLP predicts the velocity v(x_t, t) of the straight path
x_t = (1-t) x0 + t x1 between Gaussian noise x0 and a data row x1, regressed onto x1 - x0.  The
script was first written with ``torch.optim.Adadelta`` (whose default, and usual, lr is 1.0) and
later switched to ``torch.optim.Adam`` keeping ``lr=1.0``.  Adam's step is ~lr per weight
regardless of the gradient scale, so every step moves each weight by ~1 (update/weight ratios of
order 1 instead of ~1e-3): within a few steps the velocity field blows up to errors of 1e4, Adam
then drags it back only to the level of the raw target variance, and the loss keeps bouncing at
or above its starting value for the rest of the run.  Every value stays finite - a loud start,
then a silent stall.  The fix is lr=1e-3; nothing else changes."""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Liu, Gong, Liu 'Flow Straight and Fast: Rectified Flow' (2022); Lipman et al. 'Flow Matching' "
          "(ICLR 2023); optimizer swapped (Adadelta -> Adam) while keeping Adadelta's lr=1.0")

D, HID = 6, 128


class VelocityMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(D + 1, HID), nn.SiLU(), nn.Linear(HID, HID), nn.SiLU(),
                                 nn.Linear(HID, D))

    def forward(self, xt, t):
        return self.net(torch.cat([xt, t[:, None]], 1))


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    A = torch.randn(D, D, generator=g) * 0.6
    centers = torch.randn(5, D, generator=g) * 2.0

    def sample(n):
        x1 = centers[torch.randint(0, 5, (n,), generator=g)] + 0.3 * torch.randn(n, D, generator=g) @ A
        x0 = torch.randn(n, D, generator=g)
        t = torch.rand(n, generator=g)
        xt = (1 - t[:, None]) * x0 + t[:, None] * x1
        return (xt, t), x1 - x0

    steps = 250
    batches = [sample(256) for _ in range(steps)]
    model = VelocityMLP()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3 if fixed else 1.0)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
