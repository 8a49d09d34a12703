"""DDPG-style state-action critic whose Q output goes through a ReLU, trained on a task with only negative rewards.

Mechanism: the critic follows the DDPG paper layout (state -> fc -> ReLU, the action joins at the second layer,
-> fc -> ReLU -> scalar Q).  It is built with a helper that appends the hidden activation after *every* Linear,
including the last one (the `output_activation=activation` slip in an `mlp()` helper), so Q = relu(q_out(h)).
The environment is a reaching task with a per-step cost (reward <= 0), so every Monte-Carlo return target is
negative (about -1 to -6).  At initialisation roughly half the samples have a positive pre-activation at the
output; regression pulls those down towards the negative targets, they cross zero within a few Adam steps, and
from then on the output ReLU is inactive for every state-action pair: its gradient is exactly 0, no parameter
receives any gradient again, Q is stuck at 0 and the loss plateaus at mean(target^2).
ORIGIN = "out_act": the dying unit is the ReLU on the critic output; the hidden layers are healthy but starve.
Fix: the output activation is removed (identity head, the standard for a value function); same data, same
optimiser, same everything else.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "out_act"
SOURCE = ("Lillicrap et al. 2016 (DDPG) critic layout with the action entering at layer 2; common bug of an activation "
          "after the final Linear of a value head (e.g. an mlp(sizes, activation, output_activation) helper called "
          "with output_activation=nn.ReLU) while rewards are all negative, reported as 'critic loss stuck / Q always 0'.")


class DDPGCritic(nn.Module):
    def __init__(self, ds, da, h1, h2, relu_head):
        super().__init__()
        self.s_fc = nn.Linear(ds, h1)
        self.act1 = nn.ReLU()
        self.sa_fc = nn.Linear(h1 + da, h2)
        self.act2 = nn.ReLU()
        self.q_out = nn.Linear(h2, 1)
        self.out_act = nn.ReLU() if relu_head else nn.Identity()

    def forward(self, s, a):
        h = self.act1(self.s_fc(s))
        h = self.act2(self.sa_fc(torch.cat([h, a], dim=1)))
        return self.out_act(self.q_out(h)).squeeze(1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(4000 + seed)
    ds = [6, 8, 10][seed % 3]
    da = [2, 3, 4][(seed + 1) % 3]
    h1 = [64, 96][seed % 2]
    h2 = [48, 64][(seed + 1) % 2]
    bs = [64, 96, 128][seed % 3]
    steps = 150 + 25 * (seed % 3)
    lr = [1e-3, 2e-3, 3e-3][seed % 3]
    gamma = [0.9, 0.95][seed % 2]

    # Synthetic reaching task: per-step cost c(s, a) = 0.1 + 0.05 * ||M s + N a||^2 / sqrt(ds), Monte-Carlo return
    # approximated by -c(s, a) / (1 - gamma) * kappa, plus return noise.  All targets are negative.
    M = torch.randn(ds, ds, generator=g) / ds ** 0.5
    N = torch.randn(da, ds, generator=g) / da ** 0.5
    kappa = 0.3 if gamma == 0.95 else 0.6
    batches = []
    for _ in range(steps):
        s = torch.randn(bs, ds, generator=g)
        a = torch.tanh(torch.randn(bs, da, generator=g))
        cost = 0.1 + 0.05 * ((s @ M + a @ N) ** 2).sum(1) / ds ** 0.5
        ret = -kappa * cost / (1 - gamma) + 0.05 * torch.randn(bs, generator=g)
        batches.append(((s, a), ret))

    model = DDPGCritic(ds, da, h1, h2, relu_head=not fixed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)

    def loss_fn(q, target):
        return F.mse_loss(q, target)

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
