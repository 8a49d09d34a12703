"""PPO actor-critic with GAE on a synthetic gridworld: one rollout, several update epochs.

Data: build() runs the freshly initialised actor-critic in N parallel copies of a 7x7 gridworld
(random goal per env, -0.05 per step, +1 on reaching the goal, reset on success) for T steps,
records obs, actions, old log-probs and values, and computes GAE(gamma=0.99, lambda=0.95)
advantages and returns.  Training then does K epochs over the N*T samples in shuffled minibatches
of size M -- the standard PPO update -- with the clipped surrogate, a value MSE and an entropy bonus.

Mechanism: advantages are normalised per minibatch inside the loss with
(adv - adv.mean()) / adv.std().  The minibatches are cut with drop_last=False and N*T = k*M + 1, so
every epoch ends with a minibatch of ONE sample.  torch.std with the default Bessel correction
divides by n - 1 = 0: the std of a single value is 0/0 = NaN, and the first trailing singleton
(the step varies with the seed) turns the loss into NaN.  Everything before it is a calm, learning
PPO run.

ORIGIN: None -- the 0/0 is in the loss's advantage normalisation, not inside a module.

Fix: a safe normalisation, (adv - mean) / (adv.std(correction=0) + 1e-8), which gives 0 for a
singleton instead of 0/0; model, data and minibatching unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = None
SOURCE = ("PPO (Schulman et al. 2017) with per-minibatch advantage normalisation as in OpenAI "
          "baselines / CleanRL ('norm_adv', which adds 1e-8); torch.std of a one-element tensor is "
          "NaN (PyTorch issues on std with n=1); BatchSampler(drop_last=False) leaving a singleton")

MOVES = torch.tensor([[-1, 0], [1, 0], [0, -1], [0, 1]])


class ActorCritic(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, width), nn.Tanh(), nn.Linear(width, width), nn.Tanh())
        self.pi = nn.Linear(width, 4)
        self.v = nn.Linear(width, 1)

    def forward(self, obs, actions):
        h = self.body(obs)
        return self.pi(h), self.v(h).squeeze(-1), actions


def _make_loss(safe_norm, clip=0.2, vf=0.5, ent=0.01):
    def loss_fn(out, target):
        logits, value, a = out
        old_logp, adv, ret = target
        if safe_norm:
            adv = (adv - adv.mean()) / (adv.std(correction=0) + 1e-8)
        else:
            adv = (adv - adv.mean()) / adv.std()
        logp_all = F.log_softmax(logits, -1)
        logp = logp_all.gather(1, a.unsqueeze(1)).squeeze(1)
        ratio = torch.exp(logp - old_logp)
        surr = torch.min(ratio * adv, ratio.clamp(1 - clip, 1 + clip) * adv)
        entropy = -(logp_all.exp() * logp_all).sum(-1)
        return -surr.mean() + vf * F.mse_loss(value, ret) - ent * entropy.mean()
    return loss_fn


def _obs(pos, goal, n=7):
    return torch.cat([pos.float() / (n - 1), goal.float() / (n - 1)], -1) * 2 - 1


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    n = 7
    N, T, M, epochs = [(8, 32, 51, 10), (8, 40, 29, 6), (10, 26, 37, 8)][seed % 3]
    width = [64, 48, 96][seed % 3]
    lr = [3e-3, 2e-3, 2.5e-3][seed % 3]
    gamma, lam = 0.99, 0.95

    torch.manual_seed(seed)
    model = ActorCritic(width)

    pos = torch.randint(0, n, (N, 2), generator=g)
    goal = torch.randint(0, n, (N, 2), generator=g)
    obs_l, act_l, logp_l, val_l, rew_l, done_l = [], [], [], [], [], []
    with torch.no_grad():
        for _ in range(T):
            o = _obs(pos, goal, n)
            logits, v, _ = model(o, None)
            probs = torch.softmax(logits, -1)
            a = torch.multinomial(probs, 1, generator=g).squeeze(1)
            obs_l.append(o); act_l.append(a); val_l.append(v)
            logp_l.append(torch.log(probs.gather(1, a.unsqueeze(1)).squeeze(1)))
            pos = (pos + MOVES[a]).clamp(0, n - 1)
            done = (pos == goal).all(-1)
            rew_l.append(torch.where(done, 1.0, -0.05))
            done_l.append(done.float())
            reset = torch.randint(0, n, (N, 2), generator=g)
            pos = torch.where(done.unsqueeze(1), reset, pos)
        last_v = model(_obs(pos, goal, n), None)[1]
    adv = torch.zeros(T, N)
    gae = torch.zeros(N)
    for t in reversed(range(T)):
        nv = last_v if t == T - 1 else val_l[t + 1]
        nonterm = 1.0 - done_l[t]
        delta = rew_l[t] + gamma * nv * nonterm - val_l[t]
        gae = delta + gamma * lam * nonterm * gae
        adv[t] = gae
    ret = adv + torch.stack(val_l)
    O, A, LP = torch.cat(obs_l), torch.cat(act_l), torch.cat(logp_l)
    ADV, RET = adv.reshape(-1), ret.reshape(-1)
    R = N * T

    batches = []
    for _ in range(epochs):
        perm = torch.randperm(R, generator=g)
        for i in range(0, R, M):                     # drop_last=False
            idx = perm[i:i + M]
            batches.append(((O[idx], A[idx]), (LP[idx], ADV[idx], RET[idx])))

    opt = torch.optim.Adam(model.parameters(), lr=lr, eps=1e-5)
    return {"model": model, "optimizer": opt, "loss_fn": _make_loss(safe_norm=fixed),
            "batches": batches, "steps": len(batches)}
