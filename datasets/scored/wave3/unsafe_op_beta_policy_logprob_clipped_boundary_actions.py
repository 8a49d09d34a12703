"""Offline RL / behaviour-regularised actor with a Beta policy (Chou et al. 2017): the network outputs
two concentrations (softplus + 1) and the actor is trained by maximising the Beta log-likelihood of
logged torques mapped from [-2, 2] to [0, 1]. Early batches come from calm episodes, but the later
episodes were logged while the actuator was saturated, so their torques were clipped to exactly
-2 / +2, i.e. actions of exactly 0.0 / 1.0. Beta.log_prob evaluates (alpha - 1) * log(x) and
(beta - 1) * log(1 - x); with alpha, beta > 1 and x == 0 or 1 that is log(0) = -inf, so the loss of
the first batch with a boundary action is +inf and its backward fills the weights with NaN. Fixed:
the standard epsilon clamp of the action to [1e-4, 1 - 1e-4] before log_prob."""
import torch, torch.nn as nn, torch.nn.functional as F

CAUSE = "unsafe_op"
ORIGIN = "head"
SOURCE = "Beta-policy PPO/SAC implementations: 'Beta log_prob returns -inf at action bounds' (clamp to [eps, 1-eps]) issues in RL libraries"

class BetaActor(nn.Module):
    def __init__(self, obs, act, hid):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs, hid), nn.Tanh(), nn.Linear(hid, hid), nn.Tanh())
        self.head = nn.Linear(hid, 2 * act)
    def forward(self, obs):
        c = F.softplus(self.head(self.body(obs))) + 1.0
        return c.chunk(2, dim=-1)

def make_loss(eps):
    def loss_fn(out, a):
        alpha, beta = out
        if eps > 0:
            a = a.clamp(eps, 1 - eps)
        return -torch.distributions.Beta(alpha, beta, validate_args=False).log_prob(a).sum(-1).mean()
    return loss_fn

def build(seed, fixed=False):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(61 + seed)
    hid, bs, lr, steps, first_sat = [(64, 64, 0.05, 120, 70), (32, 128, 0.08, 100, 45), (48, 32, 0.03, 150, 100)][seed]
    obs_dim, act_dim = 6, 2
    model = BetaActor(obs_dim, act_dim, hid)
    W = torch.randn(obs_dim, act_dim, generator=g) / obs_dim ** 0.5
    batches = []
    for step in range(steps):
        o = torch.randn(bs, obs_dim, generator=g)
        cmd = o @ W + 0.2 * torch.randn(bs, act_dim, generator=g)
        if step < first_sat:
            torque = 1.6 * torch.tanh(cmd)              # calm episodes: well inside the limits
        else:
            torque = (3.0 * cmd).clamp(-2.0, 2.0)      # saturated actuator: clipped at the limits
        batches.append((o, (torque + 2.0) / 4.0))
    opt = torch.optim.Adagrad(model.parameters(), lr=lr)
    return dict(model=model, optimizer=opt, loss_fn=make_loss(1e-4 if fixed else 0.0), batches=batches, steps=steps, amp_dtype=None, scaler=None)
