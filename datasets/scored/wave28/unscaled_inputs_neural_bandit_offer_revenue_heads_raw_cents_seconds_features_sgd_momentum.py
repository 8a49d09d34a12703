"""Neural contextual bandit (epsilon-greedy / NeuralUCB-style reward model) for discount offers.

Data: logged sessions of a synthetic shop.  Context features come straight from the event log in
their native units: basket value in cents (500-50,000), account age in seconds (1e5-1e8), session
length in milliseconds (1e3-1e6), hour of day, number of prior orders, device one-hot.  The arm is
one of K discount offers; the reward is the session revenue in cents (0-~20,000) for the offered
arm.  Model: shared MLP trunk with one linear reward head per arm; loss = MSE on the logged arm's
head (the usual "regress the reward of the played arm" bandit update).

Mechanism: nothing is standardised.  Account age (~1e7) and session length (~1e5) dominate the
first layer, whose pre-activations are ~1e6 from step 0; predictions are ~1e5-1e6 against targets
of ~1e3-1e4 and the loss is ~1e10-1e12 at the first step.  The weight gradients scale with the raw
inputs times that error (~1e13 and up), the first SGD steps throw the weights to ~1e10, and within
a few steps the loss is inf/NaN.

ORIGIN: "trunk.0", the first Linear, which receives the raw-unit features.

Fix: standardise every context feature with the log's mean/std and regress revenue in units of its
standard deviation (reward scaling); same model, optimiser and schedule.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unscaled_inputs"
ORIGIN = "trunk.0"
SOURCE = ("Neural bandits on raw logged features (NeuralUCB, Zhou et al. 2020; 'Deep Bayesian "
          "Bandits Showdown', Riquelme et al. 2018 normalise contexts); CS231n / LeCun 'Efficient "
          "BackProp' on standardising inputs and targets; NaN loss from raw-unit features is a "
          "frequent forum report")


class OfferRewardModel(nn.Module):
    def __init__(self, in_dim, width, n_arms):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(in_dim, width), nn.ReLU(),
                                   nn.Linear(width, width), nn.ReLU())
        self.heads = nn.Linear(width, n_arms)

    def forward(self, ctx, arm):
        return self.heads(self.trunk(ctx)).gather(1, arm.unsqueeze(1)).squeeze(1)


def _sessions(n, g, n_arms, arm_w):
    basket = 500 + 49500 * torch.rand(n, generator=g) ** 2
    age = 10 ** (5 + 3 * torch.rand(n, generator=g))
    sess = 10 ** (3 + 3 * torch.rand(n, generator=g))
    hour = torch.randint(0, 24, (n,), generator=g).float()
    orders = torch.poisson(torch.full((n,), 8.0), generator=g)
    device = F.one_hot(torch.randint(0, 3, (n,), generator=g), 3).float()
    ctx = torch.cat([torch.stack([basket, age, sess, hour, orders], -1), device], -1)
    arm = torch.randint(0, n_arms, (n,), generator=g)
    # conversion propensity from log-scale features, revenue = basket * conversion * (1 - discount)
    z = (torch.log10(age) - 6.5) * 0.8 + (torch.log10(sess) - 4.5) * 0.6 + 0.05 * orders \
        + 0.4 * torch.sin(hour / 24 * 6.283) + device @ torch.tensor([0.3, -0.2, 0.0])
    disc = torch.linspace(0.0, 0.3, n_arms)[arm]
    conv = torch.sigmoid(z + arm_w[arm] * disc * 10 - 1.0)
    revenue = basket * conv * (1 - disc) * 0.5
    return ctx, arm, revenue


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    n_arms = [4, 5, 6][seed % 3]
    width = [64, 128, 96][seed % 3]
    batch = [64, 128, 96][seed % 3]
    lr = [0.01, 0.005, 0.008][seed % 3]
    steps = 150
    arm_w = 0.5 + torch.rand(n_arms, generator=g)

    raw = [_sessions(batch, g, n_arms, arm_w) for _ in range(steps)]
    if fixed:
        all_ctx = torch.cat([c for c, _, _ in raw])
        mu, sd = all_ctx.mean(0), all_ctx.std(0).clamp_min(1e-6)
        r_sd = torch.cat([r for _, _, r in raw]).std()
        batches = [(((c - mu) / sd, a), r / r_sd) for c, a, r in raw]
    else:
        batches = [((c, a), r) for c, a, r in raw]

    torch.manual_seed(seed)
    model = OfferRewardModel(8, width, n_arms)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return {"model": model, "optimizer": opt, "loss_fn": lambda p, y: F.mse_loss(p, y),
            "batches": batches, "steps": steps}
