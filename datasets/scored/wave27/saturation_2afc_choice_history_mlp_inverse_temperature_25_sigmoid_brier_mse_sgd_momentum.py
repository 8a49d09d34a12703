"""Behavioural modelling of a two-alternative forced-choice task (IBL-style visual contrast task):
an MLP takes the signed contrast, the block prior, the previous choice and previous reward (choice
history) and outputs a decision variable z; the choice probability is sigmoid(beta * z) with a
fixed inverse temperature beta = 25, and the model is fitted to the animal's choices with the
Brier score (MSE between probability and choice), using SGD with momentum.

Mechanism: beta = 25 was copied from a softmax/RL model where the decision variable is a value
difference of order 0.1. Here z is an MLP output of order 0.3-1, so beta * z is 5-25 for almost
every trial from the first step: the output sigmoid is saturated at 0 or 1. For the MSE/Brier
loss the gradient is (p - y) * p * (1 - p) * beta, and p(1-p) ~ e^-|beta z| is ~1e-3..1e-10, for
the trials the model gets wrong as well as the right ones. The loss sits at the fraction of
confidently wrong trials (a stall, no non-finite value), while beta = 1 fits the psychometric and
history effects.

ORIGIN: "choice", the output sigmoid module: the saturated unit where the gradient vanishes; the
MLP below it is well-behaved but receives almost no gradient.

Fix: beta = 1 (pre-activations of order 1 for the output sigmoid); MLP, init, data, loss,
optimiser, lr and steps unchanged.
"""
import torch
import torch.nn as nn

CAUSE = "saturation"
ORIGIN = "choice"
SOURCE = ("Sigmoid output + MSE loss saturation (Nielsen, 'Neural Networks and Deep Learning' ch.3: "
          "learning slowdown of quadratic cost with saturated sigmoid); inverse-temperature choice "
          "rules copied across model scales; IBL 2AFC psychometric/history models (IBL 2021)")


class TempSigmoid(nn.Module):
    def __init__(self, beta):
        super().__init__()
        self.beta = beta

    def forward(self, z):
        return torch.sigmoid(self.beta * z)


class ChoiceModel(nn.Module):
    def __init__(self, width, depth, beta):
        super().__init__()
        layers, d = [], 5
        for _ in range(depth):
            layers += [nn.Linear(d, width), nn.Tanh()]
            d = width
        layers.append(nn.Linear(d, 1))
        self.dv = nn.Sequential(*layers)
        self.choice = TempSigmoid(beta)

    def forward(self, x):
        return self.choice(self.dv(x))


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    width = [32, 64, 48][seed % 3]
    depth = [2, 1, 2][seed % 3]
    batch = [128, 96, 64][seed % 3]
    lr = [0.5, 0.4, 0.6][seed % 3]
    steps = 300
    beta = 1.0 if fixed else 25.0

    torch.manual_seed(seed)
    model = ChoiceModel(width, depth, beta)
    with torch.no_grad():  # a DV head of the size the model will need (order 1)
        model.dv[-1].weight.mul_(3.0)

    contrasts = torch.tensor([-1.0, -0.25, -0.125, -0.0625, 0.0, 0.0625, 0.125, 0.25, 1.0])
    batches = []
    for _ in range(steps):
        c = contrasts[torch.randint(0, 9, (batch,), generator=g)]
        block = torch.where(torch.rand(batch, generator=g) < 0.5, -0.6, 0.6)
        prev_c = torch.where(torch.rand(batch, generator=g) < 0.5, -1.0, 1.0)
        prev_r = (torch.rand(batch, generator=g) < 0.8).float()
        logit = 6.0 * torch.tanh(3 * c) + 0.8 * block + 0.5 * prev_c * prev_r - 0.3 * prev_c * (1 - prev_r)
        p = 0.05 + 0.9 * torch.sigmoid(logit)  # 10% lapses
        y = (torch.rand(batch, generator=g) < p).float()[:, None]
        x = torch.stack([c, block, prev_c, prev_r, prev_c * prev_r], 1)
        batches.append((x, y))

    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {"model": model, "optimizer": opt, "loss_fn": nn.MSELoss(), "batches": batches,
            "steps": steps}
