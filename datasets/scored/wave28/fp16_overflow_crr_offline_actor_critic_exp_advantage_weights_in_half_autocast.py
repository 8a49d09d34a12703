"""Critic Regularized Regression (CRR) / AWAC-style offline actor-critic on logged discrete actions.

Data: a logged dataset from a synthetic contextual decision task (8-D state, 6 actions, behaviour
policy epsilon-greedy around a mediocre rule); rewards are a smooth function of (state, action) in
a range of a few units, targets are one-step returns.  Model: shared MLP trunk with an actor head
(action logits) and a critic head (Q(s, .)).  Loss: critic MSE on the logged action + advantage-
weighted behaviour cloning,  -mean(w * log pi(a|s)),  w = exp(A / beta) / mean(exp(A / beta)),
A = Q(s, a) - sum_b pi(b|s) Q(s, b) (detached).  Trained with float16 autocast and a GradScaler.

Mechanism: under float16 autocast every op of the loss runs in half precision, including
exp(A / beta).  With beta = 0.1-0.15 the exponent passes log(65504) ~ 11.1 as soon as the critic
has learned advantages of ~1.1-1.7 for some logged actions -- 35-70 steps in.  exp() then returns inf in float16,
the self-normalisation gives inf/inf = NaN, and the loss is non-finite from that step on.  The
GradScaler does not help: it guards the backward pass, the overflow is in the forward.

ORIGIN: None -- the overflow is in the loss's exp() on the critic's advantages, not inside a
module; the critic head ("critic") produces the values but does not overflow itself.

Fix: compute the advantage weights in float32 (A.float() before exp, the "fp32 for the op"
remedy); model, data, autocast and scaler unchanged.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "fp16_overflow"
ORIGIN = None
SOURCE = ("CRR (Wang et al. 2020) and AWAC (Nair et al. 2020) exponentiated-advantage weights; "
          "exp() overflowing float16 (max 65504) under autocast -- PyTorch AMP docs list exp among "
          "ops to keep in float32; reports of NaN AWR/CRR losses with mixed precision")


class OfflineActorCritic(nn.Module):
    def __init__(self, obs_dim, n_actions, width):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(obs_dim, width), nn.ReLU(),
                                   nn.Linear(width, width), nn.ReLU())
        self.actor = nn.Linear(width, n_actions)
        self.critic = nn.Linear(width, n_actions)

    def forward(self, obs, actions):
        h = self.trunk(obs)
        return self.actor(h), self.critic(h), actions


def _make_loss(beta, weights_fp32):
    def loss_fn(out, returns):
        logits, q, a = out
        q_a = q.gather(1, a.unsqueeze(1)).squeeze(1)
        critic_loss = F.mse_loss(q_a.float(), returns)
        logp = F.log_softmax(logits, -1)
        with torch.no_grad():
            v = (logp.exp() * q).sum(-1)
            adv = (q_a - v) / beta
            if weights_fp32:
                adv = adv.float()
            w = torch.exp(adv)
            w = w / w.mean()
        actor_loss = -(w * logp.gather(1, a.unsqueeze(1)).squeeze(1)).mean()
        return critic_loss + actor_loss
    return loss_fn


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    obs_dim, n_actions = 8, 6
    width = [64, 128, 96][seed % 3]
    batch = [128, 64, 96][seed % 3]
    beta = [0.1, 0.15, 0.12][seed % 3]
    r_scale = [3.0, 4.0, 3.5][seed % 3]
    lr = [1e-3, 2e-3, 1.5e-3][seed % 3]
    steps = 200
    W = torch.randn(n_actions, obs_dim, generator=g) / obs_dim ** 0.5
    rule = torch.randn(n_actions, obs_dim, generator=g)

    batches = []
    for _ in range(steps):
        x = torch.randn(batch, obs_dim, generator=g)
        greedy = (x @ rule.T).argmax(-1)
        explore = torch.rand(batch, generator=g) < 0.5
        a = torch.where(explore, torch.randint(0, n_actions, (batch,), generator=g), greedy)
        r = r_scale * torch.tanh(x @ W.T)[torch.arange(batch), a] + 0.1 * torch.randn(batch, generator=g)
        batches.append(((x, a), r))

    torch.manual_seed(seed)
    model = OfflineActorCritic(obs_dim, n_actions, width)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler("cpu")
    return {"model": model, "optimizer": opt, "loss_fn": _make_loss(beta, weights_fp32=fixed),
            "batches": batches, "steps": steps, "amp_dtype": torch.float16, "scaler": scaler}
