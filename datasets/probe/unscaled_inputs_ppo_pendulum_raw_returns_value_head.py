"""PPO (clipped surrogate + value loss) on fixed Pendulum rollouts with raw rewards in [-16.3, 0]:
the gamma=0.99 rewards-to-go the value head regresses are in the hundreds, so the value term makes
the loss ~7e4 from step 0 while the policy term is O(1) (advantages are normalised per minibatch).
Adam moves the 64-unit tanh value head by ~lr per step, so the loss barely moves: PPO stalls.
fixed=True divides rewards by the std of the discounted return (VecNormalize(norm_reward=True)).
"""
import math

import torch
import torch.nn as nn

CAUSE = "unscaled_inputs"
ORIGIN = None  # the reward / return scale of the data, not a module
SOURCE = ("Engstrom et al. 2020 'Implementation Matters in Deep RL' and Andrychowicz et al. 2021 "
          "'What Matters in On-Policy RL' (reward scaling); SB3 docs: use VecNormalize for PPO on "
          "continuous control; recurring 'PPO value loss is huge' issues on Pendulum/MuJoCo")

GAMMA = 0.99
CLIP = 0.2
EP_LEN = 200


def _pendulum_rollouts(gen, n_eps):
    """Rollouts of a noisy linear behaviour policy on Gym Pendulum-v1 dynamics."""
    th = torch.rand(n_eps, generator=gen) * 2 * math.pi - math.pi
    thd = torch.rand(n_eps, generator=gen) * 2 - 1
    old_mu_w = torch.tensor([-1.0, -0.3])
    old_std = 0.8
    obs_l, act_l, logp_l, rew_l = [], [], [], []
    for _ in range(EP_LEN):
        obs = torch.stack([th.cos(), th.sin(), thd], 1)
        mu = (old_mu_w[0] * torch.sin(th) + old_mu_w[1] * thd).unsqueeze(1)
        a = mu + old_std * torch.randn(n_eps, 1, generator=gen)
        logp = (-0.5 * ((a - mu) / old_std) ** 2 - math.log(old_std)
                - 0.5 * math.log(2 * math.pi)).sum(1)
        u = a[:, 0].clamp(-2, 2)
        ang = (th + math.pi) % (2 * math.pi) - math.pi
        r = -(ang ** 2 + 0.1 * thd ** 2 + 0.001 * u ** 2)
        thd = (thd + (3 * 10.0 / 2 * torch.sin(th) + 3.0 * u) * 0.05).clamp(-8, 8)
        th = th + thd * 0.05
        obs_l.append(obs)
        act_l.append(a)
        logp_l.append(logp)
        rew_l.append(r)
    return (torch.stack(obs_l, 1), torch.stack(act_l, 1), torch.stack(logp_l, 1),
            torch.stack(rew_l, 1))


def _rewards_to_go(rew):
    """Discounted Monte-Carlo rewards-to-go within each 200-step episode."""
    ret = torch.zeros_like(rew)
    run = torch.zeros(rew.shape[0])
    for t in reversed(range(rew.shape[1])):
        run = rew[:, t] + GAMMA * run
        ret[:, t] = run
    return ret


class ActorCritic(nn.Module):
    def __init__(self, obs_dim=3, act_dim=1, hidden=64):
        super().__init__()
        self.pi = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(),
                                nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, act_dim))
        self.vf = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(),
                                nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, 1))
        self.log_std = nn.Parameter(torch.zeros(act_dim))

    def forward(self, obs, act):
        mu = self.pi(obs)
        std = self.log_std.exp()
        logp = (-0.5 * ((act - mu) / std) ** 2 - self.log_std - 0.5 * math.log(2 * math.pi)).sum(1)
        return logp, self.vf(obs).squeeze(1)


def ppo_loss(out, target):
    logp, value = out
    old_logp, adv, ret = target
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    ratio = torch.exp(logp - old_logp)
    pg = -torch.min(ratio * adv, ratio.clamp(1 - CLIP, 1 + CLIP) * adv).mean()
    vf = 0.5 * (value - ret).pow(2).mean()
    return pg + 0.5 * vf


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    obs, act, old_logp, rew = _pendulum_rollouts(gen, 16)
    if fixed:
        # VecNormalize-style reward scaling: divide by the std of the running discounted return
        disc = torch.zeros_like(rew)
        run = torch.zeros(rew.shape[0])
        for t in range(rew.shape[1]):
            run = run * GAMMA + rew[:, t]
            disc[:, t] = run
        rew = rew / (disc.std() + 1e-8)
    # first PPO iteration: rewards-to-go as value targets, advantages against a zero baseline
    ret = _rewards_to_go(rew)
    adv = ret.clone()
    obs, act = obs.reshape(-1, 3), act.reshape(-1, 1)
    old_logp, adv, ret = old_logp.reshape(-1), adv.reshape(-1), ret.reshape(-1)

    model = ActorCritic()
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-4, eps=1e-5)
    steps, batch = 250, 128
    batches = []
    n = obs.shape[0]
    perm = torch.randperm(n, generator=gen)
    pos = 0
    for _ in range(steps):  # PPO epochs over shuffled minibatches of the same rollout
        if pos + batch > n:
            perm, pos = torch.randperm(n, generator=gen), 0
        idx = perm[pos:pos + batch]
        pos += batch
        batches.append(((obs[idx], act[idx]), (old_logp[idx], adv[idx], ret[idx])))
    return dict(model=model, optimizer=optimizer, loss_fn=ppo_loss, batches=batches,
                steps=steps, amp_dtype=None, scaler=None)
