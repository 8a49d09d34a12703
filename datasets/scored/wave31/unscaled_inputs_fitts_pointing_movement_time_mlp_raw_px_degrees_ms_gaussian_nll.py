"""HCI pointing model: a heteroscedastic MLP predicts the movement time of a pointing trial (mean and
variance, Gaussian NLL) from the target amplitude and width in pixels, the approach angle in
degrees, the display density (DPI), the trial index within the session and the pointing device
(mouse / touchpad / trackpoint, one-hot) - a learned generalisation of Fitts' law
MT = a + b log2(A/W + 1) for an adaptive-UI toolkit. Momentum SGD.

Mechanism: the features go in raw (A up to ~1500 px, angle up to 360, DPI ~100-220, trial index
up to ~600) and the target is the movement time in milliseconds (~300-2500 ms). The first-layer
pre-activations are in the hundreds, the predicted mean starts near 0 against targets of ~1000 and
the predicted variance near 1, so the Gaussian NLL is ~1e4-1e9 from the very first step. Its
gradient is of the same order and, multiplied by inputs in the hundreds, the first SGD steps move
the weights by orders of magnitude: the loss overflows to inf/NaN within a few steps.

ORIGIN: "mlp.0", the first Linear, which receives the unscaled features and produces the huge
pre-activations.

Fix: standardise every input feature and the movement-time target with the training-set mean and
standard deviation (the NLL is then computed in standardised units); same model, lr and steps.
"""
import math
import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = "mlp.0"
SOURCE = ("Fitts' law / MacKenzie 1992 pointing models; data-driven movement-time prediction for "
          "adaptive UIs (e.g. Gajos et al.; 'Neuromechanics of a button press' CHI 2018 work); "
          "unscaled physical-unit features and millisecond targets: the classic 'loss is huge / "
          "NaN from the first step' (CS231n data preprocessing notes)")


class PointingTimeNet(nn.Module):
    def __init__(self, n_in, width, depth):
        super().__init__()
        layers, d = [], n_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        self.mlp = nn.Sequential(*layers)
        self.head = nn.Linear(d, 2)

    def forward(self, x):
        out = self.head(self.mlp(x))
        return out[:, 0], nn.functional.softplus(out[:, 1]) + 1e-4


def gaussian_nll(out, y):
    mean, var = out
    return nn.functional.gaussian_nll_loss(mean, y, var)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    width = [64, 128, 96][seed % 3]
    depth = [2, 3, 2][seed % 3]
    bs = [64, 32, 48][seed % 3]
    lr = [4e-3, 3e-3, 5e-3][seed % 3]
    steps = 200
    n = steps * bs
    amp = 40 + 1460 * torch.rand(n, generator=g)                      # px
    wid = 8 + 150 * torch.rand(n, generator=g)                        # px
    angle = 360 * torch.rand(n, generator=g)                          # degrees
    dpi = torch.tensor([96.0, 144.0, 220.0])[torch.randint(0, 3, (n,), generator=g)]
    trial = torch.randint(0, 600, (n,), generator=g).float()
    dev = torch.randint(0, 3, (n,), generator=g)
    a = torch.tensor([120.0, 250.0, 300.0])[dev]; b = torch.tensor([170.0, 260.0, 330.0])[dev]
    idx = torch.log2(amp / wid + 1)
    mt = a + b * idx * (1 + 0.1 * torch.cos(torch.deg2rad(angle))) * (96.0 / dpi) ** 0.15
    mt = mt * (1 - 0.15 * (1 - torch.exp(-trial / 150)))                  # practice effect
    mt = mt * torch.exp(0.12 * torch.randn(n, generator=g))              # log-normal trial noise
    x = torch.stack([amp, wid, angle, dpi, trial], 1)
    x = torch.cat([x, nn.functional.one_hot(dev, 3).float()], 1)
    y = mt
    if fixed:
        x[:, :5] = (x[:, :5] - x[:, :5].mean(0)) / x[:, :5].std(0)
        y = (y - y.mean()) / y.std()
    torch.manual_seed(seed)
    model = PointingTimeNet(x.shape[1], width, depth)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    batches = [(x[i * bs:(i + 1) * bs], y[i * bs:(i + 1) * bs]) for i in range(steps)]
    return {"model": model, "optimizer": opt, "loss_fn": gaussian_nll, "batches": batches, "steps": steps}
