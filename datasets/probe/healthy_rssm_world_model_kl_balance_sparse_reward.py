"""HARD NEGATIVE (healthy). A Dreamer(V2)-style recurrent state-space world model (RSSM: GRU
deterministic path + Gaussian stochastic state, prior and posterior heads, observation decoder,
reward head) trained on sequences from a point-mass environment with a SPARSE goal bonus, using
KL balancing (0.8 / 0.2) with free nats.

What looks alarming but is benign:
  * Sparse rewards: the goal bonus (+30) is hit in only a small fraction of time steps, so the few
    replay batches that contain several hits produce reward-loss spikes many times the typical
    loss (a "corrupt batch" look-alike). They are legitimate data; the loss recovers within a
    few steps and the model learns to predict the bonus.
  * Free nats: while KL < free_nats the KL terms are clamped to a constant, so the prior head and
    (through the KL) the posterior head receive exactly zero gradient from the KL for long
    stretches, and the KL part of the loss sits on a flat floor -- by design.
  * The deterministic GRU path sees a large pre-activation range early on and the stochastic std
    is softplus(.) + 0.1 (a hard floor), again by design.
Nothing is broken: reconstruction and reward losses go down steadily; the total loss ends far
below its start.

ORIGIN = None (healthy). fixed=True builds the identical run.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("DreamerV2 (Hafner et al. 2021) RSSM with KL balancing alpha=0.8 and free nats; "
          "sparse-reward tasks give rare reward-loss spikes that are not data corruption.")


class RSSM(nn.Module):
    def __init__(self, obs_dim, act_dim, deter, stoch, hidden):
        super().__init__()
        self.deter, self.stoch = deter, stoch
        self.encoder = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ELU(), nn.Linear(hidden, hidden), nn.ELU())
        self.img_in = nn.Sequential(nn.Linear(stoch + act_dim, hidden), nn.ELU())
        self.cell = nn.GRUCell(hidden, deter)
        self.prior = nn.Sequential(nn.Linear(deter, hidden), nn.ELU(), nn.Linear(hidden, 2 * stoch))
        self.posterior = nn.Sequential(nn.Linear(deter + hidden, hidden), nn.ELU(), nn.Linear(hidden, 2 * stoch))
        self.decoder = nn.Sequential(nn.Linear(deter + stoch, hidden), nn.ELU(), nn.Linear(hidden, obs_dim))
        self.reward = nn.Sequential(nn.Linear(deter + stoch, hidden), nn.ELU(), nn.Linear(hidden, 1))

    @staticmethod
    def _stats(x):
        mean, std = x.chunk(2, -1)
        return mean, F.softplus(std) + 0.1

    def forward(self, obs, actions, noise):
        # obs (B, T, O), actions (B, T, A), noise (B, T, Z)
        B, T, _ = obs.shape
        emb = self.encoder(obs)
        h = obs.new_zeros(B, self.deter)
        z = obs.new_zeros(B, self.stoch)
        feats, pri, post = [], [], []
        for t in range(T):
            h = self.cell(self.img_in(torch.cat([z, actions[:, t]], -1)), h)
            pm, ps = self._stats(self.prior(h))
            qm, qs = self._stats(self.posterior(torch.cat([h, emb[:, t]], -1)))
            z = qm + qs * noise[:, t]
            feats.append(torch.cat([h, z], -1))
            pri.append((pm, ps))
            post.append((qm, qs))
        f = torch.stack(feats, 1)
        pm = torch.stack([p[0] for p in pri], 1); ps = torch.stack([p[1] for p in pri], 1)
        qm = torch.stack([p[0] for p in post], 1); qs = torch.stack([p[1] for p in post], 1)
        return self.decoder(f), self.reward(f).squeeze(-1), (pm, ps, qm, qs)


def gauss_kl(qm, qs, pm, ps):
    return (torch.log(ps / qs) + (qs.pow(2) + (qm - pm).pow(2)) / (2 * ps.pow(2)) - 0.5).sum(-1)


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(6000 + seed)
    obs_dim = [8, 10, 12][seed % 3]
    deter = [32, 48][seed % 2]
    stoch = [6, 8][(seed // 2) % 2]
    hidden = [64, 80][(seed + 1) % 2]
    T = [10, 12][(seed + 1) % 2]
    B = [16, 24][seed % 2]
    lr = [6e-4, 8e-4, 1e-3][seed % 3]
    free_nats = 1.0
    kl_scale = 1.0
    bonus = 30.0
    steps = 200
    act_dim = 2

    model = RSSM(obs_dim, act_dim, deter, stoch, hidden)

    P = torch.randn(4, obs_dim, generator=g) / 2.0
    goal = torch.tensor([0.6, -0.4])

    def episode_batch(n):
        pos = torch.rand(n, 2, generator=g) * 2 - 1
        vel = torch.zeros(n, 2)
        obs, act, rew = [], [], []
        for _ in range(T):
            a = torch.rand(n, 2, generator=g) * 2 - 1
            vel = 0.8 * vel + 0.15 * a
            pos = (pos + vel).clamp(-1.2, 1.2)
            s = torch.cat([pos, vel], -1)
            o = torch.tanh(s @ P) + 0.05 * torch.randn(n, obs_dim, generator=g)
            hit = ((pos - goal).norm(dim=-1) < 0.025).float()
            r = -0.1 * (pos - goal).norm(dim=-1) + bonus * hit
            obs.append(o); act.append(a); rew.append(r)
        return torch.stack(obs, 1), torch.stack(act, 1), torch.stack(rew, 1)

    batches = []
    for _ in range(steps):
        o, a, r = episode_batch(B)
        noise = torch.randn(B, T, stoch, generator=g)
        batches.append(((o, a, noise), (o, r)))

    def loss_fn(out, target):
        recon, rew_hat, (pm, ps, qm, qs) = out
        o, r = target
        rec = (recon - o).pow(2).sum(-1).mean()
        rl = (rew_hat - r).pow(2).mean()
        kl_lhs = gauss_kl(qm.detach(), qs.detach(), pm, ps).mean()   # trains the prior
        kl_rhs = gauss_kl(qm, qs, pm.detach(), ps.detach()).mean()   # regularises the posterior
        kl = 0.8 * torch.clamp(kl_lhs, min=free_nats) + 0.2 * torch.clamp(kl_rhs, min=free_nats)
        return rec + rl + kl_scale * kl

    opt = torch.optim.Adam(model.parameters(), lr=lr, eps=1e-5)
    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=steps,
                amp_dtype=None, scaler=None)
