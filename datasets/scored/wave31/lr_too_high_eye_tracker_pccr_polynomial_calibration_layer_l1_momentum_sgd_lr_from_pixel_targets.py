"""Video-based eye tracking: the gaze-mapping stage of a tracker, trained end-to-end with the rest of
the pipeline: the pupil-centre/corneal-reflection (PCCR) vectors of both eyes and the 3-D head
position are expanded into the classic 2nd-order polynomial calibration terms (a fixed
`PolyFeatures` module) and a linear layer maps them to the on-screen gaze point. L1 loss (robust to
residual blink samples), momentum SGD. Targets are normalised screen coordinates in [-1, 1].

Mechanism: the training script was inherited from a version that regressed gaze in screen pixels
(1920 x 1080). With an L1 loss the gradient w.r.t. the output is only sign(error)/N whatever the
target units, so to move pixel-scale outputs the author had tuned lr to 0.6-1.0. When the
targets were switched to normalised coordinates the lr was kept. Each momentum step now moves the output by
more than the whole [-1, 1] screen: the weights are thrown back and forth across the minimum,
the loss oscillates at or above its initial value for the whole run (a stall, finite values:
the bounded L1 gradient and the linear map keep it from diverging).

ORIGIN: None (lr_too_high is a global optimiser setting; no single module starts it).

Fix: lr 0.01 (what a normalised-target run needs); model, data and steps unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "lr_too_high"
ORIGIN = None
SOURCE = ("Eye-tracker calibration by regression from PCCR vectors (Hansen & Ji 2010 survey; "
          "Cerrolaza et al. 2012); lr kept after a change of target units - a common cause of "
          "an oscillating, non-decreasing loss (CS231n 'babysitting the learning process')")


class PolyFeatures(nn.Module):
    """All monomials of degree <= 2 of the inputs (the standard polynomial calibration terms)."""

    def forward(self, x):
        i, j = torch.triu_indices(x.shape[1], x.shape[1])
        return torch.cat([x, x[:, i] * x[:, j]], 1)


class GazeMapping(nn.Module):
    def __init__(self, n_in):
        super().__init__()
        self.poly = PolyFeatures()
        self.map = nn.Linear(n_in + n_in * (n_in + 1) // 2, 2)

    def forward(self, x):
        return self.map(self.poly(x))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    use_right = seed % 3 != 1    # monocular (left-eye) tracking for some user profiles
    bs = [32, 48, 24][seed % 3]
    steps = 150
    lr = 0.01 if fixed else [1.0, 0.8, 0.6][seed % 3]
    n = steps * bs
    gaze = torch.rand(n, 2, generator=g) * 2 - 1                # normalised screen coordinates
    head = torch.randn(n, 3, generator=g) * 0.5                  # head position w.r.t. the camera
    # PCCR vectors: nonlinear in gaze (corneal curvature), shifted by head translation
    left = gaze + 0.15 * gaze ** 2 + 0.3 * head[:, :2] + 0.05 * torch.randn(n, 2, generator=g)
    right = 0.9 * gaze + 0.1 * gaze[:, :1] * gaze[:, 1:] + 0.3 * head[:, :2] + 0.05 * torch.randn(n, 2, generator=g)
    x = torch.cat([left, right, head] if use_right else [left, head], 1)
    x = (x - x.mean(0)) / x.std(0)
    torch.manual_seed(seed)
    model = GazeMapping(x.shape[1])
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    batches = [(x[i * bs:(i + 1) * bs], gaze[i * bs:(i + 1) * bs]) for i in range(steps)]
    return {"model": model, "optimizer": opt, "loss_fn": nn.L1Loss(), "batches": batches, "steps": steps}
