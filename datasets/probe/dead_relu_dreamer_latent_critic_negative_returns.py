"""Dreamer-style value model trained on imagined latent trajectories of a cost-only task
(every reward <= 0, as in Pendulum / Reacher-style control), built with an MLP helper that
was called with output_activation=ReLU, so the value head ends in a ReLU.

Mechanism. The critic maps RSSM latent features (deterministic + stochastic state) of an
imagined rollout to V(s) and regresses the lambda-returns of that rollout. Because all rewards
are costs, every lambda-return target is negative. The final ReLU can only emit values >= 0:
wherever its pre-activation is positive, the gradient pushes it down; wherever it is negative
the unit emits 0 and passes no gradient. Within a few dozen Adam steps the pre-activation is
negative for every latent state, the single output unit is dead for the whole input
distribution, no gradient reaches any weight again and the value loss is frozen at
mean(G^lambda^2). The loss plateaus from early on (a stall), while the features and targets are
perfectly fine.

ORIGIN = "value.out_act": the trailing ReLU is where the unit dies (its output is identically 0
and its backward pass zeroes every gradient); all upstream layers are healthy, only starved.

Fix (only the root cause): no activation on the regression output (nn.Identity), the usual
`mlp(sizes, activation, output_activation=nn.Identity)`; a LeakyReLU would also keep the
gradient alive. Same data, same init for all other layers, same optimiser.

Seed changes: latent sizes, critic width/depth, imagination horizon, batch, lr, cost scale.
"""
import math
import torch
import torch.nn as nn

CAUSE = "dead_relu"
ORIGIN = "value.out_act"
SOURCE = ("Common actor-critic bug: building the value head with output_activation=activation "
          "(e.g. SpinningUp-style mlp() helper) so V(s) >= 0, while the task's rewards are all "
          "negative (Pendulum-v1 costs); the critic loss flat-lines ('value loss does not decrease').")


class ValueMLP(nn.Module):
    def __init__(self, feat, hidden, depth, out_act: nn.Module):
        super().__init__()
        layers = []
        d = feat
        for _ in range(depth):
            layers += [nn.Linear(d, hidden), nn.ReLU()]
            d = hidden
        self.body = nn.Sequential(*layers)
        self.out = nn.Linear(d, 1)
        self.out_act = out_act

    def forward(self, f):
        return self.out_act(self.out(self.body(f))).squeeze(-1)


class DreamerCritic(nn.Module):
    def __init__(self, deter, stoch, hidden, depth, out_act):
        super().__init__()
        self.value = ValueMLP(deter + stoch, hidden, depth, out_act)

    def forward(self, deter_state, stoch_state):
        # (T, B, deter), (T, B, stoch) -> (T, B)
        return self.value(torch.cat([deter_state, stoch_state], -1))


def lambda_returns(rew, vslow, disc, lam):
    # rew: (T, B) imagined rewards, vslow: (T, B) slow-critic values of the same states
    # G_t = r_t + disc * ((1 - lam) * v_{t+1} + lam * G_{t+1}),  G_{T-1} bootstrapped with v_{T-1}
    T = rew.shape[0]
    out = torch.empty_like(rew)
    nxt = vslow[-1]
    for t in reversed(range(T)):
        v_next = vslow[t + 1] if t + 1 < T else vslow[-1]
        nxt = rew[t] + disc * ((1 - lam) * v_next + lam * nxt)
        out[t] = nxt
    return out


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(2000 + seed)
    deter = [32, 48, 64][seed % 3]
    stoch = [8, 16][seed % 2]
    hidden = [64, 96, 128][(seed + 1) % 3]
    depth = [2, 3][(seed // 2) % 2]
    T = [10, 15][seed % 2]
    B = [48, 64][(seed + 1) % 2]
    lr = [8e-4, 1e-3, 6e-4][seed % 3]
    cost = [1.0, 1.5, 0.7][(seed + 2) % 3]
    disc, lam = 0.95, 0.95
    steps = 200

    model = DreamerCritic(deter, stoch, hidden, depth, nn.Identity() if fixed else nn.ReLU())

    feat = deter + stoch
    Wr = torch.randn(feat, generator=g) / math.sqrt(feat)
    A = torch.randn(deter, deter, generator=g) / math.sqrt(deter) * 0.9

    batches = []
    for _ in range(steps):
        # imagined latent rollout from a frozen RSSM: h_{t+1} = tanh(A h_t + noise)
        h = torch.randn(B, deter, generator=g)
        hs, zs = [], []
        for _t in range(T):
            h = torch.tanh(h @ A.T + 0.3 * torch.randn(B, deter, generator=g))
            z = torch.randn(B, stoch, generator=g) * 0.5 + h[:, :stoch]
            hs.append(h)
            zs.append(z)
        hs, zs = torch.stack(hs), torch.stack(zs)
        f = torch.cat([hs, zs], -1)
        # cost-only reward: -(cost) * (1 + softplus(projection)), always < 0
        rew = -cost * (0.2 + torch.nn.functional.softplus(f @ Wr)) * 0.5
        vslow = rew / (1 - disc)  # frozen slow critic: steady-state value of the current cost
        targets = lambda_returns(rew, vslow, disc, lam) / 10.0  # return scaling
        batches.append(((hs, zs), targets))

    def loss_fn(v, target):
        return 0.5 * (v - target).pow(2).mean()

    opt = torch.optim.Adam(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
