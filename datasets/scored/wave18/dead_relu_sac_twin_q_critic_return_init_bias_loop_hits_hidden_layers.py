"""SAC twin-Q critic (clipped double Q, polyak target critics, entropy term with a fixed
temperature alpha) trained on pendulum swing-up replay data.

Mechanism: to speed up early learning the user starts both critics at the expected
return of the behaviour data, q_init = mean reward / (1 - gamma) (about -25 to -55 here).
The intent is to set the bias of the output layer only, but the loop walks
q.modules() and fills the bias of every nn.Linear with q_init.  Every hidden ReLU then
receives W x + q_init with |W x| of a few units against a bias of -25..-55: all units of
both critics are dead on every sample from the first step, the critics output the
constant output bias, the ReLUs pass no gradient, and only the output bias moves (by
about lr per step).  The soft Bellman loss stays at the variance of the backup targets.

ORIGIN is q1.1, the first ReLU of the first critic: its units are dead from step 0 (the
same happens in q2.1).

Fix: apply the return initialisation to the output layer's bias only; everything else
(lr, alpha, gamma, data, target updates) is unchanged.
"""
import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "dead_relu"
ORIGIN = "q1.1"
SOURCE = ("Haarnoja et al. SAC; spinning-up / CleanRL sac_continuous_action.py critic update; "
          "a bias-init loop over model.modules() meant for the output layer only")


def mlp(inp, width, depth):
    layers = [nn.Linear(inp, width), nn.ReLU()]
    for _ in range(depth - 1):
        layers += [nn.Linear(width, width), nn.ReLU()]
    layers += [nn.Linear(width, 1)]
    return nn.Sequential(*layers)


class TwinQ(nn.Module):
    def __init__(self, obs_dim, act_dim, width, depth, gamma, alpha, tau, q_init, fixed):
        super().__init__()
        self.q1 = mlp(obs_dim + act_dim, width, depth)
        self.q2 = mlp(obs_dim + act_dim, width, depth)
        # start the critics at the expected return of the behaviour data (pessimistic init)
        for q in (self.q1, self.q2):
            if fixed:
                nn.init.constant_(q[-1].bias, q_init)
            else:
                for m in q.modules():
                    if isinstance(m, nn.Linear):
                        nn.init.constant_(m.bias, q_init)
        self.q1_targ = copy.deepcopy(self.q1).requires_grad_(False)
        self.q2_targ = copy.deepcopy(self.q2).requires_grad_(False)
        self.gamma, self.alpha, self.tau = gamma, alpha, tau

    def forward(self, obs, act, rew, obs2, act2, logp2, done):
        # polyak update of the target critics (done here so it happens once per step)
        with torch.no_grad():
            for net, targ in ((self.q1, self.q1_targ), (self.q2, self.q2_targ)):
                for p, pt in zip(net.parameters(), targ.parameters()):
                    pt.mul_(1 - self.tau).add_(self.tau * p)
            sa2 = torch.cat([obs2, act2], -1)
            q_next = torch.min(self.q1_targ(sa2), self.q2_targ(sa2)) - self.alpha * logp2
            backup = rew + self.gamma * (1 - done) * q_next
        sa = torch.cat([obs, act], -1)
        return torch.cat([self.q1(sa), self.q2(sa)], -1), backup


def pendulum_batch(n, g, max_torque=2.0):
    th = (torch.rand(n, 1, generator=g) * 2 - 1) * math.pi
    thdot = (torch.rand(n, 1, generator=g) * 2 - 1) * 8
    u = (torch.rand(n, 1, generator=g) * 2 - 1) * max_torque
    cost = th ** 2 + 0.1 * thdot ** 2 + 0.001 * u ** 2
    dt = 0.05
    thdot2 = (thdot + (3 * 10 / 2 * torch.sin(th) + 3.0 * u) * dt).clamp(-8, 8)
    th2 = th + thdot2 * dt
    th2 = (th2 + math.pi) % (2 * math.pi) - math.pi
    obs = torch.cat([torch.cos(th), torch.sin(th), thdot], -1)
    obs2 = torch.cat([torch.cos(th2), torch.sin(th2), thdot2], -1)
    # next action from the (fixed, Gaussian-tanh) behaviour policy with its log-prob
    pre = torch.randn(n, 1, generator=g)
    act2 = torch.tanh(pre) * max_torque
    logp2 = (-0.5 * pre ** 2 - 0.5 * math.log(2 * math.pi)
             - torch.log(max_torque * (1 - torch.tanh(pre) ** 2) + 1e-6))
    done = torch.zeros(n, 1)
    return obs, u, -cost, obs2, act2, logp2, done


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    cfg = [
        dict(width=128, depth=2, lr=1e-3, bs=128, steps=150, gamma=0.9),
        dict(width=96, depth=2, lr=6e-4, bs=96, steps=120, gamma=0.8),
        dict(width=64, depth=3, lr=1e-3, bs=160, steps=160, gamma=0.85),
    ][seed % 3]
    # expected return of the behaviour data: mean reward / (1 - gamma)
    g0 = torch.Generator().manual_seed(10_000 + seed)
    mean_r = float(pendulum_batch(4096, g0)[2].mean())
    q_init = mean_r / (1 - cfg["gamma"])
    model = TwinQ(3, 1, cfg["width"], cfg["depth"], gamma=cfg["gamma"], alpha=0.2, tau=0.005,
                  q_init=q_init, fixed=fixed)
    optimizer = torch.optim.Adam(list(model.q1.parameters()) + list(model.q2.parameters()),
                                 lr=cfg["lr"])
    batches = []
    for _ in range(cfg["steps"]):
        obs, act, rew, obs2, act2, logp2, done = pendulum_batch(cfg["bs"], g)
        batches.append(((obs, act, rew, obs2, act2, logp2, done), None))

    def loss_fn(out, _):
        q, backup = out
        return F.mse_loss(q[:, :1], backup) + F.mse_loss(q[:, 1:], backup)

    return dict(model=model, optimizer=optimizer, loss_fn=loss_fn, batches=batches,
                steps=cfg["steps"])
