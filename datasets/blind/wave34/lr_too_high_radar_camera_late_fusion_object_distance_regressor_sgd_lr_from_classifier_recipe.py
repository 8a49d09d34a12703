"""Radar-camera late-fusion distance regressor: for each detected object a camera branch (2-D box
geometry: normalised box height/width/bottom-row, class one-hot) and a radar branch (features of
the associated radar points: range, range-rate, RCS, azimuth offset to the box centre) are
encoded by two small MLPs, concatenated and regressed to the longitudinal distance
(standardised metres), MSE loss, SGD with momentum.

Mechanism: the training script reused the SGD settings of the camera-only object classifier
(lr 0.5-0.9, momentum 0.9, tuned for cross-entropy on normalised logits).  For a regression
head with MSE the curvature is much larger, the updates overshoot from the first steps, the
update/weight ratios are >> 1e-3 and the loss diverges to inf/NaN within a few dozen steps.

ORIGIN: None - an lr that is too high for the whole optimisation is not a fault of any single
module.

Fix: lr 0.01 (same momentum, model, data, steps).
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Known pattern: reusing a classifier's SGD lr for an MSE regression head -> overshoot "
          "and divergence (cf. PyTorch forum 'loss becomes nan with high learning rate'); "
          "radar-camera late fusion for object distance as in CenterFusion-style pipelines")


class LateFusionDistance(nn.Module):
    def __init__(self, n_cam, n_rad, width):
        super().__init__()
        self.cam = nn.Sequential(nn.Linear(n_cam, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU())
        self.rad = nn.Sequential(nn.Linear(n_rad, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU())
        self.fuse = nn.Sequential(nn.Linear(2 * width, width), nn.ReLU(), nn.Linear(width, 1))

    def forward(self, cam, rad):
        return self.fuse(torch.cat([self.cam(cam), self.rad(rad)], -1)).squeeze(-1)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    width = [64, 96, 48][seed % 3]
    lr = [0.5, 0.7, 0.9][seed % 3]
    bs = [64, 32, 48][seed % 3]
    steps = 100
    if fixed:
        lr = 0.01
    n_cls = 4
    model = LateFusionDistance(3 + n_cls, 4, width)

    batches = []
    for _ in range(steps):
        dist = torch.rand(bs, generator=g) * 2.5 + 0.3       # ~ distance / 30 m
        cls = torch.randint(0, n_cls, (bs,), generator=g)
        h_true = torch.tensor([1.5, 3.0, 1.7, 1.6])[cls]
        box_h = h_true / dist * 0.3 + 0.05 * torch.randn(bs, generator=g)
        box_w = box_h * torch.tensor([1.2, 0.9, 0.4, 0.5])[cls]
        bottom = 1.0 / dist * 0.4 + 0.05 * torch.randn(bs, generator=g)
        cam = torch.cat([torch.stack([box_h, box_w, bottom], 1),
                         nn.functional.one_hot(cls, n_cls).float()], 1)
        rng = dist + 0.1 * torch.randn(bs, generator=g)
        rad = torch.stack([rng, torch.randn(bs, generator=g),
                           torch.tensor([1.0, 1.5, -0.5, -0.3])[cls] + 0.3 * torch.randn(bs, generator=g),
                           0.2 * torch.randn(bs, generator=g)], 1)
        y = (dist - 1.55) / 0.72
        batches.append(((cam, rad), y))

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches, steps=steps)
