"""SAC policy-improvement phase against a frozen pretrained twin critic, with automatic entropy
temperature tuning (Haarnoja et al. 2018, "SAC algorithms and applications").  HEALTHY.

Data: states of a synthetic 6-D continuous-control task (2-D action in [-1, 1]^2).  The twin
critic (two small MLPs, weights frozen -- "loaded from the critic phase") scores actions; for this
synthetic task it is an exact closed-form Q with a state-dependent optimum plus its own bonus, so
Q is positive near the optimum.  Model: tanh-squashed Gaussian actor (reparameterised samples from
the module's own generator, log-prob with the 2*(log2 - a - softplus(-2a)) correction) plus the
learnable log_alpha.  Loss per batch:
    actor:  mean(alpha.detach() * log pi(a|s) - min(Q1, Q2)(s, a))
    alpha:  -mean(log_alpha * (log pi(a|s) + target_entropy).detach())

Why it looks alarming but is healthy: the loss turns negative within the first steps and keeps falling
(it is minus a value plus an entropy term, not an error), the alpha term can make it jump when the
temperature adapts, and the frozen critic's parameters never receive gradients (grad is None for
half of the model's parameters).  The policy improves steadily: the mean Q of its actions rises.

ORIGIN: None (healthy).
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = ("Soft Actor-Critic (Haarnoja et al. 2018) actor and temperature losses, tanh-squashed "
          "Gaussian log-prob correction as in SpinningUp/CleanRL; frozen critic during policy "
          "improvement (two-phase / offline SAC variants)")


class FrozenQ(nn.Module):
    """Closed-form critic written as a module with fixed weights: Q = c - |W(a - a*(s))|^2."""
    def __init__(self, obs_dim, act_dim, gen, c):
        super().__init__()
        self.opt_map = nn.Linear(obs_dim, act_dim)
        self.metric = nn.Linear(act_dim, act_dim, bias=False)
        with torch.no_grad():
            self.opt_map.weight.copy_(torch.randn(act_dim, obs_dim, generator=gen) * 0.5)
            self.opt_map.bias.zero_()
            self.metric.weight.copy_(torch.eye(act_dim) * 2 + 0.3 * torch.randn(act_dim, act_dim, generator=gen))
        self.c = c
        for p in self.parameters():
            p.requires_grad_(False)

    def forward(self, s, a):
        a_star = 0.8 * torch.tanh(self.opt_map(s))
        return self.c - (self.metric(a - a_star) ** 2).sum(-1)


class SACActor(nn.Module):
    def __init__(self, obs_dim, act_dim, width, gen):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, width), nn.ReLU(),
                                 nn.Linear(width, width), nn.ReLU())
        self.mu = nn.Linear(width, act_dim)
        self.log_std = nn.Linear(width, act_dim)
        self.log_alpha = nn.Parameter(torch.zeros(()))
        self.q1 = FrozenQ(obs_dim, act_dim, gen, c=4.0)
        self.q2 = FrozenQ(obs_dim, act_dim, gen, c=4.2)
        self.q2.load_state_dict(self.q1.state_dict())      # twin trained on the same data
        self.noise = torch.Generator().manual_seed(int(torch.randint(0, 10 ** 6, (1,), generator=gen)))

    def forward(self, s):
        h = self.net(s)
        mu, log_std = self.mu(h), self.log_std(h).clamp(-5, 2)
        std = log_std.exp()
        u = mu + std * torch.randn(mu.shape, generator=self.noise)
        a = torch.tanh(u)
        logp = (-0.5 * ((u - mu) / std) ** 2 - log_std - 0.5 * math.log(2 * math.pi)).sum(-1)
        logp = logp - (2 * (math.log(2) - u - F.softplus(-2 * u))).sum(-1)
        q = torch.min(self.q1(s, a), self.q2(s, a))
        return logp, q, self.log_alpha


def _make_loss(target_entropy):
    def loss_fn(out, _):
        logp, q, log_alpha = out
        alpha = log_alpha.exp().detach()
        actor = (alpha * logp - q).mean()
        alpha_loss = -(log_alpha * (logp + target_entropy).detach()).mean()
        return actor + alpha_loss
    return loss_fn


def build(seed: int, fixed: bool = False) -> dict:
    g = torch.Generator().manual_seed(seed)
    obs_dim, act_dim = 6, 2
    width = [64, 128, 96][seed % 3]
    batch = [128, 64, 256][seed % 3]
    lr = [3e-3, 2e-3, 1e-3][seed % 3]
    steps = 200

    torch.manual_seed(seed)
    model = SACActor(obs_dim, act_dim, width, g)
    batches = [(torch.randn(batch, obs_dim, generator=g), torch.zeros(batch)) for _ in range(steps)]
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=lr)
    return {"model": model, "optimizer": opt, "loss_fn": _make_loss(-float(act_dim)),
            "batches": batches, "steps": steps}
