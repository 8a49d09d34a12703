"""Distributional (QR-DQN style) return model trained offline with the quantile Huber loss,
weights initialised with a Keras-style ``RandomNormal(stddev=1.0)`` on every Linear layer.

Mechanism: a plain ReLU MLP (depth and width vary with the seed) predicts N return quantiles
for a state. Every Linear weight is drawn from N(0, 1) instead of a fan-in scaled
distribution, so each layer multiplies the activation scale by about sqrt(fan_in / 2)
(~6-10x). From step 0 the predicted quantiles are in the thousands, and although the quantile
Huber loss has a bounded derivative w.r.t. the output, the backward pass through the same
over-scaled weights makes every weight gradient huge. SGD with momentum then takes steps far
larger than the weights themselves, the activations grow geometrically again and the loss
overflows to inf/NaN within a few steps.

ORIGIN: ``net.0``, the first Linear layer: the geometric growth of the activation scale starts
at the first over-scaled weight matrix and compounds from there; there is no single later
layer that is "the" bad one, and the first one is where the blow-up begins.

Fix: Kaiming (He) normal initialisation for the ReLU layers (and a small final layer), which
keeps the activation scale constant across depth; the optimiser, data and loss are unchanged.
"""
import math
import torch
import torch.nn as nn

CAUSE = "bad_init"
ORIGIN = "net.0"
SOURCE = ("Keras RandomNormal(stddev=1.0) initialiser copied into PyTorch models (e.g. TF->PyTorch ports of "
          "DQN/QR-DQN code); Dabney et al. 2018 quantile Huber loss; He et al. 2015 on fan-in scaled init")


class QuantileNet(nn.Module):
    def __init__(self, d_in, width, depth, n_q):
        super().__init__()
        layers, d = [], d_in
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.ReLU()]
            d = width
        layers.append(nn.Linear(d, n_q))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


def quantile_huber_loss(pred, target, kappa=1.0):
    # pred: (B, N) quantile estimates, target: (B, M) return samples
    n = pred.shape[1]
    taus = (torch.arange(n, dtype=pred.dtype, device=pred.device) + 0.5) / n
    u = target.unsqueeze(1) - pred.unsqueeze(2)            # (B, N, M)
    absu = u.abs()
    huber = torch.where(absu <= kappa, 0.5 * u * u, kappa * (absu - 0.5 * kappa))
    weight = (taus.view(1, n, 1) - (u.detach() < 0).float()).abs()
    return (weight * huber / kappa).mean(dim=2).sum(dim=1).mean()


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    depth = 4 + seed % 3
    width = [96, 128, 64][seed % 3]
    batch = [64, 48, 96][seed % 3]
    lr = [0.01, 0.02, 0.005][seed % 3]
    n_q, m_samples, d_in, steps = 16, 8, 12, 120

    torch.manual_seed(seed)
    model = QuantileNet(d_in, width, depth, n_q)
    for mod in model.modules():
        if isinstance(mod, nn.Linear):
            if fixed:
                nn.init.kaiming_normal_(mod.weight, nonlinearity="relu")
            else:
                nn.init.normal_(mod.weight, mean=0.0, std=1.0)   # Keras RandomNormal(stddev=1.0)
            nn.init.zeros_(mod.bias)
    if fixed:
        nn.init.normal_(model.net[-1].weight, std=0.01)

    # synthetic offline transitions: state features -> bimodal discounted returns
    w_mu = torch.randn(d_in, generator=g) / math.sqrt(d_in)
    w_sd = torch.randn(d_in, generator=g) / math.sqrt(d_in)
    batches = []
    for _ in range(steps):
        s = torch.randn(batch, d_in, generator=g)
        mu = 2.0 * torch.tanh(s @ w_mu)
        sd = 0.3 + 0.5 * torch.sigmoid(s @ w_sd)
        mode = (torch.rand(batch, m_samples, generator=g) < 0.3).float()
        ret = mu.unsqueeze(1) + sd.unsqueeze(1) * torch.randn(batch, m_samples, generator=g) - 1.5 * mode
        batches.append((s, ret))

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {"model": model, "optimizer": opt, "loss_fn": quantile_huber_loss, "batches": batches,
            "steps": steps}
