"""Offline value-function pre-training for an actor-critic agent: a critic MLP V(s) is regressed
(Huber loss, Adam) onto discounted Monte-Carlo returns computed from logged episodes of a
continuous-control simulator. One logged episode (it lands in the 22nd minibatch) contains a
single NaN reward from a simulator step that crashed (physics blow-up) and was written to the log
anyway. The discounted reverse cumulative sum propagates that NaN into the returns of every
earlier step of the episode, so that minibatch has a handful of NaN targets: the loss is NaN, Adam
writes NaN into every critic weight, and all later steps are NaN. The fixed run drops the
transitions whose return is not finite before batching (the usual np.isfinite filter)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "data_outlier"
ORIGIN = None
SOURCE = ("Crashed simulator steps logging NaN rewards into replay / offline RL datasets (e.g. "
          "MuJoCo 'simulation unstable' warnings, D4RL/Gym issues on NaN observations/rewards)")

GAMMA = 0.97


class Critic(nn.Module):
    def __init__(self, d_obs, hidden=64):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_obs, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                                 nn.Linear(hidden, 1))

    def forward(self, obs):
        return self.net(obs).squeeze(-1)


def _discounted(rew):
    out = torch.zeros_like(rew)
    run = torch.zeros(())
    for t in range(len(rew) - 1, -1, -1):
        run = rew[t] + GAMMA * run
        out[t] = run
    return out


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    d_obs, ep_len, n_ep = 8, 40, 60
    w_true = torch.randn(d_obs, generator=g) * 0.5
    obs_list, ret_list = [], []
    for ep in range(n_ep):
        s = torch.randn(d_obs, generator=g) * 0.5
        obs, rew = [], []
        for t in range(ep_len):
            obs.append(s.clone())
            rew.append(2.0 + torch.tanh(s @ w_true) + 0.05 * torch.randn((), generator=g))
            s = 0.9 * s + 0.3 * torch.randn(d_obs, generator=g)
        rew = torch.stack(rew)
        if ep == 35:
            rew[27] = float("nan")          # the crashed physics step
        obs_list.append(torch.stack(obs)); ret_list.append(_discounted(rew) * (1 - GAMMA))
    obs = torch.cat(obs_list); ret = torch.cat(ret_list)
    # logged order is kept (episode by episode), as a sequential replay dump would be
    if fixed:
        keep = torch.isfinite(ret)
        obs, ret = obs[keep], ret[keep]
    batches = [(obs[i:i + 64], ret[i:i + 64]) for i in range(0, len(obs) - 63, 64)]
    model = Critic(d_obs)
    opt = torch.optim.Adam(model.parameters(), lr=3e-4)
    steps = 150
    batches = [batches[i % len(batches)] for i in range(steps)]   # one batch per step, cycled
    return dict(model=model, optimizer=opt, loss_fn=lambda v, r: F.smooth_l1_loss(v, r),
                batches=batches, steps=steps, amp_dtype=None, scaler=None)
