"""Soft Q-learning (Haarnoja et al. 2017, discrete-action form) with fp16 autocast: the soft
state value V(s') = alpha * log sum_a exp(Q(s', a) / alpha) is written out by hand.

Mechanism: under ``torch.autocast(dtype=torch.float16)`` the Q-network's Linear layers emit
float16, and ``torch.exp`` of a float16 tensor stays float16 (it is not on the CPU autocast
fp32 list).  With a small entropy temperature alpha = 0.1-0.2, exp(Q/alpha) passes 65504 as
soon as any next-state Q-value exceeds alpha * ln(65504) ~ 1.1-2.2.  At initialisation Q ~ 0
and the run is calm; as the soft values are learned (returns of a few units) the sum of
exponentials becomes inf in half precision, V(s') = inf, the TD target and the MSE loss are
inf and the backward pass produces NaN.  In fp32 the same expression stays finite (exp
overflows only past ~88).

ORIGIN: ``soft_value`` -- the module holding the hand-written exp/sum/log, the first module
whose output is non-finite (its float16 input, the target Q-values, is still finite).

Fix: compute the soft value in float32 (``q.float()`` before the exp, the "fp32 for the op"
fix); model, alpha, optimiser, autocast and data unchanged.
"""
import copy
import math
import torch
import torch.nn as nn

CAUSE = "fp16_overflow"
ORIGIN = "soft_value"
SOURCE = ("Soft Q-learning / discrete SAC soft value V = alpha*logsumexp(Q/alpha) written as "
          "log(sum(exp(.))) under fp16 mixed precision; reports of inf TD targets once "
          "Q/alpha exceeds ~11")


class SoftValue(nn.Module):
    """V(s) = alpha * log sum_a exp(Q(s, a) / alpha), written out as in the paper."""

    def __init__(self, alpha, fp32):
        super().__init__()
        self.alpha, self.fp32 = alpha, fp32

    def forward(self, q):
        if self.fp32:
            q = q.float()
        return self.alpha * torch.log(torch.exp(q / self.alpha).sum(1))


class SoftQ(nn.Module):
    def __init__(self, obs_dim, n_actions, width, alpha, gamma, tau, fp32_value):
        super().__init__()
        self.q_net = nn.Sequential(nn.Linear(obs_dim, width), nn.ReLU(),
                                   nn.Linear(width, width), nn.ReLU(),
                                   nn.Linear(width, n_actions))
        self.q_target = copy.deepcopy(self.q_net)
        for p in self.q_target.parameters():
            p.requires_grad_(False)
        self.alpha, self.gamma, self.tau = alpha, gamma, tau
        self.soft_value = SoftValue(alpha, fp32=fp32_value)

    def forward(self, obs, act, rew, next_obs, done):
        if self.training:  # Polyak-averaged target network, updated once per training step
            with torch.no_grad():
                for pt, p in zip(self.q_target.parameters(), self.q_net.parameters()):
                    pt.mul_(1 - self.tau).add_(self.tau * p)
        q_sa = self.q_net(obs).gather(1, act[:, None]).squeeze(1)
        with torch.no_grad():
            v_next = self.soft_value(self.q_target(next_obs))
            target = rew + self.gamma * (1 - done) * v_next
        return q_sa, target


def soft_td_loss(out, _unused):
    q_sa, target = out
    return ((q_sa.float() - target.float()) ** 2).mean()


def build(seed: int, fixed: bool = False) -> dict:
    cfg = [dict(obs=8, nA=4, width=64, bs=64, lr=1e-3, steps=150, alpha=0.1, tau=0.05),
           dict(obs=12, nA=6, width=96, bs=48, lr=1e-3, steps=120, alpha=0.15, tau=0.1),
           dict(obs=6, nA=3, width=48, bs=128, lr=1.5e-3, steps=180, alpha=0.2, tau=0.05)][seed % 3]
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(8 + seed)
    model = SoftQ(cfg["obs"], cfg["nA"], cfg["width"], cfg["alpha"], gamma=0.8,
                  tau=cfg["tau"], fp32_value=fixed)

    # a "reach the goal" task: reward in [0, 1], higher near a goal region
    W = torch.randn(cfg["obs"], cfg["nA"], generator=g) / math.sqrt(cfg["obs"])
    dyn = torch.randn(cfg["nA"], cfg["obs"], generator=g) * 0.3
    batches = []
    for _ in range(cfg["steps"]):
        n = cfg["bs"]
        obs = torch.randn(n, cfg["obs"], generator=g)
        act = torch.randint(0, cfg["nA"], (n,), generator=g)
        next_obs = 0.9 * obs + dyn[act] + 0.1 * torch.randn(n, cfg["obs"], generator=g)
        rew = torch.sigmoid(2 * (obs @ W).gather(1, act[:, None]).squeeze(1))
        done = (torch.rand(n, generator=g) < 0.02).float()
        batches.append(((obs, act, rew, next_obs, done), torch.zeros(n)))
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    return dict(model=model, optimizer=opt, loss_fn=soft_td_loss, batches=batches,
                steps=cfg["steps"], amp_dtype=torch.float16, scaler=None)
