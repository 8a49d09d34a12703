"""Particle-picking heatmap CNN for simulated cryo-EM micrographs: a plain Conv2d+ReLU stack maps
a noisy low-dose micrograph to a heatmap with a small Gaussian blob at every particle centre
(MSE, SGD with Nesterov momentum). Because the heatmap is non-negative, the author ends the
network with nn.ReLU() on the output ("scores can't be negative").

Mechanism: the target is ~0 on almost every pixel (ice background, a few particle centres), so
the MSE gradient pushes nearly all output pixels down at once. With momentum the last conv's
bias and weights overshoot below zero within the first steps; the output ReLU's pre-activation
becomes negative on (nearly) every pixel of every image, the output is identically 0, the ReLU
passes no gradient, and nothing upstream receives a gradient any more. The loss freezes at the
all-zero prediction's value for the rest of the run.

ORIGIN: "out_act", the output ReLU: it is the unit that dies and blocks all gradient.
Fix: drop the hard rectifier on the output (a linear output, nn.Identity()), so a negative
pre-activation still passes gradient and the network recovers; non-negativity can be applied
at inference.
"""
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "out_act"
SOURCE = ("Known pattern: a ReLU on the regression output dies when targets sit at 0 "
          "(PyTorch forum 'output all zeros, loss not decreasing, final ReLU'); "
          "cryo-EM particle picking heatmaps (Topaz, Bepler et al. 2019; crYOLO)")


def _micrographs(g, bs, size):
    yy, xx = torch.meshgrid(torch.arange(size).float(), torch.arange(size).float(), indexing="ij")
    image = torch.zeros(bs, 1, size, size)
    heat = torch.zeros(bs, 1, size, size)
    for i in range(bs):
        for _ in range(3):
            cy, cx = (torch.rand(2, generator=g) * (size - 8) + 4).tolist()
            d2 = (yy - cy) ** 2 + (xx - cx) ** 2
            image[i, 0] += torch.exp(-d2 / (2 * 3.0 ** 2))
            heat[i, 0] += torch.exp(-d2 / (2 * 1.5 ** 2))
    noisy = image + 0.5 * torch.randn(bs, 1, size, size, generator=g)
    return noisy, heat


class HeatmapPicker(nn.Module):
    def __init__(self, ch, depth, fixed):
        super().__init__()
        layers, c = [], 1
        for _ in range(depth):
            layers += [nn.Conv2d(c, ch, 3, padding=1), nn.ReLU()]
            c = ch
        self.body = nn.Sequential(*layers)
        self.out = nn.Conv2d(c, 1, 3, padding=1)
        self.out_act = nn.Identity() if fixed else nn.ReLU()

    def forward(self, x):
        return self.out_act(self.out(self.body(x)))


def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(500 + seed)
    ch = [16, 24, 12][seed % 3]
    depth = [3, 4, 5][seed % 3]
    bs = [8, 6, 10][seed % 3]
    lr = [0.13, 0.1, 0.15][seed % 3]
    size, steps = 24, 100
    model = HeatmapPicker(ch, depth, fixed)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True)
    batches = [_micrographs(g, bs, size) for _ in range(steps)]
    return dict(model=model, optimizer=opt, loss_fn=nn.MSELoss(), batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
