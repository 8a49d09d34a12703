"""Keyword-spotting MLP trained for activation sparsity with FATReLU (forced-activation-
threshold ReLU, Kurtz et al. 2020: f(x) = x if x >= T else 0), so that a sparse inference
engine can skip most multiply-accumulates; log-softmax head with NLL loss, SGD+momentum.

Mechanism: the per-layer thresholds T were copied from the sparsity recipe of the previous,
larger dense model, where they had been calibrated on pre-activations with a spread of a few
units (that model had unnormalised 13-bit features).  This model is freshly initialised with
PyTorch's default Linear init on standardised features, so its pre-activations have a spread
of ~0.5: almost no unit of the first layer exceeds its threshold and the deeper layers, which
only see those few survivors plus their small bias, are below threshold for every input.  All
hidden units output exactly 0 with exactly 0 gradient (dead from step 0), only the output bias
learns, and the loss stays at the class-prior level: a stall with finite values throughout.

ORIGIN: ``net.1`` -- the first FATReLU; it is where the activations first become (almost)
all zero and everything deeper is dead because of it.

Fix: calibrate each threshold on this model instead (the 60th percentile of the layer's
pre-activations on one calibration batch at init, i.e. ~60% activation sparsity as the recipe
intends), so that the units start alive.  Same model, data, optimiser and steps.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "net.1"
SOURCE = ("Kurtz et al. 2020 'Inducing and exploiting activation sparsity for fast inference' "
          "(FATReLU, Neural Magic SparseML); known pattern: thresholds transferred between models "
          "of different activation scale leave every unit below threshold -> dead, zero gradient")


class FATReLU(nn.Module):
    def __init__(self, threshold: float):
        super().__init__()
        self.register_buffer("threshold", torch.tensor(float(threshold)))

    def forward(self, x):
        return x * (x >= self.threshold).to(x.dtype)


class SparseKWS(nn.Module):
    def __init__(self, n_in, width, depth, n_cls, thresholds):
        super().__init__()
        layers, d = [], n_in
        for i in range(depth):
            layers += [nn.Linear(d, width), FATReLU(thresholds[i])]
            d = width
        layers += [nn.Linear(d, n_cls), nn.LogSoftmax(dim=1)]
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(7000 + seed)
    n_in, n_cls = 40, 12                      # stacked MFCC summary features, 12 keywords
    width = [128, 192, 96][seed % 3]
    depth = [3, 2, 4][seed % 3]
    lr = [0.05, 0.08, 0.03][seed % 3]
    bs = [64, 128, 96][seed % 3]
    steps = 200
    recipe_T = [1.6, 1.2, 1.0, 1.0]           # from the dense 13-bit-feature model's recipe

    centers = torch.randn(n_cls, n_in, generator=g) * 0.45
    mix = torch.randn(n_in, n_in, generator=g) / n_in ** 0.5
    batches = []
    for _ in range(steps):
        y = torch.randint(0, n_cls, (bs,), generator=g)
        x = centers[y] + torch.randn(bs, n_in, generator=g)
        x = x + 0.5 * torch.tanh(x @ mix)
        x = (x - x.mean()) / x.std()          # standardised features
        batches.append((x, y))

    torch.manual_seed(seed)
    model = SparseKWS(n_in, width, depth, n_cls, recipe_T[:depth])
    if fixed:
        # calibrate thresholds on this model: 60th percentile of each layer's pre-activations
        with torch.no_grad():
            h = torch.cat([b[0] for b in batches[:4]])
            for m in model.net:
                if isinstance(m, nn.Linear):
                    h = m(h)
                elif isinstance(m, FATReLU):
                    m.threshold.fill_(float(torch.quantile(h.flatten(), 0.6)))
                    h = m(h)

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return dict(model=model, optimizer=opt, loss_fn=nn.NLLLoss(), batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
