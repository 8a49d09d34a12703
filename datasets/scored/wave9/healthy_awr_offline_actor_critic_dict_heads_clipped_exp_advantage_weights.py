"""Offline advantage-weighted regression (AWR, Peng et al. 2019; the actor update also used by
AWAC/IQL) on a logged continuous-control dataset: one network with a shared trunk returns a dict
with a value head V(s) and a Gaussian policy head (mean, log-std); the loss is the value MSE to the
standardised Monte-Carlo returns plus the advantage-weighted negative log-likelihood of the logged
actions, with weights exp(A / beta) clipped at 20 (beta = 0.5), A = R - V(s) detached. Things that
look alarming but are normal: the per-sample weights span four orders of magnitude and shift as the
critic improves, the actor term is a Gaussian NLL over 6 action dimensions whose value has a floor set
by the learned log-std (not 0), and the weighted gradients are large on the few high-advantage samples.
Training is healthy: the value error falls and the weighted NLL keeps decreasing."""
import torch
import torch.nn as nn
import torch.nn.functional as F

CAUSE = "healthy"
ORIGIN = None
SOURCE = "Peng et al. 2019 'Advantage-Weighted Regression'; Nair et al. 2020 AWAC; Kostrikov et al. 2021 IQL (exp-advantage weights clipped)"

S_DIM, A_DIM, STEPS, BATCH, BETA, W_MAX = 17, 6, 200, 256, 0.5, 20.0


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(S_DIM, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU())
        self.value = nn.Linear(128, 1)
        self.mu = nn.Linear(128, A_DIM)
        self.log_std = nn.Parameter(torch.zeros(A_DIM))

    def forward(self, s):
        h = self.trunk(s)
        return {"v": self.value(h).squeeze(-1), "mu": torch.tanh(self.mu(h)),
                "log_std": self.log_std.clamp(-5, 2).expand(s.shape[0], -1)}


def _dataset(g, n):
    s = torch.randn(n, S_DIM, generator=g)
    W = torch.randn(S_DIM, A_DIM, generator=g) / S_DIM ** 0.5
    a_opt = torch.tanh(s @ W)
    a = (a_opt + 0.4 * torch.randn(n, A_DIM, generator=g)).clamp(-1, 1)     # noisy behaviour policy
    quality = -((a - a_opt) ** 2).sum(-1)
    ret = quality + 0.8 * s[:, 0] + 0.3 * torch.randn(n, generator=g)
    ret = (ret - ret.mean()) / ret.std()
    return s, a, ret


def build(seed: int, fixed: bool = False) -> dict:
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(20000 + seed)
    model = ActorCritic()
    opt = torch.optim.Adam(model.parameters(), lr=3e-4)
    s, a, r = _dataset(g, 40 * BATCH)
    batches = []
    for i in range(STEPS):
        j = i % 40
        sl = slice(j * BATCH, (j + 1) * BATCH)
        batches.append((s[sl], {"action": a[sl], "ret": r[sl]}))

    def loss_fn(out, target):
        v, mu, log_std = out["v"], out["mu"], out["log_std"]
        value_loss = F.mse_loss(v, target["ret"])
        adv = (target["ret"] - v).detach()
        w = torch.exp(adv / BETA).clamp(max=W_MAX)
        nll = (0.5 * ((target["action"] - mu) / log_std.exp()) ** 2 + log_std
               + 0.5 * torch.log(torch.tensor(2 * torch.pi))).sum(-1)
        return value_loss + (w * nll).mean() / w.mean()

    return dict(model=model, optimizer=opt, loss_fn=loss_fn, batches=batches, steps=STEPS,
                amp_dtype=None, scaler=None)
